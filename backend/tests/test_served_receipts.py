"""Issue 14: served receipts say which memorule versions each session was given, and old
stores migrate in place with their events verifying as before."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import Services, build_services
from prism_memory.domain import audit as chain
from prism_memory.domain.contract.recall import BriefCreate, validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.serializers import served_page_dict
from prism_memory.settings import load_settings
from prism_memory.trigraph.ledger import ServedFilter
from prism_memory.trigraph.sqlite.rows import STATE_COLUMNS
from prism_memory.trigraph.sqlite.schema import MIGRATIONS
from tests.cli_run import run_prism
from tests.conftest import ContextFactory


def rule(subject: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: because the team agreed so.",
        "applies_to": {"surface": "python"},
        **extra,
    }


def test_a_recall_and_a_brief_leave_one_receipt_per_served_version_in_rank_order(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    ids = [
        mem.writes.remember(ctx, validate_remember(rule(f"Review rule number {i}"))).id
        for i in range(4)
    ]
    mem.lifecycle.update(ctx, ids[1], {"body": "Version two of rule one, as served now."})
    mem.writes.remember(ctx, validate_remember({"body": "A note is never in a receipt."}))
    recalled = mem.recalls.recall(ctx, validate_recall({"query": "review rule", "top_k": 10}))
    brief = services.brief.brief(ctx, BriefCreate(task="review", token_budget=200))
    page = services.ledger.served(ctx, ServedFilter(session_id=ctx.session_id))
    receipts = served_page_dict(page)["served"]
    rules = [m for m in recalled.matches if m.memory.kind.value == "memorule"]
    expected = [
        ("semantic_recall", str(m.state.id), m.state.version, rank)
        for rank, m in enumerate(recalled.matches, start=1)
        if m in rules
    ]
    expected += [
        ("memorule_brief", str(m.state.id), m.state.version, rank)
        for rank, m in enumerate(brief.included, start=1)
    ]
    got = [(r["tool"], r["state_id"], r["version"], r["rank"]) for r in receipts]
    assert got == expected and len(rules) == 4 and brief.included
    assert {r["persona"] for r in receipts} == {"donna"}
    assert len({r["call_id"] for r in receipts}) == 2
    one = services.ledger.served(ctx, ServedFilter(memorule_id=ids[1]))
    assert {r.version for r in one.receipts} == {2}
    assert services.memorules.verify_chain(ctx).served is not None


def test_receipts_page_oldest_first_and_filter_by_time(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(persona="hal")
    for i in range(3):
        services.memory.writes.remember(ctx, validate_remember(rule(f"Paging rule {i}")))
    for _ in range(3):
        services.memory.recalls.recall(ctx, validate_recall({"source_type": "memorule"}))
    first = services.ledger.served(ctx, ServedFilter(limit=4))
    rest = services.ledger.served(ctx, ServedFilter(limit=500, after_seq=first.next_cursor))
    seqs = [r.seq for r in first.receipts + rest.receipts]
    assert seqs == list(range(1, 10)) and rest.next_cursor is None
    cut = first.receipts[3].served_at
    later = services.ledger.served(ctx, ServedFilter(since=cut))
    assert [r.seq for r in later.receipts] == list(range(4, 10))
    assert not services.ledger.served(ctx, ServedFilter(until=first.receipts[0].served_at)).receipts


def test_the_setting_turns_receipts_off(db_path: Path, make_ctx: ContextFactory) -> None:
    settings = load_settings(db=db_path, embedder="fake", database_url="", served_receipts=False)
    services = build_services(settings)
    try:
        ctx = make_ctx(persona="donna")
        services.memory.writes.remember(ctx, validate_remember(rule("Nobody records this")))
        assert services.memory.recalls.recall(ctx, validate_recall({})).matches
        assert not services.ledger.served(ctx, ServedFilter()).receipts
    finally:
        services.close()


def test_prism_audit_served_lists_exactly_what_a_cli_recall_returned(db_path: Path) -> None:
    for i in range(5):
        done = run_prism(
            db_path,
            "remember",
            "--kind",
            "memorule",
            "--memorule-kind",
            "convention",
            "--subject",
            f"Served rule {i}",
            "--body",
            f"Served rule {i}: what the agent reads.",
            "--for-surface",
            "python",
        )
        assert done.returncode == 0, done.stderr
    session = "0190a0b4-0000-7000-8000-000000000001"
    recall = run_prism(db_path, "recall", "served rule", "--session-id", session, "--json")
    assert recall.returncode == 0, recall.stderr
    returned = [(m["id"], m["version"]) for m in json.loads(recall.stdout)["matches"]]
    listed = run_prism(db_path, "audit", "served", "--session-id", session, "--json")
    assert listed.returncode == 0, listed.stderr
    served = json.loads(listed.stdout)["served"]
    assert [(r["memorule_id"], r["version"]) for r in served] == returned
    assert [r["rank"] for r in served] == list(range(1, 6))
    verified = run_prism(db_path, "audit", "verify")
    assert verified.returncode == 0 and "served receipts OK: 5 receipts" in verified.stdout


def test_a_store_from_before_migration_4_migrates_in_place_and_its_events_verify(
    tmp_path: Path, make_ctx: ContextFactory
) -> None:
    new, old = tmp_path / "new.db", tmp_path / "old.db"
    ctx = make_ctx(persona="donna")
    services = build_services(load_settings(db=new, embedder="fake", database_url=""))
    try:
        first = services.memory.writes.remember(ctx, validate_remember(rule("Legacy rule one"))).id
        services.memory.writes.remember(ctx, validate_remember(rule("Legacy rule two")))
        services.memory.lifecycle.update(ctx, first, {"body": "Legacy rule one, second version."})
    finally:
        services.close()
    _as_written_before_migration_4(new, old)
    services = build_services(load_settings(db=old, embedder="fake", database_url=""))
    try:
        report = services.memorules.verify_chain(ctx)
        assert (report.ok, report.events, report.legacy_events, report.content_checked) == (
            True,
            3,
            3,
            0,
        )
        services.memory.writes.remember(
            ctx, validate_remember(rule("Rule written after the migration"))
        )
        report = services.memorules.verify_chain(ctx)
        assert (report.ok, report.legacy_events, report.content_checked) == (True, 3, 1)
        assert "3 legacy events" in run_prism(old, "audit", "verify", "--tenant", "acme").stdout
    finally:
        services.close()


def _as_written_before_migration_4(source: Path, target: Path) -> None:
    """``target``: the rows of ``source`` on the schema of migrations 1-2, with the events
    hashed as the code before migration 4 hashed them (no content hash)."""
    conn = sqlite3.connect(target)
    for _, _, statements in MIGRATIONS[:2]:
        for statement in statements:
            conn.execute(statement)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    conn.executemany(
        "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000000Z')",
        [(v, n) for v, n, _ in MIGRATIONS[:2]],
    )
    conn.execute("ATTACH ? AS src", (str(source),))
    # memory_state and memory as migration 1 made them (migration 6 added checks and
    # enforcement, migration 9 the memory's pin)
    picked = {
        "memory_state": "tenant_id, " + STATE_COLUMNS.rsplit(", checks", 1)[0],
        "memory": "tenant_id, id, project_id, namespace, kind, source_type, status, "
        "created_at, current_version",
    }
    for table in ("memory", "memory_state", "recall_index", "tenant_clock"):
        conn.execute(f"INSERT INTO {table} SELECT {picked.get(table, '*')} FROM src.{table}")
    prev = chain.GENESIS_HASH
    events = conn.execute(
        "SELECT id, tenant_id, seq, memorule_id, state_id, event, written_by_session_id, "
        "written_by_persona, evidence_signal_id, written_at, reason FROM src.memorule_audit "
        "ORDER BY seq"
    ).fetchall()
    for row in events:
        digest = chain.event_hash(prev, (*row, None))
        conn.execute(
            "INSERT INTO memorule_audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row[1], row[2], row[0], *row[3:], prev, digest),
        )
        prev = digest
    conn.commit()
    conn.close()


def _recall_many(url: str, key: str, client: int, count: int) -> list[list[tuple[str, int]]]:
    """Recalls until the server stops answering: the versions each acknowledged one served."""
    import httpx

    served = []
    headers = {"Authorization": f"Bearer {key}", "X-Prism-Session": _session(client)}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        for _ in range(count):
            try:
                response = c.post("/v1/recall", json={"source_type": "memorule", "top_k": 3})
            except httpx.TransportError:
                break  # the server is shutting down
            if response.status_code != 200:
                break
            served.append([(m["id"], m["version"]) for m in response.json()["matches"]])
    return served


def _session(client: int) -> str:
    return f"0190a0b4-0000-7000-8000-{client:012d}"


@pytest.mark.slow
def test_receipts_of_every_answered_recall_survive_a_sigterm_under_load(db_path: Path) -> None:
    import concurrent.futures
    import time

    import httpx

    from tests.test_api_server import WRITERS, Server, create_key

    admin = create_key(db_path, "--tenant", "acme", "--role", "admin")
    reader = create_key(db_path, "--tenant", "acme", "--role", "reader")
    server = Server(db_path)
    auth = {"Authorization": f"Bearer {admin}"}
    for i in range(5):
        body = rule(f"Load rule {i}")
        assert httpx.post(f"{server.url}/v1/memories", json=body, headers=auth).status_code == 201
    with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
        key_of = [reader if c % 2 else admin for c in range(WRITERS)]
        futures = [pool.submit(_recall_many, server.url, key_of[c], c, 400) for c in range(WRITERS)]
        time.sleep(2.0)
        assert server.stop() == 0, server.log.read_text()
        answered = [f.result() for f in futures]
    assert all(answered)
    again = Server(db_path)
    try:
        for c, calls in enumerate(answered):
            listed: list[tuple[str, int]] = []
            after = None
            while True:
                params: dict[str, Any] = {"session_id": _session(c), "limit": 500}
                if after is not None:
                    params["after"] = after
                page = httpx.get(
                    f"{again.url}/v1/audit/served",
                    params=params,
                    headers={"Authorization": f"Bearer {key_of[c]}"},
                ).json()
                listed += [(r["memorule_id"], r["version"]) for r in page["served"]]
                if (after := page["next_cursor"]) is None:
                    break
            assert listed == [v for call in calls for v in call]
        refused = httpx.get(
            f"{again.url}/v1/audit/served", headers={"Authorization": f"Bearer {reader}"}
        )
        assert refused.status_code == 403
        other = httpx.get(
            f"{again.url}/v1/audit/served",
            params={"session_id": _session(0)},  # an admin key's session
            headers={"Authorization": f"Bearer {reader}"},
        ).json()
        assert other["served"] == []  # a reader sees only what was served through its key
        verify = httpx.get(f"{again.url}/v1/audit/verify", headers=auth).json()
        assert verify["ok"] is True
        assert verify["served"]["events"] == sum(len(v) for c in answered for v in c)
    finally:
        assert again.stop() == 0


def test_prism_mcp_writes_its_pending_receipts_when_stopped_with_sigterm(db_path: Path) -> None:
    import os
    import signal
    import subprocess

    from tests.test_mcp_stdio import SERVER, server_env

    env = {**os.environ, **server_env(db_path), "PRISM_SERVED_RECEIPTS_INTERVAL_S": "60"}
    proc = subprocess.Popen(
        SERVER, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert proc.stdin is not None and proc.stdout is not None

    def call(n: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
        proc.stdin.write(json.dumps(message) + "\n")
        while True:
            reply: dict[str, Any] = json.loads(proc.stdout.readline())
            if reply.get("id") == n:
                return reply

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
        call(1, "initialize", hello)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        write = {"name": "prism_remember", "arguments": rule("A rule served over stdio")}
        assert not call(2, "tools/call", write)["result"].get("isError")
        recall = {"name": "semantic_recall", "arguments": {"source_type": "memorule"}}
        answer = call(3, "tools/call", recall)["result"]["structuredContent"]
        assert answer["count"] == 1  # its receipt waits in the writer (a 60 s interval)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    listed = run_prism(db_path, "audit", "served", "--json", "--tenant", "acme")
    served = json.loads(listed.stdout)["served"]
    assert [(r["memorule_id"], r["tool"]) for r in served] == [
        (answer["matches"][0]["id"], "semantic_recall")
    ]
