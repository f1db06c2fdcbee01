"""Recall smooths a note's relevance with its neighbours': the notes written beside it."""

from __future__ import annotations

import random
from typing import Any
from uuid import UUID, uuid4

import pytest

from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.neighbours import ORDER_TOP, NotePlace, order_excess, smooth_neighbours
from prism_memory.domain.ranking import CONFIDENCE_CODE, Ranked, RankingWeights, parts_of
from prism_memory.domain.records import SessionContext
from prism_memory.errors import InvalidInput
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.settings import load_settings
from tests import test_recall_sections as recall_sections


def note(name: str, cosine: float, lexical: float = 0.0, applicable: bool = True) -> Ranked:
    """A ranked note whose score is what ``rank`` gives it (note weight, project scope)."""
    w = RankingWeights()
    relevance = (1 - w.lexical_note) * cosine + w.lexical_note * lexical
    parts = parts_of(
        w,
        relevance=cosine,
        lexical=lexical,
        matched=[],
        conflicts=[],
        scope_rank=2,
        confidence_code=CONFIDENCE_CODE[None],
    )
    score = w.note * (w.relevance * relevance + parts.scope_bonus + w.prior)
    return Ranked(0, name, score, applicable, parts)


def own(r: Ranked, w: RankingWeights) -> float:
    return (1 - w.lexical_note) * r.parts.relevance + w.lexical_note * r.parts.lexical


def test_a_notes_relevance_is_interpolated_with_its_best_neighbour_in_writing_order() -> None:
    w = RankingWeights(neighbours=0.3, neighbours_window=2, neighbours_gate=0.0)
    ranked = [
        note("question-words", 0.70, lexical=0.6),  # matches the question; says little
        note("far-away", 0.40),
        note("answer", 0.30),  # the turn after the match: the answer
        note("two-after", 0.05),
    ]
    places = {
        "question-words": NotePlace("default", 10),
        "answer": NotePlace("default", 11),
        "two-after": NotePlace("default", 12),
        "far-away": NotePlace("default", 30),  # its neighbours are not in the window
    }
    out = smooth_neighbours(ranked, places, w)
    by = {r.memory_id: r for r in out}
    rel = {r.memory_id: own(r, w) for r in ranked}
    best = {
        "question-words": max(rel["answer"], rel["two-after"]),  # 8, 9 absent: 0
        "answer": max(rel["question-words"], rel["two-after"]),
        "two-after": max(rel["question-words"], rel["answer"]),
        "far-away": 0.0,  # neighbours outside the window count as 0
    }
    for r in ranked:
        expected = r.score + w.note * w.relevance * 0.3 * (best[r.memory_id] - rel[r.memory_id])
        assert by[r.memory_id].score == pytest.approx(expected, abs=1e-12)
        assert by[r.memory_id].parts.neighbours_relevance == pytest.approx(best[r.memory_id])
        assert by[r.memory_id].why["neighbours_relevance"] == round(best[r.memory_id], 6)
        assert by[r.memory_id].why["score"] == round(expected, 6)
    # The answer and the note after it, beside the match, now outrank the note that
    # matched alone far away.
    assert [r.memory_id for r in out] == ["question-words", "answer", "two-after", "far-away"]
    assert [r.memory_id for r in ranked][:3] == ["question-words", "far-away", "answer"]
    # Asked for the best two (recall's page), it returns exactly those.
    assert smooth_neighbours(ranked, places, w, keep=2) == out[:2]


def test_the_reach_and_namespaces_bound_the_neighbours() -> None:
    w = RankingWeights(neighbours=1.0, neighbours_window=1, neighbours_gate=0.0)
    ranked = [note("a", 0.9), note("b", 0.1), note("c", 0.5), note("d", 0.2)]
    places = {
        "a": NotePlace("default", 0),
        "b": NotePlace("default", 2),  # two places from a: beyond a reach of 1
        "c": NotePlace("team", 1),  # another namespace at a's neighbouring place
        "d": NotePlace("team", 0),
    }
    out = {r.memory_id: r for r in smooth_neighbours(ranked, places, w)}
    assert out["a"].parts.neighbours_relevance == 0.0  # place 1 of default: not in the window
    assert out["b"].parts.neighbours_relevance == 0.0
    assert out["c"].parts.neighbours_relevance == pytest.approx(own(ranked[3], w))
    assert out["d"].parts.neighbours_relevance == pytest.approx(own(ranked[2], w))
    wider = smooth_neighbours(
        ranked, places, RankingWeights(neighbours=1.0, neighbours_window=2, neighbours_gate=0.0)
    )
    by = {r.memory_id: r for r in wider}
    assert by["a"].parts.neighbours_relevance == pytest.approx(own(ranked[1], w))


def test_memorules_inapplicable_entries_lone_notes_and_off_keep_their_scores() -> None:
    ranked = [note("rule", 0.9), note("lone", 0.6), note("x", 0.5, applicable=False)]
    places = {"lone": NotePlace("default", 0, alone=True), "x": NotePlace("default", 1)}
    w = RankingWeights(neighbours=0.5, neighbours_gate=0.0)
    assert smooth_neighbours(ranked, places, w) == ranked  # rule absent, lone alone, x inapplicable
    two = {"lone": NotePlace("default", 0), "rule": NotePlace("default", 1)}
    assert smooth_neighbours(ranked, two, RankingWeights(neighbours=0.0)) == ranked
    assert smooth_neighbours(ranked, {}, w) == ranked


def test_the_weight_and_reach_are_settings() -> None:
    weights = load_settings().ranking_weights()
    assert (weights.neighbours, weights.neighbours_window, weights.neighbours_gate) == (
        0.3,
        2,
        0.15,
    )
    off = load_settings(
        rank_neighbours=0, rank_neighbours_window=1, rank_neighbours_gate=0
    ).ranking_weights()
    assert (off.neighbours, off.neighbours_window, off.neighbours_gate) == (0.0, 1, 0.0)
    for bad in (
        {"rank_neighbours": 1.5},
        {"rank_neighbours": -0.1},
        {"rank_neighbours_window": 0},
        {"rank_neighbours_window": 21},
        {"rank_neighbours_gate": -0.1},
        {"rank_neighbours_gate": 1.5},
    ):
        with pytest.raises(InvalidInput) as refused:
            load_settings(**bad)
        [error] = refused.value.errors
        assert error.field == next(iter(bad))


def window_at(positions: list[int]) -> tuple[list[Ranked], dict[str, NotePlace]]:
    """A window of notes ranked in the given order, each written at the given place."""
    ranked = [note(f"n{p}", 0.9 - 0.001 * i) for i, p in enumerate(positions)]
    return ranked, {f"n{p}": NotePlace("default", p) for p in positions}


def test_order_speaks_when_the_best_notes_sit_together_and_not_when_they_are_scattered() -> None:
    # 60 window notes of a long log. Side by side: the best 20 are places 0-19.
    together = list(range(20)) + list(range(100, 400, 7))[:40]
    ranked, places = window_at(together)
    assert order_excess(ranked, places, 2) > 0.5
    w = RankingWeights(neighbours=0.3)  # the default gate, 0.15
    smoothed = smooth_neighbours(ranked, places, w)
    assert all(r.parts.neighbours_relevance is not None for r in smoothed)
    assert smoothed != ranked
    # Scattered: every note ten places from the next, the best ones no nearer each other
    # than the rest are: order says nothing, and the window stays as ranked.
    scattered, places = window_at([10 * i for i in range(60)])
    assert order_excess(scattered, places, 2) == pytest.approx(0.0)
    assert smooth_neighbours(scattered, places, w) == scattered
    # A run of 60 written side by side, ranked in an order unrelated to where they stand:
    # the best 20 are as close as any 20 would be, about chance.
    shuffled = list(range(60))
    random.Random(7).shuffle(shuffled)
    ranked, places = window_at(shuffled)
    assert abs(order_excess(ranked, places, 2)) < 0.15
    assert smooth_neighbours(ranked, places, w) == ranked
    # The gate at 0 smooths every window.
    open_ = smooth_neighbours(ranked, places, RankingWeights(neighbours=0.3, neighbours_gate=0))
    assert open_ != ranked


def test_a_window_of_no_more_notes_than_the_test_reads_is_left_as_ranked() -> None:
    ranked, places = window_at(list(range(ORDER_TOP)))
    assert order_excess(ranked, places, 2) == 0.0
    assert smooth_neighbours(ranked, places, RankingWeights(neighbours=0.3)) == ranked
    # Memorules and inapplicable entries do not count towards the window's notes.
    rules = [note(f"rule{i}", 0.95) for i in range(10)]
    assert order_excess([*rules, *ranked], places, 2) == 0.0


# -- end to end, on both engines ------------------------------------------------------

# The same engines (a store fixture over SQLite and PostgreSQL) and service as section
# smoothing's tests.
store = recall_sections.store
service = recall_sections.service

LOG = [  # an agent's running log, in writing order: the cause sits after the symptom
    "The nightly deploy failed with a timeout on the database migration.",
    "Root cause of the failed migration: the lock wait limit was 5 seconds; raised to 60.",
    "Lunch order for the team offsite is pizza.",
    "Renamed the staging bucket to assets-staging.",
    "Deploy timeout alerts now page the on-call engineer.",
]


def write_log(memory: MemoryRooms, ctx: SessionContext, texts: list[str]) -> list[str]:
    return [
        str(memory.writes.remember(ctx, validate_remember({"kind": "note", "body": t})).id)
        for t in texts
    ]


def test_recall_lifts_the_note_written_after_the_match_on_every_engine(store: Any) -> None:
    ctx = SessionContext(uuid4(), uuid4(), uuid4())
    ids = write_log(service(store), ctx, LOG)
    query = {"query": "deploy failed timeout", "top_k": 5, "source_type": "memory"}
    plain = service(store, rank_neighbours=0).recalls.recall(ctx, validate_recall(query))
    # Five notes are too few for the order test (domain.neighbours.ORDER_TOP): by default
    # the window stays as ranked, and with the gate at 0 it is smoothed.
    gated = service(store).recalls.recall(ctx, validate_recall(query))
    assert [m.why for m in gated.matches] == [m.why for m in plain.matches]
    smoothed = service(store, rank_neighbours_gate=0).recalls.recall(ctx, validate_recall(query))
    before = [ids.index(str(m.memory.id)) for m in plain.matches]
    after = [ids.index(str(m.memory.id)) for m in smoothed.matches]
    # Unsmoothed, the alert note far down the log that repeats the query's words is second;
    # smoothed, the cause written right after the symptom rises above it.
    assert before[:3] == [0, 4, 1]
    assert after[:2] == [0, 1] and after.index(1) < after.index(4)
    # Every score moved as the formula says, from the unsmoothed ranking's parts.
    w = RankingWeights()
    rel = {
        ids.index(str(m.memory.id)): 0.5 * m.why["relevance"] + 0.5 * m.why["lexical"]
        for m in plain.matches
    }
    for m in smoothed.matches:
        i = ids.index(str(m.memory.id))
        best = max(rel[j] for j in range(i - 2, i + 3) if j != i and 0 <= j < len(LOG))
        unsmoothed = next(p for p in plain.matches if p.memory.id == m.memory.id)
        expected = unsmoothed.score + w.note * w.relevance * 0.3 * (best - rel[i])
        assert m.score == pytest.approx(expected, abs=1e-5)
        assert m.why["neighbours_relevance"] == pytest.approx(best, abs=1e-5)
    assert all("neighbours_relevance" not in m.why for m in plain.matches)
    # An empty query has no relevance to smooth: the ranking is the unsmoothed one.
    empty = {"query": "", "source_type": "memory"}
    open_ = service(store, rank_neighbours_gate=0)
    assert [m.why for m in open_.recalls.recall(ctx, validate_recall(empty)).matches] == [
        m.why
        for m in service(store, rank_neighbours=0)
        .recalls.recall(ctx, validate_recall(empty))
        .matches
    ]


def test_note_places_count_live_notes_of_the_project_and_namespace_in_writing_order(
    store: Any,
) -> None:
    ctx = SessionContext(uuid4(), uuid4(), uuid4())
    memory = service(store)
    ids = write_log(memory, ctx, LOG)
    team = str(
        memory.writes.remember(
            ctx, validate_remember({"kind": "note", "body": "x", "namespace": "team"})
        ).id
    )
    rule = str(
        memory.writes.remember(
            ctx,
            validate_remember(
                {
                    "kind": "memorule",
                    "memorule_kind": "convention",
                    "subject": "Say why",
                    "body": "Always say why.",
                    "applies_to": {"scope": "project"},
                }
            ),
        ).id
    )
    other = SessionContext(ctx.tenant_id, uuid4(), uuid4())
    elsewhere = write_log(memory, other, ["another project's note"])[0]
    memory.lifecycle.retire(ctx, UUID(ids[1]), "moot")
    asked = [*ids, team, rule, elsewhere]
    # The retired note is gone and the ones after it close up; the rule and the other
    # project's note have no place; the team namespace counts on its own (its one note is
    # alone there).
    assert store.note_places(ctx.tenant_id, ctx.project_id, asked, 2) == {
        ids[0]: NotePlace("default", 0),
        ids[2]: NotePlace("default", 1),
        ids[3]: NotePlace("default", 2),
        ids[4]: NotePlace("default", 3),
        team: NotePlace("team", 0, alone=True),
    }
    # Positions are exact up to the reach: ids[4] was written three live notes after ids[0];
    # under a reach of 1 that shows as 2 (farther than the reach), under 3 as 3.
    some = [ids[4], ids[0]]
    assert store.note_places(ctx.tenant_id, ctx.project_id, some, 1) == {
        ids[0]: NotePlace("default", 0),
        ids[4]: NotePlace("default", 2),
    }
    assert store.note_places(ctx.tenant_id, ctx.project_id, some, 3) == {
        ids[0]: NotePlace("default", 0),
        ids[4]: NotePlace("default", 3),
    }
    # One window note whose namespace holds others is not alone.
    assert store.note_places(ctx.tenant_id, ctx.project_id, [ids[3]], 2) == {
        ids[3]: NotePlace("default", 0)
    }
    assert store.note_places(ctx.tenant_id, ctx.project_id, [], 2) == {}
