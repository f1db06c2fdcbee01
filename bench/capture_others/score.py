"""Capture recall/precision on operator messages written by other people (issue 31, part 5).

    .venv/bin/python bench/capture_others/score.py                  # every part
    .venv/bin/python bench/capture_others/score.py --errors         # dev errors (what tuning sees)
    .venv/bin/python bench/capture_others/score.py --json results.json
    .venv/bin/python bench/capture_others/score.py --against agreed   # both labellers agree
    .venv/bin/python bench/capture_others/score.py --against adjudicated

Each labelled message goes through the real Claude Code reader (``read_lines``) as the user
entry of a small transcript, exactly as ``bench/capture.py`` builds it, then through
``detect``. A message counts as found when the detector proposes anything (the label is
lasting or not; kinds were not labelled). Two collections, each split into a dev part and a
set-aside third: ``dev``/``setaside`` (308 messages from five sources) and ``dev2``/``setaside2``
(1,574 from entireio/cli's committed sessions). ``--errors`` prints dev items only.

``--against`` chooses the truth: ``first`` (the parts' own ``lasting`` labels, the default),
``second`` (a second engineer's blind labels, ``agreement/second.jsonl``: setaside, setaside2
and dev only), ``agreed`` (only the messages both labellers call the same; the 20 they
disagree on are left out) or ``adjudicated`` (every message: the label both give, and for the
20 they disagree on a third engineer's call, ``agreement/adjudicated.jsonl``; ``dev2`` was
never relabelled and keeps its single labels, which the output says). ``agreement.py`` says
how far apart the two are.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prism_memory.capture.detector import detect
from prism_memory.capture.transcript import read_lines

HERE = Path(__file__).resolve().parent


def _transcript_for() -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """``bench/capture.py``'s transcript builder: the same shape for both sets."""
    spec = importlib.util.spec_from_file_location("capture_bench", HERE.parent / "capture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built: Callable[[dict[str, Any]], list[dict[str, Any]]] = module.transcript_for
    return built


transcript_for = _transcript_for()

PARTS = ("dev", "setaside", "dev2", "setaside2")
DEV_PARTS = ("dev", "dev2")


SECOND = HERE / "agreement" / "second.jsonl"
ADJUDICATED = HERE / "agreement" / "adjudicated.jsonl"
AGAINST = ("first", "second", "agreed", "adjudicated")
SINGLE = "single labels: never relabelled, scored against the first labeller's"


class AdjudicationMismatchError(Exception):
    """The adjudicated labels do not cover exactly the two labellers' disagreements."""


def adjudicate(
    part: str, items: list[dict[str, Any]], second: dict[str, bool]
) -> list[dict[str, Any]]:
    """The part's messages with the agreed label, or the third engineer's where they differ.

    Raises:
        AdjudicationMismatchError: a disagreement has no third call, a call names a message
            the two agree on, or a call's ``first``/``second`` no longer match the labels.
    """
    with ADJUDICATED.open(encoding="utf-8") as fh:
        calls = {
            row["id"]: row for row in map(json.loads, filter(str.strip, fh)) if row["part"] == part
        }
    disagreed = {item["id"] for item in items if second[item["id"]] != item["lasting"]}
    uncalled, unasked = sorted(disagreed - set(calls)), sorted(set(calls) - disagreed)
    if uncalled:
        raise AdjudicationMismatchError(f"{part}: disagreements without a call {uncalled}")
    if unasked:
        raise AdjudicationMismatchError(f"{part}: calls on agreed or unknown messages {unasked}")
    stale = sorted(
        item["id"]
        for item in items
        if item["id"] in calls
        and (calls[item["id"]]["first"], calls[item["id"]]["second"])
        != (item["lasting"], second[item["id"]])
    )
    if stale:
        raise AdjudicationMismatchError(f"{part}: calls whose first/second labels changed {stale}")
    return [
        {**item, "lasting": bool(calls[item["id"]]["lasting"])} if item["id"] in calls else item
        for item in items
    ]


def load(part: str, against: str = "first") -> list[dict[str, Any]]:
    """The part's messages, each with ``lasting`` as the chosen truth says.

    Raises:
        AdjudicationMismatchError: ``adjudicated`` was asked and its calls do not fit.
    """
    with (HERE / f"{part}.jsonl").open(encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    if against == "first":
        return items
    with SECOND.open(encoding="utf-8") as fh:
        second = {
            row["id"]: bool(row["lasting"])
            for row in map(json.loads, filter(str.strip, fh))
            if row["part"] == part
        }
    if against == "second":
        return [{**item, "lasting": second[item["id"]]} for item in items]
    if against == "adjudicated":
        return adjudicate(part, items, second) if second else items
    return [item for item in items if second[item["id"]] == item["lasting"]]


def score(
    items: list[dict[str, Any]],
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    tp = fp = fn = 0
    errors: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        messages = read_lines([json.dumps(e) for e in transcript_for(item)])
        found = detect(messages[0].text, messages[0].after_action) if messages else None
        if found and item["lasting"]:
            tp += 1
        elif found:
            fp += 1
            errors.append((f"false_positive ({found.kind.value})", item))
        elif item["lasting"]:
            fn += 1
            errors.append(("miss", item))
    return {
        "messages": len(items),
        "lasting": tp + fn,
        "true_positives": tp,
        "false_positives": fp,
        "misses": fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
    }, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="print the dev parts' errors")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--part", choices=(*PARTS, "all"), default="all")
    parser.add_argument(
        "--against", choices=AGAINST, default="first", help="which labels are the truth"
    )
    args = parser.parse_args()
    parts = PARTS if args.part == "all" else (args.part,)
    relabelled = set(PARTS)
    if args.against != "first":
        with SECOND.open(encoding="utf-8") as fh:
            relabelled = {json.loads(line)["part"] for line in fh if line.strip()}
    if args.against in ("second", "agreed"):
        if args.part != "all" and args.part not in relabelled:
            parser.error(f"--against {args.against}: {args.part} has no second labels")
        parts = tuple(p for p in parts if p in relabelled)
    figures = {}
    for part in parts:
        try:
            items = load(part, args.against)
        except AdjudicationMismatchError as exc:
            parser.exit(2, f"error: {exc}\n")
        figures[part], errors = score(items)
        f = figures[part]
        print(
            f"{part:9} messages {f['messages']:3}  lasting {f['lasting']:2}  "
            f"precision {f['precision']:.3f}  recall {f['recall']:.3f}  "
            f"(tp {f['true_positives']}, fp {f['false_positives']}, missed {f['misses']})"
        )
        if part not in relabelled:
            f["labels"] = SINGLE
            print(f"{'':9} {SINGLE}")
        if args.errors and part in DEV_PARTS:
            for why, item in errors:
                print(f"  {why}: {item['id']} {item['text'][:160]!r}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
