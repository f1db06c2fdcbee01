"""The audit trail's queries at both doors, on both engines: either name of a filter, the one
time rule (no offset is UTC, a date alone its midnight UTC), an empty filter is none.

That the HTTP parameters and the MCP input schema are one model, its bounds the constants,
and a bad query the same field errors at both doors: ``test_contract.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import pytest

from prism_memory.domain.contract.remember import validate_remember
from tests.api_world import ENGINES, World, rule, world_on
from tests.test_contract_queries import EVERY_BAD_FILTER


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("audit-query")) as w:
        yield w


def a_persona_s_rule(world: World) -> dict[str, Any]:
    """A rule donna writes, and its audit event (as the HTTP API lists it)."""
    ctx = world.ctx("acme", "p1", persona="donna")
    written = world.services.memory.writes.remember(
        ctx, validate_remember(rule("Audit names", "Either name finds me."))
    )
    found = world.call("a_admin", "GET", f"/v1/audit?memorule_id={written.id}").json()
    event: dict[str, Any] = found["events"][0]
    return event


@pytest.mark.parametrize(
    ("column", "names"),
    [
        ("memorule_id", ("memorule", "memorule_id")),
        ("written_by_session_id", ("session", "written_by_session_id")),
        ("written_by_persona", ("persona", "written_by_persona")),
    ],
)
def test_an_audit_query_takes_either_name_at_both_doors(
    world: World, column: str, names: tuple[str, str]
) -> None:
    event = a_persona_s_rule(world)
    value = event[column]
    found = []
    for name in names:
        response = world.call("a_admin", "GET", f"/v1/audit?{name}={value}&limit=500")
        assert response.status_code == 200, response.text
        is_error, payload = world.tool("a_admin", "memorule_audit", {name: value, "limit": 500})
        assert not is_error, payload
        found += [response.json()["events"], payload["events"]]
    assert event in found[0] and all(events == found[0] for events in found)
    assert all(e[column] == value for e in found[0])


def test_a_time_without_an_offset_is_utc_at_both_doors(world: World) -> None:
    event = a_persona_s_rule(world)
    at = datetime.fromisoformat(event["written_at"].replace("Z", "+00:00"))
    naive = at.replace(tzinfo=None).isoformat()
    shifted = at.astimezone(timezone(timedelta(hours=2))).isoformat()  # the same instant
    events = {}
    for name, since in {"naive": naive, "Z": event["written_at"], "+02:00": shifted}.items():
        response = world.call("a_admin", "GET", "/v1/audit?" + urlencode({"since": since}))
        assert response.status_code == 200, response.text
        events[name] = response.json()["events"]
        is_error, payload = world.tool("a_admin", "memorule_audit", {"since": since})
        assert not is_error and payload["events"] == events[name]
    assert event in events["naive"] and events["naive"] == events["Z"] == events["+02:00"]
    before = world.call("a_admin", "GET", "/v1/audit?" + urlencode({"until": naive}))
    assert event not in before.json()["events"]


def test_a_date_alone_is_its_midnight_utc_at_both_doors(world: World) -> None:
    event = a_persona_s_rule(world)
    day = event["written_at"][:10]
    response = world.call("a_admin", "GET", f"/v1/audit?since={day}&limit=500")
    midnight = world.call("a_admin", "GET", f"/v1/audit?since={day}T00:00:00Z&limit=500")
    assert event in response.json()["events"]
    assert response.json()["events"] == midnight.json()["events"]
    is_error, payload = world.tool("a_admin", "memorule_audit", {"since": day, "limit": 500})
    assert not is_error and payload["events"] == midnight.json()["events"]


def test_a_blank_audit_filter_is_no_filter_at_both_doors(world: World) -> None:
    everything = world.call("a_admin", "GET", "/v1/audit?limit=500").json()["events"]
    blanks = "memorule=&session=&persona=&event=&since=&until=&before=&limit=500"
    assert world.call("a_admin", "GET", f"/v1/audit?{blanks}").json()["events"] == everything
    arguments = {"memorule_id": "", "written_by_persona": " ", "since": "", "limit": 500}
    is_error, payload = world.tool("a_admin", "memorule_audit", arguments)
    assert not is_error and payload["events"] == everything


def test_every_field_of_a_bad_audit_query_is_named_once_in_today_s_codes(world: World) -> None:
    query = urlencode(EVERY_BAD_FILTER, doseq=True)
    response = world.call("a_admin", "GET", f"/v1/audit?{query}")
    assert [(f["field"], f["code"]) for f in response.json()["error"]["fields"]] == [
        ("by", "unknown_field"),
        ("memorule", "invalid_format"),
        ("written_by_session_id", "invalid_format"),
        ("persona", "too_long"),
        ("event.1", "invalid_choice"),
        ("since", "invalid_format"),
        ("until", "invalid_format"),
        ("before", "out_of_range"),
        ("limit", "out_of_range"),
    ]
