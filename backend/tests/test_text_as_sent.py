"""Text is stored as sent or refused with a field error, never altered silently (issue #32,
D11), on both engines and every door that writes.

Python's ``str.strip()`` also drops U+000B, U+000C, U+001C–U+001F and U+0085 from the ends of
a text; the validators now strip only spaces and line breaks, so those controls reach the one
character rule and are refused, naming the field. Over ``/mcp`` a lone surrogate in a tool
argument is answered invalid params (-32602) naming the field, not a parse error (-32700).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api_world import ENGINES, MCP_HEADERS, World, rule, world_on

EDGE_CONTROLS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85"]


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("text-as-sent")) as w:
        yield w


def count(w: World) -> int:
    return int(w.services.store.stats(w.ctx("acme", "p1").tenant_id)["memories"])


def fields_of(response: httpx.Response) -> set[str]:
    error = response.json()["error"]
    assert error["code"] == "validation_failed", error
    return {f["field"] for f in error["fields"]}


@pytest.mark.parametrize("ch", EDGE_CONTROLS, ids=[f"U+{ord(c):04X}" for c in EDGE_CONTROLS])
def test_a_control_at_the_edge_of_a_subject_or_body_is_refused_not_stripped(
    world: World, ch: str
) -> None:
    before = count(world)
    raw = rule(f"{ch}Edge control subject", f"A body that ends with a control.{ch}")
    response = world.call("a_writer", "POST", "/v1/memories", raw)
    assert response.status_code == 422, response.text
    assert fields_of(response) == {"subject", "body"}
    is_error, payload = world.tool("a_writer", "prism_remember", raw)
    assert is_error and {f["field"] for f in payload["error"]["fields"]} == {"subject", "body"}
    assert count(world) == before


def test_an_update_with_an_edge_control_is_refused_and_changes_nothing(world: World) -> None:
    made = world.call(
        "a_writer", "POST", "/v1/memories", rule("Edge update rule", "The first body of this rule.")
    )
    memory_id = made.json()["id"]
    body = {"changes": {"body": "The second body of this rule.\x1f"}, "reason": "edge"}
    response = world.call("a_writer", "PATCH", f"/v1/memories/{memory_id}", body)
    assert response.status_code == 422 and fields_of(response) == {"body"}
    found = world.call("a_writer", "GET", f"/v1/memories/{memory_id}").json()
    assert found["memory"]["current_version"] == 1


def test_spaces_and_line_breaks_around_a_text_are_still_trimmed(world: World) -> None:
    raw = rule("  Trimmed subject\u3000", "\r\nA body with a CRLF after it.\r\n")
    made = world.call("a_writer", "POST", "/v1/memories", raw)
    assert made.status_code == 201, made.text
    found = world.call("a_writer", "GET", f"/v1/memories/{made.json()['id']}").json()
    assert (found["state"]["subject"], found["state"]["body"]) == (
        "Trimmed subject",
        "A body with a CRLF after it.",
    )


def mcp_raw(w: World, text: str) -> httpx.Response:
    w.mcp("a_writer", "tools/list", {})
    headers = {
        **w.headers("a_writer"),
        **MCP_HEADERS,
        "Mcp-Session-Id": w.mcp_sessions["a_writer"],
        "Content-Type": "application/json",
    }
    return w.client.post("/mcp", content=text.encode(), headers=headers)


def call(arguments: str) -> str:
    return (
        '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", '
        f'"params": {{"name": "prism_remember", "arguments": {arguments}}}}}'
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ('{"body": "A note \\ud800 with a lone surrogate."}', "body"),
        ('{"kind": "memorule", "applies_to": {"persona": "\\udfff"}}', "applies_to.persona"),
    ],
)
def test_a_lone_surrogate_in_a_tool_argument_is_invalid_params_naming_the_field(
    world: World, arguments: str, field: str
) -> None:
    before = count(world)
    response = mcp_raw(world, call(arguments))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["id"] == 41
    assert answer["error"]["code"] == -32602
    fields = answer["error"]["data"]["error"]["fields"]
    assert [(f["field"], f["code"]) for f in fields] == [(field, "invalid_characters")]
    assert count(world) == before


def test_a_surrogate_pair_is_one_character_and_is_stored(world: World) -> None:
    response = mcp_raw(world, call('{"body": "Deploys are fun \\ud83d\\ude00 on Mondays."}'))
    result = response.json()["result"]
    assert not result.get("isError"), result
    stored = json.loads(result["content"][0]["text"])
    found = world.call("a_writer", "GET", f"/v1/memories/{stored['id']}").json()
    assert found["state"]["body"] == "Deploys are fun \U0001f600 on Mondays."
