"""Rules filed under one heading share a topic: recall smooths relevance within a section.

A memory's **section** is the lead of its subject before the first ``": "`` — the heading
``prism import-rules`` writes there ("Testing: Run the suite before every commit."), or a
label a writer chose the same way — compared without case or repeated spaces, and at most
:data:`SECTION_MAX` characters (a longer lead is a sentence with a colon, not a heading).

Recall ranks its best ``section_window`` candidates as usual, then interpolates each
memory's relevance with the mean relevance of the window's memories in its section
(the cluster hypothesis: rules under one heading are about one thing)::

    relevance' = (1 − λ)·relevance + λ·mean(relevance of its section in the window)

so a rule whose neighbours under the same heading also match the task rises, and one that
matched on a side word while its section is about something else sinks. The score moves
by ``confidence_weight · w_relevance · λ · (mean − relevance)``, everything else in it
stays. A memory without a section, alone in its section within the window, or not
applicable (``include_inapplicable``) keeps its score. An empty query changes nothing:
every relevance is 0.

``relevance`` is the hybrid relevance the ranking scored (``ranking.rank``):
``(1 − w_lexical)·cosine + w_lexical·lexical``, read from each match's score parts
(``ranking_why.ScoreParts``, as the ranking computed them) so that every engine's ranking is
smoothed alike, and the parts gain ``section`` and ``section_relevance`` (the mean), which
the ``why`` shows to explain the new score.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from prism_memory.domain.ranking import Ranked, RankingWeights

SECTION_MAX: Final = 60  # the importer shortens a heading to 60 characters (CONTEXT_MAX)
_SEP: Final = ": "


def section_of(subject: str | None) -> str | None:
    """The section a subject files its memory under, or None (module docstring)."""
    if not subject:
        return None
    lead, sep, rest = subject.partition(_SEP)
    key = " ".join(lead.split()).casefold()
    if not sep or not rest.strip() or not key or len(key) > SECTION_MAX:
        return None
    return key


def smooth(
    ranked: Sequence[Ranked],
    sections: Sequence[str | None],
    is_memorule: Sequence[bool],
    weights: RankingWeights,
) -> list[Ranked]:
    """``ranked`` (best first) re-ordered with section-smoothed relevance.

    Args:
        ranked: one engine's ranking of the window, best first.
        sections: each entry's :func:`section_of`, in the same order.
        is_memorule: whether each entry is a memorule (its lexical share is ``lexical``;
            a note's is ``lexical_note``).
        weights: the ranking weights (``section`` is λ).

    Returns:
        The same entries, applicable first, then by new score (rounded to 1e-9 as ``rank``
        rounds); equal scores keep the engine's order (newer first).
    """
    lam = weights.section
    if lam <= 0.0 or len(ranked) < 2:
        return list(ranked)
    members: dict[str, list[int]] = defaultdict(list)
    for i, (r, section) in enumerate(zip(ranked, sections, strict=True)):
        if section is not None and r.applicable:
            members[section].append(i)
    groups = [rows for rows in members.values() if len(rows) > 1]
    if not groups:  # no heading shared within the window: nothing moves
        return list(ranked)
    out = list(ranked)
    for rows in groups:
        mixed = {i: relevance_of(ranked[i], is_memorule[i], weights) for i in rows}
        mean = sum(mixed.values()) / len(rows)
        for i in rows:
            r = ranked[i]
            weight = r.parts.confidence_weight * weights.relevance * lam
            score = r.score + weight * (mean - mixed[i])
            parts = replace(r.parts, section=sections[i], section_relevance=mean)
            out[i] = Ranked(r.index, r.memory_id, score, r.applicable, parts)
    order = sorted(
        range(len(out)), key=lambda i: (not out[i].applicable, -round(out[i].score, 9), i)
    )
    return [out[i] for i in order]


def relevance_of(r: Ranked, is_memorule: bool, weights: RankingWeights) -> float:
    """The hybrid relevance ``rank`` scored ``r`` with, from its score parts (a memorule's
    lexical share is ``lexical``, a note's ``lexical_note``)."""
    alpha = weights.lexical if is_memorule else weights.lexical_note
    return (1.0 - alpha) * r.parts.relevance + alpha * r.parts.lexical
