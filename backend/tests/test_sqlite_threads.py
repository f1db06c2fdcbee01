"""The SQLite store under worker pools that retire threads (as uvicorn's and anyio's do)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from prism_memory.trigraph.sqlite.store import SQLiteStore


def open_files_to(path: Path) -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_connections_of_finished_threads_are_closed_not_leaked(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    store.migrate()
    try:
        for _ in range(20):
            worker = threading.Thread(target=lambda: store.tenants())
            worker.start()
            worker.join()
        # each new connection closed the dead threads' ones: not one per thread ever run
        assert open_files_to(tmp_path / "t.db") <= 3
    finally:
        store.close()
    assert open_files_to(tmp_path / "t.db") == 0
