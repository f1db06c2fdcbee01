"""An MCP-over-HTTP session is its opener's (issue #32, D1; DESIGN §4, §10).

The session id is no credential: it is visible to readers of the audit
(``written_by_session_id``). Any other key, of the same tenant or of another, gets exactly
the answer of an unknown session, for tool calls and for DELETE; the opener's session keeps
working. Both engines: the key lookup is the engine's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api_world import ENGINES, MCP_HEADERS, World, world_on

RECALL = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {"name": "semantic_recall", "arguments": {"query": "rule"}},
}


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("mcp-owner")) as w:
        yield w


def on_session(
    w: World, key: str, session: str, method: str = "POST", body: Any = RECALL
) -> httpx.Response:
    headers = {**w.headers(key), **MCP_HEADERS, "Mcp-Session-Id": session}
    if method == "DELETE":
        return w.client.request("DELETE", "/mcp", headers=headers)
    return w.client.post("/mcp", json=body, headers=headers)


def opened_by(w: World, key: str) -> str:
    w.mcp_sessions.pop(key, None)
    w.mcp(key, "tools/list", {})  # opens the key's session
    return w.mcp_sessions[key]


def answer(response: httpx.Response) -> tuple[int, Any]:
    return response.status_code, response.json()


@pytest.mark.parametrize("intruder", ["a_reader", "a_p1_writer", "b_admin", "b_reader"])
def test_another_key_gets_the_unknown_session_answer_and_the_opener_keeps_its_session(
    world: World, intruder: str
) -> None:
    session = opened_by(world, "a_admin")
    unknown = answer(on_session(world, intruder, uuid.uuid4().hex))
    assert unknown[0] == 404

    assert answer(on_session(world, intruder, session)) == unknown
    assert answer(on_session(world, intruder, session, "DELETE")) == unknown

    mine = on_session(world, "a_admin", session)
    assert mine.status_code == 200, mine.text
    assert not mine.json()["result"].get("isError"), mine.json()


def test_the_opener_can_end_its_own_session_and_then_it_is_unknown(world: World) -> None:
    session = opened_by(world, "a_writer")
    assert on_session(world, "a_writer", session, "DELETE").status_code == 200
    assert on_session(world, "a_writer", session).status_code == 404
