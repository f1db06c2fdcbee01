"""``prism mcp`` as a real subprocess, driven by the SDK's stdio client and by the MCP Inspector.

The server runs as ``python -m prism_memory mcp`` (the same command as ``prism mcp``) on a temp
SQLite
file with the fake embedder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.test_mcp_server import TOOLS  # the tools, named once

BACKEND = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "prism_memory", "mcp"]
# The last Inspector release that declares no Node engine above 20 (0.16+ ask for Node 22).
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_env(db_path: Path, **extra: str) -> dict[str, str]:
    # The stdio client starts the server with a minimal environment, not ours.
    return {
        "PYTHONPATH": str(BACKEND),
        "PRISM_DB": str(db_path),
        "PRISM_EMBEDDER": "fake",
        "PRISM_TENANT": "acme",
        "PRISM_PROJECT": "api",
        "PRISM_PERSONA": "donna",
        "PYTHONWARNINGS": "error",  # the server is held to the suite's -W error too
        **extra,
    }


@contextlib.asynccontextmanager
async def stdio_server(db_path: Path, mode: str = "legacy", **env: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=SERVER[0], args=SERVER[1:], env=server_env(db_path, **env), cwd=str(BACKEND)
    )
    async with Client(params, mode=mode) as client:
        yield client


def rule(subject: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": subject,
        "body": f"{subject}: always, on every branch, before asking for review.",
        "applies_to": {"persona": "donna"},
        "confidence": "observed",
    }


async def structured(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    payload: dict[str, Any] = result.structured_content
    return payload


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_prism_mcp_over_stdio_writes_recalls_briefs_and_refuses(
    tmp_path: Path, mode: str
) -> None:
    async with stdio_server(tmp_path / "prism.db", mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        written = await structured(client, "prism_remember", rule("Run the linters first"))
        found = await structured(
            client, "semantic_recall", {"query": "linters", "source_type": "memorule"}
        )
        assert [m["id"] for m in found["matches"]] == [written["id"]]
        brief = (await client.read_resource("prism://brief")).contents[0]
        assert f"id `{written['id']}`" in brief.text  # type: ignore[union-attr]
        refused = await client.call_tool("prism_remember", {"kind": "memorule", "subject": "x"})
        assert refused.is_error
        error = json.loads(refused.content[0].text)["error"]  # type: ignore[union-attr]
        assert error["code"] == "validation_failed"
        assert {f["field"] for f in error["fields"]} == {
            "memorule_kind",
            "subject",
            "body",
            "applies_to",
        }


@pytest.mark.slow
@pytest.mark.anyio
async def test_two_stdio_servers_on_one_database_both_see_every_record(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    per_server = 8
    async with stdio_server(db) as one, stdio_server(db) as two:

        async def write(client: Client, name: str) -> None:
            for i in range(per_server):
                await structured(client, "prism_remember", rule(f"Rule {i} from {name}"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(write, one, "one")
            tg.start_soon(write, two, "two")
        for client in (one, two):
            found = await structured(
                client, "semantic_recall", {"source_type": "memorule", "top_k": 100}
            )
            assert found["count"] == 2 * per_server
        audit = await structured(one, "memorule_audit", {"limit": 500})
        assert len(audit["events"]) == 2 * per_server
        sessions = {e["written_by_session_id"] for e in audit["events"]}
        assert len(sessions) == 2  # one session per server process


def test_prism_mcp_refuses_bad_settings_before_serving(tmp_path: Path) -> None:
    env = {**os.environ, **server_env(tmp_path / "prism.db", PRISM_TENANT="not a slug!")}
    done = subprocess.run(
        SERVER, env=env, cwd=BACKEND, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""  # stdout belongs to the protocol
    error = json.loads(done.stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == "validation_failed" and error["fields"][0]["field"] == "tenant"


def test_prism_mcp_has_help_text(tmp_path: Path) -> None:
    env = {**os.environ, **server_env(tmp_path / "prism.db")}
    done = subprocess.run(
        [*SERVER, "--help"], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert "Serve the Prism tools over MCP on stdin/stdout." in done.stdout
    assert "--allow-context-override" in done.stdout


def jsonrpc_lines(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "eof-test", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def run_mcp(db: Path, stdin: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **server_env(db, **extra)}
    return subprocess.run(
        SERVER, env=env, cwd=BACKEND, input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.real_model
@pytest.mark.parametrize("stdin", ["", jsonrpc_lines(INITIALIZE)], ids=["at once", "after init"])
def test_prism_mcp_with_the_real_model_exits_0_when_stdin_closes_early(
    tmp_path: Path, stdin: str
) -> None:
    # The embedding model loads in the background at start; closing stdin mid-load used to
    # abort the process in onnxruntime's threads (exit 134, "terminate called ...").
    done = run_mcp(tmp_path / "prism.db", stdin, PRISM_EMBEDDER="minilm")
    assert done.returncode == 0, done.stderr
    assert "terminate called" not in done.stderr
    assert len(done.stdout.splitlines()) == (1 if stdin else 0)


def test_requests_read_before_stdin_closes_are_all_answered(tmp_path: Path) -> None:
    db = tmp_path / "prism.db"
    remember = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "prism_remember", "arguments": {"body": "Written just before EOF."}},
    }
    recall = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "semantic_recall", "arguments": {"query": "EOF"}},
    }
    done = run_mcp(db, jsonrpc_lines(INITIALIZE, INITIALIZED, remember, recall))
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert set(answers) == {1, 2, 3}
    written = json.loads(answers[2]["result"]["content"][0]["text"])
    assert written["ok"] is True
    # The write the answer acknowledged is in the store: a second server recalls it.
    again = run_mcp(db, jsonrpc_lines(INITIALIZE, INITIALIZED, {**recall, "id": 4}))
    found = json.loads(json.loads(again.stdout.splitlines()[-1])["result"]["content"][0]["text"])
    assert written["id"] in {m["id"] for m in found["matches"]}


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("npx") is None, reason="npx (Node.js) is not installed: the Inspector runs on it"
)
def test_the_mcp_inspector_cli_lists_the_tools_and_calls_semantic_recall(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    assert npx is not None
    env = {**os.environ, **server_env(tmp_path / "prism.db")}
    fetched = subprocess.run(
        [npx, "-y", INSPECTOR, "--cli", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if fetched.returncode != 0:
        pytest.skip(f"{INSPECTOR} could not be fetched from npm: {fetched.stderr[-500:]}")
    inspector = [npx, "-y", INSPECTOR, "--cli", *SERVER]

    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*inspector, *args], env=env, capture_output=True, text=True, timeout=180, check=False
        )
        assert done.returncode == 0, done.stderr
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    listed = run("--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS
    # The TypeScript SDK's client takes the precise schemas too (a oneOf under an object).
    env["PRISM_MCP_TOOL_SCHEMAS"] = "precise"
    precise = {t["name"]: t for t in run("--method", "tools/list")["tools"]}
    assert set(precise) == TOOLS and "oneOf" in precise["prism_remember"]["inputSchema"]
    called = run(
        "--method", "tools/call", "--tool-name", "semantic_recall", "--tool-arg", "query=tests"
    )
    assert called["isError"] is False
    assert called["structuredContent"]["ok"] is True
