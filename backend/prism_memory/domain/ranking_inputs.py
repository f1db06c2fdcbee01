"""What recall ranks: the candidates as columns, the weights, and the codes both share.

Kept apart from :mod:`prism_memory.domain.ranking` (the scoring), so the pieces of ranking —
the score (``ranking``), its pruning bound (``ranking_bounds``) and its explanation
(``ranking_why``) — all read their inputs from here and none imports another in a circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.domain.lexical import K1, B, LexicalHits, Lexicon
from prism_memory.domain.records import APPLIES_TO_KEYS, Confidence, Scope, parse_iso

NONE = -1  # code of "the rule names no value for this key" (:func:`encode`)
ABSENT = -2  # code of a context value no candidate names
# The weight field of each confidence code (``RankingWeights.by_confidence_code``, ``why``).
CONFIDENCE_WEIGHT = ("observed", "inferred", "asserted", "note")

SCOPE_RANK: dict[str | None, int] = {
    Scope.GLOBAL.value: 0,
    Scope.ORG.value: 1,
    Scope.PROJECT.value: 2,
    None: 2,
    Scope.PERSONA.value: 3,
}
CONFIDENCE_CODE: dict[str | None, int] = {
    Confidence.OBSERVED.value: 0,
    Confidence.INFERRED.value: 1,
    Confidence.ASSERTED.value: 2,
    None: 3,
}

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RankingWeights:
    """Ranking weights; every one is a setting (``PRISM_RANK_*``)."""

    relevance: float = 1.0
    lexical: float = 0.3  # a memorule's share of relevance that is lexical (BM25)
    lexical_note: float = 0.5  # the same share for notes
    overlap: float = 0.5
    scope: float = 0.1
    prior: float = 0.1
    observed: float = 1.0
    inferred: float = 0.8
    asserted: float = 0.6
    note: float = 0.8
    # Context keys whose values the query's words restating them are dropped from it before
    # relevance is scored (``domain.restated``).
    restated: tuple[str, ...] = ("persona", "surface")
    bm25_k1: float = K1  # BM25's term-frequency saturation (``domain.lexical``)
    bm25_b: float = B  # BM25's document-length normalisation (0: none)
    # λ of the section smoothing recall applies to its best ``section_window`` candidates
    # (``domain.sections``): a memory's relevance is (1 − λ)·its own + λ·its section's mean.
    section: float = 0.5
    section_window: int = 100
    # μ of the neighbour smoothing recall applies to the notes of the same window
    # (``domain.neighbours``): a note's relevance is (1 − μ)·its own + μ·the best of the
    # notes within ±``neighbours_window`` places of it in writing order.
    neighbours: float = 0.3
    neighbours_window: int = 2
    # ... only when the window's best notes sit closer together in writing order than
    # chance by at least this much (``domain.neighbours.order_excess``; 0: always).
    neighbours_gate: float = 0.15

    def by_confidence_code(self) -> FloatArray:
        return np.array([getattr(self, name) for name in CONFIDENCE_WEIGHT], dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def encode(values: Sequence[str | None], vocab: dict[str, int]) -> IntArray:
    """Categorical codes of ``values`` (``NONE`` for None), growing ``vocab`` as needed."""
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        out[i] = NONE if v is None else vocab.setdefault(v, len(vocab))
    return out


def tiebreak_of(memory_id: str) -> int:
    """A sortable integer from a UUIDv7 string's first 60 bits (time, then counter)."""
    return int(memory_id.replace("-", "")[:15], 16)


def micros_of(written_at: str) -> int:
    ts = parse_iso(written_at)
    return int(ts.timestamp()) * 1_000_000 + ts.microsecond


def micros_array(written_at: Sequence[str]) -> IntArray:
    """``micros_of`` for many ISO 8601 UTC stamps at once (the ``...Z`` form Prism writes)."""
    if all(w.endswith("Z") for w in written_at):
        stamps = np.array([w[:-1] for w in written_at], dtype="datetime64[us]")
        return stamps.astype(np.int64)
    return np.fromiter((micros_of(w) for w in written_at), np.int64, len(written_at))


@dataclass
class Candidates:
    """Recall candidates as columns. ``selected`` marks the rows the filters kept."""

    ids: npt.NDArray[np.object_] = field(default_factory=lambda: np.empty(0, dtype=object))
    is_memorule: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    scope_rank: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    confidence: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    written_us: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tiebreak: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    keys: dict[str, IntArray] = field(default_factory=dict)
    vocab: dict[str, dict[str, int]] = field(default_factory=dict)
    matrix: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.float32)
    )
    selected: BoolArray | None = None
    # The sketch ``ranking_bounds.relevance`` prunes with: ``coarse`` = (matrix @
    # projection).T, and each row's ``residual`` norm (what the orthonormal ``projection`` misses).
    coarse: npt.NDArray[np.float32] | None = None
    projection: npt.NDArray[np.float32] | None = None
    residual: npt.NDArray[np.float32] | None = None
    lexicon: Lexicon | None = None  # BM25 over the same rows, if the store keeps one
    live: BoolArray | None = None  # rows not superseded nor retired (BM25's statistics)

    def lexical_hits(self, query: str, weights: RankingWeights | None = None) -> LexicalHits | None:
        """BM25 of ``query`` over these rows (with ``weights``' k1 and b, default the
        defaults), or None when the store keeps no index."""
        if self.lexicon is None or not query.strip():
            return None
        live = self.live if self.live is not None else np.ones(len(self.ids), dtype=bool)
        w = weights or RankingWeights()
        return self.lexicon.search(query, len(self.ids), live, w.bm25_k1, w.bm25_b)

    def __len__(self) -> int:
        return int(self.selected.sum()) if self.selected is not None else len(self.ids)

    @classmethod
    def from_rows(
        cls,
        ids: Sequence[str],
        is_memorule: Sequence[bool],
        scopes: Sequence[str | None],
        applies: dict[str, Sequence[str | None]],
        confidences: Sequence[str | None],
        written_at: Sequence[str],
        matrix: npt.NDArray[np.float32],
    ) -> Candidates:
        """Build columns from plain row values (applies_to values already normalised)."""
        vocab: dict[str, dict[str, int]] = {k: {} for k in APPLIES_TO_KEYS}
        return cls(
            ids=np.asarray(list(ids), dtype=object),
            is_memorule=np.asarray(list(is_memorule), dtype=bool),
            scope_rank=np.fromiter((SCOPE_RANK.get(s, 2) for s in scopes), np.int64, len(ids)),
            confidence=np.fromiter(
                (CONFIDENCE_CODE.get(c, 3) for c in confidences), np.int64, len(ids)
            ),
            written_us=micros_array(written_at),
            tiebreak=np.fromiter((tiebreak_of(i) for i in ids), np.int64, len(ids)),
            keys={k: encode(applies[k], vocab[k]) for k in APPLIES_TO_KEYS},
            vocab=vocab,
            matrix=matrix,
        )
