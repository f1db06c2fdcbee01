"""Several OS processes on one SQLite file: nothing lost, no lock errors, crash-safe."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prism_memory.bootstrap import build_services, context_from
from prism_memory.settings import load_settings

BACKEND = Path(__file__).resolve().parents[1]

WRITER = """
import sys
from prism_memory.bootstrap import build_services, context_from
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.settings import load_settings
settings = load_settings(db=sys.argv[1], embedder="fake", persona=sys.argv[2])
services = build_services(settings)
ctx = context_from(settings)
n = int(sys.argv[3])
for i in range(n):
    services.memory.writes.remember(ctx, validate_remember({
        "kind": "memorule", "memorule_kind": "convention",
        "subject": f"Rule {sys.argv[2]} {i}",
        "body": f"Convention number {i} written by {sys.argv[2]} under contention.",
        "applies_to": {"persona": sys.argv[2]},
    }))
    if i == 10:
        print("started", flush=True)
print("done", flush=True)
"""


def spawn(db: Path, persona: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(BACKEND)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), persona, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def counts(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    try:
        memories = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
        orphans = conn.execute(
            "SELECT count(*) FROM memory m WHERE NOT EXISTS (SELECT 1 FROM memory_state s "
            "WHERE s.tenant_id = m.tenant_id AND s.memory_id = m.id) OR NOT EXISTS "
            "(SELECT 1 FROM memorule_audit a WHERE a.tenant_id = m.tenant_id "
            "AND a.memorule_id = m.id)"
        ).fetchone()[0]
        events = conn.execute("SELECT count(*) FROM memorule_audit").fetchone()[0]
        return memories, orphans, events
    finally:
        conn.close()


@pytest.mark.slow
def test_two_processes_writing_500_memorules_each_lose_nothing(db_path: Path) -> None:
    build_services(load_settings(db=db_path, embedder="fake")).close()
    procs = [spawn(db_path, persona, 500) for persona in ("donna", "texi")]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert out.strip().endswith("done")
        assert proc.returncode == 0, err
        assert "locked" not in err
    assert counts(db_path) == (1000, 0, 1000)
    settings = load_settings(db=db_path, embedder="fake")
    services = build_services(settings)
    try:
        report = services.memorules.verify_chain(context_from(settings))
        assert report.ok and report.events == 1000
    finally:
        services.close()


@pytest.mark.slow
def test_a_writer_killed_mid_stream_leaves_a_consistent_file(db_path: Path) -> None:
    build_services(load_settings(db=db_path, embedder="fake")).close()
    proc = spawn(db_path, "donna", 100_000)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    memories, orphans, events = counts(db_path)
    assert memories > 10
    assert orphans == 0
    assert events == memories
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    settings = load_settings(db=db_path, embedder="fake")
    services = build_services(settings)
    try:
        assert services.memorules.verify_chain(context_from(settings)).ok
    finally:
        services.close()
