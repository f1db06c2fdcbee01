"""Whose address the per-address limits count: the TCP peer's, unless it is a trusted proxy.

``PRISM_HTTP_TRUSTED_PROXIES`` (issue #32) is empty by default: ``X-Forwarded-For`` is
ignored, even from 127.0.0.1 (uvicorn's own default would believe it there). Naming the
proxy makes each forwarded client count on its own. The app is the one ``prism serve`` runs,
wrapped exactly as uvicorn wraps it (``build_server(...).config``), driven in process from a
loopback peer; the forwarded addresses are header values only (documentation ranges).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from prism_memory.api.server import build_server
from prism_memory.errors import InvalidInput
from prism_memory.settings import load_settings
from tests.api_world import World, running_world

LIMIT = 3
PROXY = ("127.0.0.1", 40000)


def served(w: World, **settings: str) -> TestClient:
    config = build_server(w.client.app, load_settings(**settings)).config  # type: ignore[arg-type]
    config.load()
    return TestClient(config.loaded_app, base_url="http://127.0.0.1:8765", client=PROXY)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_world(tmp_path, http_rate_limit_anonymous=f"{LIMIT}/minute") as w:
        yield w


def statuses(client: TestClient, forwarded_for: str, n: int) -> list[int]:
    headers = {"X-Forwarded-For": forwarded_for}
    return [client.get("/v1/memories", headers=headers).status_code for _ in range(n)]


def test_by_default_forwarded_for_is_ignored_even_from_loopback(world: World) -> None:
    client = served(world)
    assert statuses(client, "203.0.113.7", LIMIT) == [401] * LIMIT
    assert statuses(client, "203.0.113.8", 1) == [429]  # the same peer: the same window


def test_a_trusted_proxy_forwards_each_clients_own_address(world: World) -> None:
    client = served(world, http_trusted_proxies="127.0.0.0/8, ::1")
    assert statuses(client, "203.0.113.7", LIMIT) == [401] * LIMIT
    assert statuses(client, "203.0.113.7", 1) == [429]
    assert statuses(client, "203.0.113.8", 1) == [401]  # another client, its own window
    # A client cannot pose as another by prepending: the nearest untrusted entry counts.
    assert statuses(client, "198.51.100.1, 203.0.113.7", 1) == [429]


def test_a_proxy_setting_that_is_not_an_address_is_refused_naming_it() -> None:
    with pytest.raises(InvalidInput) as refused:
        load_settings(http_trusted_proxies="127.0.0.1, proxy.internal")
    assert [e.field for e in refused.value.errors] == ["http_trusted_proxies"]
