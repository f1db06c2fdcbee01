"""The HTTP API's request and response models (``XCreate`` in, ``XPublic`` out).

The bodies of remember, recall and brief are validated by the services' own validators (so
every field error comes back at once, in the one error shape); their models here document
them in the OpenAPI schema and mirror the validators' bounds, which they import.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain import validation as v
from app.domain.access import Role
from app.domain.characters import text_pattern
from app.domain.records import (
    AuditEventType,
    Confidence,
    Kind,
    MemoruleKind,
    Scope,
    SourceType,
    Status,
)
from app.services import brief_service as b

Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
AppliesToMap = Annotated[
    dict[str, str],
    Field(description="the keys the rule names: persona, surface, specialization, scope"),
]
Namespace = Annotated[
    str,
    # As the validator judges it: surrounding whitespace is stripped first.
    Field(
        pattern=rf"^\s*[A-Za-z0-9][A-Za-z0-9._:/-]{{0,{v.NAMESPACE_MAX - 1}}}\s*$",
        examples=["default"],
    ),
]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _text(max_len: int, min_len: int = 1, *, line: bool = False, **more: Any) -> Any:
    """A text field's schema, exactly as the validators judge it: the bounds count the text
    without its surrounding whitespace, so they live in the pattern (schema only: the
    validators, not pydantic, check requests)."""
    pattern = text_pattern(min_len=min_len, max_len=max_len, single_line=line)
    return Field(json_schema_extra={"pattern": pattern}, **more)


_NAMED = ("persona", "surface", "specialization", "scope")
# At least one key given a value (null means "not given"); scope 'persona' names whose.
_APPLIES_TO_RULES: dict[str, Any] = {
    "anyOf": [{"required": [k], "properties": {k: {"type": "string"}}} for k in _NAMED],
    "if": {"required": ["scope"], "properties": {"scope": {"const": "persona"}}},
    "then": {"required": ["persona"], "properties": {"persona": {"type": "string"}}},
}


# -- requests ------------------------------------------------------------------------------
# Optional fields are nullable where the validators read null as "not given".


class AppliesToCreate(_Closed):
    """Where a memorule applies: at least one key."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_APPLIES_TO_RULES)

    persona: str | None = _text(v.APPLIES_VALUE_MAX, line=True, default=None)
    surface: str | None = _text(v.APPLIES_VALUE_MAX, line=True, default=None)
    specialization: str | None = _text(v.APPLIES_VALUE_MAX, line=True, default=None)
    scope: Scope | None = None


class NoteCreate(_Closed):
    """``prism_remember(kind='note')``: free text (``content`` is accepted for ``body``)."""

    kind: Literal["note"] | None = "note"
    body: str = _text(v.BODY_MAX)
    subject: str | None = _text(v.SUBJECT_MAX, line=True, default=None)
    namespace: Namespace | None = None
    idempotency_key: str | None = _text(v.IDEMPOTENCY_KEY_MAX, line=True, default=None)


class MemoruleCreate(_Closed):
    """``prism_remember(kind='memorule')``: a typed behavioural record (SPEC-094 v0.4)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={  # 'corrects' only on a correction
            "if": {"required": ["corrects"], "properties": {"corrects": {"type": "string"}}},
            "then": {"properties": {"memorule_kind": {"const": "correction"}}},
        },
    )

    kind: Literal["memorule"]
    memorule_kind: MemoruleKind
    subject: str = _text(v.SUBJECT_MAX, v.SUBJECT_MIN, line=True)
    body: str = _text(v.BODY_MAX, v.MEMORULE_BODY_MIN)
    applies_to: AppliesToCreate
    evidence_signal_id: str | None = _text(v.EVIDENCE_MAX, line=True, default=None)
    confidence: Confidence | None = Confidence.INFERRED
    namespace: Namespace | None = None
    idempotency_key: str | None = _text(v.IDEMPOTENCY_KEY_MAX, line=True, default=None)
    corrects: UUID | None = Field(None, description="(correction) the memorule it replaces")
    strict: bool = Field(False, description="refuse a near-duplicate instead of warning")


KindFilter = MemoruleKind | Annotated[list[MemoruleKind], Field(max_length=v.FILTER_LIST_MAX)]
ConfidenceFilter = Confidence | Annotated[list[Confidence], Field(max_length=v.FILTER_LIST_MAX)]


class RecallCreate(_Closed):
    """``semantic_recall``: what applies to the caller's context, best first."""

    query: str | None = _text(v.QUERY_MAX, 0, default="", description="may be empty")
    top_k: int | None = Field(10, ge=1, le=v.TOP_K_MAX)
    namespace: Namespace | None = None
    source_type: SourceType | None = SourceType.MEMORY
    memorule_kind: KindFilter | None = None
    confidence: ConfidenceFilter | None = None
    include_inapplicable: bool = False


class BriefCreate(_Closed):
    """The task-start brief: the memorules that apply, as Markdown within a token budget."""

    # At most TASK_MAX characters as sent (whitespace included), at most QUERY_MAX without.
    task: str = Field(
        "",
        max_length=b.TASK_MAX,
        json_schema_extra={
            "pattern": text_pattern(min_len=0, max_len=v.QUERY_MAX, single_line=False)
        },
    )
    token_budget: int = Field(b.TOKEN_BUDGET_DEFAULT, ge=b.TOKEN_BUDGET_MIN, le=b.TOKEN_BUDGET_MAX)
    namespace: Namespace | None = None
    top_k: int | None = Field(b.TOP_K_DEFAULT, ge=1, le=v.TOP_K_MAX)


_CHANGES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "additionalProperties": False,
    "properties": {
        "subject": {  # null: a note without a subject
            "anyOf": [
                {
                    "type": "string",
                    "pattern": text_pattern(min_len=1, max_len=v.SUBJECT_MAX, single_line=True),
                },
                {"type": "null"},
            ]
        },
        "body": {
            "type": "string",
            "pattern": text_pattern(min_len=1, max_len=v.BODY_MAX, single_line=False),
        },
        "memorule_kind": {"$ref": "#/components/schemas/MemoruleKind"},
        "applies_to": {"$ref": "#/components/schemas/AppliesToCreate"},
        "evidence_signal_id": {
            "anyOf": [
                {
                    "type": "string",
                    "pattern": text_pattern(min_len=1, max_len=v.EVIDENCE_MAX, single_line=True),
                },
                {"type": "null"},
            ]
        },
        "confidence": {"$ref": "#/components/schemas/Confidence"},
    },
}


class MemoryUpdate(_Closed):
    """A new version of a memory: the fields to change, and why."""

    changes: dict[str, Any] = Field(
        description="fields to change: note body/subject; memorule memorule_kind, subject, "
        "body, applies_to, evidence_signal_id, confidence (a memorule's subject needs at "
        f"least {v.SUBJECT_MIN} characters and its body {v.MEMORULE_BODY_MIN})",
        examples=[{"body": "Run the full test suite before every merge, not just unit tests."}],
        json_schema_extra=_CHANGES_SCHEMA,
    )
    reason: str | None = _text(v.REASON_MAX, 0, default=None)
    evidence_signal_id: str | None = _text(v.EVIDENCE_MAX, line=True, default=None)
    idempotency_key: str | None = _text(v.IDEMPOTENCY_KEY_MAX, line=True, default=None)


class StatusChange(_Closed):
    """Retire or restore a memory; the reason is kept in the audit trail."""

    reason: str = _text(v.REASON_MAX)
    idempotency_key: str | None = _text(v.IDEMPOTENCY_KEY_MAX, line=True, default=None)


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
    applicable: bool
    why: dict[str, Any]


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
    role: Role
    projects: list[UUID]
    persona: str | None
    project_id: UUID
