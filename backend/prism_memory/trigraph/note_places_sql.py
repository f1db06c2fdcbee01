"""Where notes stand in writing order: the one statement both engines run for
``note_places`` (recall's neighbour smoothing, ``domain.neighbours``).

The project's live notes come from ``recall_index`` (PostgreSQL reads them from its
covering project index, without the rows' vectors), numbered per namespace in id order:
ids are UUIDv7, so id order is the order the notes were written. ``{active}`` is the
engine's spelling of a live row, ``{ids}`` its test of the window's ids; parameters are
the tenant, the project and the ids (``?``: the engine swaps in its own mark).
"""

from __future__ import annotations

from typing import Final

NOTE_PLACES: Final = (
    "SELECT memory_id, namespace, place, total FROM ("
    "SELECT memory_id, namespace, "
    "ROW_NUMBER() OVER (PARTITION BY namespace ORDER BY memory_id) - 1 AS place, "
    "COUNT(*) OVER (PARTITION BY namespace) AS total "
    "FROM recall_index WHERE tenant_id = ? AND project_id = ? AND {active} AND kind = 'note'"
    ") placed WHERE memory_id {ids}"
)
