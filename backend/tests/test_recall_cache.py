"""The recall cache stays true to the database: writes by another store instance (another
process in real life) are seen at the next recall, including updates, retirements and
changes of scope."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prism_memory.bootstrap import Services, build_services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.domain.ranking import Candidates, rank
from prism_memory.settings import load_settings
from prism_memory.trigraph.port import CandidateFilter
from tests.conftest import ContextFactory


@pytest.fixture
def two(db_path: Path) -> Iterator[tuple[Services, Services]]:
    a = build_services(load_settings(db=db_path, embedder="fake"))
    b = build_services(load_settings(db=db_path, embedder="fake"))
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def rule(subject: str, **applies: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: the body of this convention.",
        "applies_to": applies or {"scope": "project"},
    }


def bodies(services: Services, ctx: Any) -> list[str]:
    return [
        m.state.body
        for m in services.memory.recalls.recall(ctx, validate_recall({"top_k": 100})).matches
    ]


def test_another_instance_sees_writes_updates_and_retirements(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    assert bodies(b, ctx) == []
    first = a.memory.writes.remember(ctx, validate_remember(rule("Tabs")))
    assert bodies(b, ctx) == ["Tabs: the body of this convention."]
    a.memory.lifecycle.update(ctx, first.id, {"body": "Spaces, four of them, never tabs."})
    assert bodies(b, ctx) == ["Spaces, four of them, never tabs."]
    hits = b.memory.recalls.recall(ctx, validate_recall({"query": "spaces never tabs"})).matches
    assert hits[0].why["relevance"] > 0.5
    a.memory.lifecycle.retire(ctx, first.id, "moot")
    assert bodies(b, ctx) == []
    a.memory.lifecycle.restore(ctx, first.id, "back")
    assert bodies(b, ctx) == ["Spaces, four of them, never tabs."]


def test_a_rule_that_stops_being_global_leaves_other_projects_caches(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    home, away = make_ctx(project="home"), make_ctx(project="away")
    written = a.memory.writes.remember(home, validate_remember(rule("Shared rule", scope="global")))
    assert bodies(b, away) == ["Shared rule: the body of this convention."]
    a.memory.lifecycle.update(home, written.id, {"applies_to": {"scope": "project"}})
    assert bodies(b, away) == []
    assert bodies(b, home) == ["Shared rule: the body of this convention."]


def test_many_supersedes_trigger_a_rebuild_without_changing_results(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    ids = [
        a.memory.writes.remember(ctx, validate_remember(rule(f"Rule {i}"))).id for i in range(20)
    ]
    assert len(bodies(b, ctx)) == 20
    for round_ in range(60):
        for memory_id in ids:
            a.memory.lifecycle.update(
                ctx, memory_id, {"body": f"Revision {round_} of this rule body."}
            )
        if round_ % 20 == 0:
            assert len(bodies(b, ctx)) == 20
    assert sorted(bodies(b, ctx)) == ["Revision 59 of this rule body."] * 20


def _sketched(matrix: np.ndarray, applies: dict[str, list[str | None]]) -> Candidates:
    """Candidates with the sketch a ProjectCache keeps (built by the cache itself)."""
    from prism_memory.trigraph.sqlite.recall_cache import ProjectCache
    from prism_memory.trigraph.sqlite.recall_rows import IndexRow

    n = len(matrix)
    cache = ProjectCache("p")
    confidences = ("observed", "inferred", "asserted")
    cache.apply(
        (
            IndexRow(
                memory_id=f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3",
                project_id="p",
                active=True,
                is_memorule=bool(i % 5),  # every fifth a note
                namespace="default",
                memorule_kind="convention",
                confidence=confidences[i % 3],
                scope=("global", "project", "persona")[i % 3] if i % 7 else "org",
                persona=applies["persona"][i],
                surface=applies["surface"][i],
                specialization=applies["specialization"][i],
                written_at=f"2026-11-{1 + i % 28:02d}T00:00:00.000000Z",
                vector=matrix[i].astype(np.float32).tobytes(),
                text=f"topic{i % 40} flavour{i % 9} rule {i}",
            )
            for i in range(n)
        ),
        clock=1,
    )

    cands = cache.snapshot(CandidateFilter(project_id="p", persona="ann"))  # type: ignore[arg-type]
    cands.selected = None
    return cands


@pytest.mark.parametrize("structure", ["tight", "loose", "random"])
def test_sketch_pruning_returns_exactly_what_a_full_scan_returns(
    make_ctx: ContextFactory, structure: str
) -> None:
    """Pruning by the sketch's bound is exact: same rows, order, scores and reasons, on
    vectors the sketch fits well (few rows scored), on vectors it fits loosely (many rows
    survive the bound) and on vectors with no structure (no sketch is kept at all)."""
    from prism_memory.domain.ranking import RankingWeights

    rng = np.random.default_rng(3)
    n, dim = 6000, 384
    noise = {"tight": 0.012, "loose": 0.05, "random": None}[structure]
    if noise is None:
        matrix = rng.standard_normal((n, dim)).astype(np.float32)
    else:
        basis = rng.standard_normal((96, dim)).astype(np.float32)
        matrix = rng.standard_normal((n, 96)).astype(np.float32) @ basis
        matrix += noise * np.linalg.norm(matrix[0]) * rng.standard_normal((n, dim))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    values = {"persona": ["ann", "bob", None], "surface": ["cli", None], "specialization": [None]}
    applies = {k: [v[i % len(v)] for i in range(n)] for k, v in values.items()}
    cands = _sketched(matrix, applies)
    assert (cands.projection is None) == (structure == "random")
    ctx = make_ctx(persona="ann", surface="cli")
    weightings = (
        RankingWeights(lexical=0.0),
        RankingWeights(overlap=2.0, scope=0.5, lexical=0.0),
        RankingWeights(lexical=0.3),
        RankingWeights(lexical=0.0, lexical_note=0.7),
        RankingWeights(lexical=0.8),
    )
    for weights in weightings:
        for top_k, inapplicable in ((10, False), (1, False), (50, True)):
            for _ in range(4):
                q = matrix[rng.integers(n)] + 0.3 * rng.standard_normal(dim).astype(np.float32)
                q /= np.linalg.norm(q)
                words = cands.lexical_hits(f"topic{rng.integers(40)} flavour{rng.integers(9)}")
                full = rank(cands, ctx, q, weights, top_k, inapplicable, lexical=words)
                pruned = rank(
                    cands, ctx, q, weights, top_k, inapplicable, preselect_above=4096, lexical=words
                )
                assert [(r.memory_id, r.score, r.why) for r in pruned] == [
                    (r.memory_id, r.score, r.why) for r in full
                ]


def test_sketch_pruning_scores_few_rows_when_vectors_have_structure(
    make_ctx: ContextFactory,
) -> None:
    from prism_memory.domain.ranking import RankingWeights
    from prism_memory.domain.ranking_bounds import relevance as _relevance

    rng = np.random.default_rng(5)
    n, dim = 8000, 384
    basis = rng.standard_normal((24, dim)).astype(np.float32)
    matrix = rng.standard_normal((n, 24)).astype(np.float32) @ basis
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cands = _sketched(matrix, {k: [None] * n for k in ("persona", "surface", "specialization")})
    assert cands.projection is not None
    q = matrix[17]
    idx = np.arange(n)
    conf_w = np.ones(n)
    rest = np.zeros(n)
    scored, cosine = _relevance(
        cands, q, idx, conf_w, rest, np.ones(n, bool), RankingWeights(), 10, 4096
    )
    assert scored.size < n // 4
    assert int(scored[np.argmax(cosine)]) == 17
    assert np.allclose(cosine, np.clip(matrix[scored] @ q, 0, 1), atol=1e-6)


def test_reindex_re_embeds_memories_made_by_another_model(
    db_path: Path, make_ctx: ContextFactory
) -> None:
    from prism_memory.embeddings.fake import FakeEmbedder
    from prism_memory.services.bulk_service import reindex

    old = build_services(load_settings(db=db_path, embedder="fake"))
    ctx = make_ctx()
    for i in range(70):
        old.memory.writes.remember(ctx, validate_remember(rule(f"Rule {i}")))
    old.close()

    class OtherModel(FakeEmbedder):
        @property
        def model_id(self) -> str:
            return "fake-other-v2"

    new = build_services(load_settings(db=db_path, embedder="fake"))
    new.embedder = new.memory.deps.embedder = OtherModel()
    try:
        stale = new.memory.recalls.recall(
            ctx, validate_recall({"query": "Rule 5", "top_k": 3})
        ).matches
        assert all(m.why["relevance"] == 0 for m in stale)
        seen: list[int] = []
        assert reindex(new.store, new.embedder, batch=32, progress=seen.append) == 70
        assert seen == [32, 64, 70]
        fresh = new.memory.recalls.recall(
            ctx, validate_recall({"query": "Rule 5 the body", "top_k": 3})
        ).matches
        assert fresh[0].why["relevance"] > 0.5
        assert reindex(new.store, new.embedder) == 0
    finally:
        new.close()


class _TopicEmbedder:
    """Unit vectors with low-dimensional structure (like a real model's), by text.

    A text ending in " (again)" embeds like the text without it: a planted near duplicate.
    """

    model_id = "topics-v1"
    dim = 384

    def __init__(self) -> None:
        self.basis = np.random.default_rng(11).standard_normal((48, self.dim)).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        out = []
        for text in texts:
            key = text.removesuffix(" (again)").encode()
            seed = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest())
            v = np.random.default_rng(seed).standard_normal(48).astype(np.float32) @ self.basis
            out.append(v / np.linalg.norm(v))
        return np.stack(out)


def test_the_near_duplicate_check_finds_the_twin_among_thousands(
    db_path: Path, make_ctx: ContextFactory
) -> None:
    from prism_memory.services.memorule_service import MemoruleService
    from prism_memory.services.memory_deps import MemoryDeps
    from prism_memory.services.memory_rooms import MemoryRooms
    from prism_memory.trigraph.sqlite.store import SQLiteStore

    store = SQLiteStore(db_path)
    store.migrate()
    embedder = _TopicEmbedder()
    memorules = MemoruleService(store, embedder, 0.95)  # type: ignore[arg-type]
    memory = MemoryRooms(MemoryDeps(store, embedder, memorules))  # type: ignore[arg-type]
    ctx = make_ctx()
    try:
        memory.bulk.remember_many(
            ctx, validate_remember_many([rule(f"Rule number {i:05d}") for i in range(5000)])
        )
        twin = rule("Rule number 00042")
        twin["body"] += " (again)"
        result = memory.writes.remember(ctx, validate_remember(twin))
        assert [w["code"] for w in result.warnings] == ["near_duplicate"]
        assert result.warnings[0]["similarity"] == pytest.approx(1.0, abs=1e-4)
    finally:
        store.close()
