"""``top_k`` and ``token_budget`` sent as JSON null are the same as left out, at every door
(issue 27: the brief considered 30 rules when ``top_k`` was left out and 10 when it was null).

The contract states it once (``test_contract.py::test_null_means_not_given_in_every_operation``);
these tests send the requests through HTTP, MCP and the CLI and compare whole answers: null,
left out and the stated default answer alike, and another value answers differently (so the
comparison can see the field at all). MCP drops a null for a declared field before the
contract sees it; HTTP hands it to the contract, which must then read it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prism_memory.cli.main import cli
from prism_memory.domain.contract.bounds import (
    TOKEN_BUDGET_DEFAULT,
    TOP_K_DEFAULT,
    TOP_K_RECALL_DEFAULT,
)
from prism_memory.domain.contract.remember import validate_remember
from tests.api_world import World, rule, running_world

RULES = 40  # more than either default top_k, all within the default token budget

BRIEF_ALIKE = [
    {},
    {"top_k": None},
    {"token_budget": None},
    {"top_k": None, "token_budget": None, "task": None, "namespace": None},
    {"task": ""},
    {"top_k": TOP_K_DEFAULT, "token_budget": TOKEN_BUDGET_DEFAULT},
]
BRIEF_OTHER = [{"top_k": TOP_K_RECALL_DEFAULT}, {"token_budget": 300}]
RECALL_ALIKE = [
    {},
    {"top_k": None},
    {"top_k": None, "query": None, "include_inapplicable": None, "source_type": None},
    {"top_k": TOP_K_RECALL_DEFAULT, "include_inapplicable": False},
]
RECALL_OTHER = [{"top_k": TOP_K_DEFAULT}]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("null-doors")) as w:
        ctx = w.ctx("acme", "p1")
        for i in range(RULES):
            w.services.memory.writes.remember(
                ctx, validate_remember(rule(f"Rule {i:02d}", f"Keep rule {i:02d} short."))
            )
        yield w


def assert_alike(answers: list[Any], others: list[Any]) -> None:
    first = answers[0]
    assert all(a == first for a in answers[1:]), answers
    assert all(o != first for o in others)


def brief_holds_more_than_the_recall_default(answer: dict[str, Any]) -> None:
    assert len(answer["included"]) > TOP_K_RECALL_DEFAULT, answer["included"]


# -- HTTP --------------------------------------------------------------------------------


def http(world: World, path: str, body: dict[str, Any]) -> Any:
    response = world.call("a_admin", "POST", path, body)
    assert response.status_code == 200, response.text
    return response.json()


def test_http_null_is_left_out_for_the_brief_and_recall(world: World) -> None:
    briefs = [http(world, "/v1/brief", b) for b in BRIEF_ALIKE]
    brief_holds_more_than_the_recall_default(briefs[0])
    assert_alike(briefs, [http(world, "/v1/brief", b) for b in BRIEF_OTHER])
    recalls = [http(world, "/v1/recall", b) for b in RECALL_ALIKE]
    assert recalls[0]["count"] == TOP_K_RECALL_DEFAULT
    assert_alike(recalls, [http(world, "/v1/recall", b) for b in RECALL_OTHER])


# -- MCP (the same tools answer over stdio and over /mcp) ---------------------------------


def mcp(world: World, tool: str, arguments: dict[str, Any]) -> Any:
    result = world.mcp("a_admin", "tools/call", {"name": tool, "arguments": arguments})["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_mcp_null_is_left_out_for_the_brief_and_recall(world: World) -> None:
    briefs = [mcp(world, "memorule_brief", b) for b in BRIEF_ALIKE]
    brief_holds_more_than_the_recall_default(briefs[0])
    assert_alike(briefs, [mcp(world, "memorule_brief", b) for b in BRIEF_OTHER])
    recalls = [mcp(world, "semantic_recall", b) for b in RECALL_ALIKE]
    assert recalls[0]["count"] == TOP_K_RECALL_DEFAULT
    assert_alike(recalls, [mcp(world, "semantic_recall", b) for b in RECALL_OTHER])


# -- CLI (an option left out is the CLI's null) -------------------------------------------


def prism(world: World, *args: str) -> Any:
    common = ["--db", str(world.settings.db), "--tenant", "acme", "--project", "p1", "--json"]
    env = {"PRISM_EMBEDDER": "fake", "PRISM_DATABASE_URL": ""}
    result = CliRunner().invoke(cli, [*args, *common], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_cli_left_out_is_the_stated_default_for_the_brief_and_recall(
    world: World, tmp_path: Path
) -> None:
    default = ["--top-k", str(TOP_K_DEFAULT), "--token-budget", str(TOKEN_BUDGET_DEFAULT)]
    briefs = [prism(world, "brief"), prism(world, "brief", *default)]
    brief_holds_more_than_the_recall_default(briefs[0])
    other = [prism(world, "brief", "--top-k", str(TOP_K_RECALL_DEFAULT))]
    assert_alike(briefs, other)
    recalls = [prism(world, "recall"), prism(world, "recall", "--top-k", str(TOP_K_RECALL_DEFAULT))]
    assert recalls[0]["count"] == TOP_K_RECALL_DEFAULT
    assert_alike(recalls, [prism(world, "recall", "--top-k", str(TOP_K_DEFAULT))])
