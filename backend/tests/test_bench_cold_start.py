"""The cold-start benchmark still runs end to end (tiny, random vectors, this code compared
with itself).

Not a benchmark: it guards ``bench/cold_start.py`` against rot (it drives the services and
the storage port in new processes, which change under it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_cold_start_runs_a_tiny_side_by_side_round(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    flags = ["--size", "300", "--runs", "2", "--warm", "2", "--projects", "3"]
    flags += ["--per-project", "40", "--rounds", "4", "--blocks", "2", "--vectors", "random"]
    flags += ["--before", str(REPO / "backend"), "--work", str(tmp_path / "work")]
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "cold_start.py"), *flags, "--json-out", str(out)],
        env={**os.environ, "PRISM_BENCH_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert sorted(result["variants"]) == ["after", "before"]
    for variant in ("before", "after"):
        cold = result["cold"][variant]
        assert cold["first_recall"]["n"] == 2 and cold["warm_recall"]["n"] == 4
        assert cold["rss_after_first_mb"] > cold["rss_before_mb"]
        assert result["build"][variant]["first_s"] > 0 < result["restore"][variant]["first_s"]
        many = result["many"][variant]
        assert sorted(many) == ["rotating-8", "spread", "spread, small"]
        assert all(m["n"] == 4 and m["cpu"]["n"] == 4 for m in many.values())
    assert "| new process, first recall p50 ms" in done.stderr
