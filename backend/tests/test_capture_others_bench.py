"""The capture set written by other people (``bench/capture_others/``) is well formed and
split as its README says, and its score script runs the real reader and detector on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = REPO / "bench" / "capture_others"


def _part(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (SET / f"{name}.jsonl").read_text().splitlines()]


def test_every_message_has_a_source_a_label_and_one_part() -> None:
    dev, aside = _part("dev"), _part("setaside")
    rows = dev + aside
    assert len(rows) >= 300
    assert len({r["id"] for r in rows}) == len(rows)
    assert 0.30 <= len(aside) / len(rows) <= 0.36  # a third, drawn per label
    for r in rows:
        assert isinstance(r["lasting"], bool) and isinstance(r["after_action"], bool)
        assert str(r["text"]).strip()
        assert str(r["source"]).startswith("https://github.com/"), r
    assert sum(bool(r["lasting"]) for r in aside) >= 8


def test_the_score_script_counts_every_message_of_both_parts(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(SET / "score.py"), "--json", str(out)],
        check=True,
        capture_output=True,
    )
    figures = json.loads(out.read_text())
    for name in ("dev", "setaside"):
        f = figures[name]
        rows = _part(name)
        assert f["messages"] == len(rows)
        assert f["true_positives"] + f["misses"] == sum(bool(r["lasting"]) for r in rows)
        assert 0.0 <= f["precision"] <= 1.0 and 0.0 <= f["recall"] <= 1.0
