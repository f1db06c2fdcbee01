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

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.domain.lexical import LexicalHits
from prism_memory.domain.ranking_bounds import PRESELECT_MIN, dots, relevance
from prism_memory.domain.ranking_inputs import (
    ABSENT,
    CONFIDENCE_CODE,
    NONE,
    SCOPE_RANK,
    Candidates,
    FloatArray,
    RankingWeights,
    encode,
    micros_array,
    micros_of,
    tiebreak_of,
)
from prism_memory.domain.ranking_why import (
    ScoreParts,
    context_codes,
    keys_of,
    normalise_key,
    parts_of,
)
from prism_memory.domain.records import APPLIES_TO_KEYS, SessionContext

__all__ = [  # what other modules import from here (the inputs are defined in ranking_inputs)
    "ABSENT",
    "CONFIDENCE_CODE",
    "NONE",
    "PRESELECT_MIN",
    "SCOPE_RANK",
    "Candidates",
    "Ranked",
    "RankingWeights",
    "ScoreParts",
    "dots",
    "encode",
    "micros_array",
    "micros_of",
    "normalise_key",
    "parts_of",
    "rank",
    "tiebreak_of",
]


@dataclass(frozen=True)
class Ranked:
    """One candidate's place: its row in the candidates, its score and the score's parts."""

    index: int
    memory_id: str
    score: float
    applicable: bool
    parts: ScoreParts

    @property
    def why(self) -> dict[str, Any]:
        """The score's parts as callers see them (``ScoreParts.why``)."""
        return self.parts.why(self.score)


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
        parts = parts_of(
            weights,
            relevance=cosines[n],
            lexical=lexes[n],
            matched=matched,
            conflicts=conflicting,
            scope_rank=scope_rank,
            confidence_code=conf,
        )
        out.append(Ranked(i, str(memory_id), scores[n], fits, parts))
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
