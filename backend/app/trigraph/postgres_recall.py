"""Recall candidates on PostgreSQL: the shared per-process cache, fed by the tenant's clock.

As in the SQLite engine, a :class:`~app.trigraph.recall_cache.ProjectCache` keeps one project's
candidates as numpy columns. Each recall sends ONE statement that reads the tenant's clock
(one indexed row) and the ``recall_index`` rows stamped after the cache's clock, in one
snapshot, and folds those rows in; when nothing changed it returns just the clock. The first
load reads what the project can see, by index. Vectors arrive in pgvector's binary format and
are converted all at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final
from uuid import UUID

import psycopg

from app.trigraph import postgres_rows as rows
from app.trigraph.recall_cache import IndexRow, ProjectCache

Conn = psycopg.Connection[tuple[Any, ...]]

_COLUMNS: Final = (
    "memory_id::text, project_id::text, active, kind, namespace, memorule_kind, confidence, "
    f"scope, a_persona, a_surface, a_specialization, {rows.ISO_WRITTEN_AT}, "
    "CASE WHEN model = %(model)s THEN vector END, "
    # The current state's text, for the cache's BM25 index (primary key, then the
    # (tenant_id, memory_id, version) unique index).
    "(SELECT coalesce(s.subject || chr(10), '') || s.body FROM memory m "
    "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
    "AND s.version = m.current_version "
    "WHERE m.tenant_id = recall_index.tenant_id AND m.id = recall_index.memory_id) AS state_text"
)
# Active rows only (by the partial indexes): a retired memory is never a candidate, and one
# restored later comes back with a newer clock, as a changed row.
_FIRST_LOAD: Final = (
    f"SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %(t)s AND project_id = %(p)s "
    f"AND active UNION ALL SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %(t)s "
    "AND scope IN ('global', 'org') AND active AND project_id != %(p)s"
)
_CHANGED: Final = (
    f"SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %(t)s AND clock > %(since)s"
)
# The clock and the rows in one statement and one round trip: always one row at least (the
# clock), then one per changed recall row (the columns are NULL when nothing changed).
_REFRESH: Final = (
    "SELECT c.n, r.* FROM (SELECT coalesce((SELECT n FROM tenant_clock "
    "WHERE tenant_id = %(t)s), 0) AS n) c LEFT JOIN LATERAL ({rows}) r ON true"
)


def refresh(conn: Conn, tenant_id: UUID, cache: ProjectCache, model: str) -> None:
    """Bring ``cache`` up to the tenant's clock, in one round trip."""
    args: dict[str, Any] = {"t": tenant_id, "model": model, "since": cache.clock}
    if cache.clock < 0:
        args["p"] = UUID(cache.project_id)
        query = _REFRESH.format(rows=_FIRST_LOAD)
    else:
        query = _REFRESH.format(rows=_CHANGED)
    found = conn.execute(query, args, binary=True).fetchall()
    clock = int(found[0][0]) if found else 0
    if clock != cache.clock:
        changed = [r[1:] for r in found if r[1] is not None]
        cache.apply(_index_rows(changed), clock)


def _index_rows(found: list[tuple[Any, ...]]) -> Iterator[IndexRow]:
    if not found:
        return
    blobs = [r[12] for r in found]
    matrix = rows.matrix_of(blobs)
    for i, r in enumerate(found):
        yield IndexRow.of(r, matrix[i].tobytes() if blobs[i] is not None else None, r[13])
