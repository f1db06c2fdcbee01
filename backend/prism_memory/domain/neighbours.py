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

**Only where writing order speaks.** Where notes are not a sequence (a bank of separate
facts, written in any order), a note's neighbours are unrelated notes, and lifting them
costs recall (LoCoMo's tuning half with each conversation's turns shuffled: R@5 −0.05).
So recall first asks whether the window's order carries anything for this query
(:func:`order_excess`): how much more often its best :data:`ORDER_TOP` notes have another of
them within the reach than the same number of its notes drawn at random would. Only when
that excess is at least ``neighbours_gate`` are the notes smoothed; a window of no more
than :data:`ORDER_TOP` notes cannot tell, and is left as ranked. ``neighbours_gate`` 0
smooths every window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from math import comb
from typing import Final

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


# How many of the window's best notes the order test looks at (the study's top 20).
ORDER_TOP: Final = 20


def order_excess(ranked: Sequence[Ranked], places: Mapping[str, NotePlace], reach: int) -> float:
    """How much closer together in writing order the window's best notes sit than chance.

    Of the window's first :data:`ORDER_TOP` notes, the share that has another of them within
    ±``reach`` places (same namespace), minus that share's expectation were those notes
    drawn at random from the window's notes: for a note with ``k`` window notes within
    reach, 1 − C(W − 1 − k, t − 1) / C(W − 1, t − 1). About 0 when order says nothing,
    up to 1 when the best notes are written side by side. A window of no more than
    :data:`ORDER_TOP` notes is its own best and returns 0.
    """
    found = [places[r.memory_id] for r in ranked if r.applicable and r.memory_id in places]
    size, top = len(found), ORDER_TOP
    if size <= top:
        return 0.0
    spots = {(p.namespace, p.position) for p in found}
    best = {(p.namespace, p.position) for p in found[:top]}

    def near(p: NotePlace, among: set[tuple[str, int]]) -> int:
        return sum(
            (p.namespace, p.position + d) in among for d in range(-reach, reach + 1) if d != 0
        )

    observed = sum(near(p, best) > 0 for p in found[:top]) / top
    draws = comb(size - 1, top - 1)
    expected = sum(1 - comb(size - 1 - near(p, spots), top - 1) / draws for p in found) / size
    return observed - expected


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
        rounds); equal scores keep the given order. The window as ranked when μ is 0 or
        its order does not pass ``neighbours_gate`` (:func:`order_excess`).
    """
    mu, reach = weights.neighbours, weights.neighbours_window
    notes = [i for i, r in enumerate(ranked) if r.applicable and r.memory_id in places]
    if mu <= 0.0 or not notes:
        return list(ranked[:keep])
    gate = weights.neighbours_gate
    if gate > 0.0 and order_excess(ranked, places, reach) < gate:
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
