"""The ``why`` of a ranked memory: its score's parts, in the same words on every engine.

:func:`parts_of` is shared by :func:`prism_memory.domain.ranking.rank` and the engines that score
in their database (``trigraph/postgres/ranking.py``), so every engine carries a score's parts
alike, as a typed :class:`ScoreParts`; :meth:`ScoreParts.why` is the one rendering of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prism_memory.domain.ranking_inputs import (
    ABSENT,
    CONFIDENCE_WEIGHT,
    NONE,
    Candidates,
    RankingWeights,
)
from prism_memory.domain.records import APPLIES_TO_KEYS, SessionContext


def normalise_key(value: str | None) -> str | None:
    """How applicability values compare: trimmed, case-insensitive."""
    return value.strip().lower() if value else None


@dataclass(frozen=True)
class ScoreParts:
    """The parts of one ranked memory's score, as the ranking computed them (not rounded).

    What reads a score's parts (section and neighbour smoothing, ``domain.sections``,
    ``domain.neighbours``) reads them here;
    :meth:`why` renders them, rounded, for the caller — the only place ``why`` is made.
    """

    relevance: float  # the clipped cosine
    lexical: float  # the BM25 share (``ranking._lexical_share``)
    matched: tuple[str, ...]  # the applies_to keys the rule names with the context's value
    conflicts: tuple[str, ...]  # those it names with another value
    scope_rank: int
    confidence_code: int
    overlap: float  # w_overlap · len(matched)
    scope_bonus: float  # w_scope · scope_rank
    prior: float
    confidence_weight: float
    # Set by section smoothing (``domain.sections``): the section and its mean relevance.
    section: str | None = None
    section_relevance: float | None = None
    # Set by neighbour smoothing (``domain.neighbours``): a note's neighbours' best relevance.
    neighbours_relevance: float | None = None

    def why(self, score: float) -> dict[str, Any]:
        """The ``why`` of a memory scored ``score`` with these parts, as callers see it."""
        out: dict[str, Any] = {
            "relevance": round(self.relevance, 6),
            "lexical": round(self.lexical, 6),
            "matched": list(self.matched),
            "conflicts": list(self.conflicts),
            "overlap": round(self.overlap, 6),
            "scope": SCOPE_NAME[self.scope_rank],
            "scope_bonus": round(self.scope_bonus, 6),
            "prior": self.prior,
            "confidence": CONFIDENCE_NAME[self.confidence_code],
            "confidence_weight": self.confidence_weight,
            "score": round(score, 6),
        }
        if self.section_relevance is not None:
            out["section"] = self.section
            out["section_relevance"] = round(self.section_relevance, 6)
        if self.neighbours_relevance is not None:
            out["neighbours_relevance"] = round(self.neighbours_relevance, 6)
        return out


def parts_of(
    weights: RankingWeights,
    *,
    relevance: float,
    lexical: float,
    matched: Sequence[str],
    conflicts: Sequence[str],
    scope_rank: int,
    confidence_code: int,
) -> ScoreParts:
    """The parts of one ranked memory's score.

    Shared by :func:`rank` and engines that score in their database, so every engine
    carries (and explains) a score alike. ``relevance`` is the clipped cosine, ``lexical``
    the BM25 share (``_lexical_share``), ``matched`` the applies_to keys the rule matched.
    """
    return ScoreParts(
        relevance=relevance,
        lexical=lexical,
        matched=tuple(matched),
        conflicts=tuple(conflicts),
        scope_rank=scope_rank,
        confidence_code=confidence_code,
        overlap=weights.overlap * float(len(matched)),
        scope_bonus=weights.scope * float(scope_rank),
        prior=weights.prior,
        confidence_weight=float(getattr(weights, CONFIDENCE_WEIGHT[confidence_code])),
    )


SCOPE_NAME = {0: "global", 1: "org", 2: "project", 3: "persona"}
CONFIDENCE_NAME: dict[int, str | None] = {0: "observed", 1: "inferred", 2: "asserted", 3: None}
# The RankingWeights field of each confidence code (``RankingWeights.by_confidence_code``
# and ``why`` read it from here).


def context_codes(c: Candidates, context: SessionContext) -> dict[str, int]:
    """Per applies_to key the context names and some candidate may name, the context
    value's code in ``c.vocab`` (``ABSENT`` when no candidate names it); for :func:`keys_of`."""
    codes: dict[str, int] = {}
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(context.value(key))
        if wanted is not None and key in c.keys:
            codes[key] = c.vocab[key].get(wanted, ABSENT)
    return codes


def keys_of(
    codes: dict[str, int], have: dict[str, int], is_memorule: bool
) -> tuple[list[str], list[str]]:
    """The applies_to keys a row matches and those it conflicts on, in key order: ``codes``
    from :func:`context_codes`, ``have`` the row's code per key (``NONE``: it names none)."""
    matched: list[str] = []
    conflicting: list[str] = []
    if not is_memorule:
        return matched, conflicting
    for key, code in codes.items():
        value = have[key]
        if value != NONE:
            (matched if value == code else conflicting).append(key)
    return matched, conflicting
