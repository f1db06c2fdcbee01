"""The many-projects benchmark still runs end to end (tiny, SQLite only, random vectors).

Not a benchmark: it guards ``bench/many_projects.py`` against rot (it only uses the
services and the storage port, which change under it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_many_projects_runs_a_tiny_sqlite_round(tmp_path: Path) -> None:
    out = tmp_path / "many.json"
    flags = ["--engines", "sqlite", "--projects", "4", "--per-project", "60", "--rounds", "6"]
    flags += ["--writes", "2", "--cold-sizes", "300", "--cold", "1", "--vectors", "random"]
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "many_projects.py"), *flags, "--json-out", str(out)],
        env={**os.environ, "PRISM_BENCH_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    recall = result["many"]["recall"]
    assert sorted(recall) == [
        "sqlite rotating-8",
        "sqlite spread-4",
        "sqlite spread-4, 64 MB cache",
    ]
    assert all(r["n"] == 6 for r in recall.values())
    assert result["many"]["write"]["sqlite"]["cold"]["n"] == 2
    cold = result["cold"]["sqlite 300"]
    assert cold["first_recall"]["n"] == 1 and cold["rss_after_mb"] > cold["rss_before_mb"]
    assert result["many"]["cycle_process"]["sqlite"]["cycle_rss_mb"] > 0
