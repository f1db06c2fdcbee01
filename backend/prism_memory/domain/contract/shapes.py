"""What every front door shows of a memory: the response models its JSON is built from.

Each model here is at once the OpenAPI response schema (``api/models.py`` re-exports it)
and the one statement of its shape: ``serializers.py`` builds every door's dict from the
model's fields, in their order, so the HTTP and MCP answers cannot drift from the schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from prism_memory.domain.records import (
    AuditEventType,
    Confidence,
    Enforcement,
    Kind,
    MemoruleKind,
    SourceType,
    Status,
)

Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
AppliesToMap = Annotated[
    dict[str, str],
    Field(description="the keys the rule names: persona, surface, specialization, scope"),
]


class MemoryPublic(BaseModel):
    """The ``:Memory`` node."""

    id: UUID
    tenant_id: UUID
    project_id: UUID
    namespace: str
    kind: Kind
    source_type: SourceType
    status: Status
    created_at: Timestamp
    current_version: int
    pinned: Annotated[
        bool,
        Field(description="An operator pinned it: the brief shows it first (memorules only)."),
    ] = False


# A memorule's checks (DESIGN §12), as written; only on a rule that has checks or an
# enforcement other than 'remind' (null otherwise).
ChecksList = Annotated[
    list[dict[str, Any]],
    Field(
        description="The rule's checks: each one key (forbid_command, forbid_edit, "
        "require_before, require_edit_with)."
    ),
]


class StatePublic(BaseModel):
    """One version (``:MemoryState``); memorule fields only on memorules."""

    state_id: UUID
    version: int
    subject: str | None
    body: str
    written_by_session_id: UUID
    written_by_persona: str | None
    written_at: Timestamp
    embedding_model: str
    reason: str | None
    memorule_kind: MemoruleKind | None = None
    applies_to: AppliesToMap | None = None
    confidence: Confidence | None = None
    evidence_signal_id: str | None = None
    checks: ChecksList | None = None
    enforcement: Enforcement | None = None


class RecallMatchPublic(BaseModel):
    """One recalled memory; ``why`` breaks its score down."""

    id: UUID
    kind: Kind
    source_type: SourceType
    namespace: str
    subject: str | None
    body: str
    score: float
    written_at: Timestamp
    written_by_persona: str | None
    version: int
    memorule_kind: MemoruleKind | None = None
    applies_to: AppliesToMap | None = None
    confidence: Confidence | None = None
    evidence_signal_id: str | None = None
    checks: ChecksList | None = None
    enforcement: Enforcement | None = None
    pinned: bool | None = None
    applicable: bool
    why: dict[str, Any]


class WriteResultPublic(BaseModel):
    """A successful write (``replayed`` when an idempotency key matched)."""

    ok: Literal[True]
    id: UUID
    state_id: UUID
    version: int
    kind: Kind
    written_at: Timestamp
    audit_id: UUID | None = None
    warnings: list[dict[str, Any]] = []
    replayed: bool = False


class PinResultPublic(BaseModel):
    """A memorule pinned or unpinned: the flag now, whether this call changed it (false: it
    already was so and nothing was written) and the audit event it wrote (null if none)."""

    ok: Literal[True]
    id: UUID
    pinned: bool
    changed: bool
    audit_id: UUID | None = None


class AuditEventPublic(BaseModel):
    """A ``:MemoruleAudit`` event and its link in the tenant's hash chain."""

    id: UUID
    seq: int
    memorule_id: UUID
    state_id: UUID
    event: AuditEventType
    written_by_session_id: UUID
    written_by_persona: str | None
    evidence_signal_id: str | None
    written_at: Timestamp
    reason: str | None
    content_hash: str | None = None
    prev_hash: str
    hash: str
