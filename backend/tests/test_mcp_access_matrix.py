"""MCP over HTTP refuses and allows exactly what ``/v1`` does, for every key and operation.

There is no MCP policy of its own any more: every tool and resource asks the same
``AccessService`` as the route, with the key its request carried. For each key of the world
(roles, project-bound, persona-bound, another tenant's) and each operation on each kind of
target (a note or rule of p1 or p2, a global rule, another persona's rule, the other
tenant's rule), the route and its tool are each called on a fresh copy of the target and
must end alike: both succeed (with the same memories, where they return some), or both
fail with the same error, word for word.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from prism_memory.domain.contract.remember import validate_remember
from tests.api_world import ENGINES, KEYS, World, rule, world_on

KEY_NAMES = [name for name in KEYS if name != "revoked"]
# name -> (tenant, project, write)
TARGETS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "a note of p1": ("acme", "p1", {"body": "A note of project one, for the matrix."}),
    "a rule of p1": ("acme", "p1", rule("Matrix rule one", "The matrix rule of project one.")),
    "a rule of p2": ("acme", "p2", rule("Matrix rule two", "The matrix rule of project two.")),
    "a global rule of p2": (
        "acme",
        "p2",
        rule("Matrix global rule", "A rule for every project of acme.", scope="global"),
    ),
    "texi's rule of p1": (
        "acme",
        "p1",
        rule(
            "Matrix texi rule", "Texi's own rule in project one.", scope="persona", persona="texi"
        ),
    ),
    "beta's rule of p1": ("beta", "p1", rule("Matrix beta rule", "Beta's rule in project one.")),
}
CORRECTION = {
    "kind": "memorule",
    "memorule_kind": "correction",
    "subject": "Matrix correction",
    "body": "The corrected version of the rule.",
    "applies_to": {"scope": "project"},
}
SESSION = str(uuid.uuid4())


@dataclass(frozen=True)
class Twin:
    """One operation on a memory: as a ``/v1`` request and as an MCP request."""

    http: Callable[[str], tuple[str, str, dict[str, Any] | None]]  # id -> method, path, body
    mcp: Callable[[str], tuple[str, dict[str, Any]]]  # id -> tool (or "resource"), arguments
    retired_first: bool = False


ON_A_MEMORY: dict[str, Twin] = {
    "read": Twin(
        lambda i: ("GET", f"/v1/memories/{i}", None),
        lambda i: ("resource", {"uri": f"prism://memorule/{i}"}),
    ),
    "history": Twin(
        lambda i: ("GET", f"/v1/memories/{i}/history", None),
        lambda i: ("memorule_history", {"id": i}),
    ),
    "update": Twin(
        lambda i: (
            "PATCH",
            f"/v1/memories/{i}",
            {"changes": {"body": "A changed body."}, "reason": "m"},
        ),
        lambda i: (
            "memorule_update",
            {"id": i, "changes": {"body": "A changed body."}, "reason": "m"},
        ),
    ),
    "retire": Twin(
        lambda i: ("POST", f"/v1/memories/{i}/retire", {"reason": "matrix"}),
        lambda i: ("memorule_retire", {"id": i, "reason": "matrix"}),
    ),
    "restore": Twin(
        lambda i: ("POST", f"/v1/memories/{i}/restore", {"reason": "matrix"}),
        lambda i: ("memorule_restore", {"id": i, "reason": "matrix"}),
        retired_first=True,
    ),
    "pin": Twin(
        lambda i: ("POST", f"/v1/memories/{i}/pin", {"reason": "matrix"}),
        lambda i: ("memorule_pin", {"id": i, "pinned": True, "reason": "matrix"}),
    ),
    "correct": Twin(
        lambda i: ("POST", "/v1/memories", {**CORRECTION, "corrects": i}),
        lambda i: ("prism_remember", {**CORRECTION, "corrects": i}),
    ),
    "audit of it": Twin(
        lambda i: ("GET", f"/v1/audit?memorule={i}", None),
        lambda i: ("memorule_audit", {"memorule_id": i}),
    ),
    "audit of it, each door by the other's name": Twin(
        lambda i: ("GET", f"/v1/audit?memorule_id={i}", None),
        lambda i: ("memorule_audit", {"memorule": i}),
    ),
}
# name -> (method, path, body), (tool, arguments), what to compare when both succeed
WHOLE: dict[str, tuple[tuple[str, str, Any], tuple[str, dict[str, Any]], str | None]] = {
    "recall": (
        ("POST", "/v1/recall", {"query": "rule"}),
        ("semantic_recall", {"query": "rule"}),
        "matches",
    ),
    "brief": (("POST", "/v1/brief", {}), ("memorule_brief", {}), "markdown"),
    "write a note": (
        ("POST", "/v1/memories", {"body": "A note written by the matrix."}),
        ("prism_remember", {"body": "A note written by the matrix."}),
        None,
    ),
    "write a rule for eve": (
        ("POST", "/v1/memories", rule("Eve's matrix rule", "Only for eve.", persona="eve")),
        ("prism_remember", rule("Eve's matrix rule", "Only for eve.", persona="eve")),
        None,
    ),
    "the tenant's audit trail": (("GET", "/v1/audit", None), ("memorule_audit", {}), None),
    "a persona's audit events, each door by the other's names": (
        ("GET", "/v1/audit?written_by_persona=donna&written_by_session_id=" + SESSION, None),
        ("memorule_audit", {"persona": "donna", "session": SESSION}),
        "events",
    ),
    "the tenant's served receipts": (
        ("GET", "/v1/audit/served", None),
        ("memorule_served", {}),
        None,
    ),
    "a session's served receipts": (
        ("GET", f"/v1/audit/served?session_id={SESSION}", None),
        ("memorule_served", {"session_id": SESSION}),
        "served",
    ),
    "the review queue": (("GET", "/v1/proposals", None), ("memorule_proposals", {}), "proposals"),
}


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("matrix")) as w:
        yield w


def fresh(world: World, target: str, retired: bool) -> str:
    tenant, project, raw = TARGETS[target]
    ctx = world.ctx(tenant, project)
    memory_id = world.services.memory.writes.remember(
        ctx, validate_remember({**raw, "namespace": "matrix"})
    ).id
    if retired:
        world.services.memory.lifecycle.retire(ctx, memory_id, "set up for restore")
    return str(memory_id)


def over_http(world: World, key: str, method: str, path: str, body: Any) -> tuple[bool, Any]:
    response = world.call(key, method, path, body)
    return response.is_success, response.json()


def over_mcp(world: World, key: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    if tool == "resource":
        reply = world.mcp(key, "resources/read", arguments)
        if "error" in reply:
            return False, json.loads(reply["error"]["message"])
        return True, json.loads(reply["result"]["contents"][0]["text"])
    result = world.mcp(key, "tools/call", {"name": tool, "arguments": arguments})["result"]
    return not result.get("isError"), result["structuredContent"]


def outcome(ok: bool, payload: Any, memory_id: str = "") -> Any:
    """A refusal as its error, word for word (the target's id masked); success as True."""
    if ok:
        return True
    text = json.dumps(payload["error"])
    return json.loads(text.replace(memory_id, "<id>") if memory_id else text)


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("operation", list(ON_A_MEMORY))
@pytest.mark.parametrize("key", KEY_NAMES)
def test_a_tool_on_a_memory_ends_as_its_route_does_for_the_same_key(
    world: World, key: str, operation: str, target: str
) -> None:
    twin = ON_A_MEMORY[operation]
    by_http = fresh(world, target, twin.retired_first)
    by_mcp = fresh(world, target, twin.retired_first)
    http_ok, http_payload = over_http(world, key, *twin.http(by_http))
    mcp_ok, mcp_payload = over_mcp(world, key, *twin.mcp(by_mcp))
    assert outcome(mcp_ok, mcp_payload, by_mcp) == outcome(http_ok, http_payload, by_http)


@pytest.mark.parametrize("operation", list(WHOLE))
@pytest.mark.parametrize("key", KEY_NAMES)
def test_a_tool_on_the_project_or_tenant_ends_as_its_route_does_for_the_same_key(
    world: World, key: str, operation: str
) -> None:
    (method, path, body), (tool, arguments), compared = WHOLE[operation]
    http_ok, http_payload = over_http(world, key, method, path, body)
    mcp_ok, mcp_payload = over_mcp(world, key, tool, arguments)
    assert outcome(mcp_ok, mcp_payload) == outcome(http_ok, http_payload)
    if http_ok and compared is not None:
        assert _shown(mcp_payload[compared]) == _shown(http_payload[compared])


def _shown(value: Any) -> Any:
    """What a listing shows: its memories' ids (a brief's Markdown as is)."""
    if isinstance(value, list):
        return sorted(
            str(item.get("id") or item.get("memory", {}).get("id") or item.get("seq"))
            for item in value
        )
    return value


def test_the_matrix_sees_both_answers_for_every_kind_of_key(world: World) -> None:
    """Not a vacuous matrix: keys are allowed some things and refused others, over MCP too."""
    note = {"body": "A note to tell writers from readers."}
    allowed = {k: over_mcp(world, k, "prism_remember", note)[0] for k in KEY_NAMES}
    assert allowed == {k: KEYS[k]["role"] != "reader" for k in KEY_NAMES}
    target = fresh(world, "a global rule of p2", retired=False)
    seen, _ = over_mcp(world, "a_p1_writer", "memorule_history", {"id": target})
    ok, refused = over_mcp(world, "a_p1_writer", "memorule_retire", {"id": target, "reason": "r"})
    assert seen and not ok
    assert refused["error"] == {
        "code": "forbidden",
        "message": "this key cannot change memories of another project",
    }
