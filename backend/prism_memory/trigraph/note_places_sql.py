"""Where notes stand in writing order, for recall's neighbour smoothing
(``domain.neighbours``): the one statement both engines run for ``note_places``, and the
one reading of its rows.

A project's live notes, per namespace, in id order (ids are UUIDv7, so id order is the order
the notes were written). Numbering every note would read the whole project on each recall;
the smoothing only needs the distances up to its reach between the window's notes, so the
statement reads:

1. the window's ids that are the project's live notes, and their namespaces (by key, from
   ``memory``), each with the window note written before it in its namespace;
2. how many live notes lie between those two, counted up to the reach in the index of the
   project's live notes in id order (migration 11);
3. for a namespace with one window note, whether it holds any other live note.

:func:`places` turns the rows into a :class:`NotePlace` per note whose position differences
are exact up to the reach (a wider gap is shortened to the reach plus one). ``?`` marks a
parameter (PostgreSQL swaps in ``%s``); ``{ids}`` is the engine's test of the window's ids
and ``{active}`` its spelling of a live row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Final

from prism_memory.domain.neighbours import NotePlace

_NOTES: Final = (
    "SELECT 1 FROM recall_index WHERE tenant_id = ? AND project_id = ? AND kind = 'note' "
    "AND {active} AND namespace = ordered.namespace"
)
NOTE_PLACES: Final = (
    "WITH window_note AS (SELECT id, namespace FROM memory WHERE tenant_id = ? AND id {ids} "
    "AND project_id = ? AND kind = 'note' AND status = 'active'), "
    "ordered AS (SELECT id, namespace, "
    "LAG(id) OVER (PARTITION BY namespace ORDER BY id) AS previous, "
    "COUNT(*) OVER (PARTITION BY namespace) AS in_window FROM window_note) "
    "SELECT id, namespace, "
    "CASE WHEN previous IS NULL THEN 0 ELSE (SELECT COUNT(*) FROM (" + _NOTES + " "
    "AND memory_id > ordered.previous AND memory_id < ordered.id LIMIT ?) gap) END, "
    "CASE WHEN in_window = 1 THEN (SELECT COUNT(*) FROM (" + _NOTES + " LIMIT 2) other) "
    "ELSE 2 END "
    "FROM ordered"
)


def parameters(tenant: Any, ids: Iterable[Any], project: Any, reach: int) -> tuple[Any, ...]:
    """:data:`NOTE_PLACES`' parameters in order (``ids`` spread for SQLite's marks, or one
    array for PostgreSQL's ``= ANY(%s)``)."""
    return (tenant, *ids, project, tenant, project, reach, tenant, project)


def places(rows: Iterable[tuple[Any, str, int, int]], reach: int) -> dict[str, NotePlace]:
    """Each window note's :class:`NotePlace` from :data:`NOTE_PLACES`' rows: (id, namespace,
    live notes between it and the window note before it, live notes of a namespace holding
    it alone in the window, up to 2)."""
    by_namespace: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for memory_id, namespace, gap, size in rows:
        by_namespace[namespace].append((str(memory_id), gap, size))
    out: dict[str, NotePlace] = {}
    for namespace, notes in by_namespace.items():
        notes.sort()
        position = 0
        for i, (memory_id, gap, size) in enumerate(notes):
            if i:
                position += min(gap, reach) + 1
            alone = len(notes) == 1 and size <= 1
            out[memory_id] = NotePlace(namespace, position, alone)
    return out
