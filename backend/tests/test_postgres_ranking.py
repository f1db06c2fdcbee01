"""PostgreSQL ranks in SQL exactly as the embedded engine ranks in numpy.

The same writes go to both engines (one service writes through :class:`BothEngines`, so ids,
times and vectors are identical), then random recalls must give the same top-k on each: same
ids in the same order, scores and their parts within 1e-6, the same candidate count.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.records import RecallResult, SessionContext
from prism_memory.domain.restated import without_restated
from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.settings import load_settings
from prism_memory.trigraph.port import NearMatch
from prism_memory.trigraph.postgres.store import PostgresStore
from prism_memory.trigraph.sqlite.store import SQLiteStore

pytestmark = pytest.mark.postgres

WORDS = [
    "deploy",
    "tests",
    "branch",
    "review",
    "commit",
    "tabs",
    "spaces",
    "python",
    "rust",
    "logging",
    "retry",
    "timeout",
    "cache",
    "schema",
    "migration",
    "index",
    "vector",
    "query",
    "latency",
    "budget",
    "owner",
    "release",
    "docs",
    "api",
    "client",
]
SECTIONS = ("Testing", "Deploys", "Style")
PERSONAS = ("ana", "bo", "cy")
SURFACES = ("cli", "web")
SPECIALIZATIONS = ("backend", "frontend")
KINDS = ("behavioral_rule", "feedback", "preference", "correction", "convention")
CONFIDENCES = ("observed", "inferred", "asserted")
SCOPES = (None, "global", "org", "project", "persona")
PROJECTS = ("api", "web", "ops")


class BothEngines:
    """A store that applies every write to SQLite and PostgreSQL; reads come from SQLite.

    The near-duplicate probe (run on every memorule write) is asked of both and must agree.
    """

    def __init__(self, sqlite: SQLiteStore, postgres: PostgresStore) -> None:
        self.sqlite = sqlite
        self.postgres = postgres

    def write(self, batch: Any) -> Any:
        self.postgres.write(batch)
        return self.sqlite.write(batch)

    def near_duplicates(self, *args: Any) -> list[NearMatch]:
        here, there = self.sqlite.near_duplicates(*args), self.postgres.near_duplicates(*args)
        assert [m.memory_id for m in there] == [m.memory_id for m in here]
        assert [m.applies for m in there] == [m.applies for m in here]
        for a, b in zip(here, there, strict=True):
            assert b.similarity == pytest.approx(a.similarity, abs=1e-6)
        return here

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sqlite, name)


@pytest.fixture
def engines(db_path: Path, pg_url: str) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    sqlite, postgres = SQLiteStore(db_path), PostgresStore(pg_url)
    sqlite.migrate()
    postgres.migrate()
    try:
        yield sqlite, postgres
    finally:
        sqlite.close()
        postgres.close()


def context(rng: random.Random, tenant: str = "acme") -> SessionContext:
    def maybe(values: tuple[str, ...]) -> str | None:
        return rng.choice((*values, None))

    return SessionContext(
        tenant_id=uuid_for("tenant", tenant),
        project_id=uuid_for("project", rng.choice(PROJECTS)),
        session_id=uuid_for("session", str(rng.random())),
        persona=maybe(PERSONAS),
        surface=maybe(SURFACES),
        specialization=maybe(SPECIALIZATIONS),
    )


def text(rng: random.Random, low: int, high: int, extra: tuple[str, ...] = ()) -> str:
    filler = ("the", "a", "of", "when", "to")  # stopwords: they count for nothing
    vocabulary = WORDS + list(filler) + list(extra)
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))


def labelled(subject: str) -> str:
    """Half the subjects under a heading (``SECTIONS``): the sections recall smooths within.
    Chosen from the subject's own words, so the seeds' random streams stay as they were."""
    pick = sum(map(ord, subject)) % (2 * len(SECTIONS))
    return f"{SECTIONS[pick]}: {subject}" if pick < len(SECTIONS) else subject


def write_request(rng: random.Random, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    if rng.random() < 0.25:
        subject = labelled(text(rng, 1, 3))
        return {"kind": "note", "subject": subject, "body": text(rng, 3, 14, extra)}
    applies: dict[str, str] = {}
    scope = rng.choice(SCOPES)
    if scope is not None:
        applies["scope"] = scope
    if scope == "persona" or rng.random() < 0.4:
        persona = rng.choice(PERSONAS)
        applies["persona"] = persona.upper() if rng.random() < 0.2 else persona  # normalised
    if rng.random() < 0.4:
        applies["surface"] = rng.choice(SURFACES)
    if rng.random() < 0.3:
        applies["specialization"] = rng.choice(SPECIALIZATIONS)
    return {
        "kind": "memorule",
        "memorule_kind": rng.choice(KINDS),
        "subject": labelled(text(rng, 2, 4) + " rule"),
        "body": text(rng, 4, 16, extra) + " rule",
        "applies_to": applies or {"scope": "project"},
        "confidence": rng.choice(CONFIDENCES),
        **({"namespace": "team"} if rng.random() < 0.2 else {}),
    }


def populate(rng: random.Random, memory: MemoryRooms, n: int, extra: tuple[str, ...] = ()) -> None:
    """``n`` writes in random projects, then supersedes, retirements and restores; texts
    draw from ``WORDS`` and ``extra``."""
    written: list[tuple[SessionContext, UUID]] = []
    for _ in range(n):
        ctx = context(rng)
        written.append(
            (ctx, memory.writes.remember(ctx, validate_remember(write_request(rng, extra))).id)
        )
    for ctx, memory_id in rng.sample(written, n // 4):
        change = write_request(rng)
        current = memory.deps.store.get(ctx.tenant_id, memory_id)
        assert current is not None
        if current[0].kind.value == "note":
            changes: dict[str, Any] = {"body": change["body"]}
        else:
            changes = {"body": change["body"]}
            if rng.random() < 0.5 and change["kind"] == "memorule":
                changes["applies_to"] = change["applies_to"]
        memory.lifecycle.update(ctx, memory_id, changes)
    retired = rng.sample(written, n // 5)
    for ctx, memory_id in retired:
        memory.lifecycle.retire(ctx, memory_id, "moot")
    for ctx, memory_id in retired[: len(retired) // 3]:
        memory.lifecycle.restore(ctx, memory_id, "back")


def recall_request(rng: random.Random) -> dict[str, Any]:
    req: dict[str, Any] = {
        "query": "" if rng.random() < 0.3 else text(rng, 1, 6),
        "top_k": rng.randint(1, 60),
        "source_type": rng.choice(("memory", "memorule")),
        "include_inapplicable": rng.random() < 0.4,
    }
    if rng.random() < 0.15:
        req["memorule_kind"] = rng.choice(KINDS)
    if rng.random() < 0.15:
        req["confidence"] = rng.choice(CONFIDENCES)
    if rng.random() < 0.1:
        req["namespace"] = "team"
    return req


def assert_same(here: RecallResult, there: RecallResult) -> None:
    assert there.candidates == here.candidates
    assert [m.memory.id for m in there.matches] == [m.memory.id for m in here.matches]
    for a, b in zip(here.matches, there.matches, strict=True):
        assert b.score == pytest.approx(a.score, abs=1e-6)
        assert b.applicable == a.applicable
        close = ("relevance", "lexical", "score", "section_relevance", "neighbours_relevance")
        assert {k: v for k, v in b.why.items() if k not in close} == {
            k: v for k, v in a.why.items() if k not in close
        }
        for key in close:
            assert b.why.get(key) == pytest.approx(a.why.get(key), abs=2e-6)


def explained(
    store: PostgresStore, sql: str, args: dict[str, Any], *, index: bool, analyze: bool = False
) -> str:
    """The plan of a recall statement under the session settings it runs with."""
    from prism_memory.trigraph.postgres import preselect as postgres_preselect

    with store.pool.connection() as conn:
        conn.execute("BEGIN")
        for setting in postgres_preselect.session_settings(index):
            conn.execute(setting)
        explain = "EXPLAIN ANALYZE " if analyze else "EXPLAIN "
        plan = "\n".join(row[0] for row in conn.execute(explain + sql, args).fetchall())
        conn.execute("ROLLBACK")
    return plan


@pytest.mark.parametrize("seed", range(4))
def test_postgres_top_k_equals_the_embedded_engines_on_random_data(
    engines: tuple[SQLiteStore, PostgresStore], seed: int
) -> None:
    sqlite, postgres = engines
    rng = random.Random(seed)
    embedder = FakeEmbedder()
    both = BothEngines(sqlite, postgres)
    writer = MemoryRooms(MemoryDeps(both, embedder, MemoruleService(both, embedder, 0.9)))  # type: ignore[arg-type]
    populate(rng, writer, 120)
    # Random notes are in no order that speaks, so the neighbour gate would leave every
    # window as ranked: at 0 every window is smoothed, and both engines' note places count.
    weights = load_settings(rank_neighbours_gate=0).ranking_weights()
    readers = [
        MemoryRooms(MemoryDeps(store, embedder, MemoruleService(store, embedder, 0.9), weights))
        for store in (sqlite, postgres)
    ]
    seen: list[Any] = []
    for _ in range(60):
        ctx, req = context(rng), recall_request(rng)
        here, there = (reader.recalls.recall(ctx, validate_recall(req)) for reader in readers)
        assert_same(here, there)
        seen.extend(here.matches)
    # The comparison compared something of every kind.
    assert len(seen) > 100
    assert any(not m.applicable for m in seen)
    assert any(m.why["lexical"] > 0 for m in seen) and any(m.why["relevance"] > 0 for m in seen)
    assert {m.why["scope"] for m in seen} == {"global", "org", "project", "persona"}
    assert {m.memory.kind.value for m in seen} == {"note", "memorule"}
    assert {m.why.get("section") for m in seen} == {None, "testing", "deploys", "style"}
    assert any(m.why.get("neighbours_relevance", 0) > 0 for m in seen)  # notes' neighbours
    other = context(rng, tenant="other")
    assert readers[1].recalls.recall(other, validate_recall({"query": "deploy"})).matches == []


CONTEXT_WORDS = (*PERSONAS, *SURFACES, *SPECIALIZATIONS, "Web", "CLI")


@pytest.mark.parametrize(
    "settings",
    [
        {"rank_restated": "persona,surface"},
        {"rank_restated": "persona,surface,specialization"},
        {"rank_restated": ""},
        {"rank_bm25_k1": 0.9, "rank_bm25_b": 0.75},  # BM25's parameters are settings too
    ],
)
def test_postgres_equals_the_embedded_engine_when_queries_restate_the_context(
    engines: tuple[SQLiteStore, PostgresStore], settings: dict[str, Any]
) -> None:
    """Rules and tasks that name the context's persona, surface or specialization (the
    words relevance is scored without, ``rank_restated``), and tasks made only of them."""
    sqlite, postgres = engines
    rng = random.Random(11)
    embedder = FakeEmbedder()
    weights = load_settings(**settings).ranking_weights()
    restated = weights.restated
    both = BothEngines(sqlite, postgres)
    writer = MemoryRooms(MemoryDeps(both, embedder, MemoruleService(both, embedder, 0.9)))  # type: ignore[arg-type]
    populate(rng, writer, 80, CONTEXT_WORDS)
    readers = [
        MemoryRooms(MemoryDeps(store, embedder, MemoruleService(store, embedder, 0.9), weights))
        for store in (sqlite, postgres)
    ]
    seen: list[Any] = []
    dropped = 0
    for _ in range(40):
        ctx, req = context(rng), recall_request(rng)
        named = [v for v in (ctx.persona, ctx.surface, ctx.specialization) if v]
        if named and rng.random() < 0.3:
            req["query"] = " ".join(rng.sample(named, len(named))).upper()  # only the context
        elif named:
            req["query"] = f"{text(rng, 0, 4)} {rng.choice(named).title()} {text(rng, 1, 3)}"
        here, there = (reader.recalls.recall(ctx, validate_recall(req)) for reader in readers)
        assert_same(here, there)
        seen.extend(here.matches)
        dropped += without_restated(req["query"], ctx, weights.restated) != req["query"]
    assert any(m.why["lexical"] > 0 for m in seen) and any(m.why["relevance"] > 0 for m in seen)
    assert (dropped > 10) == bool(restated)  # the recalls did drop words (or, off, none)


def test_a_store_migrated_from_version_2_backfills_postings_and_ranks_the_same(
    engines: tuple[SQLiteStore, PostgresStore], pg_url: str
) -> None:
    sqlite, postgres = engines
    rng = random.Random(7)
    embedder = FakeEmbedder()
    both = BothEngines(sqlite, postgres)
    writer = MemoryRooms(MemoryDeps(both, embedder, MemoruleService(both, embedder, 0.9)))  # type: ignore[arg-type]
    populate(rng, writer, 60)
    reader = MemoryRooms(MemoryDeps(postgres, embedder, MemoruleService(postgres, embedder, 0.9)))
    asks = [(context(rng), recall_request(rng) | {"query": text(rng, 2, 5)}) for _ in range(10)]
    before = [reader.recalls.recall(ctx, validate_recall(req)) for ctx, req in asks]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # back to the schema of version 2
        conn.execute("DROP TABLE recall_term")
        conn.execute("ALTER TABLE recall_index DROP COLUMN doc_len")
        conn.execute("DELETE FROM schema_migrations WHERE version = 3")
    assert postgres.migrate() >= 3
    after = [reader.recalls.recall(ctx, validate_recall(req)) for ctx, req in asks]
    for a, b in zip(before, after, strict=True):
        assert [(m.memory.id, m.score, m.why) for m in b.matches] == [
            (m.memory.id, m.score, m.why) for m in a.matches
        ]
    assert any(m.why["lexical"] > 0 for r in after for m in r.matches)


@pytest.mark.parametrize("index_above", [None, 0])
@pytest.mark.parametrize("query", ["", "deploy the release"])
@pytest.mark.parametrize("memorules_only", [False, True])
def test_every_table_the_recall_statements_read_is_filtered_by_tenant_first(
    query: str, memorules_only: bool, index_above: int | None
) -> None:
    """Citus routes a statement to one shard group when every table it reads is filtered by
    the distribution column: each FROM of the recall and near-duplicate statements is."""
    import re

    import numpy as np

    from prism_memory.domain.ranking import RankingWeights
    from prism_memory.trigraph.port import CandidateFilter, RecallRequest
    from prism_memory.trigraph.postgres import ranking as postgres_ranking

    ctx = context(random.Random(1))
    flt = CandidateFilter(ctx.project_id, persona="ana", memorules_only=memorules_only)
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    req = RecallRequest(flt, ctx, query, vector, "m", RankingWeights(), 10)
    if index_above is not None and query:  # the pre-selection (a context key: its matches)
        ctx = SessionContext(ctx.tenant_id, ctx.project_id, ctx.session_id, persona="ana")
        req = RecallRequest(flt, ctx, query, vector, "m", RankingWeights(), 10, True)
    sql, _ = postgres_ranking.recall_sql(ctx.tenant_id, req, index_above)
    reads = re.findall(r"FROM (recall_index|recall_term) (r )?WHERE (\S+) = %\(t\)s", sql)
    tables = re.findall(r"FROM (recall_index|recall_term)\b", sql)
    assert len(reads) == len(tables) >= 2
    assert {column for _, _, column in reads} <= {"r.tenant_id", "tenant_id"}
    assert ("recall_term" in tables) == bool(query)
    if index_above is not None and query:
        assert "ORDER BY r.vector::vector(8) <#>" in sql and "near_conflicting" in sql


def recalls_through_the_index(
    postgres: PostgresStore, asks: list[tuple[SessionContext, dict[str, Any]]]
) -> int:
    """How many of ``asks`` the index path's statement answers from its pre-selection (the
    ``near`` column it returns is set only then), run as ``recall`` runs it."""
    from prism_memory.domain.ranking import RankingWeights, normalise_key
    from prism_memory.trigraph.port import CandidateFilter, RecallRequest
    from prism_memory.trigraph.postgres import preselect as postgres_preselect
    from prism_memory.trigraph.postgres import ranking as postgres_ranking

    taken = 0
    embedder = FakeEmbedder()
    with postgres.pool.connection() as conn:
        for ctx, req in asks:
            flt = CandidateFilter(
                ctx.project_id,
                persona=normalise_key(ctx.persona),
                memorules_only=req.get("source_type") == "memorule",
            )
            vector = embedder.embed([req["query"]])[0] if req["query"].strip() else None
            request = RecallRequest(
                flt, ctx, req["query"], vector, embedder.model_id, RankingWeights(), 10
            )
            if not postgres_preselect.uses_index(request):
                continue
            sql, args = postgres_ranking.recall_sql(ctx.tenant_id, request, 0)
            found = postgres_ranking._run(conn, sql, args, index=True)
            taken += found[0][1] is not None and found[0][1] > 0
    return taken


@pytest.mark.parametrize("seed", range(3))
def test_the_index_path_returns_the_exact_top_k_where_it_must(
    engines: tuple[SQLiteStore, PostgresStore],
    pg_url: str,
    seed: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forced through the pre-selection (``index_above=0``, and taken however many rows
    match a context key) on projects smaller than NEAR_ROWS — where the nearest rows it
    reads from the HNSW index are every row — recall returns what scoring every row
    returns: same ids, order, scores, why and counts."""
    from prism_memory.trigraph.postgres import ranking as postgres_ranking

    monkeypatch.setattr(postgres_ranking, "MATCHED_SHARE", 0)
    sqlite, postgres = engines
    rng = random.Random(100 + seed)
    embedder = FakeEmbedder()
    both = BothEngines(sqlite, postgres)
    writer = MemoryRooms(MemoryDeps(both, embedder, MemoruleService(both, embedder, 0.9)))  # type: ignore[arg-type]
    populate(rng, writer, 120)
    indexed = PostgresStore(pg_url, index_above=0)
    exact = PostgresStore(pg_url, index_above=10**9)
    assert indexed.vector_index(True) is True  # opt-in: prism migrate --vector-index
    try:
        readers = [
            MemoryRooms(MemoryDeps(store, embedder, MemoruleService(store, embedder, 0.9)))
            for store in (sqlite, exact, indexed)
        ]
        asks = [(context(rng), recall_request(rng)) for _ in range(60)]
        seen: list[Any] = []
        for ctx, req in asks:
            here, there, through_index = (
                reader.recalls.recall(ctx, validate_recall(req)) for reader in readers
            )
            assert_same(here, there)
            assert_same(there, through_index)
            seen.extend(through_index.matches)
        assert any(m.why["lexical"] > 0 for m in seen) and any(m.why["matched"] for m in seen)
        assert any(not m.applicable for m in seen)
        # The comparison went through the pre-selection for every query with words.
        with_words = [(c, r) for c, r in asks if r["query"].strip()]
        assert recalls_through_the_index(indexed, with_words) == len(with_words) > 20
    finally:
        indexed.close()
        exact.close()


def test_the_pre_selection_reads_the_hnsw_index(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nearest rows come from the opt-in HNSW index (pgvector's iterative scan) once
    the table is large enough for the planner to prefer it to a sort; when that scan stops
    short of NEAR_ROWS rows, recall falls back to scoring every row; without the index,
    recall never pre-selects."""
    from prism_memory.domain.ranking import RankingWeights
    from prism_memory.domain.records import SessionContext
    from prism_memory.trigraph.port import CandidateFilter, RecallRequest
    from prism_memory.trigraph.postgres import preselect as postgres_preselect
    from prism_memory.trigraph.postgres import ranking as postgres_ranking

    store = PostgresStore(pg_url)
    store.migrate()
    assert store.vector_index() is False  # not built by the migrations
    embedder = FakeEmbedder()
    memory = MemoryRooms(MemoryDeps(store, embedder, MemoruleService(store, embedder, 0.99)))
    rng = random.Random(5)
    ctx = SessionContext(uuid_for("tenant", "t"), uuid_for("project", "p"), uuid_for("s", "s"))
    requests = [write_request(rng) | {"body": text(rng, 6, 16) + f" {i}"} for i in range(600)]
    memory.bulk.remember_many(ctx, validate_remember_many(requests))
    assert store.vector_index(True) is True  # built over the rows already there
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE recall_index")
    vector = embedder.embed(["deploy the release"])[0]
    req = RecallRequest(
        CandidateFilter(ctx.project_id, namespace="team"),  # a fifth of the rows
        ctx,
        "deploy the release",
        vector,
        embedder.model_id,
        RankingWeights(),
        10,
    )
    sql, args = postgres_ranking.recall_sql(ctx.tenant_id, req, 0)
    plan = explained(store, sql, args, index=True, analyze=True)
    assert "Index Scan using recall_index_by_vector_384" in plan
    exact = store.recall(ctx.tenant_id, req)
    indexed = PostgresStore(pg_url, index_above=0)
    with store.pool.connection() as conn:
        found = postgres_ranking._run(conn, sql, args, index=True)
    assert found[0][1] == found[0][0] == exact.candidates > 50  # it found every row
    assert indexed.recall(ctx.tenant_id, req) == exact
    # Where the index scan stops short (here: after one tuple), recall scores every row.
    monkeypatch.setattr(postgres_preselect, "HNSW_MAX_SCAN_TUPLES", 1)
    with store.pool.connection() as conn:
        found = postgres_ranking._run(conn, sql, args, index=True)
    assert found[0][1] < found[0][0]
    assert indexed.recall(ctx.tenant_id, req) == exact
    indexed.close()
    # With a threshold, a project's first recall is the exact statement; it marks the
    # project large when it counts that many candidates, so the next ones pre-select.
    hinted = PostgresStore(pg_url, index_above=50)
    assert hinted._large == set()
    assert hinted.recall(ctx.tenant_id, req) == exact
    assert hinted._large == {(ctx.tenant_id, ctx.project_id)}
    few = PostgresStore(pg_url, index_above=exact.candidates + 1)
    assert few.recall(ctx.tenant_id, req) == exact and few._large == set()
    hinted.close()
    few.close()
    # Dropped (in another process, say): recall scores every row again, never pre-selects.
    unindexed = PostgresStore(pg_url, index_above=0)
    assert store.vector_index(False) is False and unindexed.vector_index() is False
    assert unindexed.recall(ctx.tenant_id, req) == exact and unindexed._large == set()
    with unindexed.pool.connection() as conn:
        assert not conn.execute(
            "SELECT 1 FROM pg_indexes WHERE indexname = 'recall_index_by_vector_384'"
            " AND schemaname = current_schema()"
        ).fetchone()
    unindexed.close()
    store.close()


def has_vector_index(url: str) -> bool:
    store = PostgresStore(url)
    try:
        return store.vector_index()
    finally:
        store.close()


def test_prism_migrate_builds_and_drops_the_vector_index_on_postgres_only(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HNSW index is opt-in (it slows every write): ``prism migrate --vector-index``
    builds it, ``--no-vector-index`` drops it, plain ``migrate`` reports it; on SQLite the
    option is a structured refusal that writes nothing."""
    import json

    from click.testing import CliRunner

    from prism_memory.cli.main import cli

    for name in ("PRISM_DB", "PRISM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()

    def migrate(*flags: str) -> Any:
        done = runner.invoke(cli, ["migrate", "--database-url", pg_url, "--json", *flags])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    assert migrate()["vector_index"] is False
    assert migrate("--vector-index")["vector_index"] is True
    assert migrate()["vector_index"] is True
    assert has_vector_index(pg_url) is True
    assert migrate("--vector-index")["vector_index"] is True  # again: nothing to do
    assert migrate("--no-vector-index")["vector_index"] is False
    assert has_vector_index(pg_url) is False

    db = tmp_path / "local.db"
    refused = runner.invoke(cli, ["migrate", "--db", str(db), "--json", "--vector-index"])
    assert refused.exit_code != 0
    [error] = json.loads(refused.stdout)["error"]["fields"]
    assert error["field"] == "vector_index" and error["code"] == "not_supported"
    assert not db.exists()


def test_the_window_s_subjects_are_read_by_primary_key_per_row(
    engines: tuple[SQLiteStore, PostgresStore],
) -> None:
    """The statement reads each ranked row's kind and subject (``RankedPage.subjects``) in
    scalar subqueries: with nested loops off, a join to ``memory`` was planned as a hash of
    every memory of the tenant (80 ms a recall at 400k memories, instead of 6)."""
    from prism_memory.trigraph.port import CandidateFilter, RecallRequest
    from prism_memory.trigraph.postgres import ranking as postgres_ranking

    sqlite, postgres = engines
    rng = random.Random(5)
    embedder = FakeEmbedder()
    both = BothEngines(sqlite, postgres)
    populate(rng, MemoryRooms(MemoryDeps(both, embedder, MemoruleService(both, embedder, 0.9))), 60)  # type: ignore[arg-type]
    ctx = context(rng)
    weights = load_settings().ranking_weights()
    vector = embedder.embed(["deploy the release"])[0]
    flt = CandidateFilter(ctx.project_id, persona=ctx.persona)
    req = RecallRequest(flt, ctx, "deploy the release", vector, embedder.model_id, weights, 100)
    sql, args = postgres_ranking.recall_sql(ctx.tenant_id, req, None)
    plan = explained(postgres, sql, args, index=False)
    assert "SubPlan" in plan
    joins = [line for line in plan.splitlines() if "Cond" in line and "memory_id" in line]
    assert not [line for line in joins if "m.id" in line or "st.memory_id" in line], plan
    page = postgres.recall(ctx.tenant_id, req)
    assert page.subjects is not None and len(page.subjects) == len(page.ranked) > 0
    assert page.subjects == postgres.subjects(ctx.tenant_id, [r.memory_id for r in page.ranked])
