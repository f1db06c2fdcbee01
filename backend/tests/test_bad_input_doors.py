"""One catalogue of bad values, sent through every door (issue #15, "Also").

Lone surrogates, NUL, C1 controls, oversize text, dates that overflow UTC, huge
integers, NaN and infinity — each into a write (a note's body), a retire (its reason), a
recall (``top_k``) and the audit listing (``since``, ``before``), over HTTP, MCP in memory,
MCP over a real stdio subprocess, the CLI and the console. Every door must answer a
structured refusal naming the field (422 / ``isError`` with ``validation_failed`` / exit 2)
and write nothing: the same memories, versions and audit events afterwards.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client

from prism_memory.cli.main import cli
from prism_memory.domain import validation as v
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.listing import ListRequest
from prism_memory.domain.records import SessionContext
from prism_memory.mcp_server.server import build_mcp_server
from prism_memory.settings import load_settings
from prism_memory.trigraph.port import AuditFilter
from tests.api_world import World, rule, running_world

BACKEND = Path(__file__).resolve().parents[1]
CSRF = re.compile(r'name="csrf" value="([^"]+)"')

TEXT = {
    "lone surrogate": "a \ud800 b",
    "NUL": "a \x00 b",
    "C1 control": "a \x9b b",
    "oversize": "x" * (v.BODY_MAX + 1),
}
REASONS = {**TEXT, "oversize": "x" * (v.REASON_MAX + 1)}
NUMBERS = {"huge integer": 10**30, "NaN": math.nan, "infinity": math.inf}
DATES = {
    "overflow date": "9999-12-31T23:59:59-14:00",
    "underflow date": "0001-01-01T00:00:00+14:00",
}
HUGE_CURSOR = 10**30


def calls() -> list[tuple[str, str, dict[str, Any], str]]:
    """(case, tool, arguments, the field that must be named); ``{id}`` is the target rule."""
    out = [(f"body: {n}", "prism_remember", {"body": t}, "body") for n, t in TEXT.items()]
    out += [
        (f"reason: {n}", "memorule_retire", {"id": "{id}", "reason": t}, "reason")
        for n, t in REASONS.items()
    ]
    out += [(f"top_k: {n}", "semantic_recall", {"top_k": x}, "top_k") for n, x in NUMBERS.items()]
    out += [(f"since: {n}", "memorule_audit", {"since": d}, "since") for n, d in DATES.items()]
    out += [("before: huge integer", "memorule_audit", {"before": HUGE_CURSOR}, "before")]
    return out


CALLS = calls()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("bad-input")) as w:
        w.ids["target"] = str(
            w.services.memory.writes.remember(
                w.ctx("acme", "p1"),
                validate_remember(rule("Catalogue target", "The rule every retire aims at.")),
            ).id
        )
        yield w


def admin_ctx(w: World) -> SessionContext:
    return w.ctx("acme", "p1")


def snapshot(w: World) -> tuple[int, int, str, int]:
    """Memories of acme/p1, the target's version and status, acme's audit events."""
    ctx = admin_ctx(w)
    page = w.services.memory.reads.list_memories(
        ctx, ListRequest.parse({"status": "all", "limit": 200})
    )
    target, _ = w.services.memory.reads.get(ctx, uuid.UUID(w.ids["target"]))
    events = w.services.memorules.audit(ctx, AuditFilter(limit=500)).events
    return len(page.items), target.current_version, target.status.value, len(events)


def filled(w: World, arguments: dict[str, Any]) -> dict[str, Any]:
    return {k: (w.ids["target"] if val == "{id}" else val) for k, val in arguments.items()}


def assert_names(payload: dict[str, Any], field: str) -> None:
    error = payload["error"]
    assert error["code"] == "validation_failed", payload
    assert field in {f["field"] for f in error["fields"]}, payload


# -- HTTP --------------------------------------------------------------------------------

HTTP_ROUTES = {
    "prism_remember": ("POST", "/v1/memories"),
    "memorule_retire": ("POST", "/v1/memories/{id}/retire"),
    "semantic_recall": ("POST", "/v1/recall"),
}


@pytest.mark.parametrize(("case", "tool", "arguments", "field"), CALLS, ids=[c[0] for c in CALLS])
def test_http_refuses_every_bad_value_and_writes_nothing(
    world: World, case: str, tool: str, arguments: dict[str, Any], field: str
) -> None:
    before = snapshot(world)
    args = filled(world, arguments)
    headers = {**world.headers("a_admin"), "Content-Type": "application/json"}
    if tool == "memorule_audit":
        response = world.client.get("/v1/audit", params=args, headers=headers)
    else:
        method, path = HTTP_ROUTES[tool]
        body = {k: val for k, val in args.items() if k != "id"}
        # json.dumps escapes the surrogate and writes NaN/Infinity, as a sloppy client would.
        content = json.dumps(body).encode()
        response = world.client.request(
            method, path.format(id=world.ids["target"]), content=content, headers=headers
        )
    assert response.status_code == 422, response.text
    assert_names(response.json(), field)
    assert snapshot(world) == before


# -- MCP in memory -----------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_in_memory_refuses_every_bad_value_and_writes_nothing(world: World) -> None:
    settings = load_settings(
        db=world.settings.db, embedder="fake", database_url="", tenant="acme", project="p1"
    )
    before = snapshot(world)
    # The SDK's client serialises NaN and Infinity as null (pydantic's JSON mode) before they
    # leave it, so the server never sees them: the stdio test below sends them raw.
    finite = [
        c for c in CALLS if not (isinstance(v := c[2].get("top_k"), float) and not math.isfinite(v))
    ]
    async with Client(build_mcp_server(world.services, settings)) as client:
        for case, tool, arguments, field in finite:
            result = await client.call_tool(tool, filled(world, arguments))
            assert result.is_error, case
            assert result.structured_content is not None, case
            assert_names(result.structured_content, field)
    assert snapshot(world) == before


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


# -- MCP over stdio ----------------------------------------------------------------------


def test_mcp_stdio_refuses_every_bad_value_and_writes_nothing(world: World) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "catalogue", "version": "0"},
        },
    }
    messages: list[dict[str, Any]] = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n, (_, tool, arguments, _) in enumerate(CALLS, start=1):
        params = {"name": tool, "arguments": filled(world, arguments)}
        messages.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
    env = {k: val for k, val in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PYTHONPATH=str(BACKEND),
        PRISM_DB=str(world.settings.db),
        PRISM_EMBEDDER="fake",
        PRISM_TENANT="acme",
        PRISM_PROJECT="p1",
    )
    before = snapshot(world)
    done = subprocess.run(
        [sys.executable, "-m", "prism_memory", "mcp"],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    for n, (case, _, _, field) in enumerate(CALLS, start=1):
        result = answers[n]["result"]  # every request answered, none dropped
        assert result["isError"] is True, case
        assert_names(json.loads(result["content"][0]["text"]), field)
    assert snapshot(world) == before


# -- CLI ---------------------------------------------------------------------------------


def cli_args(w: World, tool: str, arguments: dict[str, Any]) -> list[str]:
    args = filled(w, arguments)
    if tool == "prism_remember":
        return ["remember", "--body", args["body"]]
    if tool == "memorule_retire":
        return ["retire", args["id"], "--reason", args["reason"]]
    if tool == "semantic_recall":
        return ["recall", "--top-k", str(args["top_k"]), "tests"]
    if "before" in args:
        return ["audit", "--before", str(args["before"])]
    return ["audit", "--since", args["since"]]


@pytest.mark.parametrize(("case", "tool", "arguments", "field"), CALLS, ids=[c[0] for c in CALLS])
def test_the_cli_refuses_every_bad_value_and_writes_nothing(
    world: World, case: str, tool: str, arguments: dict[str, Any], field: str
) -> None:
    common = ["--db", str(world.settings.db), "--tenant", "acme", "--project", "p1"]
    args = cli_args(world, tool, arguments)
    before = snapshot(world)
    env = {"PRISM_EMBEDDER": "fake", "PRISM_DATABASE_URL": ""}
    result = CliRunner().invoke(cli, [*args, *common, "--json"], env=env)
    assert result.exit_code == 2, result.output
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), result.exception
    # Refused by the validators (the one JSON shape) or, for options click parses itself
    # (numbers, dates), by click's own usage error naming the option.
    if '"validation_failed"' in result.output:
        payload, _ = json.JSONDecoder().raw_decode(result.output[result.output.index("{") :])
        assert_names(payload, field)
    else:
        assert f"--{field.replace('_', '-')}" in result.output, result.output
    assert snapshot(world) == before


# -- the console -------------------------------------------------------------------------


def signed_in(w: World) -> TestClient:
    client = TestClient(w.client.app)
    token = CSRF.search(client.get("/signin").text)
    assert token is not None
    response = client.post(
        "/signin",
        data={"csrf": token.group(1), "api_key": w.keys["a_admin"]},
        follow_redirects=False,
    )
    assert response.status_code == 303
    return client


CONSOLE = [(f"edit body: {n}", "edit", "body", t) for n, t in TEXT.items()] + [
    (f"retire reason: {n}", "retire", "reason", t) for n, t in REASONS.items()
]


@pytest.mark.parametrize(("case", "action", "field", "value"), CONSOLE, ids=[c[0] for c in CONSOLE])
def test_the_console_refuses_every_bad_value_and_writes_nothing(
    world: World, case: str, action: str, field: str, value: str
) -> None:
    client = signed_in(world)
    page = f"/memorules/{world.ids['target']}"
    token = CSRF.search(client.get(page).text)
    assert token is not None
    form = {"csrf": token.group(1), "reason": "catalogue", field: value}
    before = snapshot(world)
    response = client.post(
        f"{page}/{action}",
        content=_form_bytes(form),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 422, response.text
    assert snapshot(world) == before


def _form_bytes(form: dict[str, str]) -> bytes:
    """URL-encoded form bytes. A browser cannot encode a lone surrogate; a client that
    tries sends its "surrogatepass" bytes, which are not UTF-8: the console must refuse."""
    return "&".join(
        f"{k}={quote(val.encode('utf-8', 'surrogatepass'))}" for k, val in form.items()
    ).encode()


@pytest.mark.parametrize("before", [str(HUGE_CURSOR), "²", "-3"])
def test_the_console_refuses_a_bad_audit_cursor(world: World, before: str) -> None:
    response = signed_in(world).get("/audit", params={"before": before})
    assert response.status_code == 422
