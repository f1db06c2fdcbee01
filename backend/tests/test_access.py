"""The pure access rules: roles, projects, personas, visibility (prism_memory.domain.access)."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest

from prism_memory.domain import access
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import (
    AppliesTo,
    Kind,
    MemoruleKind,
    Memory,
    MemoryState,
    Scope,
    Status,
)
from prism_memory.errors import PermissionDenied

T = uuid_for("tenant", "acme")
P1, P2 = uuid_for("project", "p1"), uuid_for("project", "p2")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def key(
    role: Role = Role.WRITER, projects: tuple[UUID, ...] = (), persona: str | None = None
) -> ApiKey:
    return ApiKey("key_1", T, role, projects, persona, "prism_abcd", None, NOW)


def memory(
    project: UUID = P1, scope: Scope | None = None, persona: str | None = None, tenant: UUID = T
) -> tuple[Memory, MemoryState]:
    kind = Kind.NOTE if scope is None and persona is None else Kind.MEMORULE
    m = Memory(new_id(), tenant, project, "default", kind, Status.ACTIVE, NOW)
    applies = AppliesTo(persona=persona, scope=scope) if kind is Kind.MEMORULE else None
    s = MemoryState(
        new_id(),
        m.id,
        1,
        "a body of text",
        "subject",
        new_id(),
        None,
        NOW,
        "fake",
        memorule_kind=MemoruleKind.CONVENTION if applies else None,
        applies_to=applies,
    )
    return m, s


@pytest.mark.parametrize(
    ("role", "needed", "allowed"),
    [
        (Role.READER, Role.READER, True),
        (Role.READER, Role.WRITER, False),
        (Role.WRITER, Role.WRITER, True),
        (Role.WRITER, Role.ADMIN, False),
        (Role.ADMIN, Role.WRITER, True),
    ],
)
def test_roles_are_ordered_reader_writer_admin(role: Role, needed: Role, allowed: bool) -> None:
    if allowed:
        access.require_role(key(role), needed, "act")
    else:
        with pytest.raises(PermissionDenied):
            access.require_role(key(role), needed, "act")


def test_a_request_without_a_project_gets_the_keys_only_project_else_the_default() -> None:
    assert access.resolve_project(key(projects=(P2,)), None, P1) == P2
    assert access.resolve_project(key(), None, P1) == P1
    assert access.resolve_project(key(projects=(P1, P2)), P2, P1) == P2
    with pytest.raises(PermissionDenied):
        access.resolve_project(key(projects=(P1, P2)), None, uuid_for("project", "p3"))
    with pytest.raises(PermissionDenied):
        access.resolve_project(key(projects=(P1,)), P2, P1)


def test_a_persona_bound_key_acts_only_as_its_persona() -> None:
    bound = key(persona="Donna")
    assert access.resolve_persona(bound, None) == "Donna"
    assert access.resolve_persona(bound, " donna ") == "Donna"
    assert access.resolve_persona(key(), "texi") == "texi"
    with pytest.raises(PermissionDenied):
        access.resolve_persona(bound, "texi")


@pytest.mark.parametrize(
    ("found", "visible"),
    [
        (memory(P1), True),
        (memory(P2), False),
        (memory(P2, Scope.PROJECT), False),
        (memory(P2, Scope.GLOBAL), True),
        (memory(P2, Scope.ORG), True),
        (memory(P1, Scope.PERSONA, "donna"), True),
        (memory(P1, Scope.PERSONA, "texi"), False),
        (memory(P1, tenant=uuid_for("tenant", "beta")), False),
    ],
)
def test_a_project_and_persona_bound_key_sees_what_recall_would_show_it(
    found: tuple[Memory, MemoryState], visible: bool
) -> None:
    assert access.can_see(key(projects=(P1,), persona="donna"), *found) is visible


def test_an_unrestricted_key_sees_the_whole_tenant_and_nothing_else() -> None:
    assert access.can_see(key(), *memory(P2, Scope.PERSONA, "texi"))
    assert not access.can_see(key(), *memory(tenant=uuid_for("tenant", "beta")))


def test_changing_needs_a_writer_in_the_memorys_own_project() -> None:
    global_rule = memory(P2, Scope.GLOBAL)
    access.require_change(key(), *global_rule)
    access.require_change(key(projects=(P1,)), *memory(P1, Scope.PROJECT))
    with pytest.raises(PermissionDenied):
        access.require_change(key(projects=(P1,)), *global_rule)
    with pytest.raises(PermissionDenied):
        access.require_change(key(Role.READER), *memory())


@pytest.mark.parametrize("scope", [Scope.GLOBAL, Scope.ORG])
def test_a_key_restricted_to_projects_neither_writes_nor_changes_a_tenant_wide_rule(
    scope: Scope,
) -> None:
    own = key(projects=(P1,))
    with pytest.raises(PermissionDenied) as refused:
        access.require_scope_within_reach(own, {"scope": scope.value})
    assert refused.value.to_payload()["error"]["field"] == "applies_to.scope"
    with pytest.raises(PermissionDenied):
        access.require_change(own, *memory(P1, scope))
    access.require_scope_within_reach(key(), {"scope": scope.value})
    access.require_change(key(), *memory(P1, scope))
    for reachable in ({"scope": "project"}, {"scope": "persona", "persona": "x"}, {}, None):
        access.require_scope_within_reach(own, reachable)


def test_only_an_unrestricted_admin_reads_the_tenants_audit_trail() -> None:
    access.require_tenant_audit(key(Role.ADMIN), "list")
    for refused in (key(Role.WRITER), key(Role.ADMIN, projects=(P1,))):
        with pytest.raises(PermissionDenied):
            access.require_tenant_audit(refused, "list")


def test_secrets_are_stored_as_sha256_hex() -> None:
    digest = access.hash_secret("prism_secret")
    assert len(digest) == 64 and digest == access.hash_secret("prism_secret")
    assert digest != access.hash_secret("prism_secreT")
