"""The operator console in headless Chromium (Debian's ``chromium``, driven by Playwright).

Skipped when Playwright's Python package or ``/usr/bin/chromium`` is missing; never downloads
a browser. Screenshots of each page go to ``backend/test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from tests.api_world import World, rule, running_world

CHROMIUM = os.environ.get("PRISM_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, str]]:
    """The populated world's app on a real port (its lifespan already entered by the world)."""
    with running_world(tmp_path_factory.mktemp("browser")) as world:
        port = free_port()
        config = uvicorn.Config(
            world.client.app, host="127.0.0.1", port=port, lifespan="off", log_level="warning"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        try:
            yield world, f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=10)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=True)


def sign_in(chromium: Any, base: str, secret: str) -> Any:
    context = chromium.new_context(viewport={"width": 1366, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/signin")
    page.get_by_label("API key").fill(secret)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/memorules")
    page.errors = errors
    return page


def test_an_operator_filters_edits_and_verifies(served: tuple[World, str], chromium: Any) -> None:
    world, base = served
    page = sign_in(chromium, base, world.keys["a_admin"])
    page.goto(f"{base}/memorules?project=p1")
    page.get_by_label("Search").fill("API change")  # a search shows each match's why
    page.get_by_label("Persona").fill("texi")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**persona=texi**")
    sync_api.expect(page.get_by_role("link", name="Texi reviews APIs")).to_be_visible()
    page.locator("details summary").first.click()  # the why breakdown
    shot(page, "list")

    page.get_by_role("link", name="Texi reviews APIs").click()
    page.get_by_label("Body").fill("Texi reviews every public API change before merge.")
    page.get_by_label("Reason (kept in the audit trail)").fill("only public APIs")
    page.get_by_role("button", name="Save as version 2").click()
    sync_api.expect(page.get_by_role("heading", name="Version 2")).to_be_visible()
    sync_api.expect(page.locator("td .tag", has_text="superseded")).to_be_visible()
    shot(page, "memorule")

    page.goto(f"{base}/applies?project=p1")
    page.get_by_label("Persona").fill("texi")
    page.get_by_label("Surface").press("Enter")  # keyboard submit
    sync_api.expect(page.locator("pre.brief")).to_contain_text("Texi reviews every public API")
    shot(page, "applies")

    page.goto(f"{base}/audit")
    page.get_by_role("button", name="Verify the hash chain").click()
    sync_api.expect(page.locator("#chain-report")).to_contain_text("Chain intact.")
    shot(page, "audit")
    assert page.errors == []


def test_a_project_writer_lists_retired_rules_pages_and_edits_applies_to(
    served: tuple[World, str], chromium: Any
) -> None:
    world, base = served
    ctx = world.ctx("acme", "p1")
    raws = [rule(f"Browse rule {i:02d}", f"The body of browse rule {i:02d}.") for i in range(55)]
    world.services.memory.bulk.remember_many(ctx, validate_remember_many(raws))
    page = sign_in(chromium, base, world.keys["a_p1_writer"])  # a writer bound to p1
    rows = page.locator("table.list tbody tr")

    page.goto(f"{base}/memorules?project=p1")
    page.get_by_label("Status").select_option("retired")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=retired**")
    sync_api.expect(page.get_by_role("link", name="Old rule here")).to_be_visible()
    sync_api.expect(rows).to_have_count(1)
    shot(page, "list-retired")

    page.get_by_label("Status").select_option("active")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=active**")
    sync_api.expect(rows).to_have_count(50)
    assert page.get_by_role("link", name="Browse rule 00").count() == 0
    page.get_by_role("link", name="Older →").click()
    page.wait_for_url("**cursor=**")
    sync_api.expect(page.get_by_role("link", name="Browse rule 00")).to_be_visible()
    sync_api.expect(page.get_by_role("link", name="← Newest")).to_be_visible()
    shot(page, "list-older")

    page.get_by_role("link", name="Browse rule 00").click()
    page.get_by_label("Scope").select_option("persona")  # without a persona: refused
    page.get_by_label("Reason (kept in the audit trail)").fill("Frank's CLI only")
    page.get_by_role("button", name="Save as version 2").click()
    sync_api.expect(page.locator("#write-errors")).to_contain_text("Nothing was saved.")
    sync_api.expect(page.locator("#persona-error")).to_contain_text("whose rule is it?")
    sync_api.expect(page.get_by_label("Persona")).to_have_attribute("aria-invalid", "true")
    shot(page, "edit-refused")

    page.get_by_label("Persona").fill("frank")
    page.get_by_label("Surface").fill("cli")
    page.get_by_role("button", name="Save as version 2").click()
    sync_api.expect(page.get_by_role("heading", name="Version 2")).to_be_visible()
    sync_api.expect(page.locator("td.new").first).to_have_text(
        "persona=frank, scope=persona, surface=cli"
    )
    sync_api.expect(page.locator("td .tag", has_text="superseded")).to_be_visible()
    shot(page, "edit-applies-to")
    # The refused edit's page is a 422, which Chromium logs; nothing else went wrong.
    assert page.errors == [
        "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
    ]


def test_a_reader_sees_no_write_controls(served: tuple[World, str], chromium: Any) -> None:
    world, base = served
    page = sign_in(chromium, base, world.keys["a_reader"])
    page.goto(f"{base}/memorules/{world.ids['a_rule_p1']}?project=p1")
    sync_api.expect(page.get_by_role("heading", name="Run tests first")).to_be_visible()
    assert page.locator("form[action*='/edit'], form[action*='/retire']").count() == 0
    assert page.get_by_role("button", name="Retire").count() == 0
    shot(page, "reader")


def test_an_xss_probe_renders_inert(served: tuple[World, str], chromium: Any) -> None:
    world, base = served
    probe = "<script>window.pwned=1</script><img src=x onerror='window.pwned=2'>"
    raw = rule("XSS probe " + uuid.uuid4().hex[:4], "Probe " + probe)
    memory_id = world.services.memory.writes.remember(
        world.ctx("acme", "p1"), validate_remember(raw)
    ).id
    page = sign_in(chromium, base, world.keys["a_reader"])
    page.goto(f"{base}/memorules/{memory_id}?project=p1")
    sync_api.expect(page.locator("pre.body").first).to_contain_text("<script>window.pwned=1")
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("main script, main img").count() == 0
    shot(page, "xss")


def test_the_adherence_report_shows_a_rules_violation(
    served: tuple[World, str], chromium: Any
) -> None:
    from prism_memory.domain.adherence.actions import Action, SessionActions
    from prism_memory.services.adherence_service import AdherenceService

    world, base = served
    ctx = world.ctx("acme", "p1")
    subject = "Browser: never run npm " + uuid.uuid4().hex[:4]
    raw = {**rule(subject, "This repository uses pnpm."), "checks": [{"forbid_command": "npm"}]}
    rule_id = world.services.memory.writes.remember(ctx, validate_remember(raw)).id
    session = SessionActions("browser-session", "/srv/agent", (Action("command", "npm ci"),))
    AdherenceService(world.services.store, world.services.memorules).judge(ctx, session)
    page = sign_in(chromium, base, world.keys["a_reader"])
    page.goto(f"{base}/memorules/{rule_id}?project=p1")
    section = page.locator("#adherence")
    sync_api.expect(section.locator("#adh-violated")).to_have_text("1")
    sync_api.expect(section.locator(".evidence")).to_contain_text("npm ci")
    shot(page, "rule-adherence")
    page.get_by_role("link", name="served, exercised and violated in sessions").click()
    page.wait_for_url(f"**/adherence?project=p1#rule-{rule_id}")
    sync_api.expect(page.locator(f"#rule-{rule_id}")).to_contain_text("npm ci")
    sync_api.expect(page.locator("#most-violated")).to_contain_text(subject)
    sync_api.expect(page.locator("#violating-sessions")).to_contain_text("browser-session")
    shot(page, "adherence")
    assert page.errors == []
