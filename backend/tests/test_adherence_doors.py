"""Adherence on the HTTP API and MCP over HTTP, on both engines: the client-neutral session
judged with the caller's key (writers record, readers are refused, other tenants and
projects see nothing of it), bad shapes as field errors that write nothing, and the report."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import AuditEventType
from prism_memory.trigraph.port import AuditFilter
from tests.api_world import ENGINES, World, world_on

NO_NPM = [{"forbid_command": r"(?:^|[\s;&|(])npm\b"}]
SECRET = "ghp_" + "Z8y" * 12


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("adherence-doors")) as w:
        for tenant in ("acme", "beta"):
            w.ids[f"{tenant}_npm"] = str(
                w.services.memory.writes.remember(
                    w.ctx(tenant, "p1"),
                    validate_remember(
                        {
                            "kind": "memorule",
                            "memorule_kind": "convention",
                            "subject": f"{tenant}: use pnpm, never npm",
                            "body": "This repository uses pnpm; never run npm.",
                            "applies_to": {"scope": "project"},
                            "checks": NO_NPM,
                        }
                    ),
                ).id
            )
        yield w


def body(session: str, *commands: str, dry_run: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "session": {
            "session": session,
            "cwd": "/srv/agent",
            "actions": [{"type": "command", "command": c} for c in commands],
        },
        "client": "test-agent",
        "dry_run": dry_run,
        **extra,
    }


def verdicts(payload: dict[str, Any]) -> dict[str, str]:
    return {v["memorule_id"]: v["verdict"] for v in payload["verdicts"]}


def recorded(w: World, tenant: str, session: str) -> list[str]:
    found = w.services.store.audit_events(
        w.ctx(tenant, "p1").tenant_id,
        AuditFilter(events=(AuditEventType.VIOLATED, AuditEventType.FOLLOWED), limit=500),
    )
    return [e.event.value for e in found if (e.evidence_signal_id or "").endswith(session)]


def test_a_writer_judges_over_http_and_the_verdict_is_recorded(world: World) -> None:
    session = f"http-{uuid.uuid4()}"
    response = world.call(
        "a_writer", "POST", "/v1/adherence/judge", body(session, f"GH_TOKEN={SECRET} npm publish")
    )
    assert response.status_code == 200, response.text
    payload = response.json()
    assert payload["ok"] is True and payload["recorded"] == 1
    assert verdicts(payload) == {world.ids["acme_npm"]: "violated"}
    assert SECRET not in response.text
    assert recorded(world, "acme", session) == ["violated"]


def test_a_dry_run_over_http_records_nothing(world: World) -> None:
    session = f"dry-{uuid.uuid4()}"
    response = world.call(
        "a_writer", "POST", "/v1/adherence/judge", body(session, "npm i", dry_run=True)
    )
    assert response.status_code == 200 and response.json()["recorded"] == 0
    assert recorded(world, "acme", session) == []


@pytest.mark.parametrize("key", ["a_reader", "b_reader"])
def test_a_reader_cannot_judge(world: World, key: str) -> None:
    session = f"reader-{uuid.uuid4()}"
    response = world.call(key, "POST", "/v1/adherence/judge", body(session, "npm i"))
    assert response.status_code == 403
    assert recorded(world, "acme", session) == [] and recorded(world, "beta", session) == []


def test_keys_are_required(world: World) -> None:
    assert world.call(None, "POST", "/v1/adherence/judge", body("s", "npm i")).status_code == 401
    assert world.call("revoked", "GET", "/v1/adherence/report").status_code == 401


def test_another_tenant_judges_against_its_own_rules_only(world: World) -> None:
    session = f"beta-{uuid.uuid4()}"
    response = world.call("b_writer", "POST", "/v1/adherence/judge", body(session, "npm i"))
    assert verdicts(response.json()) == {world.ids["beta_npm"]: "violated"}
    assert recorded(world, "acme", session) == []


def test_a_key_of_another_project_finds_no_rule_of_p1(world: World) -> None:
    session = f"p2-{uuid.uuid4()}"
    response = world.call(
        "a_writer",
        "POST",
        "/v1/adherence/judge",
        body(session, "npm i"),
        headers={"X-Prism-Project": "p2"},
    )
    assert response.status_code == 200 and verdicts(response.json()) == {}
    denied = world.call(
        "a_p1_writer",
        "POST",
        "/v1/adherence/judge",
        body(session, "npm i"),
        headers={"X-Prism-Project": "p2"},
    )
    assert denied.status_code == 403


def test_a_bad_session_is_every_field_error_and_writes_nothing(world: World) -> None:
    bad = {
        "session": {"session": "", "actions": [{"type": "shell"}, {"type": "edit", "path": 3}]},
        "dry_run": "no",
        "extra": 1,
    }
    response = world.call("a_writer", "POST", "/v1/adherence/judge", bad)
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["error"]["fields"]}
    assert fields == {
        "extra",
        "session.session",
        "session.actions.0.type",
        "session.actions.1.path",
        "dry_run",
    }
    missing = world.call("a_writer", "POST", "/v1/adherence/judge", {})
    assert missing.status_code == 422
    assert missing.json()["error"]["fields"][0]["field"] == "session"


def test_the_report_over_http_shows_the_projects_rules(world: World) -> None:
    world.call("a_writer", "POST", "/v1/adherence/judge", body(f"r-{uuid.uuid4()}", "npm ci"))
    response = world.call("a_reader", "GET", "/v1/adherence/report")
    assert response.status_code == 200, response.text
    report = response.json()
    (rule,) = [r for r in report["rules"] if r["memorule_id"] == world.ids["acme_npm"]]
    assert rule["violated_sessions"] >= 1 and rule["last_violation"]["evidence"]
    other = world.call("b_reader", "GET", "/v1/adherence/report").json()
    assert {r["memorule_id"] for r in other["rules"]} == {world.ids["beta_npm"]}
    p2 = world.call("a_reader", "GET", "/v1/adherence/report", headers={"X-Prism-Project": "p2"})
    assert p2.json()["rules"] == [] and p2.json()["sessions_with_violations"] == []


def test_mcp_judge_and_report_with_the_callers_key(world: World) -> None:
    session = f"mcp-{uuid.uuid4()}"
    is_error, payload = world.tool("a_writer", "adherence_judge", body(session, "npm run build"))
    assert not is_error, payload
    assert verdicts(payload) == {world.ids["acme_npm"]: "violated"} and payload["recorded"] == 1
    is_error, refused = world.tool("a_reader", "adherence_judge", body(session, "npm i"))
    assert is_error and refused["error"]["code"] == "forbidden"
    is_error, bad = world.tool("a_writer", "adherence_judge", {"session": {"actions": []}})
    assert is_error and bad["error"]["fields"][0]["field"] == "session.session"
    is_error, report = world.tool("a_reader", "adherence_report", {})
    assert not is_error and world.ids["acme_npm"] in {r["memorule_id"] for r in report["rules"]}
    is_error, theirs = world.tool("b_reader", "adherence_report", {})
    assert not is_error and {r["memorule_id"] for r in theirs["rules"]} == {world.ids["beta_npm"]}
    is_error, extra = world.tool("a_reader", "adherence_report", {"limit": 3})
    assert is_error and extra["error"]["fields"][0]["code"] == "unknown_field"


def test_a_session_past_the_doors_action_bound_is_a_field_error(world: World) -> None:
    many = body(f"many-{uuid.uuid4()}", *(["ls"] * 1_001))
    response = world.call("a_writer", "POST", "/v1/adherence/judge", many)
    assert response.status_code == 422
    (error,) = response.json()["error"]["fields"]
    assert (error["field"], error["code"], error["max"]) == ("session.actions", "too_many", 1_000)
