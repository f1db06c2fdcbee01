"""SQLite's near-duplicate check reads ``recall_index`` alone (``sqlite/near_duplicates.py``).

It used to take the project's recall cache (loading it, and storing a segment, inside a
write). On a real file with many rules — every scope, personas named in any case, five kinds,
notes, retirements, rows of another model, three projects — it must answer exactly what the
cache's snapshot answered for every filter, probe, threshold and limit; and a write must
neither build a cache nor create or change a stored segment.
"""

from __future__ import annotations

import random
from itertools import product
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np
import pytest

from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.ranking import dots
from prism_memory.domain.records import Confidence, MemoruleKind, SessionContext
from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.trigraph.port import CandidateFilter, NearMatch
from prism_memory.trigraph.sqlite.store import SQLiteStore
from tests.test_postgres_ranking import PERSONAS, PROJECTS, populate, text

TENANT = uuid_for("tenant", "acme")
EMBEDDER = FakeEmbedder()


class OtherModel(FakeEmbedder):
    model_id = "fake-other-v1"


def through_the_cache(
    store: SQLiteStore,
    flt: CandidateFilter,
    vector: Any,
    threshold: float,
    limit: int,
) -> list[NearMatch]:
    """The check as it was: the project's cached snapshot, every selected row's cosine."""
    cands = store.candidates(TENANT, flt, EMBEDDER.model_id)
    if not len(cands) or cands.matrix.shape[1] != vector.shape[0]:
        return []
    sims = dots(cands.matrix, vector)
    assert cands.selected is not None
    hits = np.flatnonzero((sims >= threshold) & cands.selected)
    ordered = sorted(hits, key=lambda i: (-float(sims[i]), str(cands.ids[i])))[:limit]
    names = {k: {code: name for name, code in v.items()} for k, v in cands.vocab.items()}
    return [
        NearMatch(
            UUID(str(cands.ids[i])),
            float(sims[i]),
            {k: names[k].get(int(cands.keys[k][i])) for k in cands.keys},
        )
        for i in ordered
    ]


def filters(rng: random.Random, project: UUID) -> list[CandidateFilter]:
    out = []
    for persona in (None, *PERSONAS, PERSONAS[0].upper()):
        kinds = tuple(rng.sample(list(MemoruleKind), rng.randint(0, 2)))
        out.append(CandidateFilter(project, persona, memorules_only=True, memorule_kinds=kinds))
    out.append(CandidateFilter(project, PERSONAS[1]))  # notes too
    out.append(CandidateFilter(project, None, namespace="team"))
    out.append(
        CandidateFilter(
            project, PERSONAS[2], confidences=(Confidence.OBSERVED, Confidence.ASSERTED)
        )
    )
    out.append(
        CandidateFilter(project, None, exclude_conflicts={"surface": "cli", "persona": "ana"})
    )
    return out


@pytest.mark.parametrize("seed", range(2))
def test_the_check_answers_what_the_cache_answered(db_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    store = SQLiteStore(db_path)
    store.migrate()
    try:
        writer = MemoryRooms(MemoryDeps(store, EMBEDDER, MemoruleService(store, EMBEDDER, 0.99)))
        populate(rng, writer, 240)
        other = OtherModel()
        populate(
            rng, MemoryRooms(MemoryDeps(store, other, MemoruleService(store, other, 0.99))), 30
        )
        # Twins: the same text in several projects and scopes, so equal similarities tie.
        for name in PROJECTS:
            ctx = SessionContext(TENANT, uuid_for("project", name), uuid_for("session", name))
            for scope in ("global", "project"):
                writer.writes.remember(
                    ctx,
                    validate_remember(
                        {
                            "kind": "memorule",
                            "memorule_kind": "convention",
                            "subject": "deploy rule",
                            "body": "deploy the release branch after review rule",
                            "applies_to": {"scope": scope},
                        }
                    ),
                )
        probes = [EMBEDDER.embed(["deploy rule\ndeploy the release branch after review rule"])[0]]
        probes += list(EMBEDDER.embed([text(rng, 3, 10) + " rule" for _ in range(4)]))
        compared = matched = 0
        for name in PROJECTS:
            for flt, vector, threshold, limit in product(
                filters(rng, uuid_for("project", name)), probes, (0.5, 0.7, 0.95), (50, 3)
            ):
                args = (TENANT, flt, vector, EMBEDDER.model_id, threshold, limit)
                assert store.near_duplicates(*args) == through_the_cache(
                    store, flt, vector, threshold, limit
                ), (name, flt, threshold, limit)
                compared += 1
                matched += len(store.near_duplicates(*args))
        assert compared > 500 and matched > 1000  # the comparison met many matches
    finally:
        store.close()


def segments(store: SQLiteStore) -> list[tuple[Any, ...]]:
    conn = store.file.connection()
    return conn.execute(
        "SELECT project_id, clock, rows, built_at FROM recall_segment ORDER BY project_id"
    ).fetchall()


def test_a_write_neither_builds_a_cache_nor_stores_a_segment(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    store.migrate()
    try:
        writer = MemoryRooms(MemoryDeps(store, EMBEDDER, MemoruleService(store, EMBEDDER, 0.95)))
        ctx = SessionContext(TENANT, uuid_for("project", "api"), uuid_for("session", "s"))

        def rule(i: int) -> dict[str, Any]:
            return {
                "kind": "memorule",
                "memorule_kind": "convention",
                "subject": f"Rule number {i}",
                "body": f"Rule number {i}: the body of this convention.",
                "applies_to": {"scope": "project"},
            }

        for i in range(20):
            writer.writes.remember(
                ctx, validate_remember(rule(i))
            )  # one by one: each runs the check
        assert segments(store) == [] and len(store.caches) == 0
        assert writer.writes.remember(
            ctx, validate_remember(rule(7))
        ).warnings  # the check did run, and found the twin
        # a recall builds and stores
        assert writer.recalls.recall(ctx, validate_recall({"query": "rule"})).matches
        stored = segments(store)
        assert len(stored) == 1 and len(store.caches) == 1
        # More changed rows than a segment is stored anew for: a write still leaves it be.
        writer.bulk.remember_many(ctx, validate_remember_many([rule(i) for i in range(100, 700)]))
        for i in range(700, 705):
            writer.writes.remember(ctx, validate_remember(rule(i)))
        assert segments(store) == stored
    finally:
        store.close()
