"""The guard's read of a PostgreSQL store: the memorules with checks, through one short-lived
connection (no pool, no migrations), implementing
:class:`prism_memory.trigraph.port.AdherenceStore` with :mod:`.checked_rules`' query."""

from __future__ import annotations

from typing import Final
from uuid import UUID

import psycopg

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.errors import StorageError
from prism_memory.trigraph.postgres.checked_rules import memorules_with_checks

CONNECT_TIMEOUT_S: Final = 2


class PostgresRulesReader:
    """Reads the rules with checks of the database at ``url``.

    Raises (from :meth:`memorules_with_checks`):
        StorageError: the database cannot be reached or read.
    """

    def __init__(self, url: str) -> None:
        self.url = url

    def memorules_with_checks(self, tenant_id: UUID, project_id: UUID) -> list[CheckedRule]:
        """See :meth:`prism_memory.trigraph.port.AdherenceStore.memorules_with_checks`."""
        try:
            with psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                conn.read_only = True
                return memorules_with_checks(conn, tenant_id, project_id)
        except psycopg.Error as exc:
            raise StorageError(f"cannot read the rules from PostgreSQL: {exc}") from None
