"""Who may do what: API keys, roles, and which memories a key can see. Pure, no I/O.

A key belongs to ONE tenant (the tenant of every request made with it), optionally to a
set of projects and a persona, and has a role:

- ``reader``: recall, read by id, history, brief, audit events of a memorule it can see;
- ``writer``: all of that, and remember / update / retire / restore / pin / unpin;
- ``admin``: all of that, and the whole tenant's audit listing and chain verification —
  only when the key is not restricted to projects (audit events span every project).

Every front door (``/v1``, MCP over HTTP or stdio, the console, the CLI) acts with a key and
asks :class:`prism_memory.services.access_service.AccessService`, which applies these rules; a
process
that needs no keys (stdio, the CLI, ``--insecure-local``) acts with an :func:`operator_key`.

Visibility follows recall (DESIGN §6): a key restricted to projects sees the memories of
those projects and the tenant's ``global``/``org`` memorules; a key bound to a persona does
not see other personas' ``persona``-scope rules. Something a key cannot see is reported
exactly like something that does not exist.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from uuid import UUID

from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    Kind,
    MemoruleWrite,
    Memory,
    MemoryState,
    Scope,
    SessionContext,
    iso,
    utcnow,
)
from prism_memory.errors import PermissionDenied

KEY_PREFIX = "prism_"
KEY_ID_PREFIX = "key_"
# A presented secret longer than this is refused before hashing (ours are 49 characters).
KEY_MAX_LENGTH = 200


class Role(StrEnum):
    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"


_RANK = {Role.READER: 0, Role.WRITER: 1, Role.ADMIN: 2}


@dataclass(frozen=True)
class KeySlugs:
    """The slugs a key's creator typed for its tenant and projects, kept beside their UUIDs
    (a slug maps one way to its UUID, so it cannot be recovered later).

    ``tenant`` is None and a project is absent from ``projects`` when it was typed as a UUID.
    """

    tenant: str | None = None
    projects: tuple[tuple[UUID, str], ...] = ()

    def project(self, project_id: UUID) -> str | None:
        return next((slug for pid, slug in self.projects if pid == project_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "projects": {str(p): s for p, s in self.projects}}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> KeySlugs:
        """The stored form back (:meth:`to_dict`)."""
        projects = raw.get("projects") or {}
        return cls(raw.get("tenant"), tuple((UUID(p), str(s)) for p, s in projects.items()))


@dataclass(frozen=True)
class ApiKey:
    """A stored API key (never its secret). ``projects`` empty means every project.

    ``slugs`` is None for a key created before slugs were stored (schema migrations SQLite 7,
    PostgreSQL 8): its tenant and projects are known by UUID only.
    """

    key_id: str
    tenant_id: UUID
    role: Role
    projects: tuple[UUID, ...]
    persona: str | None
    prefix: str
    label: str | None
    created_at: datetime
    revoked_at: datetime | None = None
    slugs: KeySlugs | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def to_dict(self) -> dict[str, Any]:
        """The key as shown (never its secret). ``tenant_slug`` / ``project_slugs`` are what
        its creator typed (null, or absent from the map: typed as a UUID);
        ``slugs_stored`` is false for a key made before slugs were stored."""
        slugs = self.slugs or KeySlugs()
        return {
            "key_id": self.key_id,
            "tenant_id": str(self.tenant_id),
            "tenant_slug": slugs.tenant,
            "role": self.role.value,
            "projects": [str(p) for p in self.projects],
            "project_slugs": {str(p): s for p in self.projects if (s := slugs.project(p))},
            "slugs_stored": self.slugs is not None,
            "persona": self.persona,
            "prefix": self.prefix,
            "label": self.label,
            "created_at": iso(self.created_at),
            "revoked_at": iso(self.revoked_at) if self.revoked_at else None,
        }


@dataclass(frozen=True)
class Caller:
    """Who is acting: a key, and the session context the request runs in (tenant from it)."""

    key: ApiKey
    ctx: SessionContext


def operator_key(
    tenant_id: UUID, persona: str | None = None, *, key_id: str = "local", label: str = "local"
) -> ApiKey:
    """The unrestricted admin "key" of a process without keys (never stored, no secret).

    The local operator owns the store: ``prism mcp`` over stdio, the CLI, and
    ``prism serve --insecure-local`` (bound to loopback) act with it.
    """
    return ApiKey(
        key_id=key_id,
        tenant_id=tenant_id,
        role=Role.ADMIN,
        projects=(),
        persona=persona,
        prefix="",
        label=label,
        created_at=utcnow(),
    )


def hash_secret(secret: str) -> str:
    """The stored form of a key: SHA-256 hex.

    A fast hash is enough because our secrets carry 256 random bits: slow, salted hashes
    (bcrypt, argon2) protect guessable passwords from offline guessing, which is hopeless
    here. An unsalted digest also lets the server find a key with one indexed lookup.
    """
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def require_role(key: ApiKey, needed: Role, action: str) -> None:
    """Raises PermissionDenied unless ``key``'s role is at least ``needed``."""
    if _RANK[key.role] < _RANK[needed]:
        raise PermissionDenied(
            f"a {key.role.value} key cannot {action}; it needs the {needed.value} role",
            required_role=needed.value,
        )


def resolve_project(key: ApiKey, requested: UUID | None, default: UUID) -> UUID:
    """The project a request runs in.

    Args:
        key: the caller's key.
        requested: the project the request names, if any.
        default: the server's default project.

    Returns:
        ``requested``; else the key's project when it is bound to exactly one; else
        ``default``.

    Raises:
        PermissionDenied: the key is restricted to other projects.
    """
    if requested is None:
        requested = key.projects[0] if len(key.projects) == 1 else default
    if key.projects and requested not in key.projects:
        raise PermissionDenied("this key is not allowed in that project")
    return requested


def resolve_persona(key: ApiKey, requested: str | None) -> str | None:
    """The persona a request acts as: the key's own when it is bound to one.

    Raises:
        PermissionDenied: the request names a persona other than the key's.
    """
    if key.persona is None:
        return requested
    if requested is not None and normalise_key(requested) != normalise_key(key.persona):
        raise PermissionDenied("this key acts only as its own persona")
    return key.persona


def require_own_persona_rule(key: ApiKey, applies_to: Any) -> None:
    """Raises PermissionDenied when a persona-bound key writes a rule for another persona.

    A key bound to a persona writes rules for that persona (or for none); only an admin key
    may name another persona in ``applies_to.persona``. Called on a validated write
    (:func:`require_rule_write`) with ``applies_to`` as a mapping.
    """
    if key.persona is None or key.role is Role.ADMIN or not isinstance(applies_to, Mapping):
        return
    named = applies_to.get("persona")
    if not isinstance(named, str) or not named.strip():
        return
    if normalise_key(named) != normalise_key(key.persona):
        raise PermissionDenied(
            "a key bound to a persona writes rules for its own persona only; "
            "'applies_to.persona' names another (an admin key may)",
            field="applies_to.persona",
        )


TENANT_WIDE = frozenset({Scope.GLOBAL, Scope.ORG})


def require_scope_within_reach(key: ApiKey, applies_to: Any) -> None:
    """Raises PermissionDenied when a key restricted to projects names a tenant-wide scope.

    A ``global``/``org`` memorule reaches every project of the tenant (their briefs and
    recalls), so writing one, or widening a rule to one, needs a key of the whole tenant.
    Called on a validated write, with ``applies_to`` as a mapping.
    """
    if not key.projects or not isinstance(applies_to, Mapping):
        return
    if applies_to.get("scope") in {s.value for s in TENANT_WIDE}:
        raise PermissionDenied(
            "a key restricted to projects cannot write a rule for every project of the "
            f"tenant (scope '{applies_to['scope']}'); that needs a key of the whole tenant",
            field="applies_to.scope",
        )


_DECIDED = ("ask", "deny")  # enforcements that are an operator's decision (SPEC-085/077)


def require_enforcement_right(
    key: ApiKey, changes: Any, current: MemoryState | None = None
) -> None:
    """Raises PermissionDenied unless the key may make this write's enforcement change.

    Memorules stay advisory unless an operator decides otherwise: only an admin key sets
    ``enforcement`` ``ask`` or ``deny``, and only an admin changes the ``enforcement`` or the
    ``checks`` of a rule ``current``-ly at ``ask``/``deny`` (else a writer could undo the
    decision by lowering it or emptying its checks). Called on validated values.

    Args:
        key: the caller's key.
        changes: the validated values a write sets (``enforcement``, ``checks``).
        current: the rule's current state (updates).
    """
    if key.role is Role.ADMIN or not isinstance(changes, Mapping):
        return
    asked = changes.get("enforcement")
    if asked in _DECIDED:
        raise PermissionDenied(
            f"only an admin key may set enforcement '{asked}' (memorules stay advisory "
            "unless an operator decides otherwise); 'remind' needs no admin",
            field="enforcement",
            required_role=Role.ADMIN.value,
        )
    decided = current is not None and current.enforcement.value in _DECIDED
    touched = [f for f in ("enforcement", "checks") if f in changes]
    if decided and touched and current is not None:
        raise PermissionDenied(
            f"this rule's enforcement is '{current.enforcement.value}', an admin's decision: "
            f"only an admin key may change its {' or '.join(touched)}",
            field=touched[0],
            required_role=Role.ADMIN.value,
        )


def require_rule_write(
    key: ApiKey,
    write: MemoruleWrite,
    changed: Collection[str] | None = None,
    current: MemoryState | None = None,
) -> None:
    """The checks above on a memorule as validated: a new one (``changed`` None), or a new
    version (``write``, the current one merged with the changes), judged for the fields
    ``changed`` names against its ``current`` state (a writer may reword a rule at an
    admin's ``ask``/``deny``, not touch its enforcement or checks)."""
    if changed is None or "applies_to" in changed:
        applies = write.applies_to.to_dict()
        require_own_persona_rule(key, applies)
        require_scope_within_reach(key, applies)
    sets: dict[str, Any] = {}
    if changed is None or "enforcement" in changed:
        sets["enforcement"] = write.enforcement.value
    if changed is not None and "checks" in changed:
        sets["checks"] = write.checks
    require_enforcement_right(key, sets, current)


def reach_of(memory: Memory, state: MemoryState) -> tuple[Scope, str | None]:
    """A memory's scope and the persona its rule names (a note reaches its project)."""
    applies = state.applies_to if memory.kind is Kind.MEMORULE else None
    if applies is None:
        return Scope.PROJECT, None
    return applies.effective_scope, applies.persona


def visible(
    project_id: UUID,
    scope: Scope,
    rule_persona: str | None,
    viewer_project: UUID,
    viewer_persona: str | None,
    *,
    no_persona_sees_persona_rules: bool,
) -> bool:
    """Whether a memory of ``project_id`` (of the viewer's tenant) reaches a viewer in
    ``viewer_project``: the visibility rule (DESIGN §6), stated once.

    A ``global`` or ``org`` memorule reaches every project of its tenant; any other memory
    only its own project, and there a ``persona`` rule only the persona it names (compared
    normalised). A viewer without a persona sees the persona rules of its project when
    ``no_persona_sees_persona_rules`` (a key not bound to a persona: reads and listings), and
    none of them otherwise (a recall in a session context without a persona).

    The engines state it again where it must run next to the data — the listing query
    (``trigraph/listing_sql.py``), PostgreSQL's recall branches (``postgres/visibility.py``),
    the SQLite recall cache's snapshot and fold (``sqlite/recall_cache.py``,
    ``sqlite/recall.py``) — and ``test_visibility.py`` checks every one of them against
    this function on random memories and viewers, on both engines.
    """
    if scope in TENANT_WIDE:
        return True
    if project_id != viewer_project:
        return False
    if scope is not Scope.PERSONA:
        return True
    if viewer_persona is None:
        return no_persona_sees_persona_rules
    return normalise_key(rule_persona) == normalise_key(viewer_persona)


def can_see(key: ApiKey, memory: Memory, state: MemoryState) -> bool:
    """Whether the key may read this memory (else it is reported as not found): it is of
    the key's tenant and :func:`visible` from one of the key's projects (any project, for
    a key restricted to none)."""
    if memory.tenant_id != key.tenant_id:
        return False
    scope, persona = reach_of(memory, state)
    return any(
        visible(
            memory.project_id,
            scope,
            persona,
            project,
            key.persona,
            no_persona_sees_persona_rules=True,
        )
        for project in key.projects or (memory.project_id,)
    )


def require_change(key: ApiKey, memory: Memory, state: MemoryState) -> None:
    """Raises PermissionDenied unless the key may change this (visible) memory.

    A key restricted to projects changes the memories of its projects, and not a
    ``global``/``org`` memorule even of its own project: that rule reaches every project of
    the tenant, so updating, retiring, restoring, correcting or deciding on it needs a key
    of the whole tenant.
    """
    require_role(key, Role.WRITER, "change memories")
    if key.projects and memory.project_id not in key.projects:
        raise PermissionDenied("this key cannot change memories of another project")
    applies = state.applies_to if memory.kind is Kind.MEMORULE else None
    if key.projects and applies is not None and applies.effective_scope in TENANT_WIDE:
        raise PermissionDenied(
            "a key restricted to projects cannot change a rule that reaches every project of "
            f"the tenant (scope '{applies.effective_scope.value}'); that needs a key of the "
            "whole tenant"
        )


def require_tenant_audit(key: ApiKey, action: str) -> None:
    """Raises PermissionDenied unless the key may read the whole tenant's audit trail."""
    require_role(key, Role.ADMIN, action)
    if key.projects:
        raise PermissionDenied(
            f"a key restricted to projects cannot {action}; filter by a memorule instead"
        )
