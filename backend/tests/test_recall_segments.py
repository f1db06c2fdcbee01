"""Recall segments (SQLite): a cache loaded from its stored segment, plus what changed
after it, ranks exactly as a cache built row by row from ``recall_index`` — same ids, order,
scores and reasons — whatever happened in between, in this process or another."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.domain.records import SessionContext
from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.trigraph.sqlite import schema as sqlite_schema
from prism_memory.trigraph.sqlite import segments as sqlite_segments
from prism_memory.trigraph.sqlite.recall_cache import ProjectCache
from prism_memory.trigraph.sqlite.store import SQLiteStore
from tests.conftest import ContextFactory
from tests.test_recall_cache import _TopicEmbedder


class _OtherModel(FakeEmbedder):
    @property
    def model_id(self) -> str:
        return "fake-other-v2"


class Node:
    """One store on the file (another process, in real life) and the services over it."""

    def __init__(
        self, path: Path, segments: bool = True, embedder: Any = None, cache_mb: int = 512
    ) -> None:
        self.store = SQLiteStore(path, cache_mb=cache_mb, segments=segments)
        self.store.migrate()
        self.embedder = embedder or FakeEmbedder()
        memorules = MemoruleService(self.store, self.embedder, 0.95)
        self.memory = MemoryRooms(
            MemoryDeps(self.store, self.embedder, memorules, preselect_above=4096)
        )

    def ranked(self, ctx: SessionContext, raw: dict[str, Any]) -> list[tuple[Any, ...]]:
        result = self.memory.recalls.recall(ctx, validate_recall(raw))
        return [
            (str(m.memory.id), m.score, m.why, m.applicable, result.candidates)
            for m in result.matches
        ]

    def cache(self, ctx: SessionContext) -> ProjectCache | None:
        key = (str(ctx.tenant_id), str(ctx.project_id), self.embedder.model_id)
        return self.store.caches.cached(key)

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def nodes(db_path: Path) -> Iterator[list[Node]]:
    made: list[Node] = []
    yield made
    for node in made:
        node.close()


def rule(subject: str, **applies: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: always check the deploy log and the database migrations.",
        "applies_to": applies or {"scope": "project"},
        "confidence": ("observed", "inferred", "asserted")[len(subject) % 3],
    }


def note(text: str) -> dict[str, Any]:
    return {"kind": "note", "body": text}


QUERIES = ("", "deploy log", "rule 7 database", "note about migrations", "persona rule 3")


def requests() -> Iterator[dict[str, Any]]:
    for query in QUERIES:
        yield {"query": query, "top_k": 100}
        yield {"query": query, "top_k": 5, "source_type": "memorule"}
        yield {"query": query, "top_k": 50, "include_inapplicable": True}


def assert_same_ranking(node: Node, reference: Node, contexts: list[SessionContext]) -> int:
    """Every request in every context ranks alike on both; how many results compared."""
    compared = 0
    for ctx in contexts:
        for raw in requests():
            got, want = node.ranked(ctx, raw), reference.ranked(ctx, raw)
            assert got == want, (ctx.project_id, raw)
            compared += len(want)
    return compared


def segment_clock(path: Path, ctx: SessionContext, model: str) -> int | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT clock FROM recall_segment WHERE tenant_id = ? AND project_id = ? AND model = ?",
            (str(ctx.tenant_id), str(ctx.project_id), model),
        ).fetchone()
    return int(row[0]) if row else None


def drop_segments(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM recall_segment_part")
        conn.execute("DELETE FROM recall_segment")


def tenant_clock(path: Path, ctx: SessionContext) -> int:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT n FROM tenant_clock WHERE tenant_id = ?", (str(ctx.tenant_id),)
        ).fetchone()
    return int(row[0])


def test_a_segment_plus_later_changes_ranks_exactly_as_a_row_by_row_cache(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    """Between the segment and the recall, another store supersedes, retires, restores,
    moves rules between scopes (in and out of the project's view), writes rows of another
    model and new rows; the new process's cache starts from the segment and ends equal."""
    writer = Node(db_path)
    nodes.append(writer)
    home, away = make_ctx(project="home", persona="ann"), make_ctx(project="away")
    scopes = ({"scope": "project"}, {"scope": "persona", "persona": "ann"}, {"scope": "global"})
    home_ids = [
        writer.memory.writes.remember(
            home, validate_remember(rule(f"home rule {i}", **scopes[i % 3]))
        ).id
        for i in range(40)
    ]
    home_ids += [
        writer.memory.writes.remember(
            home, validate_remember(note(f"note about migrations {i}"))
        ).id
        for i in range(8)
    ]
    away_ids = [
        writer.memory.writes.remember(
            away, validate_remember(rule(f"away rule {i}", scope=("org", "project")[i % 2]))
        ).id
        for i in range(20)
    ]
    drop_segments(db_path)  # the writer's probes stored an early one: start from now
    first = Node(db_path)  # stores the segments of both projects
    nodes.append(first)
    first.ranked(home, {"query": "deploy log"})
    first.ranked(away, {"query": "deploy log"})
    stored = segment_clock(db_path, home, writer.embedder.model_id)
    assert stored == tenant_clock(db_path, home)

    for i, memory_id in enumerate(home_ids[:12]):
        writer.memory.lifecycle.update(
            home, memory_id, {"body": f"Revised: rule 7 database step {i}."}
        )
    for memory_id in home_ids[12:18]:
        writer.memory.lifecycle.retire(home, memory_id, "moot")
    for memory_id in home_ids[12:14]:
        writer.memory.lifecycle.restore(home, memory_id, "back")
    writer.memory.lifecycle.update(
        away, away_ids[0], {"applies_to": {"scope": "project"}}
    )  # leaves
    writer.memory.lifecycle.update(away, away_ids[1], {"applies_to": {"scope": "global"}})  # enters
    writer.memory.lifecycle.update(
        home, home_ids[0], {"applies_to": {"scope": "persona", "persona": "bob"}}
    )
    writer.memory.lifecycle.update(home, home_ids[2], {"applies_to": {"scope": "project"}})
    other = Node(db_path, embedder=_OtherModel())
    nodes.append(other)
    for i in range(4):
        other.memory.writes.remember(home, validate_remember(rule(f"other model rule {i}")))
    for i in range(5):
        writer.memory.writes.remember(
            away, validate_remember(rule(f"late global rule {i}", scope="global"))
        )
    assert tenant_clock(db_path, home) > stored

    fresh, reference = Node(db_path), Node(db_path, segments=False)
    nodes += [fresh, reference]
    contexts = [
        home,
        make_ctx(project="home", persona="bob"),
        make_ctx(project="home", surface="cli"),
        away,
        make_ctx(project="third"),  # sees only the tenant's global and org rules
    ]
    assert assert_same_ranking(fresh, reference, contexts) > 500
    cache = fresh.cache(home)
    assert cache is not None and cache.stored_clock == stored  # it did start from it
    assert reference.cache(home) is not None
    assert segment_clock(db_path, home, writer.embedder.model_id) == stored  # few changes


def test_a_sketched_segment_prunes_and_ranks_like_a_full_rebuild(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    """5,000 structured vectors: the segment carries the sketch (no SVD at load), and
    pruned recall over segment + changes equals a row-by-row cache's."""
    embedder = _TopicEmbedder()
    writer = Node(db_path, embedder=embedder)
    nodes.append(writer)
    ctx = make_ctx(persona="ann")
    ids = [
        r.id
        for r in writer.memory.bulk.remember_many(
            ctx,
            validate_remember_many(
                [rule(f"Rule number {i:05d}", scope="project") for i in range(5000)]
            ),
        )
    ]
    drop_segments(db_path)
    Node(db_path, embedder=embedder).ranked(ctx, {"query": "Rule number 00042"})
    assert segment_clock(db_path, ctx, embedder.model_id) is not None
    for i in range(0, 300, 3):
        writer.memory.lifecycle.update(
            ctx, ids[i], {"body": f"Rule number {i + 1:05d} again, revised."}
        )
    fresh, reference = (
        Node(db_path, embedder=embedder),
        Node(db_path, embedder=embedder, segments=False),
    )
    nodes += [fresh, reference]
    for q in ("Rule number 00042", "Rule number 00007 again", "revised", ""):
        for raw in ({"query": q, "top_k": 10}, {"query": q, "top_k": 3, "source_type": "memorule"}):
            assert fresh.ranked(ctx, raw) == reference.ranked(ctx, raw)
    cache = fresh.cache(ctx)
    assert cache is not None and cache.projection is not None and cache.stored_clock > 0
    twin = rule("Rule number 00043")  # not among the updated ones
    twin["body"] += " (again)"
    assert [
        w["code"] for w in fresh.memory.writes.remember(ctx, validate_remember(twin)).warnings
    ] == ["near_duplicate"]


def test_many_changes_store_a_new_segment_that_another_process_then_loads(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    writer = Node(db_path)
    nodes.append(writer)
    ctx = make_ctx()
    ids = [
        writer.memory.writes.remember(ctx, validate_remember(rule(f"rule {i}"))).id
        for i in range(30)
    ]
    writer.ranked(ctx, {})  # a recall stores the first segment (a write never does)
    first = segment_clock(db_path, ctx, writer.embedder.model_id)
    assert first is not None
    for memory_id in ids:
        writer.memory.lifecycle.update(ctx, memory_id, {"body": "Revised: deploy log."})
    writer.memory.bulk.remember_many(
        ctx, validate_remember_many([rule(f"more {i}") for i in range(600)])
    )  # > STORE_MIN
    writer.ranked(ctx, {})
    second = segment_clock(db_path, ctx, writer.embedder.model_id)
    assert second is not None and second > first
    fresh, reference = Node(db_path), Node(db_path, segments=False)
    nodes += [fresh, reference]
    assert assert_same_ranking(fresh, reference, [ctx]) > 0
    cache = fresh.cache(ctx)
    assert cache is not None and cache.n == 630 and cache.dead == 0


def test_an_older_segment_never_replaces_a_newer_one(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    """Two processes storing the same project's segment: the newer clock stays."""
    from prism_memory.trigraph.sqlite.recall_segment import image

    a = Node(db_path)
    nodes.append(a)
    ctx = make_ctx()
    a.memory.writes.remember(ctx, validate_remember(rule("first")))
    a.ranked(ctx, {})
    old_cache = a.cache(ctx)
    assert old_cache is not None
    with old_cache.lock:
        old = image(old_cache)
    a.memory.writes.remember(ctx, validate_remember(rule("second")))
    b = Node(db_path)
    nodes.append(b)
    b.ranked(ctx, {})
    new_cache = b.cache(ctx)
    assert new_cache is not None
    with new_cache.lock:
        new = image(new_cache)
    key = (str(ctx.tenant_id), str(ctx.project_id), a.embedder.model_id)
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        assert sqlite_segments.store(conn, key, new) in (True, False)
        assert sqlite_segments.store(conn, key, old) is False
        conn.execute("COMMIT")
        stored = sqlite_segments.read(conn, key)
    finally:
        conn.close()
    assert stored is not None and stored[0]["clock"] == new.clock and stored[0]["rows"] == 2


@pytest.mark.parametrize("chunk_rows", [8192, 64])
def test_memory_stays_under_the_budget_while_cycling_through_more_projects_than_fit(
    chunk_rows: int,
    db_path: Path,
    nodes: list[Node],
    make_ctx: ContextFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Projects loaded from segments (in place, or copied chunk by chunk into arrays with
    spare rows, counted) and written to in between stay within the budget."""
    from prism_memory.trigraph.sqlite import recall_segment

    monkeypatch.setattr(recall_segment, "CHUNK_ROWS", chunk_rows)
    writer = Node(db_path)
    nodes.append(writer)
    projects = [make_ctx(project=f"p{i}") for i in range(12)]
    for ctx in projects:
        writer.memory.bulk.remember_many(
            ctx, validate_remember_many([rule(f"{ctx.project_id} rule {j}") for j in range(150)])
        )
    budget_mb = 1
    small, reference = Node(db_path, cache_mb=budget_mb), Node(db_path, segments=False)
    nodes += [small, reference]
    sizes = []
    for round_ in range(3):
        for i, ctx in enumerate(projects):
            if i % 4 == round_:  # a write into a loaded cache (copy-on-write), then recall
                small.memory.writes.remember(
                    ctx, validate_remember(rule(f"{ctx.project_id} late rule {round_}"))
                )
            raw = {"query": f"rule {round_}", "top_k": 5}
            assert small.ranked(ctx, raw) == reference.ranked(ctx, raw)
            held = small.store.caches.nbytes()
            assert held <= budget_mb * 2**20
            sizes.append(held)
    assert 1 < len(small.store.caches) < len(projects)  # some fit, not all
    assert max(sizes) > budget_mb * 2**20 // 2  # the budget was used, not avoided


def test_a_store_made_at_schema_version_2_migrates_in_place_and_builds_segments_lazily(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    old = Node(db_path, segments=False)
    ctx = make_ctx()
    for i in range(25):
        old.memory.writes.remember(
            ctx, validate_remember(rule(f"old rule {i}", scope=("project", "global")[i % 2]))
        )
    old.close()
    # Back to what version 2 had of recall: no segment tables, the clock index of version 1.
    # (Today's code cannot write at version 2: later migrations add tables writes need.)
    with sqlite3.connect(db_path) as conn:
        conn.execute("DROP TABLE recall_segment_part")
        conn.execute("DROP TABLE recall_segment")
        conn.execute("DROP INDEX recall_index_by_clock")
        conn.execute("CREATE INDEX recall_index_by_clock ON recall_index (tenant_id, clock)")
        conn.execute("DELETE FROM schema_migrations WHERE version = 3")
    new, reference = Node(db_path), Node(db_path, segments=False)
    nodes += [new, reference]
    assert new.store.migrate() == sqlite_schema.MIGRATIONS[-1][0]
    assert segment_clock(db_path, ctx, new.embedder.model_id) is None
    assert assert_same_ranking(new, reference, [ctx, make_ctx(project="elsewhere")]) > 0
    assert segment_clock(db_path, ctx, new.embedder.model_id) == tenant_clock(db_path, ctx)
    with sqlite3.connect(db_path) as conn:
        cols = [r[2] for r in conn.execute("PRAGMA index_info(recall_index_by_clock)")]
    assert cols == ["tenant_id", "clock", "project_id", "scope", "memory_id"]


def test_a_loaded_dump_leaves_segments_to_be_rebuilt_from_its_rows(
    tmp_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    source = Node(tmp_path / "a.db")
    nodes.append(source)
    ctx = make_ctx()
    for i in range(10):
        source.memory.writes.remember(ctx, validate_remember(rule(f"dumped rule {i}")))
    source.ranked(ctx, {})  # a segment in the source: not part of the dump
    target = Node(tmp_path / "b.db")
    nodes.append(target)
    target.store.load(source.store.dump())
    with sqlite3.connect(tmp_path / "b.db") as conn:
        assert conn.execute("SELECT count(*) FROM recall_segment").fetchone()[0] == 0
    reference = Node(tmp_path / "b.db", segments=False)
    nodes.append(reference)
    assert assert_same_ranking(target, reference, [ctx]) > 0
    assert segment_clock(tmp_path / "b.db", ctx, target.embedder.model_id) is not None


def test_a_compacted_cache_keeps_its_ranking(make_ctx: ContextFactory) -> None:
    """In-memory compaction (dead rows dropped through a segment image) changes nothing."""
    from prism_memory.domain.ranking import RankingWeights, rank
    from prism_memory.trigraph.port import CandidateFilter
    from prism_memory.trigraph.sqlite.recall_rows import IndexRow
    from prism_memory.trigraph.sqlite.recall_segment import compact

    rng = np.random.default_rng(1)
    cache = ProjectCache("p")

    def row(i: int, version: int) -> IndexRow:
        vector = rng.standard_normal(16).astype(np.float32)
        return IndexRow(
            memory_id=f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3",
            project_id="p",
            active=i % 11 != 0,
            is_memorule=bool(i % 4),
            namespace="default",
            memorule_kind="convention",
            confidence=("observed", "inferred", None)[i % 3],
            scope=("project", "global", "persona")[i % 3],
            persona="ann" if i % 3 == 2 else None,
            surface=("cli", None)[i % 2],
            specialization=None,
            written_at=f"2026-11-{1 + i % 28:02d}T00:00:00.000000Z",
            vector=(vector / np.linalg.norm(vector)).tobytes(),
            text=f"word{i % 7} version{version} shared",
        )

    cache.apply([row(i, 0) for i in range(300)], clock=1)
    for version in range(1, 4):
        cache.apply([row(i, version) for i in range(0, 300, 2)], clock=1 + version)
    ctx = make_ctx(persona="ann", surface="cli")
    flt = CandidateFilter(project_id="p", persona="ann")  # type: ignore[arg-type]
    q = rng.standard_normal(16).astype(np.float32)
    q /= np.linalg.norm(q)

    def top(c: ProjectCache) -> list[tuple[str, float, dict[str, Any]]]:
        cands = c.snapshot(flt)
        hits = cands.lexical_hits("word3 version3 shared")
        ranked = rank(cands, ctx, q, RankingWeights(), 40, True, lexical=hits)
        return [(r.memory_id, r.score, r.why) for r in ranked]

    before = top(cache)
    dead = cache.dead
    with cache.lock:
        compact(cache)
    assert dead > 0 and cache.dead == 0 and cache.n == int(cache.cols["active"][: cache.n].sum())
    assert top(cache) == before and len(before) == 40


def test_a_global_rule_that_loses_its_scope_leaves_a_warm_cache_of_another_project(
    db_path: Path, nodes: list[Node], make_ctx: ContextFactory
) -> None:
    # A rule with no scope is a project rule: NULL must count as "not global or org" when
    # a warm cache in another project asks which of its rows left its view.
    node = Node(db_path)
    nodes.append(node)
    home, away = make_ctx(project="home"), make_ctx(project="away")
    moved = node.memory.writes.remember(
        away, validate_remember(rule("Moving rule", scope="global", persona="bo"))
    ).id
    node.memory.writes.remember(home, validate_remember(rule("Home rule")))
    assert str(moved) in [r[0] for r in node.ranked(home, {"query": ""})]
    node.memory.lifecycle.update(away, moved, {"applies_to": {"persona": "bo"}})
    warm = node.ranked(home, {"query": ""})
    assert str(moved) not in [r[0] for r in warm]
    cold = Node(db_path, segments=False)
    nodes.append(cold)
    assert warm == cold.ranked(home, {"query": ""})


# --- copy-on-write: a loaded segment's arrays are the bytes read, until first written ---


def _row(i: int, version: int, **over: Any) -> Any:
    """Row ``i`` (one memory) at ``version``: a 192-d vector of low rank plus noise, text
    that BM25 tells apart, a mix of scopes, personas, surfaces and confidences."""
    from prism_memory.trigraph.sqlite.recall_rows import IndexRow

    rng = np.random.default_rng(1000 * i + version)
    basis = np.random.default_rng(5).standard_normal((24, 192))
    vector = (rng.standard_normal(24) @ basis + 0.1 * rng.standard_normal(192)).astype(np.float32)
    fields: dict[str, Any] = {
        "memory_id": f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3",
        "project_id": "p",
        "active": True,
        "is_memorule": bool(i % 4),
        "namespace": ("default", "ops")[i % 5 == 0],
        "memorule_kind": ("convention", "pitfall")[i % 2],
        "confidence": ("observed", "inferred", None)[i % 3],
        "scope": ("project", "global", "persona", "org")[i % 4],
        "persona": "ann" if i % 4 == 2 else None,
        "surface": ("cli", None)[i % 2],
        "specialization": None,
        "written_at": f"2026-11-{1 + i % 28:02d}T00:00:{version:02d}.000000Z",
        "vector": (vector / np.linalg.norm(vector)).tobytes(),
        "text": f"word{i % 7} version{version} shared {'deploy' if i % 3 else 'log'}",
    }
    fields.update(over)
    return IndexRow(**fields)


def _changes() -> Iterator[tuple[list[Any], list[str]]]:
    """Batches folded in after the segment, as (rows, gone): every mutation path."""
    yield [_row(i, 0) for i in range(600, 630)], []  # new rows, within the spare rows
    yield [_row(i, 1) for i in range(0, 200, 5)], []  # supersedes (old rows die)
    yield [_row(i, 2, active=False) for i in range(1, 600, 7)], []  # retirements
    yield [_row(i, 3) for i in range(1, 60, 7)], []  # restores (a new live row)
    yield [_row(i, 1) for i in range(200, 600, 5)], []  # more supersedes
    yield [_row(i, 0) for i in range(630, 640)], []
    yield [_row(i, 4, project_id="q", scope="project") for i in range(3, 600, 40)], []  # leave
    yield [], [f"01a229b4-{i:04x}-7000-a801-29b40e2e11e3" for i in range(7, 600, 40)]  # gone
    yield [_row(i, 0, vector=None) for i in range(640, 660)], []  # another model's rows
    yield [_row(i, 0) for i in range(660, 1400)], []  # past capacity, and a sketch refit


@pytest.mark.parametrize("chunk_rows", [8192, 64])
def test_a_loaded_segment_then_every_kind_of_change_ranks_as_a_row_by_row_cache(
    chunk_rows: int, monkeypatch: pytest.MonkeyPatch, make_ctx: ContextFactory
) -> None:
    """A cache loaded from a segment (one chunk: vectors and sketch used in place; or
    many: copied into arrays with spare rows) starts on read-only views of the bytes read.
    Supersedes, retirements, restores, new rows, rows leaving its view, rows of another
    model, growth past its capacity, a sketch refit and a compaction then go through
    copy-on-write (numpy refuses any write into a read-only array, so a path that wrote
    into the loaded bytes would fail here), and after every one it ranks exactly as a
    cache that saw the same rows one by one."""
    from prism_memory.domain.ranking import RankingWeights, rank
    from prism_memory.trigraph.port import CandidateFilter
    from prism_memory.trigraph.sqlite import recall_cache, recall_segment
    from prism_memory.trigraph.sqlite.recall_segment import compact, image, load_into

    monkeypatch.setattr(recall_segment, "CHUNK_ROWS", chunk_rows)
    monkeypatch.setattr(recall_cache, "PRESELECT_MIN", 200)  # a sketch at this size
    reference, source = ProjectCache("p"), ProjectCache("p")
    first = [_row(i, 0) for i in range(600)]
    for cache in (reference, source):
        cache.apply(first, clock=1)
    assert source.projection is not None  # the segment carries a sketch
    with source.lock:
        img = image(source)
    cache = load_into(ProjectCache("p"), img.head, img.parts())

    loaded = [cache.ids, *cache.cols.values(), cache.matrix, cache.coarse, cache.residual]
    if chunk_rows > 600:  # one chunk: everything but the ids is the bytes read
        assert not any(a.flags.writeable for a in loaded[1:])
        assert len(cache.matrix) == cache.n == 600
    else:  # chunks copied into arrays with spare rows; the columns still the bytes read
        assert not any(c.flags.writeable for c in cache.cols.values())
        assert cache.matrix.flags.writeable and len(cache.matrix) == 600 + 600 // 8
    assert cache.projection is not None and not cache.projection.flags.writeable

    ctx = make_ctx(persona="ann", surface="cli")
    q = np.frombuffer(_row(9999, 0).vector or b"", dtype=np.float32)
    filters = [
        CandidateFilter(project_id="p", persona="ann"),  # type: ignore[arg-type]
        CandidateFilter(project_id="p", memorules_only=True, namespace="ops"),  # type: ignore[arg-type]
    ]

    def top(c: ProjectCache) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for flt in filters:
            for query in ("word3 version1 deploy", "log shared", ""):
                cands = c.snapshot(flt)
                hits = cands.lexical_hits(query)
                ranked = rank(cands, ctx, q, RankingWeights(), 60, True, 0, lexical=hits)
                out += [(r.memory_id, r.score, r.why, r.applicable) for r in ranked]
        return out

    assert top(cache) == top(reference)
    clock = 1
    for rows, gone in _changes():
        clock += 1
        for c in (cache, reference):
            c.apply(rows, clock, gone)
        assert top(cache) == top(reference), clock
    assert cache.n > 1400 - 60 and cache.projection is not None
    assert cache.fitted_at > 600  # refitted after the load, into arrays of its own
    for c in (cache, reference):
        with c.lock:
            compact(c)
    assert top(cache) == top(reference) and len(top(reference)) > 100
    clock += 1
    for c in (cache, reference):
        c.apply([_row(i, 5) for i in range(0, 1400, 3)], clock)  # after a compaction
    assert top(cache) == top(reference)


def test_a_loaded_segment_holds_its_bytes_once(make_ctx: ContextFactory) -> None:
    """Loading does not copy what it can use in place: a one-chunk segment's vectors and
    columns are views of the very bytes read (no second copy counted or held)."""
    from prism_memory.trigraph.sqlite.recall_segment import image, load_into

    source = ProjectCache("p")
    source.apply([_row(i, 0) for i in range(300)], clock=1)
    with source.lock:
        img = image(source)
    parts = list(img.parts())
    blobs = {(name, k): data for name, k, data in parts}
    cache = load_into(ProjectCache("p"), img.head, parts)
    assert cache.matrix.base is not None
    assert np.shares_memory(cache.matrix, np.frombuffer(blobs["vec", 0], dtype=np.uint8))
    for name, col in cache.cols.items():
        assert np.shares_memory(col, np.frombuffer(blobs[f"col:{name}", 0], dtype=np.uint8))
    assert cache.nbytes <= source.nbytes
