"""``/metrics`` beside the HTTP series: recall, brief and write latency by engine (whatever
door the call came through: ``/v1`` or ``/mcp``), and the served-receipts queue."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.api_world import ENGINES, World, rule, world_on


@pytest.fixture(params=ENGINES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_on(request, tmp_path) as w:
        yield w


def samples(w: World) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = w.client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def count(w: World, operation: str) -> float:
    engine = "postgresql" if w.settings.database_url else "sqlite"
    key = (
        "prism_operation_duration_seconds_count",
        (("engine", engine), ("operation", operation)),
    )
    return samples(w).get(key, 0.0)


def test_recall_brief_and_writes_are_timed_by_engine_through_every_door(world: World) -> None:
    before = {op: count(world, op) for op in ("recall", "brief", "write")}
    headers = {"X-Prism-Project": "p1"}
    wrote = world.call("a_writer", "POST", "/v1/memories", rule("Timed rule", "A rule to time."))
    assert wrote.status_code == 201, wrote.text
    assert world.call("a_reader", "POST", "/v1/recall", {"query": "time"}, headers).is_success
    assert world.call("a_reader", "POST", "/v1/brief", {}, headers).is_success
    is_error, _ = world.tool("a_reader", "semantic_recall", {"query": "time"})
    assert not is_error
    after = {op: count(world, op) for op in ("recall", "brief", "write")}
    assert after == {
        "recall": before["recall"] + 2,  # /v1 and /mcp
        "brief": before["brief"] + 1,
        "write": before["write"] + 1,
    }


def test_the_served_receipts_queue_is_on_metrics(world: World) -> None:
    found = samples(world)
    assert ("prism_served_receipts_pending", ()) in found
    assert found[("prism_served_receipts_write_failures_total", ())] == 0
    text = world.client.get("/metrics").text
    for secret in world.keys.values():
        assert secret not in text
