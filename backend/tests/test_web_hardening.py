"""The console against the independent probe's findings (issue #15), in process.

Malformed cursors and forms get the console's 422 page (never a 500); bad characters in a
reason or an edit write nothing; strangers cannot sign operators out by filling the session
store, because no session exists before a sign-in (per-key caps: ``test_console_sessions.py``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from prism_memory.domain.contract.remember import validate_remember
from prism_memory.web.sessions import CSRF_COOKIE
from tests.api_world import World, rule, running_world

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
MAX_SESSIONS = 5
PER_KEY = 1


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(
        tmp_path_factory.mktemp("web-hardening"),
        console_max_sessions=MAX_SESSIONS,
        console_max_sessions_per_key=PER_KEY,
    ) as w:
        yield w


def browser(w: World) -> TestClient:
    return TestClient(w.client.app)


def csrf_of(response: httpx.Response) -> str:
    found = CSRF.search(response.text)
    assert found is not None, response.text
    return found.group(1)


def sign_in(client: TestClient, secret: str) -> httpx.Response:
    token = csrf_of(client.get("/signin"))
    return client.post("/signin", data={"csrf": token, "api_key": secret}, follow_redirects=False)


def signed_in(w: World, key: str) -> TestClient:
    client = browser(w)
    assert sign_in(client, w.keys[key]).status_code == 303
    return client


def sessions(w: World) -> int:
    return len(w.client.app.state.prism_console.sessions)  # type: ignore[attr-defined]


def fresh_rule(w: World) -> str:
    raw = rule("Console hardening " + uuid.uuid4().hex[:6], "A rule for one console test.")
    return str(w.services.memory.writes.remember(w.ctx("acme", "p1"), validate_remember(raw)).id)


def current(w: World, memory_id: str) -> tuple[int, str]:
    memory, _ = w.services.memory.reads.get(w.ctx("acme", "p1"), uuid.UUID(memory_id))
    return memory.current_version, memory.status.value


# -- 3. malformed cursors and forms --------------------------------------------------------


@pytest.mark.parametrize(
    "before", ["%C2%B2", "99999999999999999999999999", "0", "-1", "1" * 5000, "x"]
)
def test_a_malformed_audit_cursor_gets_the_422_page(world: World, before: str) -> None:
    response = signed_in(world, "a_admin").get(f"/audit?before={before}")
    assert response.status_code == 422, response.text
    assert "page cursor" in response.text


def test_a_valid_audit_cursor_still_pages(world: World) -> None:
    assert signed_in(world, "a_admin").get("/audit?before=5").status_code == 200


def test_an_edit_form_with_too_many_fields_gets_the_422_page(world: World) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    token = csrf_of(client.get(f"/memorules/{memory_id}"))
    form = {"csrf": token, "reason": "many", **{f"f{i}": "x" for i in range(25)}}
    response = client.post(f"/memorules/{memory_id}/edit", data=form, follow_redirects=False)
    assert response.status_code == 422, response.text
    assert current(world, memory_id) == (1, "active")


# -- 4. bad characters and bytes in console forms ------------------------------------------


@pytest.mark.parametrize("bad", ["\x00", "\x9b", "\x7f"], ids=["NUL", "C1", "DEL"])
@pytest.mark.parametrize("action", ["retire", "edit"])
def test_bad_characters_in_a_console_write_are_refused_and_write_nothing(
    world: World, action: str, bad: str
) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    token = csrf_of(client.get(f"/memorules/{memory_id}"))
    if action == "retire":
        form = {"csrf": token, "reason": f"why {bad} now"}
    else:
        form = {"csrf": token, "reason": "an edit", "body": f"A new body {bad} for the rule."}
    response = client.post(f"/memorules/{memory_id}/{action}", data=form, follow_redirects=False)
    assert response.status_code == 422, response.text
    assert current(world, memory_id) == (1, "active")


def test_a_form_that_is_not_utf8_is_refused_not_stored_as_replacement_characters(
    world: World,
) -> None:
    memory_id = fresh_rule(world)
    client = signed_in(world, "a_writer")
    token = csrf_of(client.get(f"/memorules/{memory_id}"))
    body = f"csrf={token}&reason=caf%E9%FF".encode()
    response = client.post(
        f"/memorules/{memory_id}/retire",
        content=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 422, response.text
    assert current(world, memory_id) == (1, "active")


# -- 5. sessions only after sign-in; the cap counts signed-in sessions ----------------------


def test_visitors_get_no_server_session_and_cannot_sign_an_operator_out(world: World) -> None:
    operator = signed_in(world, "a_admin")
    held = sessions(world)
    for _ in range(MAX_SESSIONS * 10):  # ten times the cap of anonymous visits and failures
        visitor = browser(world)
        assert visitor.get("/signin").status_code == 200
        assert sign_in(visitor, "prism_not_a_key").status_code == 401
    assert sessions(world) == held
    assert operator.get("/memorules").status_code == 200  # still signed in


def test_the_sign_in_form_needs_its_signed_cookie(world: World) -> None:
    visitor = browser(world)
    token = csrf_of(visitor.get("/signin"))
    assert CSRF_COOKIE in visitor.cookies
    stranger = browser(world)  # has the token (e.g. from a page) but not the cookie
    response = stranger.post(
        "/signin", data={"csrf": token, "api_key": world.keys["a_admin"]}, follow_redirects=False
    )
    assert response.status_code == 403
    forger = browser(world)  # the token with a cookie of its own choosing
    forger.cookies.set(CSRF_COOKIE, "forged")
    response = forger.post(
        "/signin", data={"csrf": token, "api_key": world.keys["a_admin"]}, follow_redirects=False
    )
    assert response.status_code == 403


def test_only_signed_in_sessions_count_and_a_full_console_signs_nobody_out(
    world: World,
) -> None:
    keys = ["a_reader", "a_writer", "a_admin", "a_p1_writer", "a_donna", "b_reader"]
    held = [signed_in(world, k) for k in keys[:MAX_SESSIONS]]
    assert sessions(world) == MAX_SESSIONS
    refused = sign_in(browser(world), world.keys[keys[MAX_SESSIONS]])
    assert refused.status_code == 503, refused.text
    assert sessions(world) == MAX_SESSIONS
    assert all(c.get("/memorules").status_code == 200 for c in held)
