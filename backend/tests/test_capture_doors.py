"""The review queue on every door: HTTP, MCP over HTTP, the console; who may see, who may
decide, and that proposals stay out of recall."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator

import pytest

from prism_memory.capture.proposals import candidates
from prism_memory.capture.transcript import read_lines
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.services.capture_service import CaptureService
from prism_memory.trigraph.port import AuditFilter
from tests.api_world import World, running_world
from tests.test_web_console import post_form, signed_in


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("capture-doors")) as w:
        yield w


def seed(w: World, tenant: str = "acme") -> tuple[str, str]:
    """Capture one fresh operator rule into tenant's p1: (proposal id, its unique word)."""
    word = "zq" + uuid.uuid4().hex[:8]
    entry = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "sessionId": str(uuid.uuid4()),
        "cwd": "/work/p1",
        "message": {"role": "user", "content": f"Never deploy {word} on Fridays."},
    }
    messages = read_lines([json.dumps(entry)])
    service = CaptureService(w.services.store, w.services.embedder, w.services.memorules)
    report = service.capture(w.ctx(tenant, "p1"), candidates(messages, None), len(messages))
    (outcome,) = report.outcomes
    assert outcome.action == "proposed" and outcome.memorule_id is not None
    return str(outcome.memorule_id), word


def queue_ids(w: World, key: str) -> list[str]:
    response = w.call(key, "GET", "/v1/proposals")
    assert response.status_code == 200, response.text
    return [p["memory"]["id"] for p in response.json()["proposals"]]


def events_of(w: World, memory_id: str, tenant: str = "acme") -> list[str]:
    found = w.services.store.audit_events(
        w.ctx(tenant, "p1").tenant_id, AuditFilter(memorule_id=uuid.UUID(memory_id))
    )
    return [e.event.value for e in sorted(found, key=lambda e: e.seq)]


def test_readers_see_the_queue_and_other_tenants_do_not(world: World) -> None:
    pid, _ = seed(world)
    assert pid in queue_ids(world, "a_reader")
    assert pid in queue_ids(world, "a_p1_writer")
    assert pid not in queue_ids(world, "b_reader")
    assert world.call(None, "GET", "/v1/proposals").status_code == 401
    assert world.call("revoked", "GET", "/v1/proposals").status_code == 401
    (item,) = [
        p
        for p in world.call("a_reader", "GET", "/v1/proposals").json()["proposals"]
        if p["memory"]["id"] == pid
    ]
    assert item["memory"]["status"] == "proposed"
    assert item["evidence"][0]["evidence_signal_id"].startswith("claude-code:")


def test_proposals_are_not_recalled_over_http(world: World) -> None:
    _, word = seed(world)
    found = world.call("a_reader", "POST", "/v1/recall", {"query": f"deploy {word}"}).json()
    assert all(word not in (m["body"] or "") for m in found["matches"])
    brief = world.call("a_reader", "POST", "/v1/brief", {"task": f"deploy {word}"}).json()
    assert word not in brief["markdown"]


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("approve", {}),
        ("reject", {"reason": "no"}),
        ("merge", {"into": "00000000-0000-4000-8000-000000000001"}),
    ],
)
def test_readers_cannot_decide(world: World, action: str, body: dict[str, str]) -> None:
    pid, _ = seed(world)
    response = world.call("a_reader", "POST", f"/v1/proposals/{pid}/{action}", body)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "forbidden"
    assert events_of(world, pid) == ["proposed"]


def test_another_tenants_key_finds_nothing_to_decide(world: World) -> None:
    pid, _ = seed(world)
    response = world.call("b_admin", "POST", f"/v1/proposals/{pid}/approve", {})
    assert response.status_code == 404
    assert events_of(world, pid) == ["proposed"]


def test_a_writer_approves_over_http_with_an_edit(world: World) -> None:
    pid, word = seed(world)
    body = {"subject": f"No Friday deploys of {word}", "reason": "agreed"}
    response = world.call("a_writer", "POST", f"/v1/proposals/{pid}/approve", body)
    assert response.status_code == 200, response.text
    assert response.json()["version"] == 2
    assert events_of(world, pid) == ["proposed", "approved"]
    found = world.call("a_reader", "POST", "/v1/recall", {"query": f"deploy {word}"}).json()
    assert pid in [m["id"] for m in found["matches"]]
    again = world.call("a_writer", "POST", f"/v1/proposals/{pid}/approve", {})
    assert again.status_code == 409


def test_reject_needs_a_reason_and_writes_nothing_without_one(world: World) -> None:
    pid, _ = seed(world)
    response = world.call("a_writer", "POST", f"/v1/proposals/{pid}/reject", {"reason": ""})
    assert response.status_code == 422
    assert events_of(world, pid) == ["proposed"]
    response = world.call("a_admin", "POST", f"/v1/proposals/{pid}/reject", {"reason": "noise"})
    assert response.status_code == 200
    assert events_of(world, pid) == ["proposed", "rejected"]
    assert pid not in queue_ids(world, "a_reader")


def test_merge_and_promote_over_http(world: World) -> None:
    rule_id = world.ids["a_rule_p1"]  # "Always run the test suite first." (observed)
    pid, _ = seed(world)
    response = world.call("a_writer", "POST", f"/v1/proposals/{pid}/merge", {"into": rule_id})
    assert response.status_code == 200, response.text
    assert events_of(world, pid)[-1] == "merged"
    evidence = world.call("a_reader", "GET", f"/v1/memories/{rule_id}/evidence").json()
    assert any(e["event"] == "evidence" for e in evidence["evidence"])
    promoted = world.call("a_writer", "POST", f"/v1/memories/{rule_id}/promote", {})
    assert promoted.status_code == 409  # already observed
    assert world.call("a_reader", "POST", f"/v1/memories/{rule_id}/promote", {}).status_code == 403
    assert world.call("b_reader", "GET", f"/v1/memories/{rule_id}/evidence").status_code == 404


def test_the_mcp_tool_lists_the_queue_for_readers(world: World) -> None:
    pid, _ = seed(world)
    is_error, payload = world.tool("a_reader", "memorule_proposals", {"limit": 100})
    assert not is_error, payload
    assert pid in [p["memory"]["id"] for p in payload["proposals"]]
    is_error, payload = world.tool("b_reader", "memorule_proposals", {})
    assert not is_error and pid not in [p["memory"]["id"] for p in payload["proposals"]]
    is_error, payload = world.tool("a_reader", "memorule_proposals", {"limit": 0})
    assert is_error and payload["error"]["code"] == "validation_failed"


def test_the_console_shows_readers_the_queue_without_forms(world: World) -> None:
    _, word = seed(world)
    page = signed_in(world, "a_reader").get("/proposals")
    assert page.status_code == 200 and word in page.text
    assert "/approve" not in page.text and "/reject" not in page.text


def test_a_reader_posting_a_decision_in_the_console_is_refused(world: World) -> None:
    pid, _ = seed(world)
    client = signed_in(world, "a_reader")
    response = post_form(client, "/proposals", f"/proposals/{pid}/reject", reason="no")
    assert response.status_code == 403
    assert events_of(world, pid) == ["proposed"]


def test_a_writer_approves_edits_and_rejects_in_the_console(world: World) -> None:
    first, word = seed(world)
    second, _ = seed(world)
    client = signed_in(world, "a_writer")
    page = client.get("/proposals")
    assert f"/proposals/{first}/approve" in page.text
    response = post_form(
        client,
        "/proposals",
        f"/proposals/{first}/approve",
        subject=f"Fridays: no {word} deploys",
        was_subject="x",
        persona="donna",
        reason="ok",
    )
    assert response.status_code == 303, response.text
    assert events_of(world, first) == ["proposed", "approved"]
    state = world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(first))[1]
    assert state.applies_to is not None and state.applies_to.persona == "donna"
    refused = post_form(client, "/proposals", f"/proposals/{second}/reject", reason="")
    assert refused.status_code == 422 and "Nothing was saved" in refused.text
    ok = post_form(client, "/proposals", f"/proposals/{second}/reject", reason="one-off")
    assert ok.status_code == 303
    assert events_of(world, second) == ["proposed", "rejected"]


def test_a_console_decision_without_the_csrf_token_is_refused(world: World) -> None:
    pid, _ = seed(world)
    client = signed_in(world, "a_writer")
    response = client.post(f"/proposals/{pid}/approve", data={}, follow_redirects=False)
    assert response.status_code == 403
    assert events_of(world, pid) == ["proposed"]


def test_the_evidence_page_lists_signals_and_offers_promotion(world: World) -> None:
    inferred = world.services.memory.writes.remember(
        world.ctx("acme", "p1"),
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "behavioral_rule",
                "subject": "Never deploy on Fridays",
                "body": "Never deploy on Fridays.",
                "applies_to": {"scope": "project"},
                "confidence": "inferred",
            }
        ),
    )
    pid, _ = seed(world)
    world.call("a_writer", "POST", f"/v1/proposals/{pid}/merge", {"into": str(inferred.id)})
    client = signed_in(world, "a_writer")
    page = client.get(f"/evidence/{inferred.id}")
    assert page.status_code == 200 and "claude-code:" in page.text
    assert "Promote to observed" in page.text
    assert (
        "Promote to observed"
        not in signed_in(world, "a_reader").get(f"/evidence/{inferred.id}").text
    )
    done = post_form(client, f"/evidence/{inferred.id}", f"/evidence/{inferred.id}/promote")
    assert done.status_code == 303
    assert events_of(world, str(inferred.id))[-1] == "promoted"
    assert re.search(r"\bobserved\b", client.get(f"/evidence/{inferred.id}").text)


@pytest.mark.parametrize("page", ["/proposals", "/evidence/{rule}"])
def test_queue_pages_carry_the_console_security_headers(world: World, page: str) -> None:
    response = signed_in(world, "a_writer").get(page.format(rule=world.ids["a_rule_p1"]))
    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    assert re.findall(r"<script[^>]*>", response.text) == [
        '<script src="/static/console.js" defer>'
    ]
