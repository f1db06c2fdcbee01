"""``GET /v1/memories``: the listing over HTTP, with the key's tenant, projects and persona.

The storage and service behaviour on both engines: ``test_listing.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api_world import World, running_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("listing")) as w:
        yield w


def listed(w: World, key: str, query: str = "", **headers: str) -> list[str]:
    response = w.call(key, "GET", f"/v1/memories?{query}", headers=w.headers(None, **headers))
    assert response.status_code == 200, response.text
    by_id = {v: k for k, v in w.ids.items()}
    return [by_id[item["memory"]["id"]] for item in response.json()["items"]]


def test_a_listing_shows_the_projects_memories_and_tenant_wide_rules_newest_first(
    world: World,
) -> None:
    assert listed(world, "a_admin", X_Prism_Project="p1") == [
        "a_texi_p1",
        "a_global_p2",
        "a_rule_p1",
        "a_note_p1",
    ]


def test_an_item_carries_the_memory_and_its_current_state(world: World) -> None:
    body = world.call("a_reader", "GET", "/v1/memories?source_type=memorule&limit=1").json()
    item = body["items"][0]
    assert body["ok"] is True and body["next_cursor"]
    assert item["memory"]["status"] == "active" and item["state"]["version"] == 1
    assert item["state"]["applies_to"] == {"persona": "texi", "scope": "persona"}


def test_a_project_writer_lists_retired_rules_of_its_project_only(world: World) -> None:
    assert listed(world, "a_p1_writer", "status=retired") == ["a_retired_p1"]
    got = listed(world, "a_p1_writer", "status=all")
    assert "a_rule_p2" not in got and "a_note_p2" not in got and "b_rule_p1" not in got
    refused = world.call("a_p1_writer", "GET", "/v1/memories", headers={"X-Prism-Project": "p2"})
    assert refused.status_code == 403


def test_other_tenants_and_other_personas_private_rules_are_never_listed(world: World) -> None:
    assert listed(world, "b_reader", X_Prism_Project="p1") == ["b_rule_p1", "b_note_p1"]
    assert "a_texi_p1" not in listed(world, "a_donna", X_Prism_Project="p1")


def test_cursor_pages_cover_the_listing(world: World) -> None:
    whole = listed(world, "a_admin", "status=all", X_Prism_Project="p1")
    seen: list[str] = []
    query = "status=all&limit=2"
    while True:
        response = world.call(
            "a_admin", "GET", f"/v1/memories?{query}", headers={"X-Prism-Project": "p1"}
        )
        body = response.json()
        by_id = {v: k for k, v in world.ids.items()}
        seen += [by_id[i["memory"]["id"]] for i in body["items"]]
        if body["next_cursor"] is None:
            break
        query = f"status=all&limit=2&cursor={body['next_cursor']}"
    assert seen == whole and len(whole) == 5


def test_repeated_filters_are_alternatives(world: World) -> None:
    got = listed(world, "a_admin", "scope=global&scope=persona", X_Prism_Project="p1")
    assert got == ["a_texi_p1", "a_global_p2"]


def test_a_blank_filter_is_no_filter(world: World) -> None:
    # As the console sends an empty form field: every filter blank lists what none would.
    blanks = "persona=&surface=&specialization=&namespace=&scope=&memorule_kind=&confidence="
    for base in ("", "status=all"):
        everything = listed(world, "a_admin", base, X_Prism_Project="p1")
        query = f"{base}&{blanks}&cursor=&limit=" if base else f"{blanks}&status=&source_type="
        assert listed(world, "a_admin", query, X_Prism_Project="p1") == everything
    assert listed(world, "a_admin", "persona=%20%20", X_Prism_Project="p1") == listed(
        world, "a_admin", X_Prism_Project="p1"
    )


@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ("cursor=abc", "cursor", "invalid_format"),
        ("cursor=" + "!" * 22, "cursor", "invalid_format"),
        ("status=gone", "status", "invalid_choice"),
        ("scope=planet", "scope.0", "invalid_choice"),
        ("limit=0", "limit", "out_of_range"),
        ("limit=many", "limit", "wrong_type"),
        ("persona=" + "x" * 101, "persona", "too_long"),
        ("top_k=3", "top_k", "unknown_field"),
    ],
)
def test_bad_parameters_are_422_field_by_field(
    world: World, query: str, field: str, code: str
) -> None:
    response = world.call("a_reader", "GET", f"/v1/memories?{query}")
    assert response.status_code == 422, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert [(f["field"], f["code"]) for f in error["fields"]] == [(field, code)]


def test_listing_needs_a_key(world: World, tmp_path: Path) -> None:
    assert world.call(None, "GET", "/v1/memories").status_code == 401
