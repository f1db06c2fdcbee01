"""What only the PostgreSQL engine has to prove: many writer processes, per-tenant locking,
idempotency under a real race, migrations, privileges and connection errors.

The behaviour both engines share is proven by the contract suites, parametrised over both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from prism_memory.bootstrap import Services, build_services
from prism_memory.domain import audit as chain
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import uuid_for
from prism_memory.errors import StorageError
from prism_memory.settings import load_settings
from prism_memory.trigraph.postgres.schema import MIGRATIONS
from prism_memory.trigraph.postgres.store import PostgresStore
from tests.conftest import ContextFactory
from tests.pgtest import TestPostgres

pytestmark = pytest.mark.postgres

BACKEND = Path(__file__).resolve().parents[1]
WRITER = """
import sys
from prism_memory.bootstrap import build_services, context_from
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.settings import load_settings
url, tenant, persona, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
settings = load_settings(database_url=url, embedder="fake", tenant=tenant, persona=persona)
services = build_services(settings)
ctx = context_from(settings)
print("ready", flush=True)
sys.stdin.readline()  # the start signal: every writer begins at once
for i in range(n):
    services.memory.writes.remember(ctx, validate_remember({
        "kind": "memorule", "memorule_kind": "convention",
        "subject": f"Rule {persona} {i}",
        "body": f"Convention number {i} written by {persona} of {tenant} under contention.",
        "applies_to": {"persona": persona},
    }))
services.close()
print("done", flush=True)
"""


@pytest.fixture
def pg_services(pg_url: str) -> Iterator[Services]:
    svc = build_services(load_settings(database_url=pg_url, embedder="fake"))
    try:
        yield svc
    finally:
        svc.close()


def rule(subject: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": subject,
        "body": f"{subject}, always, in every repository.",
        "applies_to": {"surface": "python"},
        **extra,
    }


@pytest.mark.slow
def test_eight_processes_per_tenant_write_4000_memorules_and_each_chain_stays_valid(
    pg_url: str,
) -> None:
    per_process, processes = 250, 8
    # One BLAS thread per writer: 16 processes on a small machine must not each spin a pool.
    env = {**os.environ, "PYTHONPATH": str(BACKEND), "OPENBLAS_NUM_THREADS": "1"}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_url, tenant, f"p{i}", str(per_process)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tenant in ("alpha", "beta")
        for i in range(processes)
    ]
    try:
        for w in writers:
            assert w.stdout is not None and w.stdout.readline().strip() == "ready"
        for w in writers:
            assert w.stdin is not None
            w.stdin.write("go\n")
            w.stdin.flush()
        outcomes = [w.communicate(timeout=600) for w in writers]
    finally:
        for w in writers:
            w.kill()
    assert [w.returncode for w in writers] == [0] * len(writers), [o[1] for o in outcomes]
    store = PostgresStore(pg_url)
    try:
        for tenant in ("alpha", "beta"):
            t = uuid_for("tenant", tenant)
            expected = per_process * processes
            assert store.stats(t) == {
                "memories": expected,
                "states": expected,
                "audit_events": expected,
            }
            report = chain.verify(store.audit_chain(t))
            assert report.ok and report.events == expected, report
        with psycopg.connect(pg_url) as conn:
            orphans = conn.execute(
                "SELECT count(*) FROM memory m WHERE NOT EXISTS (SELECT 1 FROM memorule_audit a "
                "WHERE a.tenant_id = m.tenant_id AND a.memorule_id = m.id)"
            ).fetchone()
            total = conn.execute("SELECT count(*) FROM memory").fetchone()
        assert orphans == (0,) and total == (2 * per_process * processes,)
    finally:
        store.close()


def hold_tenant_lock(url: str, tenant: str) -> psycopg.Connection[Any]:
    """An open transaction holding ``tenant``'s clock row lock, as a writer mid-write does."""
    conn = psycopg.connect(url)
    conn.execute(
        "INSERT INTO tenant_clock (tenant_id, n) VALUES (%s, 1) ON CONFLICT (tenant_id) "
        "DO UPDATE SET n = tenant_clock.n + 1",
        (uuid_for("tenant", tenant),),
    )
    return conn


def test_a_writer_of_one_tenant_never_waits_for_another_tenant(
    pg_url: str, pg_services: Services, make_ctx: ContextFactory
) -> None:
    a, b = make_ctx(tenant="a"), make_ctx(tenant="b")
    pg_services.memory.writes.remember(a, validate_remember(rule("Warm up tenant a")))
    held = hold_tenant_lock(pg_url, "a")
    try:
        with ThreadPoolExecutor(1) as pool:
            blocked = pool.submit(
                pg_services.memory.writes.remember, a, validate_remember(rule("Waits for tenant a"))
            )
            started = time.monotonic()
            pg_services.memory.writes.remember(b, validate_remember(rule("Tenant b goes ahead")))
            assert time.monotonic() - started < 5
            time.sleep(0.3)
            assert not blocked.done()  # tenant a's writer waits for the lock holder
            held.rollback()
            assert blocked.result(timeout=30).version == 1
    finally:
        held.close()
    for ctx in (a, b):
        assert pg_services.memorules.verify_chain(ctx).ok


def test_two_identical_idempotent_requests_at_once_write_one_memorule(
    pg_url: str, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(tenant="race")
    first, second = (
        build_services(load_settings(database_url=pg_url, embedder="fake")) for _ in range(2)
    )
    raw = rule("Only once please", idempotency_key="retry-7")
    try:
        first.memory.writes.remember(
            make_ctx(tenant="race", project="other"), validate_remember(rule("Warm up"))
        )
        held = hold_tenant_lock(pg_url, "race")
        try:
            # Both requests pass the pre-check (no claim yet) and queue behind the lock.
            with ThreadPoolExecutor(2) as pool:
                futures = [
                    pool.submit(s.memory.writes.remember, ctx, validate_remember(raw))
                    for s in (first, second)
                ]
                time.sleep(0.5)
                assert not any(f.done() for f in futures)
                held.rollback()
                results = [f.result(timeout=30) for f in futures]
        finally:
            held.close()
        assert results[0].id == results[1].id
        assert results[0].audit_id == results[1].audit_id
        assert sorted(r.replayed for r in results) == [False, True]
        assert first.store.stats(ctx.tenant_id) == {"memories": 2, "states": 2, "audit_events": 2}
        assert first.memorules.verify_chain(ctx).ok
    finally:
        first.close()
        second.close()


def test_migrations_are_idempotent_and_safe_to_run_at_once(pg_url: str) -> None:
    stores = [PostgresStore(pg_url) for _ in range(4)]
    try:
        barrier = threading.Barrier(len(stores))

        def migrate(store: PostgresStore) -> int:
            barrier.wait()
            return store.migrate()

        with ThreadPoolExecutor(len(stores)) as pool:
            versions = list(pool.map(migrate, stores))
        latest = MIGRATIONS[-1][0]
        assert versions == [latest] * len(stores)
        assert stores[0].migrate() == latest
        with psycopg.connect(pg_url) as conn:
            applied = conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
        assert applied == [(v,) for v, _, _ in MIGRATIONS]
    finally:
        for store in stores:
            store.close()


def test_every_key_and_index_leads_with_the_tenant(pg_url: str) -> None:
    PostgresStore(pg_url).migrate()
    with psycopg.connect(pg_url) as conn:
        indexes = conn.execute(
            "SELECT c.relname, i.indrelid::regclass::text, a.attname FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid::regclass::text IN "
            "('memory', 'memory_state', 'memorule_audit', 'recall_index', 'idempotency', "
            "'tenant_clock')"
        ).fetchall()
    assert len(indexes) >= 12
    assert {(name, column) for name, _, column in indexes if column != "tenant_id"} == set()


def test_a_bad_url_is_a_storage_error_that_hides_the_password() -> None:
    store = PostgresStore("postgresql://prism:s3cret@127.0.0.1:1/nowhere", timeout=2)
    with pytest.raises(StorageError) as caught:
        store.migrate()
    assert "s3cret" not in str(caught.value) and "127.0.0.1" in str(caught.value)
    store.close()


def test_a_user_who_may_not_create_the_extension_is_told_what_to_ask_for(
    pg_server: TestPostgres,
) -> None:
    if pg_server.server is None:
        pytest.skip("needs the throwaway server's superuser")
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute("CREATE ROLE prism_noext_user LOGIN")
        conn.execute("CREATE DATABASE prism_noext OWNER prism_noext_user")
    url = pg_server.server.dsn_for("prism_noext").replace("prism@", "prism_noext_user@")
    store = PostgresStore(url)
    try:
        with pytest.raises(StorageError, match="CREATE EXTENSION vector"):
            store.migrate()
        with psycopg.connect(pg_server.server.dsn_for("prism_noext"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")  # what the administrator runs once
        assert store.migrate() == MIGRATIONS[-1][0]  # then the app's own role migrates
    finally:
        store.close()


def test_a_claim_committed_outside_the_tenant_lock_still_answers_as_a_replay(
    pg_url: str, pg_services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(tenant="late")
    raw = rule("Claimed elsewhere", idempotency_key="k-late")
    first = pg_services.memory.writes.remember(ctx, validate_remember(raw))
    stored = pg_services.store.idempotent_result(ctx.tenant_id, "k-late")
    assert stored is not None
    other = make_ctx(tenant="late2")
    # Another writer (say, an import) inserts the same claim for tenant late2 without the
    # tenant's lock and commits while our write waits on the key: ours must replay it.
    raw_claim = psycopg.connect(pg_url)
    raw_claim.execute(
        "INSERT INTO idempotency (tenant_id, key, request_hash, result, created_at) "
        "VALUES (%s, %s, %s, %s, now())",
        (other.tenant_id, "k-late", stored.request_hash, Jsonb(stored.result)),
    )
    try:
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(pg_services.memory.writes.remember, other, validate_remember(raw))
            time.sleep(0.5)
            assert not pending.done()  # blocked on the uncommitted key
            raw_claim.commit()
            replayed = pending.result(timeout=30)
    finally:
        raw_claim.close()
    assert replayed.replayed and replayed.id == first.id
    assert pg_services.store.stats(other.tenant_id)["memories"] == 0


def test_another_process_s_writes_reach_this_process_s_recall_at_the_next_call(
    pg_url: str, make_ctx: ContextFactory
) -> None:
    writer, reader = (
        build_services(load_settings(database_url=pg_url, embedder="fake")) for _ in range(2)
    )
    ctx, elsewhere = make_ctx(project="api"), make_ctx(project="web")

    def subjects() -> list[str | None]:
        return [
            m.state.subject
            for m in reader.memory.recalls.recall(ctx, validate_recall({"top_k": 50})).matches
        ]

    try:
        assert subjects() == []
        kept = writer.memory.writes.remember(ctx, validate_remember(rule("Kept rule")))
        gone = writer.memory.writes.remember(ctx, validate_remember(rule("Retired rule")))
        travelling = writer.memory.writes.remember(
            elsewhere, validate_remember(rule("Org-wide rule", applies_to={"scope": "org"}))
        )
        assert sorted(s or "" for s in subjects()) == ["Kept rule", "Org-wide rule", "Retired rule"]
        writer.memory.lifecycle.update(ctx, kept.id, {"subject": "Kept rule, reworded"})
        writer.memory.lifecycle.retire(ctx, gone.id, "no longer true")
        writer.memory.lifecycle.update(
            elsewhere, travelling.id, {"applies_to": {"scope": "project"}}
        )
        assert subjects() == ["Kept rule, reworded"]
        # The postings changed with the text: the new word scores, the old one is gone.
        top = reader.memory.recalls.recall(ctx, validate_recall({"query": "reworded"})).matches
        assert top[0].state.subject == "Kept rule, reworded" and top[0].why["lexical"] > 0
        travelled = reader.memory.recalls.recall(
            elsewhere, validate_recall({"query": "org-wide"})
        ).matches
        assert [m.why["lexical"] > 0 for m in travelled] == [True]
        writer.memory.lifecycle.restore(ctx, gone.id, "true again")
        assert sorted(s or "" for s in subjects()) == ["Kept rule, reworded", "Retired rule"]
    finally:
        writer.close()
        reader.close()
