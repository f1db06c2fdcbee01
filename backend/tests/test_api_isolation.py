"""Isolation, generated over every route of /v1 and every tool of /mcp.

With tenants A and B populated, a request made with B's key for A's ids (or with a key
restricted to project p1 for p2's ids, or a persona-bound key for another persona's rules)
must answer exactly as the same request for an id that exists nowhere: same status, same
body but for the id itself. Nothing is changed.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api_world import ENGINES, World, world_on

Probe = Callable[[World, str, str], tuple[int, Any]]


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """The populated world on each engine (PostgreSQL: a fresh schema of the session's server)."""
    with world_on(request, tmp_path_factory.mktemp("isolation")) as w:
        yield w


def _http(method: str, path: str, body: dict[str, Any] | None = None) -> Probe:
    def probe(w: World, key: str, memory_id: str) -> tuple[int, Any]:
        filled = _fill(body, memory_id) if body is not None else None
        response = w.call(key, method, path.format(id=memory_id), filled)
        return response.status_code, response.json()

    return probe


def _tool(name: str, arguments: dict[str, Any]) -> Probe:
    def probe(w: World, key: str, memory_id: str) -> tuple[int, Any]:
        is_error, payload = w.tool(key, name, _fill(arguments, memory_id))
        return (1 if is_error else 0), payload

    return probe


def _resource(w: World, key: str, memory_id: str) -> tuple[int, Any]:
    reply = w.mcp(key, "resources/read", {"uri": f"prism://memorule/{memory_id}"})
    return (1 if "error" in reply else 0), reply.get("error") or reply.get("result")


def _fill(value: Any, memory_id: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, memory_id) for k, v in value.items()}
    return memory_id if value == "{id}" else value


CORRECTION = {
    "kind": "memorule",
    "memorule_kind": "correction",
    "subject": "Corrected rule",
    "body": "The corrected version of the rule.",
    "applies_to": {"scope": "project"},
    "corrects": "{id}",
}
PROBES: dict[str, Probe] = {
    "GET /v1/memories/{id}": _http("GET", "/v1/memories/{id}"),
    "GET /v1/memories/{id}/history": _http("GET", "/v1/memories/{id}/history"),
    "PATCH /v1/memories/{id}": _http(
        "PATCH", "/v1/memories/{id}", {"changes": {"body": "A changed body."}, "reason": "probe"}
    ),
    "POST /v1/memories/{id}/retire": _http("POST", "/v1/memories/{id}/retire", {"reason": "x"}),
    "POST /v1/memories/{id}/restore": _http("POST", "/v1/memories/{id}/restore", {"reason": "x"}),
    "POST /v1/memories/{id}/pin": _http("POST", "/v1/memories/{id}/pin", {"reason": "x"}),
    "POST /v1/memories/{id}/unpin": _http("POST", "/v1/memories/{id}/unpin", {"reason": "x"}),
    "GET /v1/audit?memorule={id}": _http("GET", "/v1/audit?memorule={id}"),
    "POST /v1/memories (corrects)": _http("POST", "/v1/memories", CORRECTION),
    "mcp memorule_history": _tool("memorule_history", {"id": "{id}"}),
    "mcp memorule_update": _tool(
        "memorule_update", {"id": "{id}", "changes": {"body": "A changed body."}}
    ),
    "mcp memorule_retire": _tool("memorule_retire", {"id": "{id}", "reason": "probe"}),
    "mcp memorule_restore": _tool("memorule_restore", {"id": "{id}", "reason": "probe"}),
    "mcp memorule_pin": _tool("memorule_pin", {"id": "{id}", "pinned": True, "reason": "probe"}),
    "mcp memorule_audit": _tool("memorule_audit", {"memorule_id": "{id}"}),
    "mcp prism_remember (corrects)": _tool("prism_remember", CORRECTION),
    "mcp prism://memorule/{id}": _resource,
}
ALL_OF_A = [
    "a_note_p1",
    "a_rule_p1",
    "a_note_p2",
    "a_rule_p2",
    "a_global_p2",
    "a_texi_p1",
    "a_retired_p1",
]
CASES = [
    *itertools.product(["b_reader", "b_writer", "b_admin"], ALL_OF_A),
    *itertools.product(["a_p1_writer", "a_p1_admin"], ["a_note_p2", "a_rule_p2"]),
    ("a_donna", "a_texi_p1"),
]


@pytest.mark.parametrize("route", list(PROBES))
@pytest.mark.parametrize(("key", "target"), CASES)
def test_a_key_cannot_tell_an_id_it_may_not_see_from_an_id_that_does_not_exist(
    world: World, route: str, key: str, target: str
) -> None:
    probe = PROBES[route]
    before = world.services.memory.reads.history(
        world.ctx("acme", "p1"), uuid.UUID(world.ids[target])
    )
    real = world.ids[target]
    missing = str(uuid.uuid4())
    status, body = probe(world, key, real)
    other_status, other_body = probe(world, key, missing)
    assert status == other_status
    assert str(body).replace(real, "<id>") == str(other_body).replace(missing, "<id>")
    if route.startswith("mcp"):
        assert status == 1, body  # an MCP error result / error response
    else:
        assert status in (403, 404), body
    after = world.services.memory.reads.history(world.ctx("acme", "p1"), uuid.UUID(real))
    assert after == before


@pytest.mark.parametrize("route", list(PROBES)[:6])
def test_a_project_key_sees_a_global_rule_of_another_project_but_cannot_change_it(
    world: World, route: str
) -> None:
    status, body = PROBES[route](world, "a_p1_writer", world.ids["a_global_p2"])
    if route.startswith("GET"):
        assert status == 200, body
    else:
        assert status == 403, body
        assert body["error"]["code"] == "forbidden"


V1_ROUTES = [
    ("POST", "/v1/memories", {"body": "a note"}),
    ("POST", "/v1/recall", {}),
    ("GET", "/v1/memories/{id}", None),
    ("PATCH", "/v1/memories/{id}", {"changes": {"body": "changed"}}),
    ("POST", "/v1/memories/{id}/retire", {"reason": "x"}),
    ("POST", "/v1/memories/{id}/restore", {"reason": "x"}),
    ("POST", "/v1/memories/{id}/pin", {"reason": "x"}),
    ("POST", "/v1/memories/{id}/unpin", {"reason": "x"}),
    ("GET", "/v1/memories/{id}/history", None),
    ("GET", "/v1/audit", None),
    ("GET", "/v1/audit/verify", None),
    ("POST", "/v1/brief", {}),
    ("GET", "/v1/whoami", None),
]


@pytest.mark.parametrize(("method", "path", "body"), V1_ROUTES)
def test_a_project_key_is_refused_other_projects_alike_whether_they_exist_or_not(
    world: World, method: str, path: str, body: dict[str, Any] | None
) -> None:
    path = path.format(id=world.ids["a_note_p1"])
    answers = [
        world.call("a_p1_writer", method, path, body, {"X-Prism-Project": project})
        for project in ("p2", "no-such-project")
    ]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].json() == answers[1].json()


@pytest.mark.parametrize("project", ["p1", "p2", "6b1d5c1e-2f0a-4c3e-9d7a-0c5e8f4b2a91"])
@pytest.mark.parametrize("key", ["b_reader", "b_writer", "b_admin"])
def test_another_tenants_key_naming_a_project_of_a_sees_only_its_own_tenant(
    world: World, key: str, project: str
) -> None:
    headers = {"X-Prism-Project": project}
    a_ids = {v for k, v in world.ids.items() if k.startswith("a_")}
    recall = world.call(key, "POST", "/v1/recall", {"query": "deploys rule review"}, headers)
    brief = world.call(key, "POST", "/v1/brief", {"task": "review"}, headers)
    assert recall.status_code == 200 and brief.status_code == 200
    assert not a_ids & {m["id"] for m in recall.json()["matches"]}
    assert not a_ids & {r["id"] for r in brief.json()["included"]}
    if key == "b_admin":
        audit = world.call(key, "GET", "/v1/audit?limit=500", headers=headers).json()
        assert not a_ids & {e["memorule_id"] for e in audit["events"]}
        verify = world.call(key, "GET", "/v1/audit/verify", headers=headers).json()
        assert verify["ok"] and verify["events"] == len(audit["events"]) == 1


def test_a_persona_bound_key_never_recalls_another_personas_private_rules(world: World) -> None:
    found = world.call("a_donna", "POST", "/v1/recall", {"query": "reviews API change"})
    assert world.ids["a_texi_p1"] not in {m["id"] for m in found.json()["matches"]}
    forced = world.call(
        "a_donna", "POST", "/v1/recall", {"query": "x"}, {"X-Prism-Persona": "texi"}
    )
    assert forced.status_code == 403


def test_the_mcp_endpoint_needs_a_key_like_v1(world: World, tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    for key in (None, "prism_" + "x" * 43, "revoked"):
        response = world.call(key, "POST", "/mcp", init)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthenticated"
    assert world.call("a_reader", "POST", "/mcpx", init).status_code == 404
