"""The near-duplicate check of a write on SQLite (``RecallStore.near_duplicates``).

A memorule write asks which visible active rules say nearly the same before it is applied.
This reads only those rows' vectors from ``recall_index`` — the project's own rows (on
``recall_index_by_kind`` when the filter names memorule kinds) and the tenant's
``global``/``org`` rows of other projects (on ``recall_index_by_scope``), in one statement,
so one snapshot — and takes their cosines in numpy. The recall cache
(:mod:`prism_memory.trigraph.sqlite.recall`) is neither loaded nor stored: a write never
builds a project's cache or writes a recall segment.

The rows selected are the ones the cache's snapshot selects for the same filter
(:meth:`~prism_memory.trigraph.sqlite.recall_cache.ProjectCache.snapshot`): in its own project
a row is seen unless it is another persona's rule; from other projects only ``global`` and
``org`` rules; rows embedded by another model, or of another dimension, never match.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final
from uuid import UUID

import numpy as np

from prism_memory.domain.ranking import dots, normalise_key
from prism_memory.domain.records import APPLIES_TO_KEYS, Kind
from prism_memory.embeddings.port import Vector
from prism_memory.trigraph.port import CandidateFilter, NearMatch

_CHUNK: Final = 4096  # rows whose vectors are held at once
_COLUMNS: Final = "memory_id, vector, a_persona, a_surface, a_specialization"
# Fixed enum values go in as literals; everything from a caller is a parameter.
_OWN: Final = (
    "tenant_id = ? AND project_id = ? AND active = 1 "
    "AND (scope IS NULL OR scope <> 'persona' OR a_persona = ?)"
)
_SHARED: Final = "tenant_id = ? AND scope IN ('global', 'org') AND active = 1 AND project_id <> ?"


def near_duplicates(
    conn: sqlite3.Connection,
    tenant_id: UUID,
    flt: CandidateFilter,
    vector: Vector,
    model: str,
    threshold: float,
    limit: int,
) -> list[NearMatch]:
    """Active memories passing ``flt`` whose cosine with ``vector`` is at least
    ``threshold``: at most ``limit``, most similar first, then by memory id."""
    common, common_args = _common(flt, model, int(vector.shape[0]) * 4)
    t, p = str(tenant_id), str(flt.project_id)
    query = (
        f"SELECT {_COLUMNS} FROM recall_index WHERE {_OWN} AND {common} "
        f"UNION ALL SELECT {_COLUMNS} FROM recall_index WHERE {_SHARED} AND {common}"
    )
    args = [t, p, normalise_key(flt.persona), *common_args, t, p, *common_args]
    cur = conn.execute(query, args)
    hits: list[tuple[float, str, tuple[Any, ...]]] = []
    while rows := cur.fetchmany(_CHUNK):
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        sims = dots(matrix.reshape(len(rows), -1), vector)
        for i in np.flatnonzero(sims >= threshold):
            row = rows[int(i)]
            hits.append((float(sims[i]), row[0], row[2:]))
    hits.sort(key=lambda h: (-h[0], h[1]))
    return [
        NearMatch(UUID(memory_id), sim, dict(zip(APPLIES_TO_KEYS, applies, strict=True)))
        for sim, memory_id, applies in hits[:limit]
    ]


def _common(flt: CandidateFilter, model: str, width: int) -> tuple[str, list[Any]]:
    """The filter's conditions for both branches, and their parameters, in order."""
    parts = ["model = ?", "length(vector) = ?"]
    args: list[Any] = [model, width]
    if flt.memorules_only:
        parts.append(f"kind = '{Kind.MEMORULE.value}'")
    if flt.namespace is not None:
        parts.append("namespace = ?")
        args.append(flt.namespace)
    if flt.memorule_kinds:
        parts.append(f"memorule_kind IN ({', '.join('?' * len(flt.memorule_kinds))})")
        args += [k.value for k in flt.memorule_kinds]
    if flt.confidences:
        parts.append(f"confidence IN ({', '.join('?' * len(flt.confidences))})")
        args += [c.value for c in flt.confidences]
    for key, value in flt.exclude_conflicts.items():
        if key not in APPLIES_TO_KEYS:
            raise ValueError(f"unknown applies_to key {key!r}")
        parts.append(f"(a_{key} IS NULL OR a_{key} = ?)")
        args.append(value)
    return " AND ".join(parts), args
