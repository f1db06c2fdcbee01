"""Which query a file's first touch should ask (the study behind ``path_query``, dev only).

For each task of a part, the files its own change touched (``touched.json``) are each asked
of ``semantic_recall`` three ways: the path in words (``hook_answers.path_query``), the task
title with the raw path, and the title with the task's first five paths at once. Two more
read what the edit writes (``touched_edits.json``: the lines the task's change added to the
file, standing for an ``Edit``'s ``new_string``): the path in words followed by its first
300 or 1,000 characters, and those 1,000 characters alone (the path when nothing was added);
they are also compared with the path in words, paired over tasks. Delivered
sets are built from the labels as ``frontier.py`` builds them, without token budgets: the
task-blind tiers, the title's top 8 at relevance ≥ 0.15 (the prompt hook's defaults), and
per touched file the top ``m`` at relevance ≥ ``floor`` of the file's query. Recall of
must-follow rules, precision (must-follow or useful), delivered rules; means ± SE over
tasks.

    .venv/bin/python bench/tasks/touch_study.py [--split dev] [--json OUT]
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
import frontier  # noqa: E402
import run  # noqa: E402

FILES = 10  # run.TOUCHED_MAX: files per task, as the runner gives them
PROMPT = (8, 0.15)  # the prompt hook's defaults: rules, relevance
EDIT_CHARS = (300, 1000)  # how much of what the edit wrote a touch's query reads
QUERIES = (
    "per file: title + path",
    "per file: path words",
    *(f"per file: path words + edit {n}" for n in EDIT_CHARS),
    "per file: edit alone",
)


def gather(split: str) -> list[dict[str, Any]]:
    """Per task: tiers, labels, and the ranked (key, relevance) lists of every query."""
    from prism_memory.domain.contract.recall import RecallCreate
    from prism_memory.services.brief_service import about_every_change, must_include
    from prism_memory.services.hook_answers import path_query

    sources = [
        s for s in json.loads((HERE / "sources.json").read_text())["repos"] if s["split"] == split
    ]
    touched = json.loads((HERE / "touched.json").read_text())
    edits = json.loads((HERE / "touched_edits.json").read_text())
    labels = run.load_labels()
    prism = str(Path(sys.executable).with_name("prism"))
    tasks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="touch-study-") as tmp:
        db = Path(tmp) / "store.db"
        imported = {s["repo"]: run.import_repo(prism, db, s) for s in sources}
        for source in sources:
            key_of = run.keys_of(imported[source["repo"]])
            access, me = run.operator(db, run.slug(source["repo"]))
            tiers: set[str] = set()
            for m in run.no_task_brief(access, me).included:
                if must_include(m) or about_every_change(m):
                    tiers.update(key_of.get(str(m.memory.id), []))

            def ranked(
                query: str, access: Any = access, me: Any = me, key_of: Any = key_of
            ) -> list[tuple[str, float]]:
                raw = {"query": query[:2000], "top_k": 30, "source_type": "memorule"}
                result = access.recall(me.key, me.ctx, RecallCreate.parse(raw))
                return [
                    (key, float(m.why.get("relevance", 0.0)))
                    for m in result.matches
                    for key in key_of.get(str(m.memory.id), [f"?{m.memory.id}"])
                ]

            for task in source["tasks"]:
                files = touched[task["ref"]][:FILES]
                wrote = edits[task["ref"]]
                must, relevant = run.label_sets(labels[task["ref"]])
                tasks.append(
                    {
                        "ref": task["ref"],
                        "tiers": tiers,
                        "must": must,
                        "relevant": relevant,
                        "title": ranked(task["title"]),
                        "title and paths": ranked("\n".join([task["title"], *files[:5]])),
                        "per file: title + path": [ranked(f"{task['title']}\n{f}") for f in files],
                        "per file: path words": [ranked(path_query(f)) for f in files],
                        **{
                            f"per file: path words + edit {n}": [
                                ranked(f"{path_query(f)}\n{wrote[f][:n]}") for f in files
                            ]
                            for n in EDIT_CHARS
                        },
                        "per file: edit alone": [
                            ranked(wrote[f][: EDIT_CHARS[-1]] or path_query(f)) for f in files
                        ],
                    }
                )
    return tasks


def top(ranking: list[tuple[str, float]], k: int, floor: float = 0.0) -> set[str]:
    return {key for key, relevance in ranking[:k] if relevance >= floor}


def study(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    def prompt(t: dict[str, Any]) -> set[str]:
        return set(t["tiers"]) | top(t["title"], *PROMPT)

    rows: dict[str, Any] = {
        "tiers + prompt": frontier.score(tasks, prompt),
        "tiers + prompt(title and 5 paths)": frontier.score(
            tasks, lambda t: set(t["tiers"]) | top(t["title and paths"], *PROMPT)
        ),
    }

    def touches(query: str, m: int, floor: float) -> Any:
        return lambda t: prompt(t).union(*[top(r, m, floor) for r in t[query]])

    for query in QUERIES:
        for m in (1, 2, 3):
            for floor in (0.15, 0.25, 0.35):
                row = frontier.score(tasks, touches(query, m, floor))
                if "edit" in query:
                    row["vs path words"] = versus(
                        tasks, touches(query, m, floor), touches("per file: path words", m, floor)
                    )
                rows[f"tiers + prompt + {query}, {m} >= {floor}"] = row
    return rows


def versus(tasks: list[dict[str, Any]], new: Any, old: Any) -> dict[str, Any]:
    """Recall and precision of ``new`` minus ``old``, paired over tasks."""
    from lib.paired import paired

    def per_task(pick: Any) -> tuple[dict[str, float], dict[str, float]]:
        recall, precision = {}, {}
        for t in tasks:
            delivered = pick(t)
            if t["must"]:
                recall[t["ref"]] = len(t["must"] & delivered) / len(t["must"])
            hits = len(t["relevant"] & delivered)
            precision[t["ref"]] = hits / len(delivered) if delivered else 0.0
        return recall, precision

    (new_r, new_p), (old_r, old_p) = per_task(new), per_task(old)
    return {"recall": paired(new_r, old_r), "precision": paired(new_p, old_p)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "set_aside"), default="dev")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    out: dict[str, Any] = {"split": args.split, "load_average": {"start": os.getloadavg()}}
    out["rows"] = study(gather(args.split))
    out["load_average"]["end"] = os.getloadavg()
    print(f"{args.split}: delivered set | must-follow recall | precision | rules | paired Δ")
    for name, row in out["rows"].items():
        r, p, n = row["recall"], row["precision"], row["rules"]
        line = (
            f"  {name:<62} {r['mean']:.3f} ± {r['se']:.3f}   "
            f"{p['mean']:.3f} ± {p['se']:.3f}   {n['mean']:.1f}"
        )
        if "vs path words" in row:
            dr, dp = row["vs path words"]["recall"], row["vs path words"]["precision"]
            line += f"   {dr['diff']:+.3f} ± {dr['se']:.3f} / {dp['diff']:+.3f} ± {dp['se']:.3f}"
        print(line)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
