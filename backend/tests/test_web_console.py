"""The operator console in process (TestClient) over a real SQLite file and the fake embedder.

Sign-in, the pages, writes with CSRF tokens, readers refused, escaping and security headers.
The same pages in a real browser: ``test_web_browser.py``.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from prism_memory.asgi import create_app
from prism_memory.bootstrap import build_services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.settings import load_settings
from tests.api_world import World, rule, running_world

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("web")) as w:
        yield w


def browser(w: World) -> TestClient:
    """A fresh cookie jar on the world's app."""
    return TestClient(w.client.app)


def csrf_of(response: httpx.Response) -> str:
    found = CSRF.search(response.text)
    assert found is not None, response.text
    return found.group(1)


def signed_in(w: World, key: str) -> TestClient:
    client = browser(w)
    token = csrf_of(client.get("/signin"))
    response = client.post(
        "/signin", data={"csrf": token, "api_key": w.keys[key]}, follow_redirects=False
    )
    assert response.status_code == 303, response.text
    return client


def fresh_rule(w: World, body: str = "A rule written for one console test.") -> str:
    raw = rule("Console rule " + uuid.uuid4().hex[:6], body)
    return str(w.services.memory.writes.remember(w.ctx("acme", "p1"), validate_remember(raw)).id)


def post_form(client: TestClient, page: str, action: str, **fields: str) -> httpx.Response:
    token = csrf_of(client.get(page))
    return client.post(action, data={"csrf": token, **fields}, follow_redirects=False)


def test_pages_need_a_signed_in_session(world: World) -> None:
    response = browser(world).get("/memorules", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/signin"


def test_sign_in_sets_a_strict_http_only_session_cookie_not_the_key(world: World) -> None:
    client = browser(world)
    token = csrf_of(client.get("/signin"))
    response = client.post(
        "/signin", data={"csrf": token, "api_key": world.keys["a_writer"]}, follow_redirects=False
    )
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert world.keys["a_writer"] not in cookie
    assert client.get("/memorules?project=p1").status_code == 200


@pytest.mark.parametrize("key", ["not-a-key", "revoked"])
def test_sign_in_refuses_unknown_and_revoked_keys(world: World, key: str) -> None:
    client = browser(world)
    token = csrf_of(client.get("/signin"))
    secret = world.keys.get(key, key)
    response = client.post("/signin", data={"csrf": token, "api_key": secret})
    assert response.status_code == 401
    assert "not accepted" in response.text


def test_sign_out_ends_the_session(world: World) -> None:
    client = signed_in(world, "a_reader")
    response = post_form(client, "/memorules?project=p1", "/signout")
    assert response.status_code == 303
    assert client.get("/memorules", follow_redirects=False).status_code == 303


def test_the_list_shows_the_projects_memorules_and_why(world: World) -> None:
    page = signed_in(world, "a_reader").get("/memorules?project=p1&q=test+suite").text
    assert "Run tests first" in page
    assert "Old rule here" not in page  # retired
    assert "deploys happen" not in page  # notes are not memorules
    assert "<dt>relevance</dt>" in page  # the why breakdown


@pytest.mark.parametrize(
    ("query", "present", "absent"),
    [
        ("persona=texi", "Texi reviews APIs", "Run tests first"),
        ("scope=global", "Write in English", "Run tests first"),
        ("scope=project", "Run tests first", "Write in English"),
        ("kind=preference", "No memorules match", "Run tests first"),
        ("confidence=observed", "Run tests first", "No memorules match"),
        ("status=retired", "Old rule here", "Run tests first"),
        ("status=all", "Old rule here", "No memorules match"),
    ],
)
def test_the_list_filters(world: World, query: str, present: str, absent: str) -> None:
    page = signed_in(world, "a_admin").get(f"/memorules?project=p1&{query}").text
    assert present in page
    assert absent not in page


def test_a_project_writer_lists_retired_rules_of_its_project(world: World) -> None:
    page = signed_in(world, "a_p1_writer").get("/memorules?status=retired").text
    assert "Old rule here" in page and "Run tests first" not in page
    assert 'status-retired">retired' in page
    page = signed_in(world, "a_p1_writer").get("/memorules?status=all").text
    assert "Old rule here" in page and "Run tests first" in page
    assert "Review every PR" not in page  # project p2's own rule
    assert "Write in English" in page and "another project" in page  # p2's global rule


def test_the_list_pages_by_fifty_with_older_and_newest_links(world: World) -> None:
    ctx = world.ctx("acme", "paged")
    raws = [
        rule(f"Paged rule {i:02d}", f"The body of paged rule number {i:02d}.") for i in range(53)
    ]
    world.services.memory.bulk.remember_many(ctx, validate_remember_many(raws))
    client = signed_in(world, "a_writer")
    first = client.get("/memorules?project=paged&kind=behavioral_rule")
    assert first.status_code == 200
    shown = re.findall(r"Paged rule (\d\d)", first.text)
    assert shown == [f"{i:02d}" for i in range(52, 2, -1)]  # newest first, 50 of them
    older = re.search(r'<a href="([^"]+)" rel="next">Older', first.text)
    assert older is not None and "Newest" not in first.text
    second = client.get(older.group(1).replace("&amp;", "&"))
    assert re.findall(r"Paged rule (\d\d)", second.text) == ["02", "01", "00"]
    assert "kind=behavioral_rule" in older.group(1)  # the filters follow the pages
    assert 'rel="first">← Newest' in second.text and 'rel="next"' not in second.text


@pytest.mark.parametrize(
    ("query", "messages"),
    [
        ("status=gone", ["&#39;status&#39; must be one of active, retired, all"]),
        (
            "scope=planet&kind=rule",
            [
                "&#39;memorule_kind&#39; must be one of",
                "&#39;scope&#39; must be one of global, org, project, persona",
            ],
        ),
        ("cursor=abc", ["&#39;cursor&#39; must be the next_cursor of an earlier page"]),
        ("persona=" + "x" * 150, ["&#39;persona&#39; must be at most 100 characters"]),
    ],
)
def test_bad_filters_are_explained_not_ignored(
    world: World, query: str, messages: list[str]
) -> None:
    response = signed_in(world, "a_reader").get(f"/memorules?project=p1&{query}")
    assert response.status_code == 422
    assert 'role="alert" id="filter-errors"' in response.text
    for message in messages:
        assert message in response.text


def test_the_memorule_page_shows_text_applies_to_versions_and_audit(world: World) -> None:
    memory_id = world.ids["a_texi_p1"]
    page = signed_in(world, "a_reader").get(f"/memorules/{memory_id}?project=p1").text
    assert "Texi reviews every API change." in page
    assert "persona=texi, scope=persona" in page
    assert "Version 1" in page
    assert '<span class="tag">created</span>' in page


def test_an_edit_with_a_reason_makes_version_2_and_a_superseded_event(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    response = post_form(
        client,
        url,
        f"/memorules/{memory_id}/edit?project=p1",
        body="Run the whole suite, not just unit tests.",
        reason="too vague",
    )
    assert response.status_code == 303, response.text
    page = client.get(url).text
    assert "Version 2" in page and "version 2" in page
    assert "Run the whole suite, not just unit tests." in page
    assert '<span class="tag">superseded</span>' in page
    assert "too vague" in page
    assert '<td class="old">A rule written for one console test.</td>' in page


def test_an_edit_changes_applies_to_kind_scope_and_evidence(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    response = post_form(
        client,
        url,
        f"/memorules/{memory_id}/edit?project=p1",
        memorule_kind="convention",
        persona="Texi",
        surface="github",
        specialization="",
        scope="persona",
        evidence_signal_id="sig-42",
        reason="only Texi's GitHub reviews",
    )
    assert response.status_code == 303, response.text
    current = world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(memory_id))[1]
    assert current.version == 2 and current.memorule_kind is not None
    assert current.memorule_kind.value == "convention"
    assert current.applies_to is not None
    assert current.applies_to.to_dict() == {
        "persona": "Texi",
        "surface": "github",
        "scope": "persona",
    }
    assert current.evidence_signal_id == "sig-42"
    page = client.get(url).text
    assert '<td class="new">persona=Texi, scope=persona, surface=github</td>' in page
    assert '<td class="old">scope=project</td>' in page


def test_a_refused_edit_writes_nothing_and_names_each_bad_field(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    response = post_form(
        client,
        url,
        f"/memorules/{memory_id}/edit?project=p1",
        subject="ab",
        persona="",
        surface="",
        specialization="",
        scope="persona",
        evidence_signal_id="line\nbreak",
        reason="try",
    )
    assert response.status_code == 422
    page = response.text
    assert "Nothing was saved." in page
    assert '<p class="field-error" id="subject-error">&#39;subject&#39; must be at least 4' in page
    assert 'id="persona-error">scope &#39;persona&#39; needs &#39;applies_to.persona&#39;' in page
    assert (
        'id="evidence_signal_id-error">&#39;evidence_signal_id&#39; must be a single line' in page
    )
    assert 'id="subject" name="subject" value="ab" aria-invalid="true"' in page  # as sent
    current = world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(memory_id))[1]
    assert current.version == 1 and current.subject != "ab"


def test_an_edit_that_changes_nothing_says_so(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    response = post_form(client, url, f"/memorules/{memory_id}/edit?project=p1", reason="noop")
    assert response.status_code == 422
    assert "give at least one field to change" in response.text


def test_retire_then_restore(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    post_form(client, url, f"/memorules/{memory_id}/retire?project=p1", reason="stale")
    page = client.get(url).text
    assert 'status-retired">retired' in page and ">Restore</button>" in page
    post_form(client, url, f"/memorules/{memory_id}/restore?project=p1", reason="needed")
    page = client.get(url).text
    assert 'status-active">active' in page
    assert (
        '<span class="tag">retired</span>' in page and '<span class="tag">restored</span>' in page
    )


def test_the_list_filters_the_pinned_rules(world: World) -> None:
    ctx = world.ctx("acme", "p1")
    pinned = fresh_rule(world, "A pinned console rule about zanzibar.")
    other = fresh_rule(world, "An unpinned console rule about zanzibar.")
    world.services.memory.lifecycle.pin(ctx, uuid.UUID(pinned), True, "for the list")
    try:
        client = signed_in(world, "a_reader")
        for query in ("pinned=true", "pinned=true&q=zanzibar"):
            page = client.get(f"/memorules?project=p1&{query}").text
            assert pinned in page and other not in page, query
            assert '<option value="true" selected>pinned only</option>' in page
        both = client.get("/memorules?project=p1&q=zanzibar").text
        assert pinned in both and other in both
        bad = client.get("/memorules?project=p1&pinned=maybe")
        assert bad.status_code == 422 and "<code>pinned</code>" in bad.text
    finally:
        world.services.memory.lifecycle.pin(ctx, uuid.UUID(pinned), False, "done")


def test_pin_then_unpin(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    url = f"/memorules/{memory_id}?project=p1"
    page = client.get(url).text
    assert 'id="pinned"' not in page and ">Pin</button>" in page
    post_form(client, url, f"/memorules/{memory_id}/pin?project=p1", reason="every session")
    page = client.get(url).text
    assert 'id="pinned"' in page and ">Unpin</button>" in page
    assert '<span class="tag">pinned</span>' in page
    assert world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(memory_id))[0].pinned
    refused = post_form(client, url, f"/memorules/{memory_id}/unpin?project=p1", reason=" ")
    assert refused.status_code == 422 and "Nothing was saved" in refused.text
    post_form(client, url, f"/memorules/{memory_id}/unpin?project=p1", reason="done")
    page = client.get(url).text
    assert 'id="pinned"' not in page and '<span class="tag">unpinned</span>' in page


def test_the_verify_button_shows_an_intact_chain(world: World) -> None:
    client = signed_in(world, "a_admin")
    page = client.get("/audit").text
    assert 'id="verify"' in page and "chain-report" not in page
    page = client.get("/audit?verify=1").text
    assert "Chain intact." in page


def test_the_audit_page_shows_the_heads_and_the_content_checks(world: World) -> None:
    client = signed_in(world, "a_admin")
    page = client.get("/audit").text
    assert 'id="chain-heads"' in page and 'id="audit-head"' in page
    heads = world.call("a_admin", "GET", "/v1/audit/head").json()
    assert f"{heads['audit']['seq']}:{heads['audit']['hash']}" in page
    page = client.get("/audit?verify=1").text
    assert 'id="content-report"' in page and "content hashes recomputed" in page
    assert 'id="served-report"' in page


def test_a_memorule_page_lists_the_sessions_it_was_served_to(world: World) -> None:
    memory_id = fresh_rule(world, "A rule the console shows as served.")
    url = f"/memorules/{memory_id}?project=p1"
    assert 'id="served-none"' in signed_in(world, "a_admin").get(url).text
    session = "0190a0b4-0000-7000-8000-00000000c0de"
    ctx = dataclasses.replace(world.ctx("acme", "p1"), session_id=uuid.UUID(session))
    recalled = world.services.memory.recalls.recall(
        ctx, validate_recall({"source_type": "memorule", "top_k": 100})
    )
    assert memory_id in [str(m.memory.id) for m in recalled.matches]
    page = signed_in(world, "a_admin").get(url).text
    assert 'id="served-to"' in page and session in page
    assert "Only admin keys" in signed_in(world, "a_reader").get(url).text


def test_a_project_restricted_key_cannot_read_the_tenant_trail(world: World) -> None:
    response = signed_in(world, "a_p1_admin").get("/audit?verify=1")
    assert response.status_code == 403


def test_what_applies_now_shows_the_brief_for_a_context(world: World) -> None:
    page = signed_in(world, "a_reader").get("/applies?show=1&project=p1&persona=texi").text
    assert "# Memorules that apply" in page
    assert "Texi reviews APIs" in page


def test_a_reader_sees_no_write_controls(world: World) -> None:
    page = signed_in(world, "a_reader").get(f"/memorules/{world.ids['a_rule_p1']}?project=p1")
    assert "Edit (supersede)" not in page.text and "Retire</button>" not in page.text
    assert "Pin</button>" not in page.text


@pytest.mark.parametrize("action", ["edit", "retire", "restore", "pin", "unpin"])
def test_a_readers_writes_are_refused(world: World, action: str) -> None:
    memory_id = world.ids["a_rule_p1"]
    client = signed_in(world, "a_reader")
    response = post_form(
        client,
        f"/memorules/{memory_id}?project=p1",
        f"/memorules/{memory_id}/{action}?project=p1",
        body="Readers cannot write this.",
        reason="try",
    )
    assert response.status_code == 403
    current = world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(memory_id))[1]
    assert current.version == 1


@pytest.mark.parametrize("token", [None, "forged"])
def test_a_write_without_the_sessions_csrf_token_is_refused(
    world: World, token: str | None
) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    form = {"reason": "csrf", **({"csrf": token} if token else {})}
    response = client.post(f"/memorules/{memory_id}/retire?project=p1", data=form)
    assert response.status_code == 403
    assert "CSRF" in response.text
    memory = world.services.memory.reads.get(world.ctx("acme", "p1"), uuid.UUID(memory_id))[0]
    assert memory.status.value == "active"


def test_memorule_text_is_escaped(world: World) -> None:
    probe = "<script>alert('xss')</script><img src=x onerror=alert(1)>"
    memory_id = fresh_rule(world, body="XSS probe " + probe)
    client = signed_in(world, "a_reader")
    for url in (f"/memorules/{memory_id}?project=p1", "/memorules?project=p1&q=XSS+probe"):
        page = client.get(url).text
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in page


@pytest.mark.parametrize("path", ["/signin", "/memorules", "/static/console.css"])
def test_console_responses_carry_the_security_headers(world: World, path: str) -> None:
    headers = signed_in(world, "a_reader").get(path).headers
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"


def test_pages_use_no_inline_script_or_remote_assets(world: World) -> None:
    page = signed_in(world, "a_admin").get(f"/memorules/{world.ids['a_rule_p1']}").text
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/console.js" defer>']
    assert "http://" not in page and "https://" not in page
    assert " on" + "click=" not in page and "style=" not in page


def test_insecure_local_mode_serves_the_console_as_local_admin(tmp_path: Path) -> None:
    config = load_settings(db=tmp_path / "p.db", embedder="fake", database_url="", project="p1")
    services = build_services(config)
    try:
        app = create_app(services, config, insecure_local=True)
        client = TestClient(app, base_url="http://127.0.0.1")
        page = client.get("/memorules")
        assert page.status_code == 200 and "local admin" in page.text
        assert client.get("/audit?verify=1").status_code == 200
        foreign = TestClient(app, base_url="http://evil.example").get("/memorules")
        assert foreign.status_code == 403
    finally:
        services.close()
