"""The MCP server in memory (the SDK's ``Client(server)``): every tool and every error path.

Errors must reach the agent as an error result whose text is exactly Prism's error JSON.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp.types import INVALID_PARAMS

from prism_memory.bootstrap import Services
from prism_memory.domain.access import Caller, Role, operator_key
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.records import SessionContext
from prism_memory.mcp_server.server import build_mcp_server
from prism_memory.settings import Settings, load_settings

ContextFactory = Callable[..., SessionContext]
WRITES = {
    "prism_remember",
    "memorule_update",
    "memorule_retire",
    "memorule_restore",
    "memorule_pin",
    "adherence_judge",
}
TOOLS = {
    "prism_remember",
    "semantic_recall",
    "memorule_brief",
    "memorule_update",
    "memorule_retire",
    "memorule_restore",
    "memorule_pin",
    "memorule_history",
    "memorule_audit",
    "memorule_proposals",
    "memorule_served",
    "adherence_judge",
    "adherence_report",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_settings(db_path: Path, **overrides: Any) -> Settings:
    """The server's context: tenant acme, project api, persona donna, surface python."""
    values: dict[str, Any] = {
        "db": db_path,
        "embedder": "fake",
        "tenant": "acme",
        "project": "api",
        "persona": "donna",
        "surface": "python",
    }
    return load_settings(**{**values, **overrides})


@pytest.fixture
def server(services: Services, db_path: Path) -> MCPServer:
    return build_mcp_server(services, server_settings(db_path))


@pytest.fixture
async def client(server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server) as connected:
        yield connected


def rule(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": "Run the tests before pushing",
        "body": "Always run the full test suite locally before pushing a branch.",
        "applies_to": {"persona": "donna", "surface": "python"},
        "confidence": "observed",
        "evidence_signal_id": "94ccc816",
    }
    raw.update(overrides)
    return raw


async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    payload: dict[str, Any] | None = result.structured_content
    assert payload is not None and payload["ok"] is True
    return payload


async def refused(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The error of a refused call, after checking its text is exactly the error JSON."""
    result = await client.call_tool(tool, args)
    assert result.is_error
    [content] = result.content
    assert content.type == "text"
    payload = json.loads(content.text)
    assert payload == result.structured_content
    assert payload["ok"] is False and set(payload) == {"ok", "error"}
    error: dict[str, Any] = payload["error"]
    return error


def codes(error: dict[str, Any]) -> dict[str, str]:
    return {f["field"]: f["code"] for f in error["fields"]}


def server_ctx(make_ctx: ContextFactory) -> SessionContext:
    return make_ctx(tenant="acme", project="api", persona="donna", surface="python")


# -- listing -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_client_sees_every_tool_with_described_parameters(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.title and tool.description and len(tool.description) > 60
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert "$defs" not in schema and "context" not in schema["properties"]
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
            assert "anyOf" not in prop
    read_only = {name: t.annotations and t.annotations.read_only_hint for name, t in tools.items()}
    assert read_only == {name: name not in WRITES for name in TOOLS}


@pytest.mark.anyio
async def test_prism_remember_publishes_exactly_the_write_contract(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    props = tools["prism_remember"].input_schema["properties"]
    assert set(props) == {
        "kind",
        "memorule_kind",
        "subject",
        "body",
        "content",
        "applies_to",
        "evidence_signal_id",
        "confidence",
        "namespace",
        "idempotency_key",
        "corrects",
        "strict",
        "checks",
        "enforcement",
    }
    assert props["memorule_kind"]["enum"] == [
        "behavioral_rule",
        "feedback",
        "preference",
        "correction",
        "convention",
    ]
    assert props["confidence"]["enum"] == ["observed", "inferred", "asserted"]
    assert set(props["applies_to"]["properties"]) == {
        "persona",
        "surface",
        "specialization",
        "scope",
    }
    assert props["subject"]["minLength"] == 4


# -- prism_remember -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_memorule_is_written_in_the_server_context_with_one_session_id(
    client: Client, services: Services, make_ctx: ContextFactory
) -> None:
    first = await ok(client, "prism_remember", rule())
    second = await ok(client, "prism_remember", rule(subject="Second rule here"))
    assert first["kind"] == "memorule" and first["version"] == 1 and first["audit_id"]
    ctx = server_ctx(make_ctx)
    _, state1 = services.memory.reads.get(ctx, UUID(first["id"]))
    _, state2 = services.memory.reads.get(ctx, UUID(second["id"]))
    assert state1.written_by_persona == "donna"
    assert state1.written_by_session_id == state2.written_by_session_id
    assert state1.evidence_signal_id == "94ccc816"


@pytest.mark.anyio
async def test_a_note_is_written_from_body_or_its_alias_content(client: Client) -> None:
    assert (await ok(client, "prism_remember", {"body": "A free-text note."}))["kind"] == "note"
    assert (await ok(client, "prism_remember", {"content": "Another note."}))["kind"] == "note"


@pytest.mark.anyio
async def test_null_means_not_given_for_declared_fields(client: Client) -> None:
    note = {"kind": "note", "body": "A note.", "memorule_kind": None, "applies_to": None}
    assert (await ok(client, "prism_remember", note))["kind"] == "note"


@pytest.mark.anyio
async def test_applies_to_sent_as_json_text_is_decoded(client: Client) -> None:
    result = await ok(client, "prism_remember", rule(applies_to='{"persona": "donna"}'))
    assert result["kind"] == "memorule"


@pytest.mark.anyio
async def test_an_invalid_write_reports_every_field_error_and_writes_nothing(
    client: Client, services: Services, make_ctx: ContextFactory
) -> None:
    bad = {
        "kind": "memorule",
        "subject": "x",
        "body": "short",
        "applies_to": {"scope": "galaxy", "colour": "red"},
        "confidence": "certain",
        "corrects": "not-a-uuid",
        "bogus": 1,
    }
    error = await refused(client, "prism_remember", bad)
    assert error["code"] == "validation_failed"
    assert codes(error) == {
        "bogus": "unknown_field",
        "memorule_kind": "missing",
        "subject": "too_short",
        "body": "too_short",
        "applies_to.colour": "unknown_field",
        "applies_to.scope": "invalid_choice",
        "confidence": "invalid_choice",
        "corrects": "invalid_format",
    }
    ctx = server_ctx(make_ctx)
    assert services.store.stats(ctx.tenant_id)["memories"] == 0


@pytest.mark.anyio
async def test_memorule_fields_on_a_note_are_named_as_unknown(client: Client) -> None:
    error = await refused(client, "prism_remember", {"body": "A note.", "confidence": "observed"})
    assert codes(error) == {"confidence": "unknown_field"}
    assert "kind='memorule'" in error["fields"][0]["message"]


@pytest.mark.anyio
async def test_a_retried_write_with_the_same_key_is_replayed(
    client: Client, services: Services, make_ctx: ContextFactory
) -> None:
    first = await ok(client, "prism_remember", rule(idempotency_key="k-1"))
    again = await ok(client, "prism_remember", rule(idempotency_key="k-1"))
    assert again["id"] == first["id"] and again["replayed"] is True
    assert services.store.stats(server_ctx(make_ctx).tenant_id)["memories"] == 1
    error = await refused(client, "prism_remember", rule(idempotency_key="k-1", subject="Other"))
    assert error["code"] == "idempotency_conflict"


@pytest.mark.anyio
async def test_a_strict_near_duplicate_is_refused_as_a_conflict(client: Client) -> None:
    await ok(client, "prism_remember", rule())
    error = await refused(client, "prism_remember", rule(strict=True))
    assert error["code"] == "near_duplicate" and error["duplicates"]


# -- semantic_recall --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_semantic_recall_returns_the_memorule_envelope(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    await ok(client, "prism_remember", {"body": "A note about the weather."})
    found = await ok(
        client, "semantic_recall", {"query": "tests before push", "source_type": "memorule"}
    )
    [match] = found["matches"]
    assert match["id"] == written["id"]
    assert match["memorule_kind"] == "behavioral_rule"
    assert match["applies_to"] == {"persona": "donna", "surface": "python"}
    assert match["confidence"] == "observed" and match["evidence_signal_id"] == "94ccc816"
    assert match["why"]["matched"] == ["persona", "surface"]
    everything = await ok(client, "semantic_recall", {"query": ""})
    assert everything["count"] == 2


@pytest.mark.anyio
async def test_semantic_recall_reports_every_field_error(client: Client) -> None:
    error = await refused(
        client,
        "semantic_recall",
        {"top_k": 0, "source_type": "rules", "memorule_kind": ["habit"], "colour": "red"},
    )
    assert codes(error) == {
        "top_k": "out_of_range",
        "source_type": "invalid_choice",
        "memorule_kind": "invalid_choice",
        "colour": "unknown_field",
    }


# -- lifecycle ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_update_writes_a_new_version_and_history_shows_both(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    updated = await ok(
        client,
        "memorule_update",
        {"id": written["id"], "changes": {"confidence": "inferred"}, "reason": "seen once only"},
    )
    assert updated["version"] == 2 and updated["audit_id"]
    history = await ok(client, "memorule_history", {"id": written["id"]})
    assert [v["version"] for v in history["versions"]] == [1, 2]
    assert history["versions"][1]["reason"] == "seen once only"
    assert [e["event"] for e in history["audit"]] == ["superseded", "created"]


@pytest.mark.anyio
async def test_update_errors_come_back_in_the_error_shape(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    error = await refused(client, "memorule_update", {"id": "nope", "changes": "x", "extra": 1})
    assert codes(error) == {
        "id": "invalid_format",
        "changes": "wrong_type",
        "extra": "unknown_field",
    }
    error = await refused(
        client, "memorule_update", {"id": written["id"], "changes": {"kind": "note"}}
    )
    assert codes(error) == {"kind": "not_updatable"}
    error = await refused(
        client, "memorule_update", {"id": written["id"], "changes": {"subject": "x"}}
    )
    assert codes(error) == {"subject": "too_short"}
    missing = "00000000-0000-7000-8000-000000000000"
    error = await refused(client, "memorule_update", {"id": missing, "changes": {"body": "b" * 20}})
    assert error["code"] == "not_found" and error["id"] == missing


@pytest.mark.anyio
async def test_retire_hides_a_rule_from_recall_and_restore_brings_it_back(
    client: Client,
) -> None:
    written = await ok(client, "prism_remember", rule())
    recall = {"query": "", "source_type": "memorule"}
    await ok(client, "memorule_retire", {"id": written["id"], "reason": "no longer true"})
    assert (await ok(client, "semantic_recall", recall))["count"] == 0
    error = await refused(client, "memorule_retire", {"id": written["id"], "reason": "again"})
    assert error["code"] == "memory_retired"
    error = await refused(client, "memorule_update", {"id": written["id"], "changes": {}})
    assert error["code"] == "memory_retired"
    await ok(client, "memorule_restore", {"id": written["id"], "reason": "true after all"})
    assert (await ok(client, "semantic_recall", recall))["count"] == 1
    error = await refused(client, "memorule_restore", {"id": written["id"], "reason": "again"})
    assert error["code"] == "conflict"


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["memorule_retire", "memorule_restore"])
async def test_retire_and_restore_need_a_valid_id_and_a_reason(client: Client, tool: str) -> None:
    error = await refused(client, tool, {"id": "42"})
    assert codes(error) == {"id": "invalid_format", "reason": "missing"}
    missing = "00000000-0000-7000-8000-000000000000"
    assert (await refused(client, tool, {"id": missing, "reason": "r"}))["code"] == "not_found"


@pytest.mark.anyio
async def test_history_of_an_unknown_id_is_not_found(client: Client) -> None:
    missing = "00000000-0000-7000-8000-000000000000"
    assert (await refused(client, "memorule_history", {"id": missing}))["code"] == "not_found"
    assert codes(await refused(client, "memorule_history", {})) == {"id": "missing"}


# -- memorule_audit ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_audit_lists_events_newest_first_with_filters_and_pages(client: Client) -> None:
    one = await ok(client, "prism_remember", rule())
    two = await ok(client, "prism_remember", rule(subject="Second rule", body="b" * 20))
    await ok(client, "memorule_retire", {"id": one["id"], "reason": "obsolete"})
    page = await ok(client, "memorule_audit", {})
    assert [e["event"] for e in page["events"]] == ["retired", "created", "created"]
    assert page["events"][0]["written_by_persona"] == "donna"
    only = await ok(client, "memorule_audit", {"memorule_id": two["id"]})
    assert [e["memorule_id"] for e in only["events"]] == [two["id"]]
    retired = await ok(client, "memorule_audit", {"event": ["retired"]})
    assert len(retired["events"]) == 1
    first = await ok(client, "memorule_audit", {"limit": 2})
    assert len(first["events"]) == 2 and first["next_cursor"]
    rest = await ok(client, "memorule_audit", {"limit": 2, "before": first["next_cursor"]})
    assert len(rest["events"]) == 1 and rest["next_cursor"] is None
    session = page["events"][0]["written_by_session_id"]
    mine = await ok(client, "memorule_audit", {"written_by_session_id": session})
    assert len(mine["events"]) == 3
    later = await ok(client, "memorule_audit", {"since": "2999-01-01T00:00:00"})
    assert later["events"] == []


@pytest.mark.anyio
async def test_served_lists_the_versions_a_recall_and_a_brief_returned(client: Client) -> None:
    one = await ok(client, "prism_remember", rule())
    await ok(client, "prism_remember", rule(subject="Second rule", body="b" * 20))
    recalled = await ok(client, "semantic_recall", {"source_type": "memorule"})
    await ok(client, "memorule_brief", {"task": "review"})
    session = (await ok(client, "memorule_audit", {}))["events"][0]["written_by_session_id"]
    served = await ok(client, "memorule_served", {"session_id": session})
    rows = [(r["tool"], r["memorule_id"], r["version"], r["rank"]) for r in served["served"]]
    recall_rows = [
        ("semantic_recall", m["id"], m["version"], i + 1) for i, m in enumerate(recalled["matches"])
    ]
    assert rows[: len(recall_rows)] == recall_rows and len(recall_rows) == 2
    assert {r[0] for r in rows[len(recall_rows) :]} == {"memorule_brief"}
    only = await ok(client, "memorule_served", {"memorule_id": one["id"], "limit": 1})
    assert len(only["served"]) == 1 and only["next_cursor"] == only["served"][0]["seq"]
    error = await refused(client, "memorule_served", {"session_id": "x", "limit": 0, "by": 1})
    assert codes(error) == {
        "session_id": "invalid_format",
        "limit": "out_of_range",
        "by": "unknown_field",
    }


@pytest.mark.anyio
async def test_audit_reports_every_bad_filter(client: Client) -> None:
    error = await refused(
        client,
        "memorule_audit",
        {"memorule_id": "x", "event": ["deleted"], "since": "yesterday", "limit": 0, "by": "me"},
    )
    assert codes(error) == {
        "memorule_id": "invalid_format",
        "event.0": "invalid_choice",
        "since": "invalid_format",
        "limit": "out_of_range",
        "by": "unknown_field",
    }


# -- memorule_brief ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_brief_tool_answers_with_markdown_and_what_it_holds(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    result = await client.call_tool("memorule_brief", {"task": "push my branch"})
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("# Memorules that apply")
    assert f"id `{written['id']}`" in text
    assert result.structured_content is not None
    assert result.structured_content["markdown"] == text
    assert result.structured_content["included"][0]["id"] == written["id"]


@pytest.mark.anyio
async def test_the_brief_tool_reports_every_bad_argument(client: Client) -> None:
    error = await refused(
        client, "memorule_brief", {"token_budget": 5, "task": "x" * 4001, "colour": 1}
    )
    # MCP has no key step between the names and the values: every problem at once, as
    # semantic_recall does (HTTP refuses unknown names before the key, then judges values).
    assert codes(error) == {
        "colour": "unknown_field",
        "token_budget": "out_of_range",
        "task": "too_long",
    }
    error = await refused(client, "memorule_brief", {"token_budget": 5, "task": "x" * 4001})
    assert codes(error) == {"token_budget": "out_of_range", "task": "too_long"}


# -- session context --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_narrowing_the_context_is_forbidden_by_default(client: Client) -> None:
    error = await refused(client, "prism_remember", {**rule(), "context": {"persona": "texi"}})
    assert error["code"] == "forbidden"
    assert error["setting"] == "PRISM_MCP_ALLOW_CONTEXT_OVERRIDE"
    # An empty override narrows nothing, so it is no violation.
    assert (await ok(client, "semantic_recall", {"context": {}}))["ok"] is True


@pytest.mark.anyio
async def test_an_allowed_override_narrows_the_context_of_one_call(
    services: Services, db_path: Path, make_ctx: ContextFactory
) -> None:
    settings = server_settings(db_path, mcp_allow_context_override=True)
    async with Client(build_mcp_server(services, settings)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "context" in tools["semantic_recall"].input_schema["properties"]
        written = await ok(client, "prism_remember", {**rule(), "context": {"persona": "texi"}})
        plain = await ok(client, "prism_remember", rule(subject="Written as donna"))
        error = await refused(client, "semantic_recall", {"context": {"persona": "", "role": 1}})
        assert codes(error) == {"context.role": "unknown_field"}
        error = await refused(client, "semantic_recall", {"context": "texi"})
        assert codes(error) == {"context": "wrong_type"}
    ctx = server_ctx(make_ctx)
    assert services.memory.reads.get(ctx, UUID(written["id"]))[1].written_by_persona == "texi"
    assert services.memory.reads.get(ctx, UUID(plain["id"]))[1].written_by_persona == "donna"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_both_protocol_eras_write_and_recall_in_one_session(
    server: MCPServer, services: Services, make_ctx: ContextFactory, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        a = await ok(client, "prism_remember", rule())
        b = await ok(client, "prism_remember", rule(subject="Another rule", body="b" * 20))
        assert (await ok(client, "semantic_recall", {"source_type": "memorule"}))["count"] == 2
    ctx = server_ctx(make_ctx)
    sessions = {
        services.memory.reads.get(ctx, UUID(r["id"]))[1].written_by_session_id for r in (a, b)
    }
    assert len(sessions) == 1


@pytest.mark.anyio
async def test_a_fixed_session_id_setting_is_recorded(
    services: Services, db_path: Path, make_ctx: ContextFactory
) -> None:
    fixed = "0190f1c4-0000-7000-8000-000000000001"
    async with Client(build_mcp_server(services, server_settings(db_path, session_id=fixed))) as c:
        written = await ok(c, "prism_remember", rule())
    state = services.memory.reads.get(server_ctx(make_ctx), UUID(written["id"]))[1]
    assert str(state.written_by_session_id) == fixed


def test_an_invalid_tenant_setting_stops_the_server_at_build(
    services: Services, db_path: Path
) -> None:
    from prism_memory.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        build_mcp_server(services, server_settings(db_path, tenant="not a slug!"))
    assert caught.value.errors[0].field == "tenant"


@pytest.mark.anyio
async def test_a_request_caller_hook_decides_the_key_and_tenant_and_can_refuse(
    services: Services, db_path: Path, make_ctx: ContextFactory
) -> None:
    other = make_ctx(tenant="globex", project="api", persona="hal")
    writer = dataclasses.replace(operator_key(other.tenant_id), key_id="key_w", role=Role.WRITER)
    reader = dataclasses.replace(writer, key_id="key_r", role=Role.READER)
    # One caller per request, in order; None: the hook crashes.
    callers: list[Caller | None] = [Caller(writer, other), Caller(writer, other), None]
    callers.append(Caller(reader, other))
    seen: list[object] = []

    def hook(request: object) -> Caller:
        seen.append(request)
        caller = callers[len(seen) - 1]
        if caller is None:
            raise PermissionError("a crash in the hook")  # not a PrismError: internal_error
        return caller

    server = build_mcp_server(services, server_settings(db_path), request_caller=hook)
    async with Client(server) as client:
        written = await ok(client, "prism_remember", rule(applies_to={"scope": "project"}))
        assert [r.uri for r in (await client.list_resources()).resources] == []
        brief = (await client.read_resource("prism://brief")).contents[0]
        assert written["id"] in brief.text  # type: ignore[union-attr]
        error = await refused(client, "memorule_retire", {"id": written["id"], "reason": "r"})
        assert error == {
            "code": "internal_error",
            "message": "unexpected server error; see the server log",
        }
        # The hook's key decides, through the same rules as /v1: a reader cannot retire.
        error = await refused(client, "memorule_retire", {"id": written["id"], "reason": "r"})
        assert (error["code"], error["required_role"]) == ("forbidden", "writer")
    assert services.memory.reads.get(other, UUID(written["id"]))[1].written_by_persona == "hal"
    assert services.memory.reads.get(other, UUID(written["id"]))[0].status.value == "active"
    assert len(seen) == 4
    assert uuid_for("tenant", "globex") == other.tenant_id


# -- resources and prompt ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_brief_resource_and_a_memorule_resource(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    assert [str(r.uri) for r in (await client.list_resources()).resources] == ["prism://brief"]
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {"prism://brief{?task,token_budget}", "prism://memorule/{id}"}
    brief = (await client.read_resource("prism://brief")).contents[0]
    assert brief.mime_type == "text/markdown"
    assert f"id `{written['id']}`" in brief.text  # type: ignore[union-attr]
    for_task = (await client.read_resource("prism://brief?task=push&token_budget=100")).contents[0]
    assert for_task.text.startswith("# Memorules that apply")  # type: ignore[union-attr]
    one = (await client.read_resource(f"prism://memorule/{written['id']}")).contents[0]
    data = json.loads(one.text)  # type: ignore[union-attr]
    assert data["memory"]["id"] == written["id"] and data["state"]["confidence"] == "observed"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("uri", "code"),
    [
        ("prism://memorule/00000000-0000-7000-8000-000000000000", "not_found"),
        ("prism://memorule/nope", "validation_failed"),
        ("prism://brief?token_budget=lots", "validation_failed"),
        ("prism://brief?token_budget=5", "validation_failed"),
    ],
)
async def test_resource_errors_carry_the_error_json(client: Client, uri: str, code: str) -> None:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    assert caught.value.error.code == INVALID_PARAMS
    assert json.loads(caught.value.error.message)["error"]["code"] == code


@pytest.mark.anyio
async def test_the_start_task_prompt_opens_with_the_task_and_the_brief(client: Client) -> None:
    written = await ok(client, "prism_remember", rule())
    [prompt] = (await client.list_prompts()).prompts
    assert prompt.name == "start_task" and prompt.arguments and prompt.arguments[0].required
    result = await client.get_prompt("start_task", {"task": "Push the release branch"})
    [message] = result.messages
    assert message.role == "user"
    text = message.content.text  # type: ignore[union-attr]
    assert text.startswith("I am starting this task:\n\nPush the release branch")
    assert f"id `{written['id']}`" in text
    with pytest.raises(MCPError) as caught:
        await client.get_prompt("start_task", {"task": "x" * 4001})
    error = json.loads(caught.value.error.message)["error"]
    assert error["code"] == "validation_failed" and error["fields"][0]["field"] == "task"
