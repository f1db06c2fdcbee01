"""Progress lines of long commands: drawn on a terminal, never in ``--json`` or a pipe."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from prism_memory.bootstrap import build_store
from prism_memory.cli.progress import Progress
from prism_memory.settings import Settings
from tests.cli_run import BACKEND, run_prism


def test_a_progress_line_is_redrawn_in_place_and_cleared() -> None:
    out = io.StringIO()
    progress = Progress("imported", True, stream=out)
    progress(3, 3)
    progress.close()
    assert out.getvalue() == "\r\x1b[Kimported: 3/3 (100%)\r\x1b[K"
    silent = io.StringIO()
    off = Progress("imported", False, stream=silent)
    off(3, 3)
    off.close()
    assert silent.getvalue() == ""


def on_a_terminal(db: Path, *args: str) -> tuple[int, str]:
    """``prism ARGS`` with its stderr on a pseudo-terminal, as a person runs it."""
    reader, writer = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(PRISM_DB=str(db), PRISM_EMBEDDER="fake", PYTHONPATH=str(BACKEND), TERM="xterm")
    proc = subprocess.run(
        [sys.executable, "-m", "prism_memory", *args],
        stdout=subprocess.DEVNULL,
        stderr=writer,
        env=env,
        timeout=120,
        check=False,
    )
    os.close(writer)
    chunks = []
    while True:
        try:
            chunk = os.read(reader, 65536)
        except OSError:  # the terminal's other end is closed: all read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(reader)
    return proc.returncode, b"".join(chunks).decode()


@pytest.fixture
def store(db_path: Path) -> Path:
    for n in range(5):
        assert run_prism(db_path, "remember", "--body", f"note number {n}").returncode == 0
    return db_path


@pytest.mark.slow
def test_dump_draws_progress_on_a_terminal_only(store: Path, tmp_path: Path) -> None:
    code, terminal = on_a_terminal(store, "dump", "--out", str(tmp_path / "a.jsonl"))
    assert code == 0 and "dumped (records): " in terminal and "\r\x1b[K" in terminal
    code, as_json = on_a_terminal(store, "dump", "--out", str(tmp_path / "b.jsonl"), "--json")
    assert code == 0 and "dumped (records)" not in as_json
    piped = run_prism(store, "dump", "--out", str(tmp_path / "c.jsonl"))
    assert piped.returncode == 0 and "\r" not in piped.stderr and "\x1b" not in piped.stderr


@pytest.mark.slow
def test_import_and_reindex_are_quiet_in_a_pipe(store: Path, tmp_path: Path) -> None:
    dumped = tmp_path / "store.jsonl"
    assert run_prism(store, "dump", "--out", str(dumped)).returncode == 0
    fresh = tmp_path / "fresh.db"
    code, terminal = on_a_terminal(fresh, "import", str(dumped))
    assert code == 0 and "read (lines): " in terminal
    again = tmp_path / "again.db"
    piped = run_prism(again, "import", str(dumped))
    assert piped.returncode == 0 and "\x1b" not in piped.stderr + piped.stdout
    reindexed = run_prism(store, "reindex")  # nothing stale: no counters, one summary line
    assert reindexed.returncode == 0 and reindexed.stderr == ""


@pytest.mark.slow
def test_migrate_counts_the_pending_migrations_on_a_terminal_only(tmp_path: Path) -> None:
    from prism_memory.trigraph.sqlite.schema import MIGRATIONS

    fresh = tmp_path / "fresh.db"
    code, terminal = on_a_terminal(fresh, "migrate")
    pending = len(MIGRATIONS)
    assert code == 0 and f"schema migrations applied: {pending}/{pending} (100%)" in terminal
    assert terminal.endswith("\r\x1b[K")  # cleared before the command's own line
    code, again = on_a_terminal(fresh, "migrate")  # nothing pending: no counter at all
    assert code == 0 and "applied" not in again
    code, as_json = on_a_terminal(tmp_path / "json.db", "migrate", "--json")
    assert code == 0 and "applied" not in as_json
    piped = run_prism(tmp_path / "piped.db", "migrate")
    assert piped.returncode == 0 and piped.stderr == ""
    assert piped.stdout == f"sqlite schema at version {MIGRATIONS[-1][0]}\n"


@pytest.mark.slow
def test_capture_shows_its_stages_on_a_terminal_only(tmp_path: Path) -> None:
    transcript = BACKEND / "tests" / "golden" / "claude_code_session.jsonl"
    args = ("capture", "claude-code", "--transcript", str(transcript))
    code, terminal = on_a_terminal(tmp_path / "a.db", *args)
    assert code == 0
    embedded = re.findall(r"embedded \(detected messages\): (\d+)/(\d+)", terminal)
    decided = re.findall(r"decided \(detected messages\): (\d+)/(\d+)", terminal)
    assert embedded and embedded[-1][0] == embedded[-1][1] != "0"
    assert decided and decided[-1][0] == decided[-1][1] != "0"
    assert terminal.index("embedded") < terminal.index("decided")
    code, as_json = on_a_terminal(tmp_path / "b.db", *args, "--json")
    assert code == 0 and "detected messages" not in as_json
    piped = run_prism(tmp_path / "c.db", *args)
    assert piped.returncode == 0 and piped.stderr == ""
    assert piped.stdout.startswith("captured ")


def test_each_engine_tells_migrate_progress_once_per_pending_migration(
    engine_settings: Settings,
) -> None:
    from prism_memory.trigraph.postgres import schema as postgres_schema
    from prism_memory.trigraph.sqlite import schema as sqlite_schema

    migrations = (postgres_schema if engine_settings.database_url else sqlite_schema).MIGRATIONS
    store = build_store(engine_settings)
    told: list[tuple[int, int]] = []
    try:
        assert store.migrate(lambda done, total: told.append((done, total))) == migrations[-1][0]
        n = len(migrations)
        assert told == [(done, n) for done in range(n + 1)]
        told.clear()
        store.migrate(lambda done, total: told.append((done, total)))
        assert told == []  # nothing pending, nothing told
    finally:
        store.close()
