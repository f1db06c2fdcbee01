"""The guard's read of a SQLite store: the memorules with checks, through one short-lived
connection and nothing else of the engine (no migrations, caches, numpy or model), so the
``PreToolUse`` hook answers in a few tens of milliseconds as a whole process.

It implements :class:`prism_memory.trigraph.port.AdherenceStore`; the query is
:mod:`.checked_rules`, the one the full store runs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final
from uuid import UUID

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.errors import StorageError
from prism_memory.trigraph.sqlite.checked_rules import memorules_with_checks

BUSY_TIMEOUT_S: Final = 1.0  # a writer holding the file longer: the guard fails open


class SQLiteRulesReader:
    """Reads the rules with checks of the SQLite file at ``path`` (never creates it).

    Raises (from :meth:`memorules_with_checks`):
        StorageError: no such file, or the file cannot be read as a migrated Prism store.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def memorules_with_checks(self, tenant_id: UUID, project_id: UUID) -> list[CheckedRule]:
        """See :meth:`prism_memory.trigraph.port.AdherenceStore.memorules_with_checks`."""
        if not self.path.is_file():
            raise StorageError(f"no Prism store at {self.path}")
        try:
            conn = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self.path}: {exc}") from None
        try:
            return memorules_with_checks(conn, tenant_id, project_id)
        except (sqlite3.Error, ValueError, KeyError) as exc:
            raise StorageError(f"cannot read the rules of {self.path}: {exc}") from None
        finally:
            conn.close()
