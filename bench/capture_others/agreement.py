"""Do two people agree on which messages are lasting? (issue 31, part 5).

    .venv/bin/python bench/capture_others/agreement.py
    .venv/bin/python bench/capture_others/agreement.py --disagreements   # list them, with text
    .venv/bin/python bench/capture_others/agreement.py \\
        --json bench/capture_others/results_agreement.json

Compares ``agreement/second.jsonl`` (a second engineer's blind labels: ``part``, ``id``,
``lasting``, ``note``) with the ``lasting`` labels of the parts it covers (``setaside``,
``setaside2``, ``dev``). Prints, per part and pooled, the four cells (both lasting, first
only, second only, both not), the second labeller's recall and precision taking the first as
truth, the reverse, and Cohen's kappa with a seeded bootstrap 95 % interval over messages.
``confident`` repeats the pooled figures without the messages the second labeller marked
doubtful (a ``note`` containing "doubtful"), to show where the disagreement lives.

The capture target asks a detector for recall >= 0.85 at precision >= 0.90 against one
person's labels; a second careful person scored the same way shows how far those labels
themselves can carry such a figure. No detector and no backend code is involved.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SECOND = HERE / "agreement" / "second.jsonl"
PARTS = ("setaside", "setaside2", "dev")
BOOTSTRAP = 2000
SEED = 20261207


class LabelMismatchError(Exception):
    """The second labels do not cover exactly the messages of a part."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def paired(part: str, second: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The part's messages, each with ``first`` and ``second`` labels.

    Raises:
        LabelMismatchError: the second labels miss or add a message of this part.
    """
    items = read_jsonl(HERE / f"{part}.jsonl")
    ids = {item["id"] for item in items}
    labelled = {key[1] for key in second if key[0] == part}
    if ids != labelled:
        missing = sorted(ids - labelled)[:5]
        extra = sorted(labelled - ids)[:5]
        raise LabelMismatchError(f"{part}: missing {missing}, not in the part {extra}")
    return [
        {
            "id": item["id"],
            "text": item["text"],
            "first": bool(item["lasting"]),
            "second": bool(second[(part, item["id"])]["lasting"]),
            "note": second[(part, item["id"])].get("note", ""),
        }
        for item in items
    ]


def cells(items: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    both = sum(1 for i in items if i["first"] and i["second"])
    first_only = sum(1 for i in items if i["first"] and not i["second"])
    second_only = sum(1 for i in items if i["second"] and not i["first"])
    return both, first_only, second_only, len(items) - both - first_only - second_only


def kappa(both: int, first_only: int, second_only: int, neither: int) -> float:
    n = both + first_only + second_only + neither
    observed = (both + neither) / n
    first_yes = (both + first_only) / n
    second_yes = (both + second_only) / n
    expected = first_yes * second_yes + (1 - first_yes) * (1 - second_yes)
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def bootstrap_kappa(items: list[dict[str, Any]], rng: random.Random) -> tuple[float, float]:
    values = sorted(
        kappa(*cells([items[rng.randrange(len(items))] for _ in items])) for _ in range(BOOTSTRAP)
    )
    return round(values[int(0.025 * BOOTSTRAP)], 3), round(values[int(0.975 * BOOTSTRAP) - 1], 3)


def figures(items: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    both, first_only, second_only, neither = cells(items)
    return {
        "messages": len(items),
        "first_lasting": both + first_only,
        "second_lasting": both + second_only,
        "both_lasting": both,
        "first_only": first_only,
        "second_only": second_only,
        "both_not": neither,
        "second_vs_first": {
            "recall": ratio(both, both + first_only),
            "precision": ratio(both, both + second_only),
        },
        "first_vs_second": {
            "recall": ratio(both, both + second_only),
            "precision": ratio(both, both + first_only),
        },
        "kappa": round(kappa(both, first_only, second_only, neither), 3),
        "kappa_95": bootstrap_kappa(items, rng),
    }


def line(name: str, f: dict[str, Any]) -> str:
    def fmt(value: float | None) -> str:
        return "  -  " if value is None else f"{value:.3f}"

    s, r = f["second_vs_first"], f["first_vs_second"]
    return (
        f"{name:9} {f['messages']:4}  both {f['both_lasting']:2}  first-only {f['first_only']:2}  "
        f"second-only {f['second_only']:2}  both-not {f['both_not']:4}  "
        f"2nd vs 1st R {fmt(s['recall'])} P {fmt(s['precision'])}  "
        f"1st vs 2nd R {fmt(r['recall'])} P {fmt(r['precision'])}  "
        f"kappa {f['kappa']:.3f} [{f['kappa_95'][0]:.3f}, {f['kappa_95'][1]:.3f}]"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second", type=Path, default=SECOND, help="the second labels")
    parser.add_argument("--disagreements", action="store_true", help="list them, with text")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    second = {(r["part"], r["id"]): r for r in read_jsonl(args.second)}
    unknown = sorted({part for part, _ in second} - set(PARTS))
    if unknown:
        print(
            f"error: second labels name parts this script does not know: {unknown}", file=sys.stderr
        )
        return 2
    rng = random.Random(SEED)
    try:
        by_part = {part: paired(part, second) for part in PARTS}
    except LabelMismatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results: dict[str, Any] = {}
    for part, items in by_part.items():
        results[part] = figures(items, rng)
        print(line(part, results[part]))
    results["pooled"] = figures([i for items in by_part.values() for i in items], rng)
    print(line("pooled", results["pooled"]))
    confident = [i for items in by_part.values() for i in items if "doubtful" not in i["note"]]
    results["confident"] = figures(confident, rng)
    print(line("confident", results["confident"]))
    if args.disagreements:
        for part, items in by_part.items():
            for item in items:
                if item["first"] != item["second"]:
                    who = "first-only " if item["first"] else "second-only"
                    print(f"{who} {part:9} {item['id']} {item['text'][:300]!r}")
                    if item["note"]:
                        print(f"{'':22}second's note: {item['note']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
