"""The HTTP API's request and response models (``XCreate`` in, ``XPublic`` out).

The request models are the contract's operation models (:mod:`prism_memory.domain.contract`): the
same ones validate every door's requests and give the MCP tools their input schemas.
"""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from prism_memory.domain.access import Role
from prism_memory.domain.contract.lifecycle import MemoryChanges as MemoryChanges
from prism_memory.domain.contract.lifecycle import MemoryUpdate as MemoryUpdate
from prism_memory.domain.contract.lifecycle import PinChange as PinChange
from prism_memory.domain.contract.lifecycle import StatusChange as StatusChange
from prism_memory.domain.contract.recall import BriefCreate as BriefCreate
from prism_memory.domain.contract.recall import RecallCreate as RecallCreate
from prism_memory.domain.contract.remember import AppliesToCreate as AppliesToCreate
from prism_memory.domain.contract.remember import MemoruleCreate as MemoruleCreate
from prism_memory.domain.contract.remember import NoteCreate as NoteCreate
from prism_memory.domain.contract.shapes import AppliesToMap as AppliesToMap
from prism_memory.domain.contract.shapes import AuditEventPublic as AuditEventPublic
from prism_memory.domain.contract.shapes import ChecksList as ChecksList
from prism_memory.domain.contract.shapes import MemoryPublic as MemoryPublic
from prism_memory.domain.contract.shapes import PinResultPublic as PinResultPublic
from prism_memory.domain.contract.shapes import RecallMatchPublic as RecallMatchPublic
from prism_memory.domain.contract.shapes import StatePublic as StatePublic
from prism_memory.domain.contract.shapes import Timestamp as Timestamp
from prism_memory.domain.contract.shapes import WriteResultPublic as WriteResultPublic
from prism_memory.domain.records import (
    Confidence,
    MemoruleKind,
)

# -- responses -----------------------------------------------------------------------------


class FieldErrorPublic(BaseModel):
    """One problem with one field (extra details such as ``max`` may follow)."""

    model_config = ConfigDict(extra="allow")

    field: str
    code: str
    message: str


class ErrorDetail(BaseModel):
    """What went wrong: a stable ``code``, a message for people, and details."""

    model_config = ConfigDict(extra="allow")

    code: str
    message: str
    fields: list[FieldErrorPublic] | None = None


class ErrorPublic(BaseModel):
    """The one error shape of every front door."""

    ok: Literal[False]
    error: ErrorDetail


class MemoryWithStatePublic(BaseModel):
    ok: Literal[True]
    memory: MemoryPublic
    state: StatePublic


class MemoryItemPublic(BaseModel):
    memory: MemoryPublic
    state: StatePublic


class MemoryPagePublic(BaseModel):
    """Memories newest first; pass ``next_cursor`` as ``cursor`` for the next page."""

    ok: Literal[True]
    items: list[MemoryItemPublic]
    next_cursor: str | None


class HistoryPublic(BaseModel):
    ok: Literal[True]
    memory: MemoryPublic
    versions: list[StatePublic]
    audit: list[AuditEventPublic]


class AuditPagePublic(BaseModel):
    """Audit events, newest first; pass ``next_cursor`` as ``before`` for the next page."""

    ok: Literal[True]
    events: list[AuditEventPublic]
    next_cursor: int | None


class HeadPublic(BaseModel):
    """A chain's head: its length and the hash of its last entry."""

    seq: int
    hash: str
    at: Timestamp | None


class ServedReportPublic(BaseModel):
    """The served-receipt chain recomputed."""

    ok: bool
    events: int
    head: str
    broken_at_seq: int | None
    broken_event_id: str | None
    problem: str | None
    recorded_head: HeadPublic | None


class ChainReportPublic(BaseModel):
    """The audit chain recomputed; ``ok`` false names the first broken link.

    ``content_checked`` events had their state's content hash recomputed; ``legacy_events``
    were written before content hashes and verify as before. ``served``: the receipts.
    """

    ok: bool
    events: int
    head: str
    broken_at_seq: int | None
    broken_event_id: str | None
    problem: str | None
    legacy_events: int = 0
    content_checked: int = 0
    recorded_head: HeadPublic | None = None
    given_head: HeadPublic | None = None
    served: ServedReportPublic | None = None


class RecallPublic(BaseModel):
    ok: Literal[True]
    matches: list[RecallMatchPublic]
    count: int
    candidates: int
    embedding_model: str


class BriefRulePublic(BaseModel):
    id: UUID
    memorule_kind: MemoruleKind | None
    subject: str | None
    confidence: Confidence | None
    score: float
    pinned: bool = False


class BriefPublic(BaseModel):
    """The brief as Markdown, and which rules it holds."""

    ok: Literal[True]
    markdown: str
    included: list[BriefRulePublic]
    omitted: int
    token_budget: int
    estimated_tokens: int


class HealthPublic(BaseModel):
    ok: Literal[True]
    status: str


class ReadyPublic(BaseModel):
    ok: Literal[True]
    ready: Literal[True]


class WhoAmIPublic(BaseModel):
    """The caller's key (never its secret) and the context the request ran in."""

    ok: Literal[True]
    key_id: str
    tenant_id: UUID
    tenant_slug: str | None = Field(
        description="the slug typed for the tenant when the key was created; null when it "
        "was typed as a UUID or the key predates stored slugs"
    )
    role: Role
    projects: list[UUID]
    project_slugs: dict[str, str] = Field(
        description="project UUID -> the slug typed for it when the key was created"
    )
    persona: str | None
    project_id: UUID
