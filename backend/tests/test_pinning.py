"""Operator pins (issue 31 item 2, the brief's must-include tier), on both engines.

A pin is a flag on the memory row, set by an operator with a reason, recorded by a chained
``pinned``/``unpinned`` audit event, idempotent, refused precisely (writing nothing) on what
cannot be pinned, covered by ``prism audit verify`` and kept by a dump. The brief, the HTTP
routes and the MCP tool are tested in the sections below.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access, build_services, context_from
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.contract.recall import BriefCreate, validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import AuditEventType, SessionContext
from prism_memory.errors import (
    Conflict,
    InvalidInput,
    MemoryRetired,
    NotAMemorule,
    NotFound,
    PermissionDenied,
)
from prism_memory.settings import load_settings
from prism_memory.trigraph.port import AuditFilter
from prism_memory.trigraph.sqlite.schema import MIGRATIONS
from tests.api_world import ENGINES, World, world_on
from tests.api_world import rule as api_rule
from tests.cli_run import invoke_prism
from tests.conftest import ContextFactory, raw_sql


def rule(subject: str, kind: str = "convention", **extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": kind,
        "subject": subject,
        "body": f"{subject}: the body an agent is briefed.",
        "applies_to": {"scope": "project"},
    }
    raw.update(extra)
    return raw


def events(services: Services, ctx: SessionContext, memory_id: UUID) -> list[AuditEventType]:
    found = services.store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=memory_id))
    return [e.event for e in reversed(found)]


def key(ctx: SessionContext, role: Role, persona: str | None = None) -> ApiKey:
    return ApiKey(
        key_id=f"k-{role.value}",
        tenant_id=ctx.tenant_id,
        role=role,
        projects=(ctx.project_id,),
        persona=persona,
        prefix="pk",
        label=None,
        created_at=datetime.now(UTC),
    )


# -- storage and audit ---------------------------------------------------------------------


def test_a_pin_sets_the_flag_writes_one_chained_event_and_is_idempotent(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    written = mem.writes.remember(ctx, validate_remember(rule("Pin me please")))
    first = mem.lifecycle.pin(ctx, written.id, True, "every session needs it")
    assert (first.pinned, first.changed) == (True, True) and first.audit_id is not None
    memory, _ = mem.reads.get(ctx, written.id)
    assert memory.pinned is True
    again = mem.lifecycle.pin(ctx, written.id, True, "asked twice")
    assert (again.pinned, again.changed, again.audit_id) == (True, False, None)
    assert events(services, ctx, written.id) == [AuditEventType.CREATED, AuditEventType.PINNED]
    event = services.store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=written.id))[0]
    assert (event.id, event.reason) == (first.audit_id, "every session needs it")
    assert event.written_by_persona == "donna" and event.content_hash is not None

    off = mem.lifecycle.pin(ctx, written.id, False, "no longer needed")
    assert (off.pinned, off.changed) == (False, True)
    assert mem.lifecycle.pin(ctx, written.id, False, "twice").changed is False
    assert mem.reads.get(ctx, written.id)[0].pinned is False
    assert events(services, ctx, written.id)[-1] is AuditEventType.UNPINNED
    assert services.memorules.verify_chain(ctx).ok
    # the flag is on the memory: no new version
    assert mem.reads.get(ctx, written.id)[0].current_version == 1


def test_what_cannot_be_pinned_is_refused_precisely_and_writes_nothing(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    note = mem.writes.remember(ctx, validate_remember({"body": "A note is never pinned."})).id
    retired = mem.writes.remember(ctx, validate_remember(rule("A retired rule"))).id
    mem.lifecycle.retire(ctx, retired, "gone")
    live = mem.writes.remember(ctx, validate_remember(rule("A live rule to pin"))).id
    before = services.store.stats(ctx.tenant_id)

    with pytest.raises(NotAMemorule) as bad:
        mem.lifecycle.pin(ctx, note, True, "try")
    assert (bad.value.code, bad.value.details["kind"]) == ("not_a_memorule", "note")
    with pytest.raises(MemoryRetired):
        mem.lifecycle.pin(ctx, retired, True, "try")
    with pytest.raises(NotFound):
        mem.lifecycle.pin(ctx, new_id(), True, "try")
    for reason in (None, "", "   ", "x" * 2001):
        with pytest.raises(InvalidInput) as no_reason:
            mem.lifecycle.pin(ctx, live, True, reason)
        assert [e.field for e in no_reason.value.errors] == ["reason"]
    proposal = mem.writes.remember(ctx, validate_remember(rule("A proposed rule"))).id
    raw_sql(
        services,
        "UPDATE memory SET status = 'proposed' WHERE tenant_id = ? AND id = ?",
        (str(ctx.tenant_id), str(proposal)),
    )
    with pytest.raises(Conflict) as proposed:
        mem.lifecycle.pin(ctx, proposal, True, "try")
    assert proposed.value.details["status"] == "proposed"
    after = services.store.stats(ctx.tenant_id)
    assert after["audit_events"] == before["audit_events"] + 1  # the proposal's creation
    assert not any(mem.reads.get(ctx, m)[0].pinned for m in (note, retired, live, proposal))


def test_the_engine_refuses_a_pin_already_as_asked_or_of_no_memory(
    services: Services, ctx: SessionContext
) -> None:
    """Two operators pinning at once: the second write finds the flag set in its own
    transaction and fails whole (its event is not chained); a retry answers changed: false."""
    from prism_memory.trigraph.port import WriteBatch

    mem = services.memory
    written = mem.writes.remember(ctx, validate_remember(rule("Pinned by two at once"))).id
    memory, state = mem.reads.get(ctx, written)
    late = services.memorules.pin_event(ctx, memory, state, True, memory.created_at, "late")
    mem.lifecycle.pin(ctx, written, True, "first")
    before = services.store.stats(ctx.tenant_id)
    with pytest.raises(Conflict) as caught:
        services.store.write(
            WriteBatch(ctx.tenant_id, pin_changes=[(written, True)], audits=[late])
        )
    assert "meanwhile" in caught.value.message and caught.value.details["pinned"] is True
    with pytest.raises(NotFound):
        services.store.write(WriteBatch(ctx.tenant_id, pin_changes=[(new_id(), True)]))
    assert services.store.stats(ctx.tenant_id) == before
    assert services.memorules.verify_chain(ctx).ok


def test_retiring_keeps_the_pin_unpinning_a_retired_rule_is_allowed(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    written = mem.writes.remember(ctx, validate_remember(rule("Pinned then retired"))).id
    mem.lifecycle.pin(ctx, written, True, "important")
    mem.lifecycle.retire(ctx, written, "obsolete")
    memory, _ = mem.reads.get(ctx, written)
    assert (memory.status.value, memory.pinned) == ("retired", True)
    assert mem.reads.pinned(ctx) == []  # a retired rule is never briefed
    mem.lifecycle.restore(ctx, written, "back")
    assert [m.id for m, _ in mem.reads.pinned(ctx)] == [written]
    mem.lifecycle.retire(ctx, written, "obsolete again")
    assert mem.lifecycle.pin(ctx, written, False, "clean up").changed is True
    assert services.memorules.verify_chain(ctx).ok


def test_a_correction_does_not_inherit_the_pin_of_the_rule_it_retires(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    pinned = mem.writes.remember(ctx, validate_remember(rule("Deploy on Tuesdays"))).id
    mem.lifecycle.pin(ctx, pinned, True, "the team's rule")
    fixed = mem.writes.remember(
        ctx,
        validate_remember(
            rule("Deploy on Wednesdays instead", kind="correction", corrects=str(pinned))
        ),
    ).id
    assert mem.reads.get(ctx, pinned)[0].status.value == "retired"
    assert (
        mem.reads.get(ctx, fixed)[0].pinned is False
    )  # an agent's correction is not an operator's pin
    assert mem.reads.pinned(ctx) == []
    assert services.memorules.verify_chain(ctx).ok


def test_who_may_retire_may_pin(services: Services, ctx: SessionContext) -> None:
    access = build_access(services)
    written = services.memory.writes.remember(ctx, validate_remember(rule("Only writers pin"))).id
    with pytest.raises(PermissionDenied):
        access.pin(key(ctx, Role.READER), ctx, written, True, "a reader tries")
    assert services.memory.reads.get(ctx, written)[0].pinned is False
    assert access.pin(key(ctx, Role.WRITER), ctx, written, True, "a writer may").changed
    other = SessionContext(ctx.tenant_id, new_id(), ctx.session_id)
    with pytest.raises((NotFound, PermissionDenied)):
        access.pin(key(other, Role.ADMIN), other, written, False, "another project's key")
    assert services.memory.reads.get(ctx, written)[0].pinned is True
    # a global rule reaches every project's briefs: a key of one project may not pin it
    shared = services.memory.writes.remember(
        ctx, validate_remember(rule("Shared", applies_to={"scope": "global"}))
    ).id
    with pytest.raises(PermissionDenied):
        access.pin(key(ctx, Role.ADMIN), ctx, shared, True, "a project's key tries")
    assert services.memory.reads.get(ctx, shared)[0].pinned is False


def test_a_pin_edited_behind_the_service_is_caught_by_verify(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    pinned = mem.writes.remember(ctx, validate_remember(rule("Pinned properly"))).id
    mem.lifecycle.pin(ctx, pinned, True, "needed")
    plain = mem.writes.remember(ctx, validate_remember(rule("Never pinned"))).id
    note = mem.writes.remember(ctx, validate_remember({"body": "A note of the project."})).id
    assert services.memorules.verify_chain(ctx).ok
    t = str(ctx.tenant_id)
    for memory_id, value in ((plain, True), (pinned, False), (note, True)):
        raw_sql(
            services,
            "UPDATE memory SET pinned = ? WHERE tenant_id = ? AND id = ?",
            (value, t, str(memory_id)),
        )
        report = services.memorules.verify_chain(ctx)
        assert not report.ok and report.problem is not None
        assert "memory.pinned" in report.problem and str(memory_id) in report.problem
        raw_sql(
            services,
            "UPDATE memory SET pinned = ? WHERE tenant_id = ? AND id = ?",
            (not value, t, str(memory_id)),
        )
        assert services.memorules.verify_chain(ctx).ok


# -- the CLI ---------------------------------------------------------------------------------


def test_prism_pin_and_unpin(db_path: Path) -> None:
    def prism(*args: str) -> Any:
        return invoke_prism(db_path, *args)

    made = prism(
        "remember",
        "--json",
        "--kind",
        "memorule",
        "--memorule-kind",
        "convention",
        "--subject",
        "Use the CLI to pin",
        "--body",
        "Pinned from the command line.",
        "--scope",
        "project",
    )
    rule_id = json.loads(made.stdout)["id"]
    done = prism("pin", rule_id, "--reason", "every session", "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert (shown["ok"], shown["id"], shown["pinned"], shown["changed"]) == (
        True,
        rule_id,
        True,
        True,
    )
    assert "already pinned" in prism("pin", rule_id, "--reason", "again").stdout
    show = json.loads(prism("show", rule_id, "--json").stdout)
    assert show["memory"]["pinned"] is True
    missing = prism("pin", rule_id)
    assert missing.returncode == 2 and "--reason" in missing.stderr
    undone = prism("unpin", rule_id, "--reason", "not any more")
    assert undone.returncode == 0 and f"unpinned memorule {rule_id}" in undone.stdout
    note = json.loads(prism("remember", "--json", "--body", "just a note").stdout)["id"]
    refused = prism("pin", note, "--reason", "x", "--json")
    assert refused.returncode != 0
    assert json.loads(refused.stdout or refused.stderr)["error"]["code"] == "not_a_memorule"


# -- migration of an existing store ----------------------------------------------------------


def test_an_sqlite_store_from_before_pins_migrates_with_nothing_pinned(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    ctx = context_from(services.settings)
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Written before pins"))
    ).id
    services.close()
    pin_migration = next(v for v, name, _ in MIGRATIONS if name == "memory_pinned")
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE memory DROP COLUMN pinned")
    conn.execute("DELETE FROM schema_migrations WHERE version = ?", (pin_migration,))
    conn.commit()
    conn.close()

    again = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        assert again.store.migrate() == MIGRATIONS[-1][0]
        assert again.memory.reads.get(ctx, written)[0].pinned is False
        assert again.memory.lifecycle.pin(ctx, written, True, "after the upgrade").changed
        assert again.memorules.verify_chain(ctx).ok
    finally:
        again.close()


@pytest.mark.postgres
def test_a_postgres_store_from_before_pins_migrates_with_nothing_pinned(pg_url: str) -> None:
    from prism_memory.trigraph.postgres.schema import MIGRATIONS as PG_MIGRATIONS

    settings = load_settings(database_url=pg_url, embedder="fake")
    services = build_services(settings)
    ctx = context_from(services.settings)
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Written before pins"))
    ).id
    pin_migration = next(v for v, name, _ in PG_MIGRATIONS if name == "memory_pinned")
    raw_sql(services, "ALTER TABLE memory DROP COLUMN pinned")
    raw_sql(services, "DELETE FROM schema_migrations WHERE version = ?", (pin_migration,))
    services.close()
    again = build_services(settings)
    try:
        assert again.store.migrate() == PG_MIGRATIONS[-1][0]
        assert again.memory.reads.get(ctx, written)[0].pinned is False
        assert again.memory.lifecycle.pin(ctx, written, True, "after the upgrade").changed
        assert again.memorules.verify_chain(ctx).ok
    finally:
        again.close()


def test_pinned_rules_are_those_that_apply_to_the_context(
    services: Services, make_ctx: ContextFactory
) -> None:
    donna = make_ctx(persona="donna", surface="python")
    mem = services.memory
    ids = {
        "project": mem.writes.remember(donna, validate_remember(rule("For the project"))).id,
        "python": mem.writes.remember(
            donna, validate_remember(rule("For python", applies_to={"surface": "python"}))
        ).id,
        "go": mem.writes.remember(
            donna, validate_remember(rule("For go only", applies_to={"surface": "go"}))
        ).id,
        "donna": mem.writes.remember(
            donna,
            validate_remember(
                rule("For donna", applies_to={"scope": "persona", "persona": "donna"})
            ),
        ).id,
        "global": mem.writes.remember(
            donna, validate_remember(rule("For everyone", applies_to={"scope": "global"}))
        ).id,
    }
    for memory_id in ids.values():
        mem.lifecycle.pin(donna, memory_id, True, "pinned for the test")
    names = {v: k for k, v in ids.items()}

    def seen(ctx: SessionContext) -> list[str]:
        return [names[m.id] for m, _ in mem.reads.pinned(ctx)]

    assert seen(donna) == ["project", "python", "donna", "global"]
    assert seen(make_ctx(surface="go")) == ["project", "go", "global"]
    assert seen(make_ctx(project="web")) == ["global"]
    assert seen(make_ctx(tenant="other")) == []
    assert mem.reads.pinned(donna, namespace="elsewhere") == []


# -- the brief -------------------------------------------------------------------------------


def brief_world(services: Services, ctx: SessionContext) -> dict[str, UUID]:
    """Ten conventions, an observed correction, and one pinned convention written first
    (so with no task it would come first among conventions anyway: pin the sixth)."""
    mem = services.memory
    ids = {
        f"c{i}": mem.writes.remember(
            ctx, validate_remember(rule(f"Convention number {i} of the house"))
        ).id
        for i in range(10)
    }
    ids["observed"] = mem.writes.remember(
        ctx,
        validate_remember(
            rule("Observed correction of the team", kind="correction", confidence="observed")
        ),
    ).id
    mem.lifecycle.pin(ctx, ids["c6"], True, "every session must see it")
    return ids


def test_the_brief_shows_pins_first_under_their_own_heading(
    services: Services, ctx: SessionContext
) -> None:
    ids = brief_world(services, ctx)
    brief = services.brief.brief(ctx)
    order = [m.memory.id for m in brief.included]
    assert order[:2] == [ids["c6"], ids["observed"]]
    md = brief.markdown
    assert md.index("## Pinned by an operator") < md.index(str(ids["c6"]))
    assert md.index(str(ids["c6"])) < md.index("## Corrections") < md.index("## Conventions")
    assert md.count(str(ids["c6"])) == 1
    # with a task the pin still leads, even though the task's words name other rules
    tasked = services.brief.brief(
        ctx, BriefCreate(task="Convention number 3 of the house", top_k=3)
    )
    assert tasked.included[0].memory.id == ids["c6"]
    assert services.memory.lifecycle.pin(ctx, ids["c6"], False, "done").changed
    unpinned = services.brief.brief(ctx)
    assert "Pinned by an operator" not in unpinned.markdown
    assert unpinned.included[0].memory.id == ids["observed"]


def test_a_pin_recall_would_not_rank_is_briefed_anyway(
    services: Services, ctx: SessionContext
) -> None:
    ids = brief_world(services, ctx)
    task = "Convention number 1 of the house"
    recalled = services.memory.recalls.recall(
        ctx, validate_recall({"query": task, "top_k": 1, "source_type": "memorule"}), None
    )
    assert [m.memory.id for m in recalled.matches] != [ids["c6"]]
    brief = services.brief.brief(ctx, BriefCreate(task=task, top_k=2))
    assert brief.included[0].memory.id == ids["c6"]
    assert "## Pinned by an operator" in brief.markdown


def test_pins_that_overflow_the_budget_say_what_was_left_out(
    services: Services, ctx: SessionContext
) -> None:
    mem = services.memory
    long_body = "A long pinned rule body. " * 9
    pins = [
        mem.writes.remember(
            ctx, validate_remember(rule(f"Pinned rule {i} of many", body=long_body))
        ).id
        for i in range(8)
    ]
    for memory_id in pins:
        mem.lifecycle.pin(ctx, memory_id, True, "pin them all")
    brief = services.brief.brief(ctx, BriefCreate(token_budget=200))
    assert 0 < len(brief.included) < len(pins)
    assert all(m.memory.pinned for m in brief.included)
    assert brief.estimated_tokens <= 200
    left = len(pins) - len(brief.included)
    assert brief.omitted == left
    assert f"_{left} more applicable rules left out to fit the token budget" in brief.markdown
    assert "semantic_recall(query=<your task>" in brief.markdown


def test_the_hooks_brief_the_pin_first(services: Services, ctx: SessionContext) -> None:
    from prism_memory.domain.access import Caller, operator_key
    from prism_memory.services.hook_answers import HookRequest, answer

    ids = brief_world(services, ctx)
    access = build_access(services)
    caller = Caller(operator_key(ctx.tenant_id), ctx)
    for request in (
        HookRequest("SessionStart"),
        HookRequest("SubagentStart", text="reviewer: review the house conventions"),
    ):
        got = answer(access, caller, request)
        assert got.context is not None and got.served[0] == str(ids["c6"])
        assert got.context.index("## Pinned by an operator") < got.context.index(str(ids["c6"]))
    # the prompt hook adds rules the session was not given: the pin was, at session start
    prompt = answer(
        access,
        caller,
        HookRequest(
            "UserPromptSubmit",
            text="Convention number 6 of the house",
            min_relevance=0.0,
            briefed=frozenset({str(ids["c6"])}),
        ),
    )
    assert str(ids["c6"]) not in (prompt.context or "")


def test_recall_shows_the_pin(services: Services, ctx: SessionContext) -> None:
    ids = brief_world(services, ctx)
    from prism_memory.serializers import match_dict

    found = services.memory.recalls.recall(
        ctx,
        validate_recall({"query": "Convention number 6", "top_k": 20, "source_type": "memorule"}),
    )
    shown = {m.memory.id: match_dict(m)["pinned"] for m in found.matches}
    assert shown[ids["c6"]] is True and shown[ids["c1"]] is False


# -- HTTP and MCP ------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("pinning-doors")) as w:
        yield w


def fresh(world: World) -> str:
    raw = api_rule("Pinned over a door " + new_id().hex[-6:], "A rule pinned over a door.")
    return str(
        world.services.memory.writes.remember(world.ctx("acme", "p1"), validate_remember(raw)).id
    )


def test_pin_and_unpin_over_http(world: World) -> None:
    memory_id = fresh(world)
    pin = world.call("a_writer", "POST", f"/v1/memories/{memory_id}/pin", {"reason": "always"})
    assert pin.status_code == 200, pin.text
    body = pin.json()
    assert (body["ok"], body["id"], body["pinned"], body["changed"]) == (
        True,
        memory_id,
        True,
        True,
    )
    again = world.call("a_writer", "POST", f"/v1/memories/{memory_id}/pin", {"reason": "again"})
    assert again.json() == {
        "ok": True,
        "id": memory_id,
        "pinned": True,
        "changed": False,
        "audit_id": None,
    }
    shown = world.call("a_reader", "GET", f"/v1/memories/{memory_id}").json()
    assert shown["memory"]["pinned"] is True
    brief = world.call("a_reader", "POST", "/v1/brief", {}).json()
    assert brief["included"][0] == {**brief["included"][0], "id": memory_id, "pinned": True}
    assert "## Pinned by an operator" in brief["markdown"]
    audit = world.call("a_reader", "GET", f"/v1/audit?memorule={memory_id}").json()
    assert [e["event"] for e in audit["events"]] == ["pinned", "created"]
    assert audit["events"][0]["reason"] == "always"
    off = world.call("a_writer", "POST", f"/v1/memories/{memory_id}/unpin", {"reason": "done"})
    assert off.json()["pinned"] is False and off.json()["changed"] is True


def test_the_listing_filters_the_pinned_rules(world: World) -> None:
    pinned, other = fresh(world), fresh(world)
    world.call("a_writer", "POST", f"/v1/memories/{pinned}/pin", {"reason": "list it"})

    def listed(query: str) -> list[dict[str, Any]]:
        page = world.call("a_reader", "GET", f"/v1/memories?limit=200{query}")
        assert page.status_code == 200, page.text
        return [item["memory"] for item in page.json()["items"]]

    only = listed("&pinned=true")
    assert pinned in [m["id"] for m in only] and other not in [m["id"] for m in only]
    assert all(m["pinned"] is True for m in only)
    assert {pinned, other} <= {m["id"] for m in listed("&pinned=false")}
    assert [m["id"] for m in listed("&pinned=TRUE")] == [m["id"] for m in only]
    refused = world.call("a_reader", "GET", "/v1/memories?pinned=maybe")
    assert refused.status_code == 422
    assert [(f["field"], f["code"]) for f in refused.json()["error"]["fields"]] == [
        ("pinned", "wrong_type")
    ]


@pytest.mark.parametrize(
    ("key", "target", "body", "status", "code"),
    [
        ("a_reader", "rule", {"reason": "x"}, 403, "forbidden"),
        ("a_writer", "rule", {}, 422, "validation_failed"),
        ("a_writer", "rule", {"reason": "x", "pinned": True}, 422, "validation_failed"),
        ("a_writer", "note", {"reason": "x"}, 409, "not_a_memorule"),
        ("a_writer", "retired", {"reason": "x"}, 409, "memory_retired"),
        ("a_writer", "missing", {"reason": "x"}, 404, "not_found"),
        ("b_admin", "rule", {"reason": "x"}, 404, "not_found"),  # another tenant's key
    ],
)
def test_a_refused_pin_over_http_writes_nothing(
    world: World, key: str, target: str, body: dict[str, Any], status: int, code: str
) -> None:
    ctx = world.ctx("acme", "p1")
    mem = world.services.memory
    memory_id = {
        "rule": lambda: fresh(world),
        "note": lambda: str(
            mem.writes.remember(ctx, validate_remember({"body": "A note, never pinned."})).id
        ),
        "missing": lambda: str(new_id()),
    }.get(target, lambda: fresh(world))()
    if target == "retired":
        mem.lifecycle.retire(ctx, UUID(memory_id), "gone")
    before = world.services.store.stats(ctx.tenant_id)
    refused = world.call(key, "POST", f"/v1/memories/{memory_id}/pin", body)
    assert refused.status_code == status, refused.text
    assert refused.json()["error"]["code"] == code
    assert world.services.store.stats(ctx.tenant_id) == before
    if target != "missing":
        assert mem.reads.get(ctx, UUID(memory_id))[0].pinned is False


def test_memorule_pin_over_mcp(world: World) -> None:
    memory_id = fresh(world)
    failed, done = world.tool(
        "a_writer", "memorule_pin", {"id": memory_id, "pinned": True, "reason": "over mcp"}
    )
    assert not failed and (done["pinned"], done["changed"]) == (True, True)
    failed, same = world.tool(
        "a_writer", "memorule_pin", {"id": memory_id, "pinned": True, "reason": "again"}
    )
    assert not failed and same["changed"] is False and same["audit_id"] is None
    failed, recalled = world.tool(
        "a_reader",
        "semantic_recall",
        {"query": "Pinned over a door", "top_k": 50, "source_type": "memorule"},
    )
    assert not failed
    assert {m["id"]: m["pinned"] for m in recalled["matches"]}[memory_id] is True
    failed, error = world.tool(
        "a_writer", "memorule_pin", {"id": memory_id, "pinned": "yes", "reason": "x"}
    )
    assert failed and error["error"]["fields"][0]["field"] == "pinned"
    failed, error = world.tool(
        "a_reader", "memorule_pin", {"id": memory_id, "pinned": False, "reason": "x"}
    )
    assert failed and error["error"]["code"] == "forbidden"
    failed, off = world.tool(
        "a_writer", "memorule_pin", {"id": memory_id, "pinned": False, "reason": "done"}
    )
    assert not failed and (off["pinned"], off["changed"]) == (False, True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_memorule_pin_over_mcp_stdio(db_path: Path) -> None:
    from tests.test_mcp_stdio import rule as stdio_rule
    from tests.test_mcp_stdio import stdio_server, structured

    async with stdio_server(db_path) as client:
        written = await structured(client, "prism_remember", stdio_rule("Pin me over stdio"))
        done = await structured(
            client, "memorule_pin", {"id": written["id"], "pinned": True, "reason": "stdio"}
        )
        assert (done["id"], done["pinned"], done["changed"]) == (written["id"], True, True)
        brief = await structured(client, "memorule_brief", {})
        assert brief["included"][0]["id"] == written["id"]
        assert "## Pinned by an operator" in brief["markdown"]


@pytest.mark.parametrize("bad", ["x\u0000y", "x\u0085y", "\ud800"], ids=["NUL", "C1", "surrogate"])
def test_bad_characters_in_a_pin_reason_are_a_field_error(world: World, bad: str) -> None:
    memory_id = fresh(world)
    text = json.dumps({"reason": bad})
    headers = {**world.headers("a_writer"), "Content-Type": "application/json"}
    refused = world.client.post(f"/v1/memories/{memory_id}/pin", content=text, headers=headers)
    assert refused.status_code == 422, refused.text
    assert [f["field"] for f in refused.json()["error"]["fields"]] == ["reason"]
    events = world.call("a_admin", "GET", f"/v1/audit?memorule={memory_id}").json()["events"]
    assert [e["event"] for e in events] == ["created"]


# -- dump and load -----------------------------------------------------------------------------


def test_a_pin_survives_a_dump_and_load(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    from prism_memory.services.transfer import export_store, import_store

    mem = services.memory
    pinned = mem.writes.remember(ctx, validate_remember(rule("Pinned across a dump"))).id
    mem.lifecycle.pin(ctx, pinned, True, "keep it first")
    unpinned = mem.writes.remember(ctx, validate_remember(rule("Pinned then unpinned"))).id
    mem.lifecycle.pin(ctx, unpinned, True, "for a while")
    mem.lifecycle.pin(ctx, unpinned, False, "no longer")
    out = io.StringIO()
    export_store(services.store, out, None)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["version"] == 4
    flags = {d["id"]: d["pinned"] for d in lines if d["type"] == "memory"}
    assert flags == {str(pinned): True, str(unpinned): False}

    target = build_services(load_settings(db=tmp_path / "t.db", embedder="fake", database_url=""))
    try:
        import_store(target.store, io.StringIO(out.getvalue()))
        assert target.memory.reads.get(ctx, pinned)[0].pinned is True
        assert target.memory.reads.get(ctx, unpinned)[0].pinned is False
        assert target.memorules.verify_chain(ctx).ok
        assert target.brief.brief(ctx).included[0].memory.id == pinned
    finally:
        target.close()


def test_a_version_3_dump_reads_as_nothing_pinned_and_may_not_name_a_pin(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    from prism_memory.services.transfer import export_store, import_store

    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Written before pins"))
    ).id
    out = io.StringIO()
    export_store(services.store, out, None)

    def as_version_3(keep_pin: bool) -> str:
        lines = []
        for line in out.getvalue().splitlines():
            data = json.loads(line)
            if data["type"] == "header":
                data["version"] = 3
            if data["type"] == "memory" and not keep_pin:
                del data["pinned"]
            lines.append(json.dumps(data))
        return "\n".join(lines) + "\n"

    refused = build_services(load_settings(db=tmp_path / "r.db", embedder="fake", database_url=""))
    try:
        with pytest.raises(InvalidInput) as caught:
            import_store(refused.store, io.StringIO(as_version_3(keep_pin=True)))
        assert "'pinned' is not a field of version 3" in caught.value.errors[0].message
        assert refused.store.stats(ctx.tenant_id)["memories"] == 0
    finally:
        refused.close()
    target = build_services(load_settings(db=tmp_path / "v3.db", embedder="fake", database_url=""))
    try:
        import_store(target.store, io.StringIO(as_version_3(keep_pin=False)))
        assert target.memory.reads.get(ctx, written)[0].pinned is False
        assert target.memorules.verify_chain(ctx).ok
    finally:
        target.close()


def test_a_dump_refuses_a_pin_that_is_not_a_boolean(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    from prism_memory.services.transfer import export_store, import_store

    services.memory.writes.remember(ctx, validate_remember(rule("A rule to garble")))
    out = io.StringIO()
    export_store(services.store, out, None)
    garbled = out.getvalue().replace('"pinned":false', '"pinned":0')
    target = build_services(load_settings(db=tmp_path / "g.db", embedder="fake", database_url=""))
    try:
        with pytest.raises(InvalidInput) as caught:
            import_store(target.store, io.StringIO(garbled))
        assert "'pinned' must be true or false" in caught.value.errors[0].message
    finally:
        target.close()
