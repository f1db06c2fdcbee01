"""``PRISM_MCP_TOOL_SCHEMAS``: flat tool schemas (the default, which Claude Code and the
Anthropic API take) or each operation model's precise schema, for clients that validate
arguments before calling (issue 16).

The precise ``prism_remember`` schema is a ``oneOf`` of its kinds, so a validating client
catches a memorule without its required fields before it calls; the flat one cannot. Every
request the contract accepts satisfies both, and the server's own errors are unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from prism_memory.domain import validation
from prism_memory.errors import InvalidInput
from prism_memory.mcp_server import arguments as a
from prism_memory.mcp_server.tools import TOOLS
from tests.test_mcp_stdio import stdio_server

RULE: dict[str, Any] = {
    "kind": "memorule",
    "memorule_kind": "behavioral_rule",
    "subject": "Run the tests",
    "body": "Run the whole suite before asking for review.",
    "applies_to": {"surface": "python"},
}
ACCEPTED: list[dict[str, Any]] = [
    {"body": "The deploy window is Tuesday."},
    {"kind": "note", "content": "The deploy window is Tuesday.", "namespace": "ops"},
    {"kind": "note", "body": "x", "subject": "Deploys", "idempotency_key": "k-1"},
    RULE,
    {**RULE, "confidence": "observed", "evidence_signal_id": "sig-1", "namespace": "team"},
    {**RULE, "applies_to": {"scope": "persona", "persona": "donna"}},
    {**RULE, "applies_to": {"scope": "global"}, "memorule_kind": "convention"},
]
# Mistakes a validating client should catch before calling: the contract refuses each.
REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("a memorule without its subject", {k: v for k, v in RULE.items() if k != "subject"}),
    ("a memorule without applies_to", {k: v for k, v in RULE.items() if k != "applies_to"}),
    ("a memorule without memorule_kind", {k: v for k, v in RULE.items() if k != "memorule_kind"}),
    ("an empty applies_to", {**RULE, "applies_to": {}}),
    ("a persona scope with no persona", {**RULE, "applies_to": {"scope": "persona"}}),
    ("a note with a memorule field", {"body": "free text", "memorule_kind": "feedback"}),
    ("a note with body and content", {"body": "one", "content": "two"}),
    ("a note with no text", {"kind": "note", "subject": "Deploys"}),
]
PRECISE = a.precise_schema(a.REMEMBER)
FLAT = a.published_schema(a.REMEMBER)


def valid(schema: dict[str, Any], args: dict[str, Any]) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(args))


@pytest.mark.parametrize("args", ACCEPTED)
def test_a_request_the_contract_accepts_satisfies_both_schemas(args: dict[str, Any]) -> None:
    validation.validate_remember(args)  # the contract accepts it
    assert valid(PRECISE, args) and valid(FLAT, args)


@pytest.mark.parametrize(("mistake", "args"), REFUSED, ids=[m for m, _ in REFUSED])
def test_the_precise_schema_catches_what_each_kind_requires(
    mistake: str, args: dict[str, Any]
) -> None:
    with pytest.raises(InvalidInput):
        validation.validate_remember(args)
    assert not valid(PRECISE, args), mistake


def test_the_flat_schema_cannot_tell_the_kinds_apart() -> None:
    # Why the precise schemas exist: the flat one lets a memorule without a subject through.
    missing_subject = REFUSED[0][1]
    assert valid(FLAT, missing_subject) and not valid(PRECISE, missing_subject)


def test_prism_remember_s_precise_schema_is_one_of_the_two_models() -> None:
    note, memorule = PRECISE["oneOf"]
    assert PRECISE["type"] == "object"
    assert memorule["required"] == ["kind", "memorule_kind", "subject", "body", "applies_to"]
    assert memorule["properties"]["kind"]["enum"] == ["memorule"]
    assert note["oneOf"] == [{"required": ["body"]}, {"required": ["content"]}]
    assert "$ref" not in str(PRECISE) and "$defs" not in str(PRECISE)


@pytest.mark.parametrize("spec", TOOLS, ids=[s.name for s in TOOLS])
def test_every_precise_tool_schema_is_a_valid_object_schema(spec: Any) -> None:
    schema = a.precise_schema(spec.arguments)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"  # what MCP clients require of an input schema
    flat = a.published_schema(spec.arguments)
    named = set(schema.get("properties", {})) | {
        p for arm in schema.get("oneOf", []) for p in arm["properties"]
    }
    assert named == set(flat["properties"])  # the same fields either way


def test_a_context_override_is_a_property_of_every_variant() -> None:
    context = {"type": "object", "properties": {"persona": {"type": "string"}}}
    schema = a.precise_schema(a.REMEMBER, {"context": context})
    assert all(arm["properties"]["context"] == context for arm in schema["oneOf"])
    assert valid(schema, {**RULE, "context": {"persona": "texi"}})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("choice", ["flat", "precise"])
async def test_prism_mcp_publishes_the_chosen_schemas_and_answers_alike(
    tmp_path: Path, choice: str
) -> None:
    async with stdio_server(tmp_path / "prism.db", PRISM_MCP_TOOL_SCHEMAS=choice) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["prism_remember"].input_schema
        assert ("oneOf" in schema) is (choice == "precise")
        assert schema == (PRECISE if choice == "precise" else FLAT)
        wrote = await client.call_tool("prism_remember", RULE)
        assert not wrote.is_error and wrote.structured_content is not None
        assert wrote.structured_content["ok"] is True
        # A client that does not validate still gets every field error from the server.
        bad = await client.call_tool("prism_remember", {**RULE, "subject": "x", "body": "y"})
        assert bad.is_error and bad.structured_content is not None
        fields = [f["field"] for f in bad.structured_content["error"]["fields"]]
        assert fields == ["subject", "body"]
