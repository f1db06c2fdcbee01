"""Recall candidates on PostgreSQL: the shared per-process cache, fed by the tenant's clock.

As in the SQLite engine, a :class:`~app.trigraph.recall_cache.ProjectCache` keeps one project's
candidates as numpy columns; each recall reads the tenant's clock (one indexed row) and, in the
same round trip, the ``recall_index`` rows stamped after the cache's clock, and folds them in.
The first load reads what the project can see by index. Vectors arrive in pgvector's binary
format and are converted all at once.

Reading the clock before the rows is enough without a snapshot: a write commits its clock bump
and its rows together, so rows of every clock up to the one read are visible; rows of a later
clock that slip in are folded in again at the next refresh (a memory's old row is replaced).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final
from uuid import UUID

import psycopg

from app.domain.records import Kind
from app.trigraph import postgres_rows as rows
from app.trigraph.recall_cache import IndexRow, ProjectCache

Conn = psycopg.Connection[tuple[Any, ...]]

_COLUMNS: Final = (
    "memory_id::text, project_id::text, active, kind, namespace, memorule_kind, confidence, "
    f"scope, a_persona, a_surface, a_specialization, {rows.ISO_WRITTEN_AT}, "
    "CASE WHEN model = %s THEN vector END"
)
# Active rows only (by the partial indexes): a retired memory is never a candidate, and one
# restored later comes back with a newer clock, as a changed row.
_FIRST_LOAD: Final = (
    f"SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %s AND project_id = %s AND active "
    f"UNION ALL SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %s "
    "AND scope IN ('global', 'org') AND active AND project_id != %s"
)
_CHANGED: Final = f"SELECT {_COLUMNS} FROM recall_index WHERE tenant_id = %s AND clock > %s"


def refresh(conn: Conn, tenant_id: UUID, cache: ProjectCache, model: str) -> None:
    """Bring ``cache`` up to the tenant's clock, in one round trip."""
    with conn.pipeline():
        clock_cur = conn.execute("SELECT n FROM tenant_clock WHERE tenant_id = %s", (tenant_id,))
        if cache.clock < 0:
            project = UUID(cache.project_id)
            args: tuple[Any, ...] = (model, tenant_id, project, model, tenant_id, project)
            rows_cur = conn.execute(_FIRST_LOAD, args, binary=True)
        else:
            rows_cur = conn.execute(_CHANGED, (model, tenant_id, cache.clock), binary=True)
        row = clock_cur.fetchone()
        found = rows_cur.fetchall()
    clock = int(row[0]) if row else 0
    if clock != cache.clock:
        cache.apply(_index_rows(found), clock)


def _index_rows(found: list[tuple[Any, ...]]) -> Iterator[IndexRow]:
    if not found:
        return
    blobs = [r[12] for r in found]
    matrix = rows.matrix_of(blobs)
    for i, r in enumerate(found):
        yield IndexRow(
            memory_id=r[0],
            project_id=r[1],
            active=r[2],
            is_memorule=r[3] == Kind.MEMORULE.value,
            namespace=r[4],
            memorule_kind=r[5],
            confidence=r[6],
            scope=r[7],
            persona=r[8],
            surface=r[9],
            specialization=r[10],
            written_at=r[11],
            vector=matrix[i].tobytes() if blobs[i] is not None else None,
        )
