"""What an engine hands a recall cache: one memory's recall row, or many as columns.

Both engines select the same columns from ``recall_index``; :class:`IndexRow` is one such
row (changes folded in one by one), :data:`Columns` a whole result set column by column
(a cache's first load, with no object per row).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from prism_memory.domain.records import Kind

_MEMORULE = Kind.MEMORULE.value


@dataclass(frozen=True)
class IndexRow:
    """One memory's recall row as an engine stores it (applies_to values normalised)."""

    memory_id: str
    project_id: str
    active: bool
    is_memorule: bool
    namespace: str
    memorule_kind: str | None
    confidence: str | None
    scope: str | None
    persona: str | None
    surface: str | None
    specialization: str | None
    written_at: str
    vector: bytes | None  # None: embedded by another model (scores as zero relevance)
    text: str  # the current state's subject and body: what BM25 indexes

    @classmethod
    def of(cls, r: Sequence[Any], vector: bytes | None, text: str | None) -> IndexRow:
        """From a row whose first 12 columns are, in order: memory_id, project_id, active,
        kind, namespace, memorule_kind, confidence, scope, a_persona, a_surface,
        a_specialization, written_at (as both engines select them from ``recall_index``)."""
        return cls(
            memory_id=r[0],
            project_id=r[1],
            active=bool(r[2]),
            is_memorule=r[3] == _MEMORULE,
            namespace=r[4],
            memorule_kind=r[5],
            confidence=r[6],
            scope=r[7],
            persona=r[8],
            surface=r[9],
            specialization=r[10],
            written_at=r[11],
            vector=vector,
            text=text or "",
        )


_FIELDS = tuple(f.name for f in fields(IndexRow))
Columns = dict[str, Sequence[Any]]  # an IndexRow field -> that field of each row


def columns_of(rows: Sequence[IndexRow]) -> Columns:
    """``rows`` as columns (what :meth:`ProjectCache.load` and appends take)."""
    return {f: [getattr(r, f) for r in rows] for f in _FIELDS}


def columns_from_index(raw: Sequence[Sequence[Any]], model: str) -> Columns:
    """:meth:`IndexRow.of` for a whole result set at once, column by column: rows of the
    12 columns ``IndexRow.of`` reads, then the row's model, its vector and its text."""
    if not raw:
        return {f: [] for f in _FIELDS}
    c = list(zip(*raw, strict=True))
    return {
        "memory_id": c[0],
        "project_id": c[1],
        "active": [bool(a) for a in c[2]],
        "is_memorule": [k == _MEMORULE for k in c[3]],
        "namespace": c[4],
        "memorule_kind": c[5],
        "confidence": c[6],
        "scope": c[7],
        "persona": c[8],
        "surface": c[9],
        "specialization": c[10],
        "written_at": c[11],
        "vector": [v if m == model else None for m, v in zip(c[12], c[13], strict=True)],
        "text": [t or "" for t in c[14]],
    }
