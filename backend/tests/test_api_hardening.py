"""The HTTP API and console against the independent probe's findings (issue #15), in process.

Bad text and dates get a 422 naming the field (never a 500), on both engines; a
persona-bound key cannot write rules for another persona; every response carries the
security headers; the rate limits answer 429 with ``Retry-After``; console sessions exist
only once signed in. Real-server behaviour (saturation, idle sockets, keep-alive after a
500): ``test_api_saturation.py``.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from prism_memory.domain.contract.remember import validate_remember
from tests.api_world import ENGINES, World, rule, world_on

DOCS = Path(__file__).resolve().parents[2] / "docs" / "http.md"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
LONE_SURROGATE = "\\ud800"  # as JSON text: a lone surrogate once decoded


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("hardening")) as w:
        yield w


def raw_json(w: World, key: str, method: str, path: str, text: str) -> httpx.Response:
    """A request whose body is ``text`` exactly (JSON escapes such as ``\\ud800`` included)."""
    headers = {**w.headers(key), "Content-Type": "application/json"}
    return w.client.request(method, path, content=text.encode(), headers=headers)


def fields_of(response: httpx.Response) -> set[str]:
    error = response.json()["error"]
    assert error["code"] == "validation_failed", error
    return {f["field"] for f in error["fields"]}


def memory_count(w: World) -> int:
    page = w.call("a_admin", "GET", "/v1/memories?status=all&limit=200").json()
    return len(page["items"])


def versions(w: World, memory_id: str) -> tuple[int, str]:
    found = w.call("a_admin", "GET", f"/v1/memories/{memory_id}").json()
    return found["memory"]["current_version"], found["memory"]["status"]


def fresh_rule(w: World) -> str:
    raw = rule("Hardening rule " + uuid.uuid4().hex[:6], "A rule written for one test only.")
    return str(w.services.memory.writes.remember(w.ctx("acme", "p1"), validate_remember(raw)).id)


# -- 1. lone surrogates, 4. NUL / C1: 422 naming the field, nothing written ----------------

REMEMBER_BAD = {
    "body": '{"body": "abc %s def"}',
    "subject": '{"body": "a fine body", "subject": "abc %s"}',
    "idempotency_key": '{"body": "a fine body", "idempotency_key": "k%s"}',
    "applies_to.persona": (
        '{"kind": "memorule", "memorule_kind": "convention", "subject": "Good subject", '
        '"body": "A body that is long enough.", "applies_to": {"persona": "don%sna"}}'
    ),
}
BAD_CHARACTERS = {
    "lone surrogate": LONE_SURROGATE,
    "NUL": "\\u0000",
    "C1 CSI": "\\u009b",
}


@pytest.mark.parametrize("bad", list(BAD_CHARACTERS.values()), ids=list(BAD_CHARACTERS))
@pytest.mark.parametrize("field", list(REMEMBER_BAD))
def test_bad_characters_in_a_write_are_a_field_error_not_a_500(
    world: World, field: str, bad: str
) -> None:
    before = memory_count(world)
    response = raw_json(world, "a_writer", "POST", "/v1/memories", REMEMBER_BAD[field] % bad)
    assert response.status_code == 422, response.text
    assert fields_of(response) == {field}
    assert memory_count(world) == before


PATCH_BAD = {
    "changes.body": ('{"changes": {"body": "new %s body"}}', {"body"}),
    "reason": ('{"changes": {"body": "A new body, long enough."}, "reason": "why %s"}', {"reason"}),
    "idempotency_key": (
        '{"changes": {"body": "A new body, long enough."}, "idempotency_key": "k%s"}',
        {"idempotency_key"},
    ),
    "changes.applies_to": ('{"changes": {"applies_to": {"surface": "py%s"}}}', None),
    "an unknown key": ('{"changes": {"x%s": 1}}', None),
}


@pytest.mark.parametrize("bad", list(BAD_CHARACTERS.values()), ids=list(BAD_CHARACTERS))
@pytest.mark.parametrize("case", list(PATCH_BAD))
def test_bad_characters_in_an_update_are_a_field_error_and_change_nothing(
    world: World, case: str, bad: str
) -> None:
    memory_id = fresh_rule(world)
    text, expected = PATCH_BAD[case]
    response = raw_json(world, "a_writer", "PATCH", f"/v1/memories/{memory_id}", text % bad)
    assert response.status_code == 422, response.text
    named = fields_of(response)
    if expected is not None:
        assert named == expected
    assert all("\ud800" not in f for f in named)  # never echoed back raw
    assert versions(world, memory_id) == (1, "active")


@pytest.mark.parametrize("bad", list(BAD_CHARACTERS.values()), ids=list(BAD_CHARACTERS))
@pytest.mark.parametrize("action", ["retire", "restore"])
@pytest.mark.parametrize("field", ["reason", "idempotency_key"])
def test_bad_characters_in_a_status_change_are_a_field_error(
    world: World, action: str, field: str, bad: str
) -> None:
    memory_id = fresh_rule(world)
    if action == "restore":
        world.services.memory.lifecycle.retire(
            world.ctx("acme", "p1"), uuid.UUID(memory_id), "setup"
        )
    state = versions(world, memory_id)
    body = {"reason": '"fine"', "idempotency_key": '"k"'}
    body[field] = f'"x{bad}y"'
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in body.items()) + "}"
    response = raw_json(world, "a_writer", "POST", f"/v1/memories/{memory_id}/{action}", text)
    assert response.status_code == 422, response.text
    assert fields_of(response) == {field}
    assert versions(world, memory_id) == state


@pytest.mark.parametrize("bidi", ["\u202e", "\u2066", "\u200f"], ids=["RLO", "LRI", "RLM"])
def test_bidi_controls_are_accepted_and_kept_as_written(world: World, bidi: str) -> None:
    body = f"Right-to-left text {bidi}with a control{bidi} stays as written."
    created = world.call("a_writer", "POST", "/v1/memories", {"body": body})
    assert created.status_code == 201, created.text
    stored = world.call("a_reader", "GET", f"/v1/memories/{created.json()['id']}").json()
    assert stored["state"]["body"] == body


def test_the_audit_trail_holds_no_nul_after_a_refused_reason(world: World) -> None:
    memory_id = fresh_rule(world)
    text = '{"reason": "obsolete\\u0000 now"}'
    assert (
        raw_json(world, "a_writer", "POST", f"/v1/memories/{memory_id}/retire", text).status_code
        == 422
    )
    events = world.call("a_admin", "GET", f"/v1/audit?memorule={memory_id}").json()["events"]
    assert [e["event"] for e in events] == ["created"]


# -- 2. date overflow ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "field"),
    [("since=9999-12-31T23:59:59-14:00", "since"), ("until=0001-01-01T00:00:00%2B14:00", "until")],
)
def test_an_audit_time_outside_the_utc_range_is_a_field_error(
    world: World, query: str, field: str
) -> None:
    response = world.call("a_admin", "GET", f"/v1/audit?{query}")
    assert response.status_code == 422, response.text
    assert fields_of(response) == {field}


# -- 10. persona-bound keys write rules for their own persona only --------------------------


def persona_rule(persona: str, scope: str = "persona") -> dict[str, Any]:
    return rule("For a persona", "A rule meant for one persona only.", scope=scope, persona=persona)


@pytest.mark.parametrize("scope", ["persona", "project"])
def test_a_persona_bound_key_cannot_plant_a_rule_for_another_persona(
    world: World, scope: str
) -> None:
    before = memory_count(world)
    response = world.call("a_donna", "POST", "/v1/memories", persona_rule("eve", scope))
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "forbidden" and error["field"] == "applies_to.persona"
    assert memory_count(world) == before


def test_a_persona_bound_key_writes_for_its_own_persona(world: World) -> None:
    response = world.call("a_donna", "POST", "/v1/memories", persona_rule(" Donna "))
    assert response.status_code == 201, response.text


def test_a_persona_bound_admin_key_may_write_for_another_persona(world: World) -> None:
    issued = world.auth.create_key("acme", "admin", (), "donna")
    response = world.call(issued.secret, "POST", "/v1/memories", persona_rule("eve"))
    assert response.status_code == 201, response.text


def test_a_persona_bound_key_cannot_move_a_rule_to_another_persona(world: World) -> None:
    created = world.call("a_donna", "POST", "/v1/memories", persona_rule("donna")).json()
    change = {"changes": {"applies_to": {"scope": "persona", "persona": "eve"}}}
    response = world.call("a_donna", "PATCH", f"/v1/memories/{created['id']}", change)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["field"] == "applies_to.persona"
    assert versions(world, created["id"]) == (1, "active")


def test_a_persona_bound_key_cannot_plant_a_rule_for_another_persona_over_mcp(
    world: World,
) -> None:
    is_error, payload = world.tool("a_donna", "prism_remember", persona_rule("eve"))
    assert is_error and payload["error"]["code"] == "forbidden"
    assert payload["error"]["field"] == "applies_to.persona"


# -- 12. security headers everywhere; 13. the persona header as documented ------------------


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/v1", "/v1/whoami", "/healthz"])
def test_every_response_carries_the_security_headers(world: World, path: str) -> None:
    headers = world.call("a_reader", "GET", path).headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_the_docs_page_allows_exactly_its_own_inline_script(world: World) -> None:
    page = world.client.get("/docs")
    csp = page.headers["content-security-policy"]
    scripts = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    script_src = next(p for p in csp.split(";") if p.strip().startswith("script-src"))
    assert f"'sha256-{digest}'" in script_src and "unsafe-inline" not in script_src


def test_another_persona_header_is_refused_as_the_docs_say(world: World) -> None:
    response = world.call("a_donna", "GET", "/v1/whoami", headers={"X-Prism-Persona": "eve"})
    assert response.status_code == 403
    row = next(line for line in DOCS.read_text().splitlines() if "`X-Prism-Persona`" in line)
    assert "403" in row and "forced" not in row


# -- 11. the OpenAPI document and the behaviour agree (the full run: test_api_schemathesis) --


@pytest.mark.parametrize("action", ["", "/retire", "/restore", "/pin", "/unpin"])
def test_a_body_that_is_not_utf8_is_the_same_422_on_every_route(world: World, action: str) -> None:
    memory_id = fresh_rule(world)
    method = "PATCH" if not action else "POST"
    headers = {**world.headers("a_writer"), "Content-Type": "application/json"}
    response = world.client.request(
        method,
        f"/v1/memories/{memory_id}{action}",
        content=b'{"reason": "\xff\xfe"}',
        headers=headers,
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["fields"][0]["code"] == "invalid_json"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("OPTIONS", "/v1/memories", "GET, POST"),
        ("DELETE", "/v1/memories/{id}", "GET, PATCH"),
        ("PUT", "/healthz", "GET"),
    ],
)
def test_a_wrong_method_gets_405_naming_every_allowed_method(
    world: World, method: str, path: str, allowed: str
) -> None:
    response = world.call("a_reader", method, path.format(id=world.ids["a_rule_p1"]))
    assert response.status_code == 405
    assert response.headers["allow"] == allowed


def test_recall_and_brief_document_their_body_as_optional_and_take_none(world: World) -> None:
    paths = world.client.get("/openapi.json").json()["paths"]
    for path in ("/v1/recall", "/v1/brief"):
        assert paths[path]["post"]["requestBody"]["required"] is False
        assert world.call("a_reader", "POST", path).status_code == 200


@pytest.mark.parametrize("header", ["X-Prism-Persona", "X-Prism-Surface", "X-Prism-Project"])
@pytest.mark.parametrize("value", ["", " padded", "x" * 101])
def test_a_context_header_outside_its_documented_pattern_is_a_422(
    world: World, header: str, value: str
) -> None:
    documented = {
        p["name"]: p["schema"]
        for p in world.client.get("/openapi.json").json()["paths"]["/v1/whoami"]["get"][
            "parameters"
        ]
    }
    assert re.search(documented[header.lower()]["pattern"], value) is None
    response = world.call("a_reader", "GET", "/v1/whoami", headers={header: value})
    assert response.status_code == 422, response.text
    assert fields_of(response) == {header.lower()}
