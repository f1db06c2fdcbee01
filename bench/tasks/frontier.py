"""How far delivered precision can go on the real tasks, and what it would take.

The session-start brief is written before the task is known, so whatever it carries is
chosen blind to the task; only the prompt hook sees the task. This script measures the
precision / recall frontier that shape allows, from the labels alone and from today's
ranking, without the hooks' token budgets:

* ``whole file`` — every rule of the file: the base rate of rules a task needs;
* ``tiers`` — the no-task brief's must-include and every-change tiers (``brief_service``);
* ``tiers + top k`` — those tiers and the task title's top ``k`` by ``semantic_recall``;
* ``top k`` — the title's top ``k`` alone (no task-blind part);
* ``tiers + oracle`` — the tiers and exactly the rules labelled must-follow or useful for
  the task: what a perfect task-aware part would add to the tiers.

Recall is of must-follow rules (tasks with none are left out), precision the share of
delivered rules labelled must-follow or useful, as ``run.py`` scores them; means ± standard
error over tasks.

    .venv/bin/python bench/tasks/frontier.py [--split dev|set_aside] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402

TOP_KS = (3, 5, 8, 10, 15, 20)


def gather(split: str) -> list[dict[str, Any]]:
    """Per task: the file's rule keys, its tier keys, the title's ranking and the labels."""
    from prism_memory.services.brief_service import about_every_change, must_include

    sources = [
        s for s in json.loads((HERE / "sources.json").read_text())["repos"] if s["split"] == split
    ]
    labels = run.load_labels()
    prism = str(Path(sys.executable).with_name("prism"))
    tasks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="real-frontier-") as tmp:
        db = Path(tmp) / "store.db"
        imported = {s["repo"]: run.import_repo(prism, db, s) for s in sources}
        for source in sources:
            key_of = run.keys_of(imported[source["repo"]])
            access, me = run.operator(db, run.slug(source["repo"]))
            brief = run.no_task_brief(access, me)
            every: set[str] = set()
            tiers: set[str] = set()
            for m in brief.included:
                keys = key_of.get(str(m.memory.id), [f"?{m.memory.id}"])
                every.update(keys)
                if must_include(m) or about_every_change(m):
                    tiers.update(keys)
            for task in source["tasks"]:
                result = run.title_ranking(access, me, task["title"])
                must, relevant = run.label_sets(labels[task["ref"]])
                tasks.append(
                    {
                        "ref": task["ref"],
                        "file": every,
                        "tiers": tiers,
                        "ranked": run.as_keys([str(m.memory.id) for m in result.matches], key_of),
                        "must": must,
                        "relevant": relevant,
                    }
                )
    return tasks


def score(tasks: list[dict[str, Any]], pick: Any) -> dict[str, Any]:
    recall, precision, size = [], [], []
    for task in tasks:
        delivered = pick(task)
        if task["must"]:
            recall.append(len(task["must"] & delivered) / len(task["must"]))
        precision.append(len(task["relevant"] & delivered) / len(delivered) if delivered else 0.0)
        size.append(float(len(delivered)))
    return {
        "recall": run.mean_se(recall),
        "precision": run.mean_se(precision),
        "rules": run.mean_se(size),
    }


def frontier(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    rows: dict[str, Any] = {
        "whole file": score(tasks, lambda t: set(t["file"])),
        "tiers": score(tasks, lambda t: set(t["tiers"])),
    }
    for k in TOP_KS:
        rows[f"tiers + top {k}"] = score(tasks, lambda t, k=k: t["tiers"] | set(t["ranked"][:k]))
    for k in TOP_KS:
        rows[f"top {k}"] = score(tasks, lambda t, k=k: set(t["ranked"][:k]))
    rows["tiers + oracle"] = score(tasks, lambda t: t["tiers"] | t["relevant"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "set_aside"), action="append")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    out: dict[str, Any] = {"load_average": {"start": os.getloadavg()}}
    for split in args.split or ["dev", "set_aside"]:
        out[split] = frontier(gather(split))
        print(f"\n{split}: delivered set | must-follow recall | precision | rules")
        for name, row in out[split].items():
            r, p, n = row["recall"], row["precision"], row["rules"]
            print(
                f"  {name:<16} {r['mean']:.3f} ± {r['se']:.3f}   "
                f"{p['mean']:.3f} ± {p['se']:.3f}   {n['mean']:.1f}"
            )
    out["load_average"]["end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
