"""Where notes stand in writing order, for recall's neighbour smoothing
(``domain.neighbours``): the statements both engines run for ``note_places``, and the one
assembly of their answers.

A project's live notes, per namespace, in id order (ids are UUIDv7, so id order is the order
the notes were written), read from ``recall_index`` through an index on exactly that
(migration 11). Numbering every note would read the whole project on each recall; the
smoothing only needs the distances up to its reach between the window's notes, so an
engine asks three things, each from the index alone:

1. which of the window's ids are the project's live notes, and their namespaces (by key,
   from ``memory``);
2. for each two window notes next to each other in writing order, how many live notes of
   the namespace lie between them, counted in the index up to the reach;
3. for a namespace with one window note, whether it holds any other live note.

:func:`places` turns those into a :class:`NotePlace` per note whose position differences
are exact up to the reach (a gap wider than the reach is shortened to it plus one).
``?`` marks a parameter (PostgreSQL swaps in ``%s``); ``{active}`` is the engine's spelling
of a live row.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Final

from prism_memory.domain.neighbours import NotePlace

_NOTES: Final = "tenant_id = ? AND project_id = ? AND kind = 'note' AND {active}"
# The window's notes are read by key from ``memory`` (its status is the index's ``active``).
WINDOW_NOTES: Final = (
    "SELECT id, namespace FROM memory WHERE tenant_id = ? AND id {ids} AND project_id = ? "
    "AND kind = 'note' AND status = 'active'"
)
# ``{pairs}``: the engine's rows of (namespace, earlier id, later id), parameters first; the
# count stops at the reach (the last parameter): a wider gap need not be exact.
BETWEEN: Final = (
    "WITH pair(namespace, low, high) AS ({pairs}) "
    "SELECT pair.low, pair.high, (SELECT COUNT(*) FROM (SELECT 1 FROM recall_index WHERE "
    + _NOTES
    + " AND namespace = pair.namespace AND memory_id > pair.low AND memory_id < pair.high "
    "LIMIT ?) gap) FROM pair"
)
SIZES: Final = (
    "SELECT namespace, COUNT(*) FROM recall_index WHERE " + _NOTES + " "
    "AND namespace {namespaces} GROUP BY namespace"
)


def chains(window: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """The window's notes (id, namespace) per namespace, in writing order."""
    out: dict[str, list[str]] = defaultdict(list)
    for memory_id, namespace in window:
        out[namespace].append(memory_id)
    return {ns: sorted(ids) for ns, ids in out.items()}


def pairs(by_namespace: Mapping[str, list[str]]) -> list[tuple[str, str, str]]:
    """(namespace, earlier id, later id) of every two window notes next to each other."""
    return [(ns, a, b) for ns, ids in by_namespace.items() for a, b in itertools.pairwise(ids)]


def places(
    by_namespace: Mapping[str, list[str]],
    between: Mapping[tuple[str, str], int],
    sizes: Mapping[str, int],
    reach: int,
) -> dict[str, NotePlace]:
    """Each window note's :class:`NotePlace` from the engine's answers.

    Args:
        by_namespace: :func:`chains` of the window's notes.
        between: live notes between each :func:`pairs` entry's ids, by (earlier, later) id.
        sizes: live notes of each namespace holding a single window note.
        reach: the smoothing's reach; gaps beyond it need not be exact.
    """
    out: dict[str, NotePlace] = {}
    for ns, ids in by_namespace.items():
        position = 0
        for i, memory_id in enumerate(ids):
            if i:
                position += min(between[(ids[i - 1], memory_id)], reach) + 1
            alone = len(ids) == 1 and sizes.get(ns, 1) <= 1
            out[memory_id] = NotePlace(ns, position, alone)
    return out
