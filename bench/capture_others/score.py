"""Capture recall/precision on operator messages written by other people (issue 31, part 5).

    .venv/bin/python bench/capture_others/score.py                  # every part
    .venv/bin/python bench/capture_others/score.py --errors         # dev errors (what tuning sees)
    .venv/bin/python bench/capture_others/score.py --json results.json

Each labelled message goes through the real Claude Code reader (``read_lines``) as the user
entry of a small transcript, exactly as ``bench/capture.py`` builds it, then through
``detect``. A message counts as found when the detector proposes anything (the label is
lasting or not; kinds were not labelled). Two collections, each split into a dev part and a
set-aside third: ``dev``/``setaside`` (308 messages from five sources) and ``dev2``/``setaside2``
(1,574 from entireio/cli's committed sessions). ``--errors`` prints dev items only.
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


def load(part: str) -> list[dict[str, Any]]:
    with (HERE / f"{part}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


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
    args = parser.parse_args()
    figures = {}
    for part in PARTS if args.part == "all" else (args.part,):
        figures[part], errors = score(load(part))
        f = figures[part]
        print(
            f"{part:9} messages {f['messages']:3}  lasting {f['lasting']:2}  "
            f"precision {f['precision']:.3f}  recall {f['recall']:.3f}  "
            f"(tp {f['true_positives']}, fp {f['false_positives']}, missed {f['misses']})"
        )
        if args.errors and part in DEV_PARTS:
            for why, item in errors:
                print(f"  {why}: {item['id']} {item['text'][:160]!r}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
