"""Issue 28: ``checks`` and ``enforcement`` through every door.

HTTP (``/v1`` and MCP at ``/mcp``, with real keys and roles, both engines), MCP over a real
stdio subprocess (the flat default schema, the SDK's client), and the CLI as a real
subprocess (``prism remember --checks``, ``update``, ``show``, ``dump``/``import`` and
``audit verify`` catching a tampered checks column).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from prism_memory.mcp_server.arguments import REMEMBER, published_schema
from tests.api_world import ENGINES, World, rule, world_on
from tests.cli_run import run_prism
from tests.test_mcp_stdio import stdio_server

CHECKS = [
    {"forbid_command": r"\bnpm\b"},
    {"require_before": {"command": "make test", "before": "git commit"}},
]
BAD = [{"forbid_command": "(a+)+"}, {"forbid_glob": "x"}]


def guarded(subject: str, **extra: Any) -> dict[str, Any]:
    return {**rule(subject, f"{subject}: the whole rule, as agents read it."), **extra}


@pytest.fixture(params=ENGINES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_on(request, tmp_path) as w:
        yield w


def states(w: World) -> int:
    return w.services.store.stats(w.ctx("acme", "p1").tenant_id)["states"]


# -- HTTP and MCP over HTTP ----------------------------------------------------------------


def test_http_writes_reads_and_updates_checks(world: World) -> None:
    made = world.call("a_writer", "POST", "/v1/memories", guarded("No npm here", checks=CHECKS))
    assert made.status_code == 201, made.text
    memory_id = made.json()["id"]
    read = world.call("a_reader", "GET", f"/v1/memories/{memory_id}").json()["state"]
    assert (read["checks"], read["enforcement"]) == (CHECKS, "remind")
    changed = world.call(
        "a_writer",
        "PATCH",
        f"/v1/memories/{memory_id}",
        {"changes": {"checks": CHECKS[:1]}, "reason": "one is enough"},
    )
    assert changed.status_code == 200 and changed.json()["version"] == 2
    refused = world.call(
        "a_writer", "PATCH", f"/v1/memories/{memory_id}", {"changes": {"checks": BAD}}
    )
    assert refused.status_code == 422
    assert [f["field"] for f in refused.json()["error"]["fields"]] == [
        "checks.0.forbid_command",
        "checks.1",
    ]
    recalled = world.call(
        "a_reader", "POST", "/v1/recall", {"query": "npm", "source_type": "memorule"}
    ).json()["matches"]
    mine = next(m for m in recalled if m["id"] == memory_id)
    assert mine["checks"] == CHECKS[:1]
    plain = world.call("a_reader", "GET", f"/v1/memories/{world.ids['a_rule_p1']}").json()
    assert (plain["state"]["checks"], plain["state"]["enforcement"]) == (None, None)


def test_http_refuses_bad_checks_all_at_once_and_writes_nothing(world: World) -> None:
    before = states(world)
    answer = world.call(
        "a_writer", "POST", "/v1/memories", guarded("x", checks=BAD, enforcement="never")
    )
    assert answer.status_code == 422
    fields = {(f["field"], f["code"]) for f in answer.json()["error"]["fields"]}
    assert fields == {
        ("subject", "too_short"),
        ("checks.0.forbid_command", "unsafe_regex"),
        ("checks.1", "unknown_check"),
        ("enforcement", "invalid_choice"),
    }
    assert states(world) == before


@pytest.mark.parametrize("enforcement", ["ask", "deny"])
def test_only_an_admin_key_sets_ask_or_deny_over_http_and_mcp(
    world: World, enforcement: str
) -> None:
    before = states(world)
    raw = guarded("Never force-push", checks=CHECKS[:1], enforcement=enforcement)
    refused = world.call("a_writer", "POST", "/v1/memories", raw)
    assert refused.status_code == 403
    assert refused.json()["error"]["field"] == "enforcement"
    is_error, payload = world.tool("a_writer", "prism_remember", raw)
    assert is_error and payload["error"]["code"] == "forbidden"
    assert states(world) == before
    made = world.call("a_admin", "POST", "/v1/memories", raw)
    assert made.status_code == 201
    memory_id = made.json()["id"]
    lowered = world.call(
        "a_writer",
        "PATCH",
        f"/v1/memories/{memory_id}",
        {"changes": {"enforcement": "remind"}},
    )
    assert lowered.status_code == 403
    is_error, payload = world.tool(
        "a_admin", "memorule_update", {"id": memory_id, "changes": {"enforcement": "remind"}}
    )
    assert not is_error and payload["version"] == 2
    history = world.call("a_admin", "GET", f"/v1/memories/{memory_id}/history").json()
    assert [v.get("enforcement") for v in history["versions"]] == [enforcement, "remind"]
    assert [e["event"] for e in history["audit"]][-2:] in (
        ["created", "superseded"],
        ["superseded", "created"],
    )


def test_the_openapi_document_states_checks_and_enforcement(world: World) -> None:
    doc = world.client.get("/openapi.json").json()
    create = doc["components"]["schemas"]["MemoruleCreate"]["properties"]
    assert create["enforcement"]["anyOf"][0]["enum"] == ["remind", "ask", "deny"]
    checks = create["checks"]["anyOf"][0]
    assert checks["type"] == "array" and checks["maxItems"] == 8
    assert set(checks["items"]["properties"]) == {
        "forbid_command",
        "forbid_edit",
        "require_before",
        "require_edit_with",
    }


# -- MCP over stdio ------------------------------------------------------------------------


def test_the_flat_remember_schema_takes_checks_without_combinators() -> None:
    flat = published_schema(REMEMBER)
    checks = flat["properties"]["checks"]
    assert checks["type"] == "array" and "anyOf" not in checks
    assert flat["properties"]["enforcement"]["enum"] == ["remind", "ask", "deny"]
    jsonschema.validate(guarded("Schema rule", checks=CHECKS, enforcement="ask"), flat)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(guarded("Schema rule", checks=[{"a": "b"}]), flat)


@pytest.mark.anyio
async def test_mcp_stdio_writes_checks_and_refuses_bad_ones(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    async with stdio_server(db) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["prism_remember"].input_schema["properties"]["checks"]["type"] == "array"
        bad = await client.call_tool("prism_remember", guarded("x", checks=BAD))
        assert bad.is_error
        fields = json.loads(bad.content[0].text)["error"]["fields"]  # type: ignore[union-attr]
        assert {f["field"] for f in fields} == {"subject", "checks.0.forbid_command", "checks.1"}
        made = await client.call_tool(
            "prism_remember", guarded("Deny npm", checks=CHECKS, enforcement="deny")
        )
        assert not made.is_error  # stdio acts as the local operator, an admin
        assert made.structured_content is not None
        memory_id = made.structured_content["id"]
        history = await client.call_tool("memorule_history", {"id": memory_id})
        assert history.structured_content is not None
        version = history.structured_content["versions"][0]
        assert (version["checks"], version["enforcement"]) == (CHECKS, "deny")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- the CLI -------------------------------------------------------------------------------


def _remember(db: Path, *extra: str) -> Any:
    return run_prism(
        db,
        "remember",
        "--kind",
        "memorule",
        "--memorule-kind",
        "convention",
        "--subject",
        "Use pnpm, never npm",
        "--body",
        "This repository installs with pnpm; npm breaks the lockfile.",
        "--scope",
        "project",
        *extra,
    )


def test_the_cli_writes_updates_shows_dumps_and_verifies_checks(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    done = _remember(db, "--checks", json.dumps(CHECKS), "--enforcement", "ask", "--json")
    assert done.returncode == 0, done.stderr
    memory_id = json.loads(done.stdout)["id"]
    shown = run_prism(db, "show", memory_id, "--json")
    state = json.loads(shown.stdout)["state"]
    assert (state["checks"], state["enforcement"]) == (CHECKS, "ask")
    text = run_prism(db, "show", memory_id).stdout
    assert "enforcement: ask" in text and r"check forbid_command: \bnpm\b" in text
    updated = run_prism(db, "update", memory_id, "--checks", "[]", "--reason", "advice only")
    assert updated.returncode == 0, updated.stderr
    state = json.loads(run_prism(db, "show", memory_id, "--json").stdout)["state"]
    assert (state["checks"], state["enforcement"]) == ([], "ask")  # the decision stays
    dump = tmp_path / "dump.jsonl"
    assert run_prism(db, "dump", "--out", str(dump)).returncode == 0
    copy = tmp_path / "copy.db"
    loaded = run_prism(copy, "import", str(dump))
    assert loaded.returncode == 0, loaded.stderr
    history = json.loads(run_prism(copy, "history", memory_id, "--json").stdout)["versions"]
    assert [v.get("checks") for v in history] == [CHECKS, []]
    assert run_prism(copy, "audit", "verify").returncode == 0
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE memory_state SET checks = '[]' WHERE version = 1")  # checks emptied
    conn.commit()
    conn.close()
    broken = run_prism(copy, "audit", "verify")
    assert broken.returncode != 0
    assert "memory_state was edited" in broken.stdout + broken.stderr


def test_the_cli_names_the_flag_of_a_bad_check_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    done = _remember(db, "--checks", json.dumps(BAD), "--enforcement", "block")
    assert done.returncode == 2
    assert "--checks: checks.0.forbid_command" in done.stderr
    assert "--enforcement:" in done.stderr
    garbled = _remember(db, "--checks", '[{"forbid_command"', "--json")
    assert garbled.returncode == 2
    error = json.loads(garbled.stdout)["error"]["fields"][0]
    assert (error["field"], error["code"]) == ("checks", "invalid_json")
    assert "--checks" in error["message"]
    listed = json.loads(run_prism(db, "recall", "--json").stdout)
    assert listed["count"] == 0
