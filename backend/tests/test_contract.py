"""One contract per operation (issue 16): the operation models validate every door's
requests, ARE the OpenAPI request schemas and the MCP tool input schemas, take their bounds
from one module, and report pydantic's errors through one mapper."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prism_memory.bootstrap import context_from
from prism_memory.cli.main import cli
from prism_memory.domain import validation
from prism_memory.domain.characters import text_pattern
from prism_memory.domain.contract import bounds
from prism_memory.domain.contract.lifecycle import MemoryUpdate, PinChange, StatusChange
from prism_memory.domain.contract.recall import BriefCreate, RecallCreate
from prism_memory.domain.contract.remember import MemoruleCreate, NoteCreate
from prism_memory.domain.records import MemoruleKind
from prism_memory.errors import InvalidInput
from prism_memory.mcp_server import arguments as a
from prism_memory.mcp_server.parsing import parse
from prism_memory.mcp_server.tools import TOOLS
from prism_memory.settings import load_settings
from tests.api_world import World, running_world

PUBLISHED = {spec.name: a.published_schema(spec.arguments) for spec in TOOLS}
CONSTRAINTS = ("type", "pattern", "minLength", "maxLength", "minimum", "maximum", "enum", "items")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("contract")) as w:
        yield w


@pytest.fixture(scope="module")
def openapi(world: World) -> dict[str, Any]:
    doc: dict[str, Any] = world.client.get("/openapi.json").json()
    return doc


def refused(raw: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(InvalidInput) as info:
        validation.validate_remember(raw)
    payload: dict[str, Any] = info.value.to_payload()
    return payload


def as_published(prop: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI property as the MCP schema states it: null dropped, a list of values."""
    arms = [arm for arm in prop.get("anyOf", [prop]) if arm.get("type") != "null"]
    arm = next((x for x in arms if x.get("type") == "array"), arms[0])
    return {k: arm[k] for k in CONSTRAINTS if k in arm}


# -- the MCP schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("tool", sorted(PUBLISHED))
def test_every_tool_schema_is_one_flat_object_claude_code_accepts(tool: str) -> None:
    # Claude Code drops a tool (silently) whose input schema has oneOf/anyOf/allOf or
    # if/then at its root: every tool publishes a plain object.
    schema = PUBLISHED[tool]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(schema) <= {"type", "properties", "required", "additionalProperties"}


def test_prism_remember_says_what_each_kind_requires_from_the_models() -> None:
    kind = PUBLISHED["prism_remember"]["properties"]["kind"]
    assert kind["enum"] == ["note", "memorule"] and kind["default"] == "note"
    said = dict(re.findall(r"'(\w+)' needs ([^;.]+)", kind["description"]))
    memorule = [f for f in MemoruleCreate.model_json_schema()["required"] if f != "kind"]
    assert said["memorule"] == ", ".join(memorule)
    assert memorule == ["memorule_kind", "subject", "body", "applies_to"]
    assert NoteCreate.model_json_schema()["required"] == ["body"]
    assert said["note"] == "body (or content)"


def test_prism_remember_publishes_exactly_the_fields_the_models_accept() -> None:
    props = PUBLISHED["prism_remember"]["properties"]
    assert set(props) == NoteCreate.accepted() | MemoruleCreate.accepted()
    assert props["applies_to"]["minProperties"] == 1  # "at least one key", without anyOf
    assert props["content"]["pattern"] == props["body"]["pattern"]


def test_the_http_body_of_a_write_is_one_of_the_two_models_with_their_required_fields(
    openapi: dict[str, Any],
) -> None:
    body = openapi["paths"]["/v1/memories"]["post"]["requestBody"]["content"]
    refs = [arm["$ref"].rsplit("/", 1)[-1] for arm in body["application/json"]["schema"]["oneOf"]]
    assert refs == ["NoteCreate", "MemoruleCreate"]
    schemas = openapi["components"]["schemas"]
    assert schemas["NoteCreate"]["required"] == ["body"]
    assert schemas["MemoruleCreate"]["required"] == [
        "kind",
        "memorule_kind",
        "subject",
        "body",
        "applies_to",
    ]


def test_memorule_update_changes_has_a_real_schema(openapi: dict[str, Any]) -> None:
    changes = PUBLISHED["memorule_update"]["properties"]["changes"]
    assert changes["type"] == "object" and changes["additionalProperties"] is False
    assert changes["minProperties"] == 1
    assert set(changes["properties"]) == {  # what a memorule's update may change
        "memorule_kind",
        "subject",
        "body",
        "applies_to",
        "evidence_signal_id",
        "confidence",
        "checks",
        "enforcement",
    }
    assert changes["properties"]["memorule_kind"]["enum"] == [k.value for k in MemoruleKind]
    assert set(changes["properties"]["applies_to"]["properties"]) == set(
        validation.APPLIES_TO_FIELDS
    )
    assert all("default" not in p for p in changes["properties"].values())
    http = openapi["components"]["schemas"]["MemoryUpdate"]["properties"]["changes"]
    assert http["$ref"] == "#/components/schemas/MemoryChanges"


# -- one model, both doors -----------------------------------------------------------------

PAIRS = [
    ("semantic_recall", "RecallCreate", RecallCreate),
    ("memorule_brief", "BriefCreate", BriefCreate),
    ("memorule_update", "MemoryUpdate", MemoryUpdate),
    ("memorule_retire", "StatusChange", StatusChange),
    ("memorule_restore", "StatusChange", StatusChange),
    ("memorule_pin", "PinChange", PinChange),
]
# What a tool takes beside its HTTP body: the id (a path parameter over HTTP), and for
# memorule_pin whether to pin (the route's name over HTTP: /pin or /unpin).
TOOL_OWN = {"memorule_pin": {"id", "pinned"}}


@pytest.mark.parametrize(("tool", "component", "model"), PAIRS, ids=[p[0] for p in PAIRS])
def test_the_openapi_request_schema_and_the_mcp_input_schema_are_one_model(
    openapi: dict[str, Any], tool: str, component: str, model: type[Any]
) -> None:
    http = openapi["components"]["schemas"][component]
    mcp = PUBLISHED[tool]
    assert set(http["properties"]) == set(model.model_fields)
    assert set(mcp["properties"]) - TOOL_OWN.get(tool, {"id"}) == set(http["properties"])
    for name, prop in http["properties"].items():
        if "$ref" in prop:
            continue
        assert as_published(prop) == {
            k: mcp["properties"][name][k] for k in CONSTRAINTS if k in mcp["properties"][name]
        }, name


def test_a_write_is_published_to_both_doors_by_the_same_models(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    mcp = PUBLISHED["prism_remember"]["properties"]
    for name, prop in schemas["MemoruleCreate"]["properties"].items():
        if name not in ("kind", "applies_to", "body"):  # kind is merged; body: the note's
            assert as_published(prop) == {k: mcp[name][k] for k in CONSTRAINTS if k in mcp[name]}
    assert (
        as_published(schemas["NoteCreate"]["properties"]["body"])["pattern"]
        == (mcp["body"]["pattern"])
    )


# -- bounds --------------------------------------------------------------------------------


def test_the_bounds_the_schemas_state_are_the_one_set_of_constants(
    openapi: dict[str, Any],
) -> None:
    schemas = openapi["components"]["schemas"]
    one_line = text_pattern(min_len=1, max_len=bounds.APPLIES_VALUE_MAX, single_line=True)
    assert schemas["AppliesToCreate"]["properties"]["persona"]["anyOf"][0]["pattern"] == one_line
    memorule = PUBLISHED["prism_remember"]["properties"]
    assert memorule["subject"]["minLength"] == bounds.SUBJECT_MIN
    assert memorule["applies_to"]["properties"]["persona"]["pattern"] == one_line
    assert PUBLISHED["semantic_recall"]["properties"]["top_k"]["maximum"] == bounds.TOP_K_MAX
    assert PUBLISHED["semantic_recall"]["properties"]["memorule_kind"]["maxItems"] == (
        bounds.FILTER_LIST_MAX
    )
    budget = PUBLISHED["memorule_brief"]["properties"]["token_budget"]
    assert (budget["minimum"], budget["maximum"]) == (
        bounds.TOKEN_BUDGET_MIN,
        bounds.TOKEN_BUDGET_MAX,
    )
    audit = PUBLISHED["memorule_audit"]["properties"]
    assert audit["written_by_persona"]["maxLength"] == bounds.APPLIES_VALUE_MAX
    assert audit["limit"]["maximum"] == bounds.AUDIT_LIMIT_MAX
    context = a.published_schema(a.ContextArgument)["properties"]
    assert {p["maxLength"] for p in context.values()} == {bounds.APPLIES_VALUE_MAX}
    params = {p["name"]: p for p in openapi["paths"]["/v1/audit"]["get"]["parameters"]}
    assert params["persona"]["schema"]["maxLength"] == bounds.APPLIES_VALUE_MAX
    assert params["limit"]["schema"]["maximum"] == bounds.AUDIT_LIMIT_MAX
    assert validation.BODY_MAX is bounds.BODY_MAX and validation.TOP_K_MAX is bounds.TOP_K_MAX


def test_the_session_context_takes_an_applies_to_value_of_the_contract_s_length(
    tmp_path: Path,
) -> None:
    settings = load_settings(db=tmp_path / "x.db", embedder="fake")
    longest = "p" * bounds.APPLIES_VALUE_MAX
    assert context_from(settings, persona=longest).persona == longest
    with pytest.raises(InvalidInput) as info:
        context_from(settings, persona=longest + "p")
    assert [e.field for e in info.value.errors] == ["persona"]


# -- today's error contract, exactly -------------------------------------------------------


def test_a_bad_memorule_gets_every_field_error_in_today_s_words_and_order() -> None:
    payload = refused(
        {
            "kind": "memorule",
            "memorule_kind": "x",
            "subject": "ab",
            "body": "short",
            "applies_to": None,
            "confidence": "z",
            "corrects": "nope",
            "strict": "yes",
            "bogus": 1,
        }
    )
    kinds = ["behavioral_rule", "feedback", "preference", "correction", "convention"]
    assert payload["error"]["message"] == "8 field errors"
    assert payload["error"]["fields"] == [
        {
            "field": "bogus",
            "code": "unknown_field",
            "message": "'bogus' is not a field of this request",
            "allowed": sorted(validation.MEMORULE_FIELDS),
        },
        {
            "field": "memorule_kind",
            "code": "invalid_choice",
            "message": f"'memorule_kind' must be one of {', '.join(kinds)}",
            "allowed": kinds,
        },
        {
            "field": "subject",
            "code": "too_short",
            "message": "'subject' must be at least 4 characters",
            "min": 4,
            "actual": 2,
        },
        {
            "field": "body",
            "code": "too_short",
            "message": "'body' must be at least 10 characters",
            "min": 10,
            "actual": 5,
        },
        {
            "field": "applies_to",
            "code": "missing",
            "message": "'applies_to' is required: an object with at least one of persona, "
            "surface, specialization, scope",
        },
        {
            "field": "confidence",
            "code": "invalid_choice",
            "message": "'confidence' must be one of observed, inferred, asserted",
            "allowed": ["observed", "inferred", "asserted"],
        },
        {
            "field": "corrects",
            "code": "invalid_format",
            "message": "'corrects' must be a memory id (a UUID)",
        },
        {
            "field": "strict",
            "code": "wrong_type",
            "message": "'strict' must be true or false",
            "expected": "boolean",
        },
    ]


def test_rules_across_fields_still_come_with_every_other_error() -> None:
    payload = refused(
        {
            "kind": "memorule",
            "memorule_kind": "feedback",
            "subject": "ab",
            "body": "0123456789",
            "applies_to": {"scope": "persona", "persona": "a\nb", "colour": "red"},
            "corrects": "2b7c6c5e-0000-0000-0000-000000000000",
            "x\ud800": 1,
        }
    )
    fields = [(f["field"], f["code"], f["message"]) for f in payload["error"]["fields"]]
    assert fields == [
        ("x\\ud800", "unknown_field", "'x\\ud800' is not a field of this request"),
        ("subject", "too_short", "'subject' must be at least 4 characters"),
        ("applies_to.colour", "unknown_field", "'colour' is not a field of this request"),
        ("applies_to.persona", "invalid_characters", "'applies_to.persona' must be a single line"),
        (
            "applies_to.persona",
            "required_by_scope",
            "scope 'persona' needs 'applies_to.persona': whose rule is it?",
        ),
        ("corrects", "not_allowed", "only a 'correction' memorule can name a memorule it corrects"),
    ]


def test_a_note_names_memorule_fields_and_the_alias_conflict() -> None:
    payload = refused({"body": "a", "content": "b", "confidence": "observed"})
    assert [(f["field"], f["code"], f["message"]) for f in payload["error"]["fields"]] == [
        (
            "confidence",
            "unknown_field",
            "'confidence' is not a field of a note (memorule fields need kind='memorule')",
        ),
        ("content", "conflict", "give 'body' or its alias 'content', not both"),
    ]
    alone = refused({"content": "x" * (bounds.BODY_MAX + 1)})["error"]["fields"]
    assert alone == [
        {
            "field": "content",
            "code": "too_long",
            "message": f"'content' must be at most {bounds.BODY_MAX} characters",
            "max": bounds.BODY_MAX,
            "actual": bounds.BODY_MAX + 1,
        }
    ]


# -- one mapper ----------------------------------------------------------------------------


def test_a_bad_setting_is_a_field_error_through_the_one_mapper(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRISM_PORT", "not-a-port")
    with pytest.raises(InvalidInput) as info:
        load_settings(embed_threads=0)
    fields = {e.field: e for e in info.value.errors}
    assert set(fields) == {"port", "embed_threads"}
    assert fields["port"].code == "wrong_type"
    assert fields["port"].message.startswith("PRISM_PORT: 'port': ")  # named by its source
    assert fields["embed_threads"].code == "out_of_range"
    assert fields["embed_threads"].details == {"min": 1, "setting": "--embed-threads"}


def test_http_and_mcp_report_the_same_parameter_error_alike(world: World) -> None:
    response = world.call("a_admin", "GET", "/v1/audit?limit=0")
    assert response.status_code == 422
    [http] = response.json()["error"]["fields"]
    with pytest.raises(InvalidInput) as info:
        parse(a.AuditArguments, {"limit": 0})
    [mcp] = info.value.to_payload()["error"]["fields"]
    assert (
        http
        == mcp
        == {
            "field": "limit",
            "code": "out_of_range",
            "message": "'limit': Input should be greater than or equal to 1",
            "min": 1,
        }
    )


def test_a_bad_setting_stops_any_cli_command_with_the_one_shape_and_exit_2(
    tmp_path: Path,
) -> None:
    env = {"PRISM_DB": str(tmp_path / "x.db"), "PRISM_EMBEDDER": "fake"}
    result = CliRunner().invoke(
        cli, ["recall", "anything", "--json"], env={**env, "PRISM_EMBED_THREADS": "99"}
    )
    assert result.exit_code == 2, result.output
    payload = json.loads(result.stdout)
    assert payload["error"]["code"] == "validation_failed"
    assert [(f["field"], f["code"]) for f in payload["error"]["fields"]] == [
        ("embed_threads", "out_of_range")
    ]


def _operations() -> list[type[Any]]:
    import importlib
    import pkgutil

    import prism_memory.domain.contract as contract
    from prism_memory.domain.contract.base import Operation

    for info in pkgutil.iter_modules(contract.__path__):
        importlib.import_module(f"{contract.__name__}.{info.name}")
    found: list[type[Any]] = []
    todo: list[type[Any]] = [Operation]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_null_means_not_given_in_every_operation() -> None:
    """A field sent as JSON null takes the same value as a field left out (issue 27: the
    brief's top_k was 30 when omitted but 10 when null, and POST /v1/brief passes nulls
    through). Every door parses into these models, so this holds at every door."""
    from prism_memory.domain.contract.checks import Check

    operations = _operations()
    assert len(operations) > 5
    seen = 0
    for op in operations:
        for name, info in op.model_fields.items():
            if info.is_required() or "null" in (info.description or ""):
                continue  # required, or null has a meaning the field documents
            for meta in info.metadata:
                if not isinstance(meta, Check):
                    continue
                if not meta.nullable:
                    # Only a change names null to mean something (remove the value), so a
                    # field that cannot be removed refuses it. Anywhere else null is refused
                    # nowhere: MCP drops a null for a declared field, so refusing it here
                    # would make HTTP answer what MCP does not.
                    assert op.__name__ == "MemoryChanges", f"{op.__name__}.{name} refuses null"
                    continue
                as_null = meta.check(None, None)
                seen += 1
                assert as_null == info.default, f"{op.__name__}.{name}: null -> {as_null!r}"
    assert seen > 10


def test_the_brief_considers_the_same_rules_for_a_null_top_k() -> None:
    from prism_memory.domain.contract.recall import BriefCreate

    assert BriefCreate.parse({"top_k": None}).top_k == BriefCreate.parse({}).top_k == 30


def test_the_ranking_defaults_are_stated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings' PRISM_RANK_* defaults are RankingWeights' own (issue 27: they were
    written twice)."""
    from prism_memory.domain.ranking import RankingWeights
    from prism_memory.settings import Settings

    for name in [n for n in __import__("os").environ if n.startswith("PRISM_RANK_")]:
        monkeypatch.delenv(name)
    assert Settings().ranking_weights() == RankingWeights()
