"""Notes written one after another are context for each other: recall smooths a note's
relevance with its neighbours' in writing order.

A conversation's turns or an agent's running log are notes written in sequence, and the
answer to a question often sits in the note after the one the question's words match.
Section smoothing (``domain.sections``) lets a memorule's heading speak for it; notes have
no heading, so their **neighbours** do: the notes written just before and after, within
±``neighbours_window`` places in writing order among the live notes of the same project and
namespace (a :class:`NotePlace`, which each engine reads from its index in one query).

Recall ranks its best ``section_window`` candidates as usual, then::

    relevance' = (1 − μ)·relevance + μ·max(relevance of the note's neighbours)

``μ`` is ``neighbours``. A neighbour outside the window counts as relevance 0 (its own is
not computed: the window is what either engine hands back), and a place beyond the first or
last note is no neighbour. The score moves by ``confidence_weight · w_relevance · μ ·
(max − relevance)``; everything else in it stays. Memorules, inapplicable entries and a
note with no other note in its project and namespace keep their scores; an empty query
changes nothing (every relevance is 0). ``relevance`` is the hybrid relevance the ranking
scored (``sections.relevance_of``); a note's parts gain ``neighbours_relevance`` (the max),
which ``why`` shows. Chosen on LoCoMo's tuning half (``bench/studies/neighbours.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from prism_memory.domain.ranking import Ranked, RankingWeights
from prism_memory.domain.sections import relevance_of


@dataclass(frozen=True)
class NotePlace:
    """Where a live note stands in writing order among its project's and namespace's notes
    (an engine's ``note_places``): positions of two notes differ by how many places apart
    they were written, exactly up to the reach (farther apart: more than the reach)."""

    namespace: str
    position: int
    alone: bool = False  # the only live note of its project and namespace


def smooth_neighbours(
    ranked: Sequence[Ranked],
    places: Mapping[str, NotePlace],
    weights: RankingWeights,
    keep: int | None = None,
) -> list[Ranked]:
    """``ranked`` (best first) re-ordered with neighbour-smoothed relevance for notes.

    Args:
        ranked: the window as ranked so far, best first.
        places: each note's :class:`NotePlace`, by memory id (memorules are absent).
        weights: the ranking weights (``neighbours`` is μ, ``neighbours_window`` the reach).
        keep: how many of the best to return (None: all); only those are re-explained.

    Returns:
        The entries, applicable first, then by new score (rounded to 1e-9 as ``rank``
        rounds); equal scores keep the given order.
    """
    mu, reach = weights.neighbours, weights.neighbours_window
    notes = [i for i, r in enumerate(ranked) if r.applicable and r.memory_id in places]
    if mu <= 0.0 or not notes:
        return list(ranked[:keep])
    own = {i: relevance_of(ranked[i], False, weights) for i in notes}
    at = {
        (places[ranked[i].memory_id].namespace, places[ranked[i].memory_id].position): own[i]
        for i in notes
    }
    scores = [r.score for r in ranked]
    best: dict[int, float] = {}
    for i in notes:
        r, place = ranked[i], places[ranked[i].memory_id]
        if place.alone:  # no note was written beside it
            continue
        # A place outside the window, or before the first note or after the last, counts
        # as 0: relevance is never below 0, so for a max that is the same as leaving the
        # ends out.
        best[i] = max(
            at.get((place.namespace, p), 0.0)
            for p in range(place.position - reach, place.position + reach + 1)
            if p != place.position
        )
        weight = r.parts.confidence_weight * weights.relevance * mu
        scores[i] = r.score + weight * (best[i] - own[i])
    order = sorted(
        range(len(ranked)), key=lambda i: (not ranked[i].applicable, -round(scores[i], 9), i)
    )
    out = []
    for i in order[:keep]:
        r = ranked[i]
        if i in best:
            parts = replace(r.parts, neighbours_relevance=best[i])
            r = Ranked(r.index, r.memory_id, scores[i], r.applicable, parts)
        out.append(r)
    return out
