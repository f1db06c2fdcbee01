"""Where a recall window's notes stand in writing order, on PostgreSQL
(``trigraph/note_places_sql.py`` says what is read and why); the gaps are counted in the
notes index of migration 11."""

from __future__ import annotations

from typing import Final
from uuid import UUID

from prism_memory.domain.neighbours import NotePlace
from prism_memory.trigraph import note_places_sql as places_sql
from prism_memory.trigraph.postgres.conn import Conn

# ``active IS NOT FALSE``, not ``active``: only the notes index (migration 11) can answer it,
# never the project index partial to ``active`` rows, whichever the statistics favour.
_SQL: Final = places_sql.NOTE_PLACES.replace("?", "%s").format(
    ids="= ANY(%s)", active="active IS NOT FALSE"
)


def note_places(
    conn: Conn, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
) -> dict[str, NotePlace]:
    """The port's ``note_places``: one statement, read by key and from an index."""
    ids = [UUID(i) for i in memory_ids]
    args = places_sql.parameters(tenant_id, [ids], project_id, reach)
    return places_sql.places(conn.execute(_SQL, args).fetchall(), reach)
