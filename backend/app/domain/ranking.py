"""Recall ranking (SPEC-094's "light v0.4 ranking", DESIGN §6) as pure, vectorised maths.

score = confidence_weight × (relevance·w_relevance + matched_keys·w_overlap
                             + scope_rank·w_scope + w_prior)

- relevance: (1 − w_lexical)·cosine + w_lexical·lexical, w_lexical being ``lexical`` for
  memorules and ``lexical_note`` for notes. cosine: of query and memory
  vectors, clipped to [0, 1]; lexical: the memory's BM25 for the query (``domain.lexical``)
  as a share of the query's ceiling (the sum of its terms' idf), clipped to [0, 1]. Both 0
  for an empty query.
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

from app.domain.lexical import LexicalHits, Lexicon
from app.domain.records import APPLIES_TO_KEYS, Confidence, Scope, SessionContext, parse_iso

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
NONE = -1  # code of "the rule names no value for this key"
ABSENT = -2  # code of a context value no candidate names

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RankingWeights:
    """Ranking weights; every one is a setting (``PRISM_RANK_*``)."""

    relevance: float = 1.0
    lexical: float = 0.3  # a memorule's share of relevance that is lexical (BM25)
    lexical_note: float = 0.6  # the same share for notes
    overlap: float = 0.5
    scope: float = 0.1
    prior: float = 0.1
    observed: float = 1.0
    inferred: float = 0.8
    asserted: float = 0.6
    note: float = 0.8

    def by_confidence_code(self) -> FloatArray:
        return np.array([self.observed, self.inferred, self.asserted, self.note])

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def normalise_key(value: str | None) -> str | None:
    """How applicability values compare: trimmed, case-insensitive."""
    return value.strip().lower() if value else None


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


def dots(rows: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row's dot product with ``q``, the same wherever the row sits.

    A BLAS matrix-vector product rounds a row differently at a block's edge (by ~1e-8),
    so the same memory would score differently in two caches holding it at different
    positions; ``einsum`` sums every row alike, and costs about the same here.
    """
    out: npt.NDArray[np.float32] = np.einsum("ij,j->i", rows, q)
    return out


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
    # The sketch ``_relevance`` prunes with: ``coarse`` = (matrix @ projection).T, and each
    # row's ``residual`` norm (what the orthonormal ``projection`` misses).
    coarse: npt.NDArray[np.float32] | None = None
    projection: npt.NDArray[np.float32] | None = None
    residual: npt.NDArray[np.float32] | None = None
    lexicon: Lexicon | None = None  # BM25 over the same rows, if the store keeps one
    live: BoolArray | None = None  # rows not superseded nor retired (BM25's statistics)

    def lexical_hits(self, query: str) -> LexicalHits | None:
        """BM25 of ``query`` over these rows, or None when the store keeps no index."""
        if self.lexicon is None or not query.strip():
            return None
        live = self.live if self.live is not None else np.ones(len(self.ids), dtype=bool)
        return self.lexicon.search(query, len(self.ids), live)

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
            proves cannot reach the top (``_relevance``; same result); 0 scores every row.
        lexical: the query's BM25 hits over the candidate rows (``Candidates.lexical_hits``),
            or None. Relevance becomes ``(1 − w_lexical)·cosine + w_lexical·lexical``
            (``_lexical_share``); ``_relevance`` gets the per-row shares so its pruning
            bounds count them (a row may rank on its words alone).

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
    idx, relevance = _relevance(
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
    mixed = relevance
    if lex is not None:
        mixed = (1.0 - alpha[idx]) * relevance + alpha[idx] * lex[idx]
    score_idx = conf_w[idx] * (weights.relevance * mixed + rest[idx])
    rounded = np.round(score_idx, 9)
    primary = rounded + applicable[idx] * 1e6
    if idx.size > top_k:
        kth = np.partition(primary, idx.size - top_k)[idx.size - top_k]
        close = primary >= kth
        idx, rounded, relevance, score_idx = (
            idx[close],
            rounded[close],
            relevance[close],
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
    out = []
    for pos in order:
        i = int(idx[pos])
        matched, conflicting = _keys_of(candidates, context, i)
        score = float(score_idx[pos])
        why = why_of(
            weights,
            relevance=float(relevance[pos]),
            lexical=float(lex[i]) if lex is not None else 0.0,
            matched=matched,
            conflicts=conflicting,
            scope_rank=int(candidates.scope_rank[i]),
            confidence_code=int(candidates.confidence[i]),
            score=score,
        )
        out.append(Ranked(i, str(candidates.ids[i]), score, bool(applicable[i]), why))
    return out


def why_of(
    weights: RankingWeights,
    *,
    relevance: float,
    lexical: float,
    matched: list[str],
    conflicts: list[str],
    scope_rank: int,
    confidence_code: int,
    score: float,
) -> dict[str, Any]:
    """The ``why`` of one ranked memory, from the parts of its score.

    Shared by :func:`rank` and engines that score in their database, so every engine
    explains a score in the same words. ``relevance`` is the clipped cosine, ``lexical``
    the BM25 share (``_lexical_share``), ``matched`` the applies_to keys the rule matched.
    """
    return {
        "relevance": round(relevance, 6),
        "lexical": round(lexical, 6),
        "matched": matched,
        "conflicts": conflicts,
        "overlap": round(weights.overlap * float(len(matched)), 6),
        "scope": _SCOPE_NAME[scope_rank],
        "scope_bonus": round(weights.scope * float(scope_rank), 6),
        "prior": weights.prior,
        "confidence": _CONFIDENCE_NAME[confidence_code],
        "confidence_weight": float(weights.by_confidence_code()[confidence_code]),
        "score": round(score, 6),
    }


PRESELECT_MIN = 4096  # below this many vectors a cache keeps no sketch


def _relevance(
    c: Candidates,
    q: npt.NDArray[np.float32] | None,
    idx: IntArray,
    conf_w: FloatArray,
    rest: FloatArray,
    applicable: BoolArray,
    weights: RankingWeights,
    top_k: int,
    preselect_above: int,
    lexical: FloatArray | None = None,
    alpha: FloatArray | None = None,
) -> tuple[IntArray, FloatArray]:
    """Clipped cosine for every row of ``idx`` that can reach the top ``top_k``.

    Above ``preselect_above`` rows (and with a sketch), rows that provably cannot reach
    the top are skipped, so the result is the same as scoring every row:

    1. The sketch gives each row an estimate ``Px·Pq`` and an upper bound
       ``Px·Pq + |x − PPᵀx|·|q − PPᵀq|`` of its cosine (Cauchy–Schwarz on what the
       orthonormal projection misses).
    2. The ``max(64, 4·top_k)`` rows with the best estimated scores are scored exactly;
       the ``top_k``-th best of those scores is a floor the final top must reach.
    3. The other rows whose upper-bound score reaches that floor are scored exactly, best
       bound first, raising the floor as they go; once the next bound is below the floor,
       no row left can beat ``top_k`` rows already in hand.

    When too many rows survive (vectors with no low-dimensional structure) every row is
    scored exactly, as below ``preselect_above``.

    Args:
        lexical: per-row lexical share (``_lexical_share``), mixed into relevance with
            the per-row weight ``alpha`` (``weights.lexical`` or ``lexical_note``); the
            bound accounts for it.

    Returns:
        The rows scored and their clipped cosine (float64), in matching order.
    """
    m = c.matrix
    if q is None or m.shape[0] != len(c.ids) or m.shape[1] != q.shape[0]:
        return idx, np.zeros(idx.size)
    if 0 < preselect_above < idx.size and c.coarse is not None:
        pruned = _pruned(c, q, idx, conf_w, rest, applicable, weights, top_k, lexical, alpha)
        if pruned is not None:
            return pruned
    exact = dots(m, q)[idx] if idx.size * 2 > m.shape[0] else dots(m[idx], q)
    return idx, np.clip(exact, 0.0, 1.0).astype(np.float64)


_BOUND_SLACK = 1e-4  # float32 rounding in the sketch, far above its worst case


def rows_within_reach(c: Candidates, q: npt.NDArray[np.float32], floor: float) -> IntArray | None:
    """Rows whose cosine with ``q`` may reach ``floor``; None (every row) without a sketch.

    Exact in the same way as ``_relevance``: a row left out has a cosine bound below
    ``floor``. Used by the near-duplicate check on every write.
    """
    if c.coarse is None or c.projection is None or c.residual is None:
        return None
    qp = q @ c.projection
    q_left = float(np.sqrt(max(float(q @ q) - float(qp @ qp), 0.0)))
    bound = qp @ c.coarse + q_left * c.residual
    return np.flatnonzero(bound >= floor - _BOUND_SLACK)


def _pruned(
    c: Candidates,
    q: npt.NDArray[np.float32],
    idx: IntArray,
    conf_w: FloatArray,
    rest: FloatArray,
    applicable: BoolArray,
    weights: RankingWeights,
    top_k: int,
    lexical: FloatArray | None,
    alpha: FloatArray | None,
) -> tuple[IntArray, FloatArray] | None:
    """``_relevance`` by sketch bounds (see there); None when pruning would not pay."""
    if c.projection is None or c.residual is None or c.coarse is None:
        return None
    lex_w = alpha[idx] if lexical is not None and alpha is not None else 0.0
    cos_w = conf_w[idx] * (weights.relevance * (1.0 - lex_w))
    if not (cos_w >= 0).all():  # a negative weight turns the bound around: score all
        return None
    base = conf_w[idx] * rest[idx] + applicable[idx] * 1e6
    if lexical is not None:
        base = base + conf_w[idx] * (weights.relevance * lex_w) * lexical[idx]
    qp = q @ c.projection
    q_left = float(np.sqrt(max(float(q @ q) - float(qp @ qp), 0.0)))
    estimate = (qp @ c.coarse)[idx]
    first = min(idx.size, max(64, 4 * top_k))
    short = np.argpartition(-(cos_w * np.clip(estimate, 0.0, 1.0) + base), first - 1)[:first]
    short_cos = np.clip(dots(c.matrix[idx[short]], q), 0.0, 1.0).astype(np.float64)
    short_score = cos_w[short] * short_cos + base[short]
    floor = np.partition(short_score, first - top_k)[first - top_k] if first >= top_k else -np.inf
    bound = cos_w * np.clip(estimate + q_left * c.residual[idx], 0.0, 1.0) + base
    survive = bound >= floor - _BOUND_SLACK
    survive[short] = False
    more = np.flatnonzero(survive)
    if more.size > idx.size // 4:
        return None
    # Best bounds first: each exactly scored block can raise the floor, and once the next
    # bound is below it nothing left can enter the top.
    more = more[np.argsort(-bound[more], kind="stable")]
    rows, cosines, scores = [short], [short_cos], short_score
    for lo in range(0, more.size, 256):
        block = more[lo : lo + 256]
        if bound[block[0]] < floor - _BOUND_SLACK:
            break
        cos = np.clip(dots(c.matrix[idx[block]], q), 0.0, 1.0).astype(np.float64)
        rows.append(block)
        cosines.append(cos)
        scores = np.concatenate([scores, cos_w[block] * cos + base[block]])
        floor = np.partition(scores, scores.size - top_k)[scores.size - top_k]
    return idx[np.concatenate(rows)], np.concatenate(cosines)


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


_SCOPE_NAME = {0: "global", 1: "org", 2: "project", 3: "persona"}
_CONFIDENCE_NAME: dict[int, str | None] = {0: "observed", 1: "inferred", 2: "asserted", 3: None}


def _keys_of(c: Candidates, context: SessionContext, i: int) -> tuple[list[str], list[str]]:
    matched: list[str] = []
    conflicting: list[str] = []
    if not c.is_memorule[i]:
        return matched, conflicting
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(context.value(key))
        have = int(c.keys[key][i]) if key in c.keys else NONE
        if wanted is None or have == NONE:
            continue
        (matched if have == c.vocab[key].get(wanted, ABSENT) else conflicting).append(key)
    return matched, conflicting
