"""Recall ranking (SPEC-094's "light v0.4 ranking", DESIGN §6) as pure, vectorised maths.

score = confidence_weight × (relevance·w_relevance + matched_keys·w_overlap
                             + scope_rank·w_scope + w_prior)

- relevance: (1 − w_lexical)·cosine + w_lexical·lexical, w_lexical being ``lexical`` for
  memorules and ``lexical_note`` for notes. cosine: of query and memory
  vectors, clipped to [0, 1]; lexical: the memory's BM25 for the query (``domain.lexical``)
  as a share of the query's ceiling (the sum of its terms' idf), clipped to [0, 1]. Both 0
  for an empty query. The query is the task without the words that only restate the
  context (``domain.restated``; the recall service drops them before embedding, so every
  engine ranks the same text).
- matched_keys: how many of persona / surface / specialization the rule names with the
  context's value. A rule naming a different value conflicts and does not apply.
- scope_rank: narrower wins (SPEC-077): global 0, org 1, project 2, persona 3. Notes rank as
  project records.
- confidence_weight: observed > inferred > asserted; notes take ``note``.
Ties: newer ``written_at`` first, then the newer (larger) id.

Candidates are columns of numbers (categorical codes), so ranking 100k memories is a few
numpy passes, not a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.domain.lexical import K1, B, LexicalHits, Lexicon
from prism_memory.domain.ranking_bounds import PRESELECT_MIN, dots, relevance, rows_within_reach
from prism_memory.domain.ranking_why import (
    ABSENT,
    CONFIDENCE_WEIGHT,
    NONE,
    context_codes,
    keys_of,
    normalise_key,
    why_of,
)
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    Confidence,
    Scope,
    SessionContext,
    parse_iso,
)

__all__ = [  # what other modules import from here (some defined in the two split off)
    "ABSENT",
    "CONFIDENCE_CODE",
    "NONE",
    "PRESELECT_MIN",
    "SCOPE_RANK",
    "Candidates",
    "Ranked",
    "RankingWeights",
    "dots",
    "encode",
    "micros_array",
    "micros_of",
    "normalise_key",
    "rank",
    "rows_within_reach",
    "tiebreak_of",
    "why_of",
]

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


@dataclass(frozen=True)
class Ranked:
    """One candidate's place: its row in the candidates, score and reasons."""

    index: int
    memory_id: str
    score: float
    applicable: bool
    why: dict[str, Any]


def rank(
    candidates: Candidates,
    context: SessionContext,
    query_vector: npt.NDArray[np.float32] | None,
    weights: RankingWeights,
    top_k: int,
    include_inapplicable: bool = False,
    preselect_above: int = 0,
    lexical: LexicalHits | None = None,
) -> list[Ranked]:
    """Order candidates for a context and return the best ``top_k``.

    Args:
        candidates: visible candidates (the store already applied tenant and visibility).
        context: the session context the rules are matched against.
        query_vector: the unit query vector, or None for an empty query.
        weights: the ranking weights.
        top_k: how many to return.
        include_inapplicable: also return rules that conflict with the context, after all
            applicable ones, marked ``applicable: False``.
        preselect_above: above this many candidates, skip the rows the vectors' sketch
            proves cannot reach the top (``ranking_bounds.relevance``; same result); 0
            scores every row.
        lexical: the query's BM25 hits over the candidate rows (``Candidates.lexical_hits``),
            or None. Relevance becomes ``(1 − w_lexical)·cosine + w_lexical·lexical``
            (``_lexical_share``); ``ranking_bounds.relevance`` gets the per-row shares so
            its pruning bounds count them (a row may rank on its words alone).

    Returns:
        At most ``top_k`` ranked entries, best first.
    """
    n = len(candidates.ids)
    if n == 0:
        return []
    matches = np.zeros(n)
    conflicts = np.zeros(n, dtype=bool)
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(context.value(key))
        if wanted is None or key not in candidates.keys:
            continue
        col = candidates.keys[key]
        same = col == candidates.vocab[key].get(wanted, ABSENT)
        matches += same
        conflicts |= (col != NONE) & ~same
    matches *= candidates.is_memorule
    conflicts &= candidates.is_memorule
    conf_w = weights.by_confidence_code()[candidates.confidence]
    rest = weights.overlap * matches + weights.scope * candidates.scope_rank + weights.prior
    applicable = ~conflicts
    keep = applicable.copy() if not include_inapplicable else np.ones(n, dtype=bool)
    if candidates.selected is not None:
        keep &= candidates.selected
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return []
    alpha = np.where(candidates.is_memorule, weights.lexical, weights.lexical_note)
    lex = _lexical_share(lexical, n, bool(alpha.any()))
    idx, cosine = relevance(
        candidates,
        query_vector,
        idx,
        conf_w,
        rest,
        applicable,
        weights,
        top_k,
        preselect_above,
        lex,
        alpha,
    )
    mixed = cosine
    if lex is not None:
        mixed = (1.0 - alpha[idx]) * cosine + alpha[idx] * lex[idx]
    score_idx = conf_w[idx] * (weights.relevance * mixed + rest[idx])
    rounded = np.round(score_idx, 9)
    primary = rounded + applicable[idx] * 1e6
    if idx.size > top_k:
        kth = np.partition(primary, idx.size - top_k)[idx.size - top_k]
        close = primary >= kth
        idx, rounded, cosine, score_idx = (
            idx[close],
            rounded[close],
            cosine[close],
            score_idx[close],
        )
    order = np.lexsort(
        (
            -candidates.tiebreak[idx],
            -candidates.written_us[idx],
            -rounded,
            (~applicable[idx]).astype(np.int64),
        )
    )[:top_k]
    # The rows' parts as Python values, column by column (not a numpy scalar per field).
    rows = idx[order]
    scores, cosines = score_idx[order].tolist(), cosine[order].tolist()
    lexes = lex[rows].tolist() if lex is not None else [0.0] * len(scores)
    codes = context_codes(candidates, context)
    named = {key: candidates.keys[key][rows].tolist() for key in codes}
    out = []
    for n, (i, memory_id, scope_rank, conf, memorule, fits) in enumerate(
        zip(
            rows.tolist(),
            candidates.ids[rows].tolist(),
            candidates.scope_rank[rows].tolist(),
            candidates.confidence[rows].tolist(),
            candidates.is_memorule[rows].tolist(),
            applicable[rows].tolist(),
            strict=True,
        )
    ):
        matched, conflicting = keys_of(codes, {k: v[n] for k, v in named.items()}, memorule)
        why = why_of(
            weights,
            relevance=cosines[n],
            lexical=lexes[n],
            matched=matched,
            conflicts=conflicting,
            scope_rank=scope_rank,
            confidence_code=conf,
            score=scores[n],
        )
        out.append(Ranked(i, str(memory_id), scores[n], fits, why))
    return out


def _lexical_share(hits: LexicalHits | None, n: int, weighted: bool) -> FloatArray | None:
    """Per candidate row, BM25 as a share of the query's ceiling, clipped to [0, 1].

    The ceiling (``LexicalHits.ceiling``) is what a document of average length holding
    each query term once would score, so a long query that a memory matches in one rare
    word gives it little, and a short question matched in full gives it nearly 1. (Scaling
    by the best hit instead gave the best hit 1 however weak it was: on the dev data that
    cost the rule benchmark several times more for the same LoCoMo gain; bench/README.md.)
    None when lexical scoring is off (no hits computed, or every weight zero).
    """
    if hits is None or not weighted:
        return None
    lex = np.zeros(n)
    inside = hits.rows < n
    if hits.ceiling > 0.0:
        lex[hits.rows[inside]] = np.minimum(hits.scores[inside] / hits.ceiling, 1.0)
    return lex
