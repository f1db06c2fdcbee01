"""A key restricted to projects cannot reach beyond them (issue #32, D2; DESIGN §10).

A ``global``/``org`` memorule reaches every project of the tenant (their briefs and
recalls). A writer bound to project p1 may not write one, widen one of its rules to one, nor
change (update, retire, correct, approve) one that already reaches every project, on every
door: ``/v1``, MCP over HTTP, and the bulk rule-file import. Nothing is written when refused.
A key of the whole tenant may. Both engines.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import build_access
from prism_memory.services.rules_import import ImportOptions, RulesImporter, read_rule_files
from tests.api_world import ENGINES, World, rule, world_on
from tests.test_capture_doors import seed

RESTRICTED = "a_p1_writer"


@pytest.fixture(scope="module", params=ENGINES)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with world_on(request, tmp_path_factory.mktemp("scope-reach")) as w:
        yield w


def state_of(w: World, memory_id: str) -> tuple[int, str, dict[str, Any]]:
    found = w.call("a_admin", "GET", f"/v1/memories/{memory_id}").json()
    return (
        found["memory"]["current_version"],
        found["memory"]["status"],
        found["state"]["applies_to"],
    )


def memory_count(w: World) -> int:
    return int(w.services.store.stats(w.ctx("acme", "p1").tenant_id)["memories"])


def p1_rule(w: World, **applies: str) -> str:
    subject = f"Reach rule {uuid.uuid4().hex[:8]}"
    made = w.call("a_admin", "POST", "/v1/memories", rule(subject, "A rule of p1.", **applies))
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def refused_for_scope(response: Any) -> None:
    assert response.status_code == 403, response.text
    assert "whole tenant" in response.json()["error"]["message"]


@pytest.mark.parametrize("scope", ["global", "org"])
def test_a_project_key_cannot_write_a_tenant_wide_rule_over_http_or_mcp(
    world: World, scope: str
) -> None:
    before = memory_count(world)
    raw = rule(f"Everywhere {scope}", "A rule for every project.", scope=scope)
    refused_for_scope(world.call(RESTRICTED, "POST", "/v1/memories", raw))
    is_error, payload = world.tool(RESTRICTED, "prism_remember", raw)
    assert is_error and payload["error"]["code"] == "forbidden", payload
    assert payload["error"]["field"] == "applies_to.scope"
    assert memory_count(world) == before
    made = world.call("a_writer", "POST", "/v1/memories", raw)
    assert made.status_code == 201, made.text


@pytest.mark.parametrize("scope", ["global", "org"])
def test_a_project_key_cannot_widen_its_own_rule_to_the_tenant(world: World, scope: str) -> None:
    mine = p1_rule(world)
    before = state_of(world, mine)
    changes = {"applies_to": {"scope": scope}}
    refused_for_scope(
        world.call(RESTRICTED, "PATCH", f"/v1/memories/{mine}", {"changes": changes, "reason": "w"})
    )
    is_error, payload = world.tool(
        RESTRICTED, "memorule_update", {"id": mine, "changes": changes, "reason": "w"}
    )
    assert is_error and payload["error"]["code"] == "forbidden", payload
    assert state_of(world, mine) == before
    narrowed = {"applies_to": {"scope": "persona", "persona": "texi"}}
    patched = world.call(
        RESTRICTED, "PATCH", f"/v1/memories/{mine}", {"changes": narrowed, "reason": "ok"}
    )
    assert patched.status_code == 200, patched.text


def test_a_project_key_cannot_change_a_global_rule_even_of_its_own_project(world: World) -> None:
    wide = p1_rule(world, scope="global")
    before = state_of(world, wide)
    body = {"changes": {"body": "Changed for everyone."}, "reason": "w"}
    refused_for_scope(world.call(RESTRICTED, "PATCH", f"/v1/memories/{wide}", body))
    refused_for_scope(
        world.call(RESTRICTED, "POST", f"/v1/memories/{wide}/retire", {"reason": "w"})
    )
    correction = {
        **rule("Corrected", "Corrected text."),
        "memorule_kind": "correction",
        "corrects": wide,
    }
    refused_for_scope(world.call(RESTRICTED, "POST", "/v1/memories", correction))
    is_error, payload = world.tool(RESTRICTED, "memorule_retire", {"id": wide, "reason": "w"})
    assert is_error and payload["error"]["code"] == "forbidden", payload
    assert state_of(world, wide) == before
    assert world.call("a_writer", "PATCH", f"/v1/memories/{wide}", body).status_code == 200


def test_a_project_key_cannot_approve_a_proposal_as_a_global_rule(world: World) -> None:
    pid, _ = seed(world)
    edits = {"applies_to": {"scope": "global"}, "reason": "w"}
    refused_for_scope(world.call(RESTRICTED, "POST", f"/v1/proposals/{pid}/approve", edits))
    assert state_of(world, pid)[1] == "proposed"
    approved = world.call(RESTRICTED, "POST", f"/v1/proposals/{pid}/approve", {})
    assert approved.status_code == 200, approved.text


def test_a_rule_file_cannot_smuggle_a_global_rule_past_a_project_key(
    world: World, tmp_path: Path
) -> None:
    text = (
        '<!-- prism:applies_to {"scope": "global"} -->\n\n'
        "- Always sign every release tag in this repository.\n"
    )
    (tmp_path / "CLAUDE.md").write_text(text, encoding="utf-8")
    restricted = world.auth.authenticate(world.keys[RESTRICTED])
    importer = RulesImporter(build_access(world.services), restricted, world.services.store)
    before = memory_count(world)
    report = importer.run(
        world.ctx("acme", "p1"),
        read_rule_files([tmp_path / "CLAUDE.md"], tmp_path),
        ImportOptions(),
    )
    assert memory_count(world) == before
    assert [w.code for w in report.warnings] == ["not_written"], report.warnings
    assert "whole tenant" in report.warnings[0].message
