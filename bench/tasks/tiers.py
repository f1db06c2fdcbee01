"""Where the rules a real-task run delivered come from, and how many of them a task needed.

Reads a ``run.py --out`` file, imports the part's rule files again (as ``run.py`` does) and
takes each project's no-task brief with room for every rule, so each rule has its tier
(``must_include``, ``every_change`` or ``rest``, as ``brief_service.tiered`` orders them),
its kind and its place. Then, over the part's tasks: per tier and per kind, the delivered
rules per task and the share labelled must-follow, useful or irrelevant; the prompt hook's
rules as a tier of their own; where the must-follow rules that were not delivered sit.
Rules the importer made that ``rules/`` does not hold (no label) are tier ``unlabelled``.

    .venv/bin/python bench/tasks/tiers.py RESULT.json [--split dev]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402


def tiers_of(split: str) -> dict[tuple[str, str], tuple[str, str, int]]:
    """(repo, rule key) -> (tier, kind, place in the no-task brief's order)."""
    from prism_memory.services.brief_service import about_every_change, must_include

    sources = json.loads((HERE / "sources.json").read_text())["repos"]
    prism = str(Path(sys.executable).with_name("prism"))
    found: dict[tuple[str, str], tuple[str, str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="real-tiers-") as tmp:
        db = Path(tmp) / "store.db"
        for source in (s for s in sources if s["split"] == split):
            key_of = run.keys_of(run.import_repo(prism, db, source))
            access, me = run.operator(db, run.slug(source["repo"]))
            brief = run.no_task_brief(access, me)
            for place, m in enumerate(brief.included):
                tier = (
                    "must_include"
                    if must_include(m)
                    else "every_change"
                    if about_every_change(m)
                    else "rest"
                )
                for key in key_of.get(str(m.memory.id), [f"?{m.memory.id}"]):
                    found[(source["repo"], key)] = (tier, m.state.memorule_kind.value, place)
    return found


def label_of(key: str, must: set[str], useful: set[str]) -> str:
    return "must" if key in must else "useful" if key in useful else "irrelevant"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result", type=Path)
    parser.add_argument("--split", choices=("dev", "set_aside"), default="dev")
    args = parser.parse_args()
    rows = [r for r in json.loads(args.result.read_text())["rows"] if r["split"] == args.split]
    labels = run.load_labels()
    where = tiers_of(args.split)
    shares: dict[str, Counter[str]] = defaultdict(Counter)
    missed: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        label = labels[row["ref"]]
        must, useful = set(label["must"]), label["useful"]

        briefed = set(row["briefed"])
        for key in briefed:
            tier, kind, _ = where.get((row["repo"], key), ("unlabelled", "unlabelled", -1))
            shares[f"tier {tier}"][label_of(key, must, useful)] += 1
            shares[f"kind {kind}"][label_of(key, must, useful)] += 1
        for key in set(row["added"]) - briefed:
            shares["tier prompt hook"][label_of(key, must, useful)] += 1
        for key in must - briefed - set(row["added"]):
            tier, _, place = where.get((row["repo"], key), ("not imported", "", -1))
            missed[tier][f"{row['repo']} {key} (place {place})"] += 1
    report: dict[str, Any] = {"tasks": len(rows), "delivered": {}, "must_missed": {}}
    for name, counts in sorted(shares.items()):
        total = sum(counts.values())
        report["delivered"][name] = {
            "per_task": round(total / len(rows), 2),
            **{c: round(counts[c] / total, 3) for c in ("must", "useful", "irrelevant")},
        }
    for tier, counts in sorted(missed.items()):
        report["must_missed"][tier] = dict(counts.most_common())
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
