"""Recall ranking (SPEC-094's "light v0.4 ranking", DESIGN §6) as pure, vectorised maths.

score = confidence_weight × (relevance·w_relevance + matched_keys·w_overlap
                             + scope_rank·w_scope + w_prior)

- relevance: cosine similarity of query and memory, clipped to [0, 1]; 0 for an empty query.
- matched_keys: how many of persona / surface / specialization the rule names with the
  context's value. A rule naming a different value conflicts and does not apply.
- scope_rank: narrower wins (SPEC-077): global 0, org 1, project 2, persona 3. Notes rank as
  project records.
- confidence_weight: observed > inferred > asserted; notes take ``note``.
Ties: newer ``written_at`` first, then the larger (newer) id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from app.domain.records import APPLIES_TO_KEYS, Confidence, Scope, SessionContext

SCOPE_RANK: dict[str | None, int] = {
    Scope.GLOBAL.value: 0,
    Scope.ORG.value: 1,
    Scope.PROJECT.value: 2,
    None: 2,
    Scope.PERSONA.value: 3,
}


@dataclass(frozen=True)
class RankingWeights:
    """Ranking weights; every one is a setting (``PRISM_RANK_*``)."""

    relevance: float = 1.0
    overlap: float = 0.1
    scope: float = 0.03
    prior: float = 0.1
    observed: float = 1.0
    inferred: float = 0.8
    asserted: float = 0.6
    note: float = 0.8

    def confidence_weight(self, confidence: str | None) -> float:
        if confidence == Confidence.OBSERVED.value:
            return self.observed
        if confidence == Confidence.INFERRED.value:
            return self.inferred
        if confidence == Confidence.ASSERTED.value:
            return self.asserted
        return self.note

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def normalise_key(value: str | None) -> str | None:
    """How applicability values compare: trimmed, case-insensitive."""
    return value.strip().lower() if value else None


@dataclass
class Candidates:
    """Recall candidates as columns, as a store returns them."""

    memory_ids: list[str] = field(default_factory=list)
    is_memorule: list[bool] = field(default_factory=list)
    scopes: list[str | None] = field(default_factory=list)
    persona: list[str | None] = field(default_factory=list)
    surface: list[str | None] = field(default_factory=list)
    specialization: list[str | None] = field(default_factory=list)
    confidences: list[str | None] = field(default_factory=list)
    written_at: list[str] = field(default_factory=list)
    matrix: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.float32)
    )

    def __len__(self) -> int:
        return len(self.memory_ids)


@dataclass(frozen=True)
class Ranked:
    """One candidate's place: its index in the candidates, score and reasons."""

    index: int
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
) -> list[Ranked]:
    """Order candidates for a context and return the best ``top_k``.

    Args:
        candidates: visible candidates (the store already applied tenant, visibility and
            filters).
        context: the session context the rules are matched against.
        query_vector: the unit query vector, or None for an empty query.
        weights: the ranking weights.
        top_k: how many to return.
        include_inapplicable: also return rules that conflict with the context, after all
            applicable ones, marked ``applicable: False``.

    Returns:
        At most ``top_k`` ranked entries, best first.
    """
    n = len(candidates)
    if n == 0:
        return []
    if query_vector is not None and candidates.matrix.shape[0] == n:
        relevance = np.clip(candidates.matrix @ query_vector, 0.0, 1.0).astype(np.float64)
    else:
        relevance = np.zeros(n)
    is_rule = np.asarray(candidates.is_memorule, dtype=bool)
    matches = np.zeros(n)
    conflicts = np.zeros(n, dtype=bool)
    columns = {k: np.asarray(getattr(candidates, k), dtype=object) for k in APPLIES_TO_KEYS}
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(context.value(key))
        if wanted is None:
            continue
        col = columns[key]
        named = np.fromiter((v is not None for v in col), bool, n)
        same = np.equal(col, wanted)
        matches += same & is_rule
        conflicts |= named & ~same & is_rule
    scope_rank = np.fromiter((SCOPE_RANK.get(s, 2) for s in candidates.scopes), float, n)
    conf_w = np.fromiter(
        (
            weights.confidence_weight(c) if r else weights.note
            for c, r in zip(candidates.confidences, candidates.is_memorule, strict=True)
        ),
        float,
        n,
    )
    raw = (
        weights.relevance * relevance
        + weights.overlap * matches
        + weights.scope * scope_rank
        + weights.prior
    )
    score = conf_w * raw
    applicable = ~conflicts
    keep = np.arange(n) if include_inapplicable else np.flatnonzero(applicable)
    if keep.size == 0:
        return []
    written = np.asarray(candidates.written_at, dtype=object)[keep]
    ids = np.asarray(candidates.memory_ids, dtype=object)[keep]
    # lexsort: last key is primary. Applicable first, score desc, newer first, larger id first.
    order = np.lexsort(
        (
            _desc_text(ids),
            _desc_text(written),
            -np.round(score[keep], 12),
            (~applicable[keep]).astype(int),
        )
    )[:top_k]
    out = []
    for pos in order:
        i = int(keep[pos])
        out.append(
            Ranked(
                index=i,
                score=float(score[i]),
                applicable=bool(applicable[i]),
                why=_why(
                    candidates,
                    context,
                    i,
                    relevance[i],
                    matches[i],
                    scope_rank[i],
                    conf_w[i],
                    score[i],
                    weights,
                ),
            )
        )
    return out


def _desc_text(values: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Sort keys that order text descending (lexsort sorts ascending)."""
    uniq = sorted(set(values.tolist()))
    pos = {v: i for i, v in enumerate(uniq)}
    return -np.fromiter((pos[v] for v in values.tolist()), np.int64, len(values))


def _why(
    c: Candidates,
    context: SessionContext,
    i: int,
    relevance: float,
    matches: float,
    scope_rank: float,
    conf_w: float,
    score: float,
    w: RankingWeights,
) -> dict[str, Any]:
    matched: list[str] = []
    conflicting: list[str] = []
    if c.is_memorule[i]:
        for key in APPLIES_TO_KEYS:
            wanted = normalise_key(context.value(key))
            have = getattr(c, key)[i]
            if wanted is None or have is None:
                continue
            (matched if have == wanted else conflicting).append(key)
    scope = c.scopes[i] or Scope.PROJECT.value
    return {
        "relevance": round(relevance, 6),
        "matched": matched,
        "conflicts": conflicting,
        "overlap": round(w.overlap * matches, 6),
        "scope": scope if c.is_memorule[i] else "project",
        "scope_bonus": round(w.scope * scope_rank, 6),
        "prior": w.prior,
        "confidence": c.confidences[i] if c.is_memorule[i] else None,
        "confidence_weight": conf_w,
        "score": round(score, 6),
    }
