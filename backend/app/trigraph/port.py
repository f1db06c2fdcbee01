"""The TriGraph storage port: what services need from an engine.

The graph (SPEC-020): ``(:Memory)-[:HAS_STATE]->(:MemoryState)`` and ``(:MemoruleAudit)``.
Adapters: :mod:`app.trigraph.sqlite` (embedded default) and, later, PostgreSQL. Every
adapter passes the same contract suite (``tests/test_trigraph_contract.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from app.domain.ranking import Candidates
from app.domain.records import (
    AuditDraft,
    AuditEventType,
    Confidence,
    MemoruleAudit,
    MemoruleKind,
    Memory,
    MemoryState,
    Status,
)
from app.embeddings.port import Vector


@dataclass(frozen=True)
class StateWrite:
    """A new state; ``vector`` None keeps the memory's current vector (text unchanged)."""

    state: MemoryState
    vector: Vector | None


@dataclass(frozen=True)
class IdempotencyClaim:
    """Claim ``key`` for this request; ``result`` is what a replay returns."""

    key: str
    request_hash: str
    result: dict[str, Any]


@dataclass
class WriteBatch:
    """Everything one write changes, applied in ONE transaction or not at all.

    ``expected_versions`` guards updates: the memory's current version must still be the
    one the service read, or the batch fails with ``Conflict``.
    """

    tenant_id: UUID
    new_memories: list[Memory] = field(default_factory=list)
    states: list[StateWrite] = field(default_factory=list)
    status_changes: list[tuple[UUID, Status]] = field(default_factory=list)
    audits: list[AuditDraft] = field(default_factory=list)
    idempotency: IdempotencyClaim | None = None
    expected_versions: dict[UUID, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WriteOutcome:
    """The chained audit events, or the earlier result when the key was replayed."""

    audits: list[MemoruleAudit]
    replay: IdempotencyClaim | None = None


@dataclass(frozen=True)
class CandidateFilter:
    """Which memories recall may consider, before ranking.

    Visibility (DESIGN §6): the project's own notes and project-scope rules; ``global`` and
    ``org`` rules from every project of the tenant; ``persona`` rules of ``persona`` in the
    project. ``exclude_conflicts`` maps applies_to keys to the context's (normalised) values:
    rules naming another value are left out.
    """

    project_id: UUID
    persona: str | None = None
    memorules_only: bool = False
    namespace: str | None = None
    memorule_kinds: tuple[MemoruleKind, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    exclude_conflicts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditFilter:
    """Audit listing filters; newest first, ``before_seq`` is the page cursor."""

    memorule_id: UUID | None = None
    session_id: UUID | None = None
    persona: str | None = None
    events: tuple[AuditEventType, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    before_seq: int | None = None
    limit: int = 50


class TriGraphStore(Protocol):
    """A storage engine holding the TriGraph for many tenants."""

    def migrate(self) -> int:
        """Apply pending migrations in order. Returns the schema version now in force."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...

    def write(self, batch: WriteBatch) -> WriteOutcome:
        """Apply a batch atomically; chain its audit drafts onto the tenant's chain.

        Raises:
            NotFound: a state or status change names a memory the tenant does not have.
            Conflict: an expected version no longer holds.
            IdempotencyConflict: the key was claimed by a different request.
            StorageError: the engine failed.
        """
        ...

    def idempotent_result(self, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
        """The claim stored under ``key``, if any (a cheap pre-check before embedding)."""
        ...

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        """A memory and its current state."""
        ...

    def get_many(
        self, tenant_id: UUID, memory_ids: list[UUID]
    ) -> dict[UUID, tuple[Memory, MemoryState]]:
        """Memories and their current states, by id (missing ids are absent)."""
        ...

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        """Every state of a memory, version 1 first."""
        ...

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Vector | None:
        """The current vector of a memory."""
        ...

    def candidates(self, tenant_id: UUID, flt: CandidateFilter, model: str) -> Candidates:
        """Active, visible memories with their vectors, as columns.

        Rows embedded by a model other than ``model`` get a zero vector.
        """
        ...

    def audit_events(self, tenant_id: UUID, flt: AuditFilter) -> list[MemoruleAudit]:
        """Audit events matching ``flt``, newest first."""
        ...

    def audit_chain(self, tenant_id: UUID) -> Iterator[MemoruleAudit]:
        """The tenant's whole chain, oldest first."""
        ...

    def tenants(self) -> list[UUID]:
        """Every tenant that has a memory or an event."""
        ...

    def stats(self, tenant_id: UUID) -> dict[str, int]:
        """Counts: memories, states, audit events, stale vectors."""
        ...
