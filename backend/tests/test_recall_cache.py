"""The recall cache stays true to the database: writes by another store instance (another
process in real life) are seen at the next recall, including updates, retirements and
changes of scope."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.bootstrap import Services, build_services
from app.domain.ranking import Candidates, rank
from app.settings import load_settings
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
    return [m.state.body for m in services.memory.recall(ctx, {"top_k": 100}).matches]


def test_another_instance_sees_writes_updates_and_retirements(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    assert bodies(b, ctx) == []
    first = a.memory.remember(ctx, rule("Tabs"))
    assert bodies(b, ctx) == ["Tabs: the body of this convention."]
    a.memory.update(ctx, first.id, {"body": "Spaces, four of them, never tabs."})
    assert bodies(b, ctx) == ["Spaces, four of them, never tabs."]
    hits = b.memory.recall(ctx, {"query": "spaces never tabs"}).matches
    assert hits[0].why["relevance"] > 0.5
    a.memory.retire(ctx, first.id, "moot")
    assert bodies(b, ctx) == []
    a.memory.restore(ctx, first.id, "back")
    assert bodies(b, ctx) == ["Spaces, four of them, never tabs."]


def test_a_rule_that_stops_being_global_leaves_other_projects_caches(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    home, away = make_ctx(project="home"), make_ctx(project="away")
    written = a.memory.remember(home, rule("Shared rule", scope="global"))
    assert bodies(b, away) == ["Shared rule: the body of this convention."]
    a.memory.update(home, written.id, {"applies_to": {"scope": "project"}})
    assert bodies(b, away) == []
    assert bodies(b, home) == ["Shared rule: the body of this convention."]


def test_many_supersedes_trigger_a_rebuild_without_changing_results(
    two: tuple[Services, Services], make_ctx: ContextFactory
) -> None:
    a, b = two
    ctx = make_ctx()
    ids = [a.memory.remember(ctx, rule(f"Rule {i}")).id for i in range(20)]
    assert len(bodies(b, ctx)) == 20
    for round_ in range(60):
        for memory_id in ids:
            a.memory.update(ctx, memory_id, {"body": f"Revision {round_} of this rule body."})
        if round_ % 20 == 0:
            assert len(bodies(b, ctx)) == 20
    assert sorted(bodies(b, ctx)) == ["Revision 59 of this rule body."] * 20


def test_preselection_on_structured_vectors_finds_the_exact_top_k(make_ctx: ContextFactory) -> None:
    rng = np.random.default_rng(3)
    n, dim = 6000, 384
    basis = rng.standard_normal((16, dim)).astype(np.float32)
    matrix = rng.standard_normal((n, 16)).astype(np.float32) @ basis + 0.05 * rng.standard_normal(
        (n, dim)
    ).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = [f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3" for i in range(n)]
    cands = Candidates.from_rows(
        ids,
        [True] * n,
        ["project"] * n,
        {k: [None] * n for k in ("persona", "surface", "specialization")},
        ["inferred"] * n,
        ["2026-11-29T00:00:00.000000Z"] * n,
        matrix,
    )
    _, _, vt = np.linalg.svd(matrix[:4096].astype(np.float64), full_matrices=False)
    cands.projection = np.ascontiguousarray(vt[:64].T, dtype=np.float32)
    cands.coarse = matrix @ cands.projection
    from app.domain.ranking import RankingWeights

    ctx, weights = make_ctx(), RankingWeights()
    for _ in range(5):
        q = matrix[rng.integers(n)] + 0.1 * rng.standard_normal(dim).astype(np.float32)
        q /= np.linalg.norm(q)
        exact = [r.memory_id for r in rank(cands, ctx, q, weights, 10)]
        approx = [r.memory_id for r in rank(cands, ctx, q, weights, 10, preselect_above=4096)]
        assert approx == exact


def test_reindex_re_embeds_memories_made_by_another_model(
    db_path: Path, make_ctx: ContextFactory
) -> None:
    from app.embeddings.fake import FakeEmbedder
    from app.services.memory_service import reindex

    old = build_services(load_settings(db=db_path, embedder="fake"))
    ctx = make_ctx()
    for i in range(70):
        old.memory.remember(ctx, rule(f"Rule {i}"))
    old.close()

    class OtherModel(FakeEmbedder):
        @property
        def model_id(self) -> str:
            return "fake-other-v2"

    new = build_services(load_settings(db=db_path, embedder="fake"))
    new.embedder = new.memory.embedder = OtherModel()
    try:
        stale = new.memory.recall(ctx, {"query": "Rule 5", "top_k": 3}).matches
        assert all(m.why["relevance"] == 0 for m in stale)
        seen: list[int] = []
        assert reindex(new.store, new.embedder, batch=32, progress=seen.append) == 70
        assert seen == [32, 64, 70]
        fresh = new.memory.recall(ctx, {"query": "Rule 5 the body", "top_k": 3}).matches
        assert fresh[0].why["relevance"] > 0.5
        assert reindex(new.store, new.embedder) == 0
    finally:
        new.close()
