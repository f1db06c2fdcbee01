"""Rate limits per API key and per address (issue #15, defect 6), in process.

Small limits so a test spends them in a few requests; the windows are the ``limits``
library's, counted in this process (``memory://``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from prism_memory.api.rate_limit import parse_rate
from prism_memory.errors import InvalidInput
from prism_memory.settings import load_settings
from tests.api_world import World, running_world

PER_KEY = 5
PER_ADDRESS = 4


@pytest.fixture
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(
        tmp_path_factory.mktemp("rate"),
        http_rate_limit=f"{PER_KEY}/minute",
        http_rate_limit_anonymous=f"{PER_ADDRESS}/minute",
    ) as w:
        yield w


def assert_rate_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == "application/json"
    retry = int(response.headers["retry-after"])
    assert 1 <= retry <= 60
    error = response.json()["error"]
    assert response.json()["ok"] is False
    assert error["code"] == "rate_limited" and error["retry_after_s"] == retry


def refused_count(client: TestClient, scope: str) -> float:
    text = client.get("/metrics").text
    found = re.search(rf'^prism_http_rate_limited_total{{scope="{scope}"}} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def test_a_key_past_its_limit_gets_429_with_retry_after_and_others_do_not(world: World) -> None:
    statuses = [world.call("a_reader", "GET", "/v1/whoami").status_code for _ in range(PER_KEY)]
    assert statuses == [200] * PER_KEY
    assert_rate_limited(world.call("a_reader", "GET", "/v1/whoami"))
    assert_rate_limited(world.call("a_reader", "POST", "/v1/recall", {"query": "x"}))
    assert world.call("a_writer", "GET", "/v1/whoami").status_code == 200  # its own window
    assert refused_count(world.client, "key") == 2


def test_the_key_limit_covers_mcp_over_http(world: World) -> None:
    for _ in range(PER_KEY):
        world.call("a_admin", "GET", "/v1/whoami")
    response = world.client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**world.headers("a_admin"), "Accept": "application/json, text/event-stream"},
    )
    assert_rate_limited(response)


def test_requests_without_a_key_are_limited_per_address(world: World) -> None:
    for _ in range(PER_ADDRESS):
        assert world.call(None, "GET", "/v1/whoami").status_code == 401
    assert_rate_limited(world.call(None, "GET", "/v1/whoami"))
    assert refused_count(world.client, "address") == 1


def test_guessed_keys_spend_the_address_window(world: World) -> None:
    for n in range(PER_ADDRESS):
        assert world.call(f"prism_guess{n}", "GET", "/v1/whoami").status_code == 401
    assert_rate_limited(world.call("prism_another_guess", "GET", "/v1/whoami"))


def test_probes_and_metrics_are_never_limited(world: World) -> None:
    for _ in range(PER_ADDRESS + 1):
        world.call(None, "GET", "/v1/whoami")
    for path in ("/healthz", "/readyz", "/metrics"):
        assert all(world.client.get(path).status_code == 200 for _ in range(PER_KEY * 2))


@pytest.mark.parametrize("spec", ["lots", "5/fortnight", "-1/minute"])
def test_a_malformed_limit_is_refused_at_start(spec: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        load_settings(http_rate_limit=spec)
    assert [e.field for e in refused.value.errors] == ["http_rate_limit"]


def test_an_empty_limit_means_no_limit() -> None:
    assert parse_rate("") == [] and len(parse_rate("30/second;600/minute")) == 2
