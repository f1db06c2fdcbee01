"""The console's adherence report (``/adherence``) and the rule page's link to it: a signed-in
reader sees the project's rules with checks, their figures and the last violation's
evidence (redacted); another tenant's and another project's verdicts stay out; visitors are
sent to sign in."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.services.adherence_service import AdherenceService
from tests.api_world import World, running_world
from tests.test_web_console import browser, signed_in

SECRET = "ghp_" + "W4v" * 12


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("adherence-console")) as w:
        for tenant in ("acme", "beta"):
            ctx = w.ctx(tenant, "p1")
            w.ids[f"{tenant}_npm"] = str(
                w.services.memory.writes.remember(
                    ctx,
                    validate_remember(
                        {
                            "kind": "memorule",
                            "memorule_kind": "convention",
                            "subject": f"{tenant} never runs npm",
                            "body": "This repository uses pnpm; never run npm.",
                            "applies_to": {"scope": "project"},
                            "checks": [{"forbid_command": r"\bnpm\b"}],
                        }
                    ),
                ).id
            )
            session = SessionActions(
                f"{tenant}-session-{uuid.uuid4().hex[:6]}",
                "/srv/agent",
                (Action("command", f"NPM_TOKEN={SECRET} npm publish"),),
            )
            AdherenceService(w.services.store, w.services.memorules).judge(
                ctx, session, client="claude-code"
            )
        yield w


def test_a_reader_sees_the_report_with_redacted_evidence(world: World) -> None:
    page = signed_in(world, "a_reader").get("/adherence?project=p1")
    assert page.status_code == 200
    html = page.text
    assert 'id="adherence-rules"' in html and f'id="rule-{world.ids["acme_npm"]}"' in html
    assert "acme never runs npm" in html and "beta never runs npm" not in html
    assert "NPM_TOKEN=[REDACTED] npm publish" in html and SECRET not in html
    assert "acme-session-" in html and "beta-session-" not in html


def test_another_project_shows_no_rules(world: World) -> None:
    html = signed_in(world, "a_reader").get("/adherence?project=p2").text
    assert 'id="no-rules"' in html and "acme-session-" not in html


def test_a_key_of_another_project_is_refused_there(world: World) -> None:
    page = signed_in(world, "a_p1_writer").get("/adherence?project=p2")
    assert page.status_code == 403


def test_visitors_are_sent_to_sign_in(world: World) -> None:
    response = browser(world).get("/adherence", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/signin"


def test_the_rule_page_shows_its_adherence_and_links_to_the_report(world: World) -> None:
    rule_id = world.ids["acme_npm"]
    html = signed_in(world, "a_reader").get(f"/memorules/{rule_id}?project=p1").text
    assert f'href="/adherence?project=p1#rule-{rule_id}"' in html
    section = html[html.index('id="adherence"') : html.index('id="served-h"')]
    assert re.search(r'id="adh-exercised">1<', section)
    assert re.search(r'id="adh-violated" class="bad">1<', section)
    assert re.search(r'id="adh-followed">0<', section)
    assert "NPM_TOKEN=[REDACTED] npm publish" in section and SECRET not in html
    assert "acme-session-" in section and "beta-session-" not in html


def test_a_rule_without_checks_has_no_adherence_section(world: World) -> None:
    ctx = world.ctx("acme", "p1")
    raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "Plain advice " + uuid.uuid4().hex[:4],
        "body": "Write small commits.",
        "applies_to": {"scope": "project"},
    }
    plain = world.services.memory.writes.remember(ctx, validate_remember(raw)).id
    html = signed_in(world, "a_reader").get(f"/memorules/{plain}?project=p1").text
    assert 'id="adherence"' not in html and 'id="checks"' in html
    nav = signed_in(world, "a_reader").get("/memorules?project=p1").text
    assert 'href="/adherence?project=p1">Adherence</a>' in nav
