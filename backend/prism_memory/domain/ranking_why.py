"""The ``why`` of a ranked memory: its score's parts, in the same words on every engine.

:func:`why_of` is shared by :func:`prism_memory.domain.ranking.rank` and the engines that score in
their database (``trigraph/postgres/ranking.py``), so every engine explains a score alike.
"""

from __future__ import annotations

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
        "scope": SCOPE_NAME[scope_rank],
        "scope_bonus": round(weights.scope * float(scope_rank), 6),
        "prior": weights.prior,
        "confidence": CONFIDENCE_NAME[confidence_code],
        "confidence_weight": float(getattr(weights, CONFIDENCE_WEIGHT[confidence_code])),
        "score": round(score, 6),
    }


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
