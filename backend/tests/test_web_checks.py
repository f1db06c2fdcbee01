"""Issue 28 in the operator console: a rule page shows its checks and enforcement, and the
edit form changes them (a new version), refusing bad checks by field and ask/deny from a
key below admin, with nothing written. In process (TestClient) over a real SQLite file."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from prism_memory.domain.contract.remember import validate_remember
from tests.api_world import World, rule, running_world
from tests.test_web_console import post_form, signed_in

CHECKS = [{"forbid_command": r"\bnpm\b"}, {"forbid_edit": "src/generated/**"}]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("web-checks")) as w:
        yield w


def guarded_rule(w: World, **extra: object) -> str:
    raw = {**rule("Checked rule " + uuid.uuid4().hex[:6], "No npm, no generated edits."), **extra}
    return str(w.services.memory.writes.remember(w.ctx("acme", "p1"), validate_remember(raw)).id)


def current(w: World, memory_id: str) -> object:
    return w.services.memory.reads.get(w.ctx("acme", "p1"), uuid.UUID(memory_id))[1]


def test_the_rule_page_shows_checks_and_enforcement(world: World) -> None:
    memory_id = guarded_rule(world, checks=CHECKS, enforcement="ask")
    page = signed_in(world, "a_reader").get(f"/memorules/{memory_id}?project=p1").text
    assert "<code>forbid_command</code> <code>\\bnpm\\b</code>" in page
    assert "<code>forbid_edit</code> <code>src/generated/**</code>" in page
    assert '<dd id="enforcement">ask</dd>' in page
    plain = signed_in(world, "a_reader").get(f"/memorules/{guarded_rule(world)}?project=p1")
    assert "none (advice only" in plain.text and '<dd id="enforcement">remind</dd>' in plain.text


def test_an_edit_sets_checks_and_shows_what_changed(world: World) -> None:
    memory_id = guarded_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    response = post_form(
        client, url, f"/memorules/{memory_id}/edit?project=p1",
        checks=json.dumps(CHECKS), enforcement="remind", reason="make it checkable",
    )  # fmt: skip
    assert response.status_code == 303, response.text
    state = current(world, memory_id)
    assert [c.to_json() for c in state.checks] == CHECKS  # type: ignore[attr-defined]
    page = client.get(url).text
    assert '<th scope="row">checks</th>' in page and "src/generated/**" in page
    assert 'name="checks" rows="3" spellcheck="false">[' in page  # the form shows them back


def test_a_bad_check_in_the_form_is_named_and_nothing_is_written(world: World) -> None:
    memory_id = guarded_rule(world, checks=CHECKS)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    bad = json.dumps([{"forbid_command": "(a+)+"}, {"forbid_glob": "x"}])
    response = post_form(
        client, url, f"/memorules/{memory_id}/edit?project=p1", checks=bad, reason="try"
    )
    assert response.status_code == 422
    assert "Nothing was saved." in response.text
    assert '<p class="field-error" id="checks-error">checks.0.forbid_command' in response.text
    assert "checks.1: unknown check" in response.text
    garbled = post_form(
        client, url, f"/memorules/{memory_id}/edit?project=p1", checks="[{", reason="try"
    )
    assert garbled.status_code == 422 and "must be a JSON list" in garbled.text
    assert current(world, memory_id).version == 1  # type: ignore[attr-defined]


def test_only_an_admin_sets_deny_in_the_console(world: World) -> None:
    memory_id = guarded_rule(world, checks=CHECKS)
    url = f"/memorules/{memory_id}?project=p1"
    writer = signed_in(world, "a_writer")
    refused = post_form(
        writer, url, f"/memorules/{memory_id}/edit?project=p1", enforcement="deny", reason="x"
    )
    assert refused.status_code == 403
    assert current(world, memory_id).version == 1  # type: ignore[attr-defined]
    admin = signed_in(world, "a_admin")
    done = post_form(
        admin, url, f"/memorules/{memory_id}/edit?project=p1", enforcement="deny", reason="block"
    )
    assert done.status_code == 303, done.text
    assert '<dd id="enforcement">deny</dd>' in admin.get(url).text
