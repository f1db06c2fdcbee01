"""What one key signed in to the console, no other key can end (issue #32, D3; DESIGN §10).

Console sessions count against the key that signed in: past its own cap that key's oldest
session is signed out, never another key's; a full console refuses the next sign-in rather
than signing anybody out; sign-in attempts are limited per client address. The sessions live
in the server's memory, so one engine is enough.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.api_world import World, running_world
from tests.test_web_hardening import browser, csrf_of, sign_in, signed_in

PER_KEY = 2
IN_ALL = 7


@pytest.fixture
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(
        tmp_path_factory.mktemp("console-sessions"),
        console_max_sessions=IN_ALL,
        console_max_sessions_per_key=PER_KEY,
    ) as w:
        yield w


def alive(client: TestClient) -> bool:
    return client.get("/memorules", follow_redirects=False).status_code == 200


def test_an_admin_survives_a_sign_in_flood_from_another_tenants_reader(world: World) -> None:
    admin = signed_in(world, "a_admin")
    flood = [signed_in(world, "b_reader") for _ in range(IN_ALL * 5)]
    assert alive(admin)
    assert [alive(c) for c in flood] == [False] * (len(flood) - PER_KEY) + [True] * PER_KEY


def test_a_flood_from_many_keys_fills_the_console_and_signs_nobody_out(world: World) -> None:
    admin = signed_in(world, "a_admin")
    others = ["a_reader", "a_writer", "b_reader", "b_writer", "b_admin", "a_donna"]
    held = [signed_in(world, k) for k in others[:3] for _ in range(PER_KEY)]
    assert len(held) + 1 == IN_ALL
    refused = sign_in(browser(world), world.keys["b_admin"])
    assert refused.status_code == 503 and "full" in refused.text
    assert alive(admin) and all(alive(c) for c in held)


def test_sign_in_attempts_are_limited_per_address(tmp_path_factory: pytest.TempPathFactory) -> None:
    with running_world(
        tmp_path_factory.mktemp("console-signin-rate"), http_rate_limit_anonymous="5/minute"
    ) as w:
        operator = browser(w)
        token = csrf_of(operator.get("/signin"))  # the form costs nothing
        answers = [sign_in(browser(w), "prism_not_a_key").status_code for _ in range(5)]
        assert answers == [401] * 5  # each attempt costs one hit of the address's five
        late = operator.post("/signin", data={"csrf": token, "api_key": w.keys["a_admin"]})
        assert late.status_code == 429 and late.headers["retry-after"]
