"""Where a recall window's notes stand in writing order, on SQLite
(``trigraph/note_places_sql.py`` says what is read and why)."""

from __future__ import annotations

import sqlite3
from uuid import UUID

from prism_memory.domain.neighbours import NotePlace
from prism_memory.trigraph import note_places_sql as places_sql


def note_places(
    conn: sqlite3.Connection, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
) -> dict[str, NotePlace]:
    """The port's ``note_places``: one statement, read by key and from an index."""
    ids = f"IN ({','.join('?' * len(memory_ids))})"
    sql = places_sql.NOTE_PLACES.format(ids=ids, active="active = 1")
    args = places_sql.parameters(str(tenant_id), memory_ids, str(project_id), reach)
    return places_sql.places(conn.execute(sql, args).fetchall(), reach)
