"""Where a recall window's notes stand in writing order, on SQLite
(``trigraph/note_places_sql.py`` says what is asked and why)."""

from __future__ import annotations

import sqlite3
from uuid import UUID

from prism_memory.domain.neighbours import NotePlace
from prism_memory.trigraph import note_places_sql as places_sql

_LIVE = "active = 1"


def note_places(
    conn: sqlite3.Connection, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
) -> dict[str, NotePlace]:
    """The port's ``note_places`` in three statements, each read from an index."""
    project = (str(tenant_id), str(project_id))
    sql = places_sql.WINDOW_NOTES.format(ids=f"IN ({','.join('?' * len(memory_ids))})")
    found = conn.execute(sql, (str(tenant_id), *memory_ids, str(project_id))).fetchall()
    by_namespace = places_sql.chains(found)
    pairs = places_sql.pairs(by_namespace)
    between: dict[tuple[str, str], int] = {}
    if pairs:
        rows = "VALUES " + ",".join(["(?, ?, ?)"] * len(pairs))
        sql = places_sql.BETWEEN.format(active=_LIVE, pairs=rows)
        args = [x for pair in pairs for x in pair]
        between = {(a, b): n for a, b, n in conn.execute(sql, (*args, *project, reach))}
    single = [ns for ns, ids in by_namespace.items() if len(ids) == 1]
    sizes: dict[str, int] = {}
    if single:
        names = f"IN ({','.join('?' * len(single))})"
        sql = places_sql.SIZES.format(active=_LIVE, namespaces=names)
        sizes = dict(conn.execute(sql, (*project, *single)).fetchall())
    return places_sql.places(by_namespace, between, sizes, reach)
