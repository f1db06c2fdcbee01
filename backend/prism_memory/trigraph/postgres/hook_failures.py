"""Hook failures on the server engine: the ``hook_failure`` table (migration 9).

The PostgreSQL twin of :mod:`prism_memory.trigraph.sqlite.hook_failures`: :func:`record` opens
one short connection from the failing hook process; :class:`PostgresHookFailures` reads the
counts on the store's pool for ``/metrics``.
"""

from __future__ import annotations

from typing import Final

import psycopg

from prism_memory.errors import StorageError
from prism_memory.trigraph.postgres.conn import PostgresPool

CONNECT_TIMEOUT_S: Final = 2
UPSERT: Final = (
    "INSERT INTO hook_failure (hook, failures, last_failed_at) VALUES (%s, 1, %s) "
    "ON CONFLICT (hook) DO UPDATE SET failures = hook_failure.failures + 1, "
    "last_failed_at = excluded.last_failed_at"
)


def record(url: str, hook: str, when: str) -> bool:
    """Add one failure of ``hook`` at ``when`` (ISO text) to the database at ``url``.

    Returns:
        Whether it was recorded: False when the database cannot be reached within
        :data:`CONNECT_TIMEOUT_S` or its schema has no ``hook_failure`` table.
    """
    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            conn.execute(UPSERT, (hook, when))
    except psycopg.Error:
        return False
    return True


class PostgresHookFailures:
    """The :class:`~prism_memory.trigraph.hook_failures.HookFailureCounts` of one database."""

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool

    def counts(self) -> dict[str, int]:
        try:
            with self.pool.connection() as conn:
                rows = conn.execute("SELECT hook, failures FROM hook_failure ORDER BY hook")
                return {str(hook): int(n) for hook, n in rows.fetchall()}
        except (StorageError, psycopg.Error) as exc:
            raise StorageError("hook failures are unavailable (is the database migrated?)") from exc
