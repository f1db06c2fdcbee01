"""Listing memories (``list_memories``): filters, keyset pages, visibility, on both engines.

The store, the service and the key-checked access service, each over a real SQLite file and
the session's real PostgreSQL (the ``engine_settings`` fixture).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_auth
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.listing import ListRequest, encode_cursor
from prism_memory.domain.records import SessionContext
from prism_memory.errors import InvalidInput, PermissionDenied
from prism_memory.services.access_service import AccessService
from prism_memory.services.auth_service import AuthService, ContextRequest
from tests.conftest import ContextFactory


def rule(subject: str, **applies: str) -> dict[str, Any]:
    kind = applies.pop("memorule_kind", "behavioral_rule")
    confidence = applies.pop("confidence", "inferred")
    return {
        "kind": "memorule",
        "memorule_kind": kind,
        "subject": subject,
        "body": f"The body of the rule '{subject}'.",
        "applies_to": applies or {"surface": "cli"},
        "confidence": confidence,
    }


@pytest.fixture
def world(services: Services, make_ctx: ContextFactory) -> dict[str, UUID]:
    """Memories of tenant acme (projects p1, p2) and tenant beta, written oldest first."""
    memory = services.memory
    writes: list[tuple[str, SessionContext, dict[str, Any]]] = [
        ("note_p1", make_ctx(project="p1"), {"body": "Deploys happen on Tuesdays."}),
        ("plain_p1", make_ctx(project="p1"), rule("No scope named")),
        ("project_p1", make_ctx(project="p1"), rule("Project scope", scope="project")),
        (
            "texi_p1",
            make_ctx(project="p1"),
            rule("Texi only", scope="persona", persona="Texi", confidence="observed"),
        ),
        ("donna_p1", make_ctx(project="p1"), rule("Donna only", scope="persona", persona="donna")),
        ("pref_p1", make_ctx(project="p1"), rule("A preference", memorule_kind="preference")),
        ("github_p1", make_ctx(project="p1"), rule("On GitHub", surface="GitHub")),
        ("retired_p1", make_ctx(project="p1"), rule("Retired rule")),
        ("project_p2", make_ctx(project="p2"), rule("Other project rule", scope="project")),
        ("note_p2", make_ctx(project="p2"), {"body": "Project two's own note."}),
        ("global_p2", make_ctx(project="p2"), rule("Global from p2", scope="global")),
        ("org_p2", make_ctx(project="p2"), rule("Org from p2", scope="org")),
        ("beta_p1", make_ctx(tenant="beta", project="p1"), rule("Beta tenant rule")),
    ]
    ids = {
        name: memory.writes.remember(ctx, validate_remember(raw)).id for name, ctx, raw in writes
    }
    memory.lifecycle.retire(make_ctx(project="p1"), ids["retired_p1"], "obsolete")
    return ids


def names(ids: dict[str, UUID], items: list[Any]) -> list[str]:
    by_id = {v: k for k, v in ids.items()}
    return [by_id[m.id] for m, _ in items]


def listed(services: Services, ids: dict[str, UUID], ctx: SessionContext, **raw: Any) -> list[str]:
    return names(ids, services.memory.reads.list_memories(ctx, ListRequest.parse(raw)).items)


def test_a_listing_is_newest_first_with_the_projects_memories_and_tenant_wide_rules(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    got = listed(services, world, make_ctx(project="p1"))
    assert got == [
        "org_p2",
        "global_p2",
        "github_p1",
        "pref_p1",
        "donna_p1",
        "texi_p1",
        "project_p1",
        "plain_p1",
        "note_p1",
    ]


def test_keyset_pages_cover_every_row_once_in_order(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(project="p1")
    whole = listed(services, world, ctx, status="all")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = services.memory.reads.list_memories(
            ctx, ListRequest.parse({"status": "all", "limit": 3, "cursor": cursor})
        )
        seen += names(world, page.items)
        pages += 1
        if page.next_cursor is None:
            break
        assert len(page.items) == 3
        cursor = page.next_cursor
    assert seen == whole and len(whole) == 10
    assert pages == 4  # 3 + 3 + 3 + 1: the last page says there is no next one


def test_a_full_last_page_has_no_next_cursor(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    page = services.memory.reads.list_memories(
        make_ctx(project="p1"), ListRequest.parse({"limit": 9})
    )
    assert len(page.items) == 9 and page.next_cursor is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"status": "retired"}, ["retired_p1"]),
        ({"status": "all", "source_type": "memorule", "scope": "global"}, ["global_p2"]),
        ({"scope": "project"}, ["github_p1", "pref_p1", "project_p1", "plain_p1"]),
        ({"scope": ["org", "persona"]}, ["org_p2", "donna_p1", "texi_p1"]),
        ({"memorule_kind": "preference"}, ["pref_p1"]),
        ({"confidence": "observed"}, ["texi_p1"]),
        ({"persona": " TEXI "}, ["texi_p1"]),
        ({"surface": "github"}, ["github_p1"]),
        ({"source_type": "memorule", "limit": "2"}, ["org_p2", "global_p2"]),
        ({"namespace": "elsewhere"}, []),
    ],
)
def test_filters(
    services: Services,
    world: dict[str, UUID],
    make_ctx: ContextFactory,
    raw: dict[str, Any],
    expected: list[str],
) -> None:
    assert listed(services, world, make_ctx(project="p1"), **raw) == expected


def test_notes_are_listed_only_without_memorule_filters(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    assert "note_p1" in listed(services, world, make_ctx(project="p1"))
    assert "note_p1" not in listed(services, world, make_ctx(project="p1"), source_type="memorule")


def test_another_tenant_and_another_projects_own_memories_never_appear(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    got = listed(services, world, make_ctx(project="p1"), status="all")
    assert not {"project_p2", "note_p2", "beta_p1"} & set(got)
    assert listed(services, world, make_ctx(tenant="beta", project="p1")) == ["beta_p1"]


def test_a_viewer_persona_hides_other_personas_rules(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    page = services.memory.reads.list_memories(
        make_ctx(project="p1"), ListRequest.parse({}), viewer_persona="texi"
    )
    got = names(world, page.items)
    assert "texi_p1" in got and "donna_p1" not in got


@pytest.mark.parametrize(
    ("raw", "field", "code"),
    [
        ({"status": "gone"}, "status", "invalid_choice"),
        ({"cursor": "not-a-cursor"}, "cursor", "invalid_format"),
        ({"cursor": "!" * 22}, "cursor", "invalid_format"),
        ({"limit": "0"}, "limit", "out_of_range"),
        ({"limit": "9" * 40}, "limit", "out_of_range"),
        ({"limit": "ten"}, "limit", "wrong_type"),
        ({"scope": "planet"}, "scope", "invalid_choice"),
        ({"memorule_kind": ["rule"] * 6}, "memorule_kind", "wrong_type"),
        ({"persona": "x" * 101}, "persona", "too_long"),
        ({"top_k": 5}, "top_k", "unknown_field"),
    ],
)
def test_bad_filters_and_cursors_are_refused_field_by_field(
    services: Services, make_ctx: ContextFactory, raw: dict[str, Any], field: str, code: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.memory.reads.list_memories(make_ctx(project="p1"), ListRequest.parse(raw))
    assert [(e.field, e.code) for e in caught.value.errors] == [(field, code)]


def test_a_cursor_from_another_listing_still_pages_by_id(
    services: Services, world: dict[str, UUID], make_ctx: ContextFactory
) -> None:
    cursor = encode_cursor(world["texi_p1"])
    got = listed(services, world, make_ctx(project="p1"), cursor=cursor)
    assert got == ["project_p1", "plain_p1", "note_p1"]


# -- through the access service, with real keys ------------------------------------------


@pytest.fixture
def auth(services: Services) -> Iterator[AuthService]:
    yield build_auth(services)


def as_key(
    services: Services, auth: AuthService, project: str | None = None, **spec: Any
) -> tuple[AccessService, Any, SessionContext]:
    issued = auth.create_key("acme", spec.pop("role", "reader"), **spec)
    key = auth.authenticate(issued.secret)
    ctx = auth.context_for(key, ContextRequest(project=project))
    return AccessService(services.memory, services.memorules, services.brief), key, ctx


def test_a_project_key_lists_its_project_and_tenant_wide_rules_never_another_projects(
    services: Services, auth: AuthService, world: dict[str, UUID]
) -> None:
    access, key, ctx = as_key(services, auth, role="writer", projects=["p1"])
    got = names(world, access.list_memories(key, ctx, ListRequest.parse({"status": "all"})).items)
    assert not {"project_p2", "note_p2", "beta_p1"} & set(got)
    assert {"global_p2", "org_p2", "retired_p1", "note_p1"} <= set(got)
    for memory_id in (world[n] for n in got):  # exactly what reading by id allows
        access.get(key, ctx, memory_id)
    with pytest.raises(PermissionDenied):
        as_key(services, auth, project="p2", role="writer", projects=["p1"])


def test_a_persona_key_lists_no_other_personas_private_rules(
    services: Services, auth: AuthService, world: dict[str, UUID]
) -> None:
    access, key, ctx = as_key(services, auth, project="p1", persona="donna")
    got = names(
        world, access.list_memories(key, ctx, ListRequest.parse({"scope": "persona"})).items
    )
    assert got == ["donna_p1"]


def test_a_reader_may_list_and_bad_input_is_refused_before_the_store(
    services: Services, auth: AuthService, world: dict[str, UUID]
) -> None:
    access, key, ctx = as_key(services, auth, project="p1")
    assert names(
        world, access.list_memories(key, ctx, ListRequest.parse({"status": "retired"})).items
    ) == ["retired_p1"]
    with pytest.raises(InvalidInput):
        access.list_memories(key, ctx, ListRequest.parse({"status": "everything"}))
