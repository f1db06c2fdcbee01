"""Hook failures on the embedded engine: the ``hook_failure`` table (migration 8).

:func:`record` is called by a failing hook process with nothing but ``sqlite3`` (the guard
never loads the domain); :class:`SQLiteHookFailures` reads the counts on the store's own
connections for ``/metrics``. See :mod:`prism_memory.trigraph.hook_failures`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from prism_memory.errors import StorageError
from prism_memory.trigraph.sqlite.conn import SQLiteFile

BUSY_TIMEOUT_S: Final = 1.0
UPSERT: Final = (
    "INSERT INTO hook_failure (hook, failures, last_failed_at) VALUES (?, 1, ?) "
    "ON CONFLICT (hook) DO UPDATE SET failures = failures + 1, "
    "last_failed_at = excluded.last_failed_at"
)


def record(path: Path, hook: str, when: str) -> bool:
    """Add one failure of ``hook`` at ``when`` (ISO text) to the store at ``path``.

    Returns:
        Whether it was recorded: False when there is no file (none is made to say so), the
        file is locked past the busy timeout, or its schema has no ``hook_failure`` table.
    """
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
        try:
            with conn:
                conn.execute(UPSERT, (hook, when))
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return True


class SQLiteHookFailures:
    """The :class:`~prism_memory.trigraph.hook_failures.HookFailureCounts` of one file."""

    def __init__(self, file: SQLiteFile) -> None:
        self.file = file

    def counts(self) -> dict[str, int]:
        try:
            rows = (
                self.file.connection()
                .execute("SELECT hook, failures FROM hook_failure ORDER BY hook")
                .fetchall()
            )
        except sqlite3.Error as exc:
            raise StorageError("hook failures are unavailable (is the database migrated?)") from exc
        return {str(hook): int(n) for hook, n in rows}
