"""Hybrid relevance (DESIGN §6): BM25 from the recall cache fused with cosine, the same on both
engines; superseded and retired text never scores; another process's writes are seen."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prism_memory.bootstrap import Services, build_services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.ranking import Candidates, RankingWeights, rank
from prism_memory.settings import Settings, load_settings
from prism_memory.trigraph.port import CandidateFilter
from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex
from prism_memory.trigraph.sqlite.recall_cache import ProjectCache
from prism_memory.trigraph.sqlite.recall_rows import IndexRow
from tests.conftest import ContextFactory

NOTES = [
    "The deploy freeze starts on Friday at noon.",
    "Zephyrine runs the pottery class on Tuesdays.",
    "Deploys on Friday need a second reviewer.",
    "The pottery kiln is broken; the class moved to the library.",
    "Noon standup is cancelled this week.",
]


def candidates_of(texts: list[str], matrix: np.ndarray[Any, Any]) -> Candidates:
    n = len(texts)
    cands = Candidates.from_rows(
        [f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3" for i in range(n)],
        [False] * n,
        ["project"] * n,
        {k: [None] * n for k in ("persona", "surface", "specialization")},
        [None] * n,
        ["2026-11-29T00:00:00.000000Z"] * n,
        matrix.astype(np.float32),
    )
    cands.lexicon = LexicalIndex()
    cands.lexicon.add(texts)
    return cands


def unit(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.mark.parametrize(("lexical", "winner"), [(0.0, "near miss"), (0.5, "word match")])
def test_a_lexical_only_match_beats_a_dense_near_miss_only_when_lexical_weighs(
    make_ctx: ContextFactory, lexical: float, winner: str
) -> None:
    q = unit(np.array([1.0, 0.0, 0.0]))
    matrix = np.stack([unit(np.array([0.9, 0.43, 0.0])), unit(np.array([0.5, 0.0, 0.86]))])
    cands = candidates_of(["a cold day at the seaside", "Zephyrine's pottery class"], matrix)
    query = "zephyrine pottery"
    ranked = rank(
        cands,
        make_ctx(),
        q,
        RankingWeights(lexical_note=lexical),
        2,
        lexical=cands.lexical_hits(query),
    )
    names = {0: "near miss", 1: "word match"}
    assert names[ranked[0].index] == winner
    why = {names[r.index]: r.why for r in ranked}
    assert why["near miss"]["relevance"] == pytest.approx(0.9, abs=0.01)  # cosine, unmixed
    assert why["near miss"]["lexical"] == 0.0
    # Each query word once: BM25 reaches the query's ceiling (b 0: whatever the length).
    assert why["word match"]["lexical"] == (pytest.approx(1.0) if lexical else 0.0)


def test_preselection_keeps_the_best_lexical_hits_whatever_the_sketch_says(
    make_ctx: ContextFactory,
) -> None:
    rng = np.random.default_rng(5)
    n, dim = 6000, 384
    basis = rng.standard_normal((16, dim)).astype(np.float32)  # structure a sketch can use
    matrix = rng.standard_normal((n, 16)).astype(np.float32) @ basis
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    q = matrix[0]
    matrix[4321] = -q  # its words match the query, its vector is the farthest there is
    texts = ["filler text about nothing"] * n
    texts[4321] = "the quetzal migration report"
    cache = ProjectCache("p")
    cache.apply(
        [
            IndexRow(
                memory_id=f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3",
                project_id="p",
                active=True,
                is_memorule=False,
                namespace="default",
                memorule_kind=None,
                confidence=None,
                scope=None,
                persona=None,
                surface=None,
                specialization=None,
                written_at="2026-11-29T00:00:00.000000Z",
                vector=matrix[i].tobytes(),
                text=texts[i],
            )
            for i in range(n)
        ],
        clock=1,
    )
    cands = cache.snapshot(CandidateFilter(project_id=uuid_for("project", "p")))
    hits = cands.lexical_hits("quetzal migration")
    weights = RankingWeights(lexical_note=0.9)
    exact = [r.index for r in rank(cands, make_ctx(), q, weights, 5, lexical=hits)]
    approx = rank(cands, make_ctx(), q, weights, 5, preselect_above=4096, lexical=hits)
    assert exact[0] == 4321
    assert [r.index for r in approx] == exact


@pytest.fixture
def hybrid(engine_settings: Settings) -> Settings:
    return engine_settings.model_copy(update={"rank_lexical": 0.5, "rank_lexical_note": 0.5})


@pytest.fixture
def two(hybrid: Settings) -> Iterator[tuple[Services, Services]]:
    """Two service stacks on one database: a writer and a reader process, in miniature."""
    a, b = build_services(hybrid), build_services(hybrid)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def recall(services: Services, ctx: Any, query: str) -> list[tuple[str, bool]]:
    """Bodies, best first, each with whether its words matched the query."""
    matches = services.memory.recalls.recall(
        ctx, validate_recall({"query": query, "top_k": 10})
    ).matches
    assert all(0.0 <= m.why["lexical"] <= 1.0 for m in matches)
    return [(m.state.body, m.why["lexical"] > 0) for m in matches]


def test_lexical_shows_in_why_and_is_zero_for_an_empty_query(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, _ = two
    ctx = make_ctx()
    for body in NOTES:
        a.memory.writes.remember(ctx, validate_remember({"body": body}))
    assert recall(a, ctx, "When does the deploy freeze start?")[0] == (NOTES[0], True)
    assert {matched for _, matched in recall(a, ctx, "")} == {False}


def test_an_update_replaces_the_words_that_match(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    written = a.memory.writes.remember(
        ctx, validate_remember({"body": "Zephyrine runs the pottery class."})
    )
    a.memory.writes.remember(ctx, validate_remember({"body": "The library opens at nine."}))
    assert recall(b, ctx, "zephyrine")[0] == ("Zephyrine runs the pottery class.", True)
    a.memory.lifecycle.update(ctx, written.id, {"body": "Marguerite runs the pottery class."})
    assert {lex for _, lex in recall(b, ctx, "zephyrine")} == {False}
    assert recall(b, ctx, "marguerite")[0] == ("Marguerite runs the pottery class.", True)


def test_retired_memories_never_score_nor_weigh_on_the_others(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    loud = a.memory.writes.remember(ctx, validate_remember({"body": "Quetzal quetzal quetzal."}))
    a.memory.writes.remember(
        ctx, validate_remember({"body": "A quetzal was seen near the lake this morning."})
    )
    assert recall(b, ctx, "quetzal")[0] == ("Quetzal quetzal quetzal.", True)
    a.memory.lifecycle.retire(ctx, loud.id, "duplicate")
    assert recall(b, ctx, "quetzal") == [("A quetzal was seen near the lake this morning.", True)]
    clean = make_ctx(project="never-had-the-retired-one")
    a.memory.writes.remember(
        clean, validate_remember({"body": "A quetzal was seen near the lake this morning."})
    )

    def lexical(ctx: Any) -> float:
        return float(
            b.memory.recalls.recall(ctx, validate_recall({"query": "quetzal"}))
            .matches[0]
            .why["lexical"]
        )

    assert lexical(ctx) == lexical(clean)  # the statistics forgot the retired row


def test_another_process_s_new_words_are_found_at_the_next_recall(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    for body in NOTES:
        a.memory.writes.remember(ctx, validate_remember({"body": body}))
    assert recall(b, ctx, "aurora borealis")[0][1] is False  # b's cache and index are built
    a.memory.writes.remember(
        ctx, validate_remember({"body": "We saw the aurora borealis from the cabin."})
    )
    assert recall(b, ctx, "aurora borealis")[0] == (
        "We saw the aurora borealis from the cabin.",
        1.0,
    )


@pytest.mark.postgres
def test_both_engines_rank_a_hybrid_query_the_same(
    db_path: Path, pg_url: str, make_ctx: ContextFactory
) -> None:
    engines = [
        build_services(
            load_settings(db=db_path, embedder="fake", rank_lexical=0.5, rank_lexical_note=0.5)
        ),
        build_services(
            load_settings(
                database_url=pg_url, embedder="fake", rank_lexical=0.5, rank_lexical_note=0.5
            )
        ),
    ]
    ctx = make_ctx()
    try:
        orders = []
        for services in engines:
            ids = [
                services.memory.writes.remember(ctx, validate_remember({"body": body})).id
                for body in NOTES
            ]
            services.memory.lifecycle.update(
                ctx, ids[1], {"body": "Zephyrine moved the pottery class."}
            )
            services.memory.lifecycle.retire(ctx, ids[4], "moot")
            orders.append(
                [
                    [
                        (m.state.body, m.why["relevance"], m.why["lexical"], m.why["score"])
                        for m in services.memory.recalls.recall(
                            ctx, validate_recall({"query": query})
                        ).matches
                    ]
                    for query in ("friday deploy", "pottery class zephyrine", "noon")
                ]
            )
        # The same memories in the same order; the numbers as README "Ranking" promises them
        # (float32 cosines summed differently: within 1e-6, so a rounded score may differ
        # in its last digit, as neighbour smoothing's sums made one here).
        for here, there in zip(orders[0], orders[1], strict=True):
            assert [row[0] for row in here] == [row[0] for row in there]
            for a, b in zip(here, there, strict=True):
                assert b[1:] == pytest.approx(a[1:], abs=2e-6)
        assert orders[0][0][0][0] == NOTES[0]
    finally:
        for services in engines:
            services.close()
