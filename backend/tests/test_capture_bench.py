"""The labelled capture set is well formed, and the detector still clears the issue's bars on
it (``bench/capture.py``, without its timing runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = REPO / "bench" / "capture"
KINDS = {"feedback", "correction", "preference", "behavioral_rule", "convention"}


def test_the_labelled_set_is_large_split_and_consistently_labelled() -> None:
    parts = {
        name: [json.loads(line) for line in (SET / f"{name}.jsonl").read_text().splitlines()]
        for name in ("tune", "heldout")
    }
    total = sum(len(rows) for rows in parts.values())
    assert total >= 240
    assert 0.35 <= len(parts["heldout"]) / total <= 0.45
    ids = [row["id"] for rows in parts.values() for row in rows]
    assert len(ids) == len(set(ids))
    for row in (row for rows in parts.values() for row in rows):
        assert (row["kind"] in KINDS) is row["lasting"], row
        assert isinstance(row["after_action"], bool) and row["text"].strip()


def test_the_detector_clears_the_bars_on_both_parts_and_leaks_nothing() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "capture.py"), "--json", "--no-end-to-end"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["leaked_proposals"] == 0
    assert report["golden"] == {"detections": 4, "leaked": 0}
    for part in ("tune", "heldout"):
        figures = report["parts"][part]
        assert figures["precision"] >= 0.85, figures
        assert figures["recall"] >= 0.70, figures
        assert figures["kind_accuracy"] >= 0.75, figures
