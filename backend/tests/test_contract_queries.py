"""One contract per query of the audit trail (issue 16): ``AuditQuery`` and ``ServedQuery``
are the HTTP query parameters and the MCP input schemas, state the bounds of the one set of
constants, and give the same field errors at both doors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from prism_memory.domain.contract import bounds
from prism_memory.domain.contract.audit import AuditQuery, ServedQuery, VerifyQuery
from tests.api_world import World, running_world
from tests.test_contract import CONSTRAINTS, PUBLISHED


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("contract-queries")) as w:
        yield w


@pytest.fixture(scope="module")
def openapi(world: World) -> dict[str, Any]:
    doc: dict[str, Any] = world.client.get("/openapi.json").json()
    return doc


# -- the audit trail's queries: one model per query, both doors -------------------------------

AUDIT_QUERIES = [
    ("/v1/audit", "memorule_audit", AuditQuery),
    ("/v1/audit/served", "memorule_served", ServedQuery),
]


def query_parameters(openapi: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    parameters = openapi["paths"][path]["get"]["parameters"]
    return {p["name"]: p for p in parameters if p["in"] == "query"}


def aliases(model: type[Any]) -> dict[str, str]:
    """alias -> canonical name, from the model's fields."""
    return {
        alias: name
        for name, info in model.model_fields.items()
        for alias in getattr(info.validation_alias, "choices", ())[1:]
    }


@pytest.mark.parametrize(("path", "tool", "model"), AUDIT_QUERIES, ids=["audit", "served"])
def test_an_audit_query_s_http_parameters_and_mcp_input_schema_are_one_model(
    openapi: dict[str, Any], path: str, tool: str, model: type[Any]
) -> None:
    params = query_parameters(openapi, path)
    mcp = PUBLISHED[tool]["properties"]
    # The canonical names are the model's fields: the HTTP parameters; MCP adds the aliases.
    assert set(params) == set(model.model_fields) and set(mcp) == model.accepted()
    for name, param in params.items():
        http = {k: param["schema"][k] for k in CONSTRAINTS if k in param["schema"]}
        assert http == {k: mcp[name][k] for k in CONSTRAINTS if k in mcp[name]}, name
        assert param["allowEmptyValue"] is True and param["required"] is False
    assert aliases(model)  # and both doors say which names are aliases of which
    for alias, canonical in aliases(model).items():
        assert f"Also accepted as '{alias}'" in params[canonical]["description"]
        assert mcp[alias]["description"] == f"An alias of '{canonical}'; give one of them."
        assert {k: v for k, v in mcp[alias].items() if k != "description"} == {
            k: v for k, v in mcp[canonical].items() if k != "description"
        }


def test_the_audit_queries_state_the_bounds_of_the_one_set_of_constants(
    openapi: dict[str, Any],
) -> None:
    http = {n: p["schema"] for n, p in query_parameters(openapi, "/v1/audit").items()}
    for audit in (http, PUBLISHED["memorule_audit"]["properties"]):
        assert audit["event"]["maxItems"] == bounds.AUDIT_EVENT_FILTER_MAX
        assert [audit["before"][k] for k in ("minimum", "maximum")] == [1, bounds.AUDIT_CURSOR_MAX]
        assert audit["limit"]["maximum"] == bounds.AUDIT_LIMIT_MAX
        assert audit["limit"]["default"] == bounds.AUDIT_LIMIT_DEFAULT
        assert audit["persona"]["maxLength"] == bounds.APPLIES_VALUE_MAX
        assert audit["since"]["format"] == audit["until"]["format"] == "date-time"
    http = {n: p["schema"] for n, p in query_parameters(openapi, "/v1/audit/served").items()}
    for served in (http, PUBLISHED["memorule_served"]["properties"]):
        assert [served["after"][k] for k in ("minimum", "maximum")] == [0, bounds.AUDIT_CURSOR_MAX]
        assert served["limit"]["maximum"] == bounds.AUDIT_LIMIT_MAX
        assert served["limit"]["default"] == bounds.SERVED_LIMIT_DEFAULT


UUID_A, UUID_B = "00000000-0000-7000-8000-00000000000a", "00000000-0000-7000-8000-00000000000b"
EVERY_BAD_FILTER = {
    "memorule": "nope",
    "written_by_session_id": "x",
    "persona": "p" * (bounds.APPLIES_VALUE_MAX + 1),
    "event": ["retired", "deleted"],
    "since": "yesterday",
    "until": "2026-02-30T10:00:00Z",
    "before": "0",
    "limit": "501",
    "by": "me",
}
# The same bad query through both doors (an MCP client sends the numbers as numbers).
BAD_AUDIT_QUERIES = {
    "every field at once": ("/v1/audit", "memorule_audit", EVERY_BAD_FILTER),
    "a time past year 9999 in UTC": (
        "/v1/audit",
        "memorule_audit",
        {"since": "9999-12-31T23:59:59-14:00"},
    ),
    "a name and its alias": (
        "/v1/audit",
        "memorule_audit",
        {"memorule_id": UUID_A, "memorule": UUID_B},
    ),
    "too many events": ("/v1/audit", "memorule_audit", {"event": ["created"] * 5}),
    "served, every field": (
        "/v1/audit/served",
        "memorule_served",
        {"session_id": "x", "memorule": "y", "since": "soon", "after": "-1", "limit": "0"},
    ),
}


@pytest.mark.parametrize("case", list(BAD_AUDIT_QUERIES))
def test_http_and_mcp_give_the_same_field_errors_for_the_same_bad_audit_query(
    world: World, case: str
) -> None:
    path, tool, query = BAD_AUDIT_QUERIES[case]
    response = world.call("a_admin", "GET", f"{path}?{urlencode(query, doseq=True)}")
    assert response.status_code == 422, response.text
    numbers = ("before", "after", "limit")
    arguments = {k: int(v) if k in numbers else v for k, v in query.items()}
    is_error, payload = world.tool("a_admin", tool, arguments)
    assert is_error and payload == response.json()
    assert {f["field"].split(".")[0] for f in payload["error"]["fields"]} <= set(query)


def test_the_verify_query_is_one_model_too(world: World, openapi: dict[str, Any]) -> None:
    """``/v1/audit/verify?head=`` is judged by ``VerifyQuery`` (as ``prism audit verify
    --head`` is): its parameter comes from the model, a bad head is a field error, an
    empty one is no head, and an unknown parameter is refused."""
    assert set(query_parameters(openapi, "/v1/audit/verify")) == set(VerifyQuery.model_fields)

    def fields(query: str) -> list[tuple[str, str]]:
        response = world.call("a_admin", "GET", f"/v1/audit/verify?{query}")
        assert response.status_code == 422, response.text
        return [(f["field"], f["code"]) for f in response.json()["error"]["fields"]]

    assert fields("head=12") == [("head", "invalid_format")]
    assert fields("head=" + "9" * 30 + ":" + "a" * 64) == [("head", "invalid_format")]
    assert fields("heads=1") == [("heads", "unknown_field")]
    empty = world.call("a_admin", "GET", "/v1/audit/verify?head=")
    assert empty.status_code == 200 and empty.json()["given_head"] is None
