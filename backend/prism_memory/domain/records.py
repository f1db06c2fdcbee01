"""Prism's records: what a memory, a state, an audit event and a recall result are.

Pure data, no I/O. Field names are the TriGraph's names (SPEC-094 v0.4, SPEC-020).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from uuid import UUID

from prism_memory.domain.adherence.checks import Check, checks_json, stored_checks
from prism_memory.domain.ids import new_id


class Kind(StrEnum):
    NOTE = "note"
    MEMORULE = "memorule"


class SourceType(StrEnum):
    MEMORY = "memory"
    MEMORULE = "memorule"


class MemoruleKind(StrEnum):
    BEHAVIORAL_RULE = "behavioral_rule"
    FEEDBACK = "feedback"
    PREFERENCE = "preference"
    CORRECTION = "correction"
    CONVENTION = "convention"


class Confidence(StrEnum):
    OBSERVED = "observed"
    INFERRED = "inferred"
    ASSERTED = "asserted"


class Enforcement(StrEnum):
    """What the ``PreToolUse`` guard does when an action hits a rule's checks (DESIGN §12):
    ``remind`` puts the rule in front of the agent and lets the action run (the default);
    ``ask`` has the user confirm; ``deny`` blocks it. Only an admin key sets ask/deny."""

    REMIND = "remind"
    ASK = "ask"
    DENY = "deny"


class Scope(StrEnum):
    GLOBAL = "global"
    ORG = "org"
    PROJECT = "project"
    PERSONA = "persona"


class Status(StrEnum):
    ACTIVE = "active"
    RETIRED = "retired"
    PROPOSED = "proposed"  # captured, awaiting review: never recalled (issue 20)


class AuditEventType(StrEnum):
    CREATED = "created"
    SUPERSEDED = "superseded"
    RETIRED = "retired"
    RESTORED = "restored"
    # The review queue (issue 20): a captured proposal, the decisions on it, and operator
    # evidence added to a rule (no new version) or a promotion to ``observed``.
    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    MERGED = "merged"
    EVIDENCE = "evidence"
    PROMOTED = "promoted"
    # Adherence (DESIGN §12, issue 28): a session's verdict on a rule with checks, and the
    # PreToolUse guard putting a rule in front of the agent (reminded) or blocking the action.
    # The event's reason holds the canonical, redacted verdict JSON (inside the chain hash).
    FOLLOWED = "followed"
    VIOLATED = "violated"
    REMINDED = "reminded"
    BLOCKED = "blocked"
    # An operator's pin (issue 31): the rule is briefed first, before anything ranked; the
    # flag lives on the memory row (no new version), the event names the current state.
    PINNED = "pinned"
    UNPINNED = "unpinned"


APPLIES_TO_KEYS = ("persona", "surface", "specialization")


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO 8601 in UTC with microseconds and a ``Z``: sorts as text."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


@dataclass(frozen=True)
class AppliesTo:
    """Where a memorule applies. A key left ``None`` is general."""

    persona: str | None = None
    surface: str | None = None
    specialization: str | None = None
    scope: Scope | None = None

    @property
    def effective_scope(self) -> Scope:
        """A rule without a scope is a project rule (DESIGN §6)."""
        return self.scope or Scope.PROJECT

    def to_dict(self) -> dict[str, str]:
        out = {k: getattr(self, k) for k in APPLIES_TO_KEYS if getattr(self, k) is not None}
        if self.scope is not None:
            out["scope"] = self.scope.value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppliesTo:
        scope = data.get("scope")
        return cls(
            persona=data.get("persona"),
            surface=data.get("surface"),
            specialization=data.get("specialization"),
            scope=Scope(scope) if scope else None,
        )


@dataclass(frozen=True)
class SessionContext:
    """Who is asking, and for what: every call runs in one."""

    tenant_id: UUID
    project_id: UUID
    session_id: UUID
    persona: str | None = None
    surface: str | None = None
    specialization: str | None = None
    key_id: str | None = None  # the HTTP API key the call came with (served receipts name it)

    def value(self, key: str) -> str | None:
        value: str | None = getattr(self, key)
        return value


@dataclass(frozen=True)
class NoteWrite:
    """A validated free-text note write."""

    body: str
    subject: str | None = None
    namespace: str = "default"
    idempotency_key: str | None = None


@dataclass(frozen=True)
class MemoruleWrite:
    """A validated memorule write (SPEC-094 v0.4 write contract)."""

    memorule_kind: MemoruleKind
    subject: str
    body: str
    applies_to: AppliesTo
    confidence: Confidence = Confidence.INFERRED
    evidence_signal_id: str | None = None
    namespace: str = "default"
    idempotency_key: str | None = None
    corrects: UUID | None = None
    strict: bool = False
    checks: tuple[Check, ...] = ()
    enforcement: Enforcement = Enforcement.REMIND


@dataclass(frozen=True)
class Memory:
    """The ``:Memory`` node."""

    id: UUID
    tenant_id: UUID
    project_id: UUID
    namespace: str
    kind: Kind
    status: Status
    created_at: datetime
    current_version: int = 1
    # An operator pinned the rule (issue 31): the brief shows it first, inside its budget.
    # Kept when the rule is retired (a retired rule is never briefed, so it has no effect).
    pinned: bool = False

    @property
    def source_type(self) -> SourceType:
        return SourceType.MEMORULE if self.kind is Kind.MEMORULE else SourceType.MEMORY


@dataclass(frozen=True)
class MemoryState:
    """The ``:MemoryState`` node: one version of a memory, reached by ``HAS_STATE``."""

    id: UUID
    memory_id: UUID
    version: int
    body: str
    subject: str | None
    written_by_session_id: UUID
    written_by_persona: str | None
    written_at: datetime
    embedding_model: str
    memorule_kind: MemoruleKind | None = None
    applies_to: AppliesTo | None = None
    evidence_signal_id: str | None = None
    confidence: Confidence | None = None
    reason: str | None = None
    checks: tuple[Check, ...] = ()  # memorules (DESIGN §12); () on notes
    enforcement: Enforcement = Enforcement.REMIND

    def embedding_text(self) -> str:
        """Subject and body together: subject alone loses most of the signal."""
        return f"{self.subject}\n{self.body}" if self.subject else self.body

    @property
    def guarded(self) -> bool:
        """Whether the state says anything about adherence (checks, or an enforcement other
        than the default): a state that does not reads, hashes and dumps as before."""
        return bool(self.checks) or self.enforcement is not Enforcement.REMIND

    def adherence_dict(self) -> dict[str, Any]:
        """``checks`` and ``enforcement`` as every door shows them; empty for a state that
        is not :attr:`guarded`, so its answers stay exactly as they were."""
        if not self.guarded:
            return {}
        return {"checks": checks_json(self.checks), "enforcement": self.enforcement.value}


def first_version(
    ctx: SessionContext,
    kind: Kind,
    namespace: str,
    subject: str | None,
    body: str,
    embedding_model: str,
    now: datetime,
    **state: Any,
) -> tuple[Memory, MemoryState]:
    """A new memory written in ``ctx`` and its version 1 (``state``: the kind's own fields,
    e.g. a memorule's ``memorule_kind``, ``applies_to``, ``confidence``)."""
    memory = Memory(
        id=new_id(),
        tenant_id=ctx.tenant_id,
        project_id=ctx.project_id,
        namespace=namespace,
        kind=kind,
        status=Status.ACTIVE,
        created_at=now,
    )
    version = MemoryState(
        id=new_id(),
        memory_id=memory.id,
        version=1,
        body=body,
        subject=subject,
        written_by_session_id=ctx.session_id,
        written_by_persona=ctx.persona,
        written_at=now,
        embedding_model=embedding_model,
        **state,
    )
    return memory, version


@dataclass(frozen=True)
class AuditDraft:
    """An audit event before the store chains it."""

    id: UUID
    memorule_id: UUID
    state_id: UUID
    event: AuditEventType
    written_by_session_id: UUID
    written_by_persona: str | None
    evidence_signal_id: str | None
    written_at: datetime
    reason: str | None = None
    content_hash: str | None = None


@dataclass(frozen=True)
class MemoruleAudit:
    """The ``:MemoruleAudit`` node: the spec's five fields, the event and its chain link.

    ``content_hash`` commits to the content of the state the event names
    (:func:`prism_memory.domain.audit.content_hash`); None on events written before migration 4.
    """

    id: UUID
    tenant_id: UUID
    seq: int
    memorule_id: UUID
    state_id: UUID
    event: AuditEventType
    written_by_session_id: UUID
    written_by_persona: str | None
    evidence_signal_id: str | None
    written_at: datetime
    reason: str | None
    prev_hash: str
    hash: str
    content_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "seq": self.seq,
            "memorule_id": str(self.memorule_id),
            "written_by_session_id": str(self.written_by_session_id),
            "written_by_persona": self.written_by_persona,
            "evidence_signal_id": self.evidence_signal_id,
            "written_at": iso(self.written_at),
            "event": self.event.value,
            "state_id": str(self.state_id),
            "reason": self.reason,
            "content_hash": self.content_hash,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass(frozen=True)
class WriteResult:
    """What a successful write returns (DESIGN §5)."""

    id: UUID
    state_id: UUID
    version: int
    kind: Kind
    written_at: datetime
    audit_id: UUID | None = None
    warnings: tuple[dict[str, Any], ...] = ()
    replayed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The result's own shape (also what an idempotency key stores): no envelope."""
        out: dict[str, Any] = {
            "id": str(self.id),
            "state_id": str(self.state_id),
            "version": self.version,
            "kind": self.kind.value,
            "written_at": iso(self.written_at),
        }
        if self.audit_id is not None:
            out["audit_id"] = str(self.audit_id)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.replayed:
            out["replayed"] = True
        return out


@dataclass(frozen=True)
class PinResult:
    """What pinning or unpinning a memorule returns: the flag now, whether this call changed
    it (``False``: it already was so, and no event was written) and the event it wrote."""

    id: UUID
    pinned: bool
    changed: bool
    audit_id: UUID | None = None


@dataclass(frozen=True)
class RecallQuery:
    """A validated ``semantic_recall`` request."""

    query: str = ""
    top_k: int = 10
    namespace: str | None = None
    source_type: SourceType = SourceType.MEMORY
    memorule_kinds: tuple[MemoruleKind, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    include_inapplicable: bool = False


@dataclass(frozen=True)
class RecallMatch:
    """One recalled memory with its score and the score's reasons."""

    memory: Memory
    state: MemoryState
    score: float
    why: dict[str, Any]
    applicable: bool = True


@dataclass(frozen=True)
class RecallResult:
    """The recall envelope."""

    matches: list[RecallMatch] = field(default_factory=list)
    model: str = ""
    candidates: int = 0


# Field names in declaration order: storage columns, dump keys and Cypher properties of these
# nodes all use exactly these names, so they are derived here instead of listed again.
MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Memory))
AUDIT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(MemoruleAudit))
# A state's fields, in the order of the ``memory_state`` columns on both engines and of the
# dump's state keys (the dataclass declares them in another order: its defaults come last).
# Rows, parameters and dump keys are derived from this one list; the content hash keeps its
# own frozen order (``audit.HASHED_STATE_FIELDS``, a format), and ``test_state_fields``
# asserts that the two, and the Cypher export's properties, cover each other.
STATE_FIELDS: tuple[str, ...] = (
    "id",
    "memory_id",
    "version",
    "memorule_kind",
    "subject",
    "body",
    "applies_to",
    "evidence_signal_id",
    "confidence",
    "written_by_session_id",
    "written_by_persona",
    "written_at",
    "embedding_model",
    "reason",
    "checks",
    "enforcement",
)


def _same(value: Any) -> Any:
    return value


def _enum_value(value: Any) -> Any:
    return value.value if value is not None else None


# Each state field as a JSON value (``state_values``).
_STATE_JSON: dict[str, Callable[[Any], Any]] = {
    "id": str,
    "memory_id": str,
    "version": _same,
    "memorule_kind": _enum_value,
    "subject": _same,
    "body": _same,
    "applies_to": lambda v: v.to_dict() if v is not None else None,
    "evidence_signal_id": _same,
    "confidence": _enum_value,
    "written_by_session_id": str,
    "written_by_persona": _same,
    "written_at": iso,
    "embedding_model": _same,
    "reason": _same,
    "checks": checks_json,
    "enforcement": _enum_value,
}
_STATE_JSON_FIELDS = tuple((name, _STATE_JSON[name]) for name in STATE_FIELDS)


def state_values(s: MemoryState) -> dict[str, Any]:
    """Every field of a state as a JSON value, in :data:`STATE_FIELDS` order: ids as text,
    enums by value, times in ISO 8601, applies_to as a dict, checks as written (a list).
    The dump writes these; the content hash and the SQLite rows start from them."""
    return {name: value(getattr(s, name)) for name, value in _STATE_JSON_FIELDS}


def state_from_stored(v: Mapping[str, Any]) -> MemoryState:
    """A state from its stored values by field name (:data:`STATE_FIELDS`), as both engines'
    rows read once each has converted its own types: ids as UUIDs, ``written_at`` aware,
    applies_to a dict and checks a list (or None), enums by value (None or empty: unset)."""
    kind, confidence, enforcement = v["memorule_kind"], v["confidence"], v["enforcement"]
    return MemoryState(
        id=v["id"],
        memory_id=v["memory_id"],
        version=v["version"],
        body=v["body"],
        subject=v["subject"],
        written_by_session_id=v["written_by_session_id"],
        written_by_persona=v["written_by_persona"],
        written_at=v["written_at"],
        embedding_model=v["embedding_model"],
        memorule_kind=MemoruleKind(kind) if kind else None,
        applies_to=AppliesTo.from_dict(v["applies_to"]) if v["applies_to"] is not None else None,
        evidence_signal_id=v["evidence_signal_id"],
        confidence=Confidence(confidence) if confidence else None,
        reason=v["reason"],
        checks=stored_checks(v["checks"]) if v["checks"] else (),
        enforcement=Enforcement(enforcement) if enforcement else Enforcement.REMIND,
    )
