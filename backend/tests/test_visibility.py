"""Visibility is stated once (``domain.access.visible``); every copy next to the data agrees.

The engines must filter where the rows are, so the rule is written again in SQL and numpy:
the listing query (``trigraph/listing_sql.py``, both engines), PostgreSQL's recall branches
(``postgres/visibility.py``), the SQLite recall cache (what ``sqlite/recall.py``'s fold
loads, what ``recall_cache.py``'s snapshot selects) and SQLite's near-duplicate check
(``sqlite/near_duplicates.py``). On random memories — every scope, persona
rules named in any case, notes, retirements, corrections that move a rule's scope — written to
both engines, each copy must return exactly the memories the domain rule lets each viewer see:
once with the recall caches loaded from nothing, once after more writes folded in by clock.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.domain.access import ApiKey, Role, can_see, reach_of, visible
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.ranking import RankingWeights, normalise_key
from prism_memory.domain.records import Memory, MemoryState, Scope, SessionContext, Status
from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.trigraph.dump import MemoryDump
from prism_memory.trigraph.port import CandidateFilter, ListFilter, RecallRequest
from prism_memory.trigraph.postgres.store import PostgresStore
from prism_memory.trigraph.sqlite.store import SQLiteStore
from tests.test_postgres_ranking import PERSONAS, PROJECTS, BothEngines, populate

pytestmark = pytest.mark.postgres

TENANT = uuid_for("tenant", "acme")
EMBEDDER = FakeEmbedder()


@pytest.fixture
def stores(db_path: Path, pg_url: str) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    """An empty store on each engine (as ``test_postgres_ranking``'s ``engines``)."""
    sqlite, postgres = SQLiteStore(db_path), PostgresStore(pg_url)
    sqlite.migrate()
    postgres.migrate()
    try:
        yield sqlite, postgres
    finally:
        sqlite.close()
        postgres.close()


def key(projects: tuple[UUID, ...], persona: str | None) -> ApiKey:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    return ApiKey(
        key_id="k",
        tenant_id=TENANT,
        role=Role.READER,
        projects=projects,
        persona=persona,
        prefix="p",
        label=None,
        created_at=when,
    )


def everything(store: SQLiteStore) -> dict[UUID, tuple[Memory, MemoryState]]:
    """Every memory of the tenant with its current state, as stored."""
    return {
        item.memory.id: (item.memory, item.states[-1])
        for item in store.dump(TENANT)
        if isinstance(item, MemoryDump)
    }


def recalled(store: SQLiteStore | PostgresStore, project: UUID, persona: str | None) -> set[UUID]:
    """The memories an empty recall in ``project`` as ``persona`` ranks, inapplicable too."""
    ctx = SessionContext(TENANT, project, uuid_for("session", "s"), persona=persona)
    page = store.recall(
        TENANT,
        RecallRequest(
            filter=CandidateFilter(project_id=project, persona=persona),
            context=ctx,
            query="",
            vector=None,
            model=EMBEDDER.model_id,
            weights=RankingWeights(),
            top_k=10_000,
            include_inapplicable=True,
        ),
    )
    found = {UUID(r.memory_id) for r in page.ranked}
    assert page.candidates == len(found)
    return found


def listed(store: SQLiteStore | PostgresStore, project: UUID, persona: str | None) -> set[UUID]:
    flt = ListFilter(project, status=None, viewer_persona=normalise_key(persona), limit=10_000)
    return {m.id for m, _ in store.list_memories(TENANT, flt)}


def probed(
    store: SQLiteStore | PostgresStore, project: UUID, persona: str | None, vector: Any
) -> set[UUID]:
    """What a write's near-duplicate check in ``project`` as ``persona`` may find: every
    visible active memory (a threshold no cosine is below)."""
    flt = CandidateFilter(project_id=project, persona=persona)
    found = store.near_duplicates(TENANT, flt, vector, EMBEDDER.model_id, -2.0, 10_000)
    return {m.memory_id for m in found}


def check(stores: tuple[SQLiteStore, PostgresStore], seen: dict[str, int]) -> None:
    memories = everything(stores[0])
    probe = EMBEDDER.embed(["deploy the tests"])[0]
    reach = {i: reach_of(m, s) for i, (m, s) in memories.items()}
    for name in PROJECTS:
        project = uuid_for("project", name)
        for persona in (None, *PERSONAS, PERSONAS[0].upper()):

            def sees(i: UUID, no_persona: bool, at: UUID, who: str | None) -> bool:
                scope, named = reach[i]
                project_of = memories[i][0].project_id
                return visible(
                    project_of, scope, named, at, who, no_persona_sees_persona_rules=no_persona
                )

            active = {i for i, (m, _) in memories.items() if m.status is Status.ACTIVE}
            for_recall = {i for i in active if sees(i, False, project, persona)}
            for_reading = {i for i in memories if sees(i, True, project, persona)}
            by_key = {i for i, pair in memories.items() if can_see(key((project,), persona), *pair)}
            assert by_key == for_reading
            for store in stores:
                assert recalled(store, project, persona) == for_recall, type(store).__name__
                assert listed(store, project, persona) == for_reading, type(store).__name__
                assert probed(store, project, persona, probe) == for_recall, type(store).__name__
            seen["shared"] += sum(1 for i in for_recall if memories[i][0].project_id != project)
            seen["persona_rules"] += sum(1 for i in for_recall if reach[i][0] is Scope.PERSONA)
            seen["hidden"] += len({i for i in active if memories[i][0].project_id == project})
            seen["hidden"] -= len({i for i in for_recall if memories[i][0].project_id == project})
            seen["persona_unbound"] += len(for_reading - for_recall - (set(memories) - active))


@pytest.mark.parametrize("seed", range(3))
def test_every_copy_of_visibility_agrees_with_the_domain_rule_on_both_engines(
    stores: tuple[SQLiteStore, PostgresStore], seed: int
) -> None:
    sqlite, postgres = stores
    rng = random.Random(seed)
    both = BothEngines(sqlite, postgres)
    writer = MemoryRooms(MemoryDeps(both, EMBEDDER, MemoruleService(both, EMBEDDER, 0.9)))
    seen = {"shared": 0, "persona_rules": 0, "hidden": 0, "persona_unbound": 0}
    populate(rng, writer, 60)
    check(stores, seen)  # the recall caches load from nothing
    populate(rng, writer, 40)  # more writes; corrections may move a rule's scope
    check(stores, seen)  # the caches fold in what changed, by clock
    # The comparison met every case the rule has: rules of other projects shared, persona
    # rules shown, a project's own rows hidden, and persona rules a reading shows while a
    # recall without a persona does not.
    assert all(n > 0 for n in seen.values()), seen
