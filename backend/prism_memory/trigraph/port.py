"""The TriGraph storage port: what services need from an engine.

The graph (SPEC-020): ``(:Memory)-[:HAS_STATE]->(:MemoryState)`` and ``(:MemoruleAudit)``.
Adapters: :mod:`prism_memory.trigraph.sqlite.store` (embedded default) and
:mod:`prism_memory.trigraph.postgres.store`
(PostgreSQL with pgvector). Beside this module: what a dump carries (:mod:`.dump`), the key
store (:mod:`.keys`) and the audit ledger (:mod:`.ledger`) ports, which an engine hands out
(:class:`EngineParts`). Every adapter passes the same contract suites: the service and
storage tests run parametrised over both engines (the ``engine_settings`` fixture).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.neighbours import NotePlace
from prism_memory.domain.ranking import Ranked, RankingWeights
from prism_memory.domain.records import (
    AuditDraft,
    AuditEventType,
    Confidence,
    Kind,
    MemoruleAudit,
    MemoruleKind,
    Memory,
    MemoryState,
    Scope,
    SessionContext,
    Status,
)
from prism_memory.embeddings.port import Vector
from prism_memory.trigraph.dump import TransferStore
from prism_memory.trigraph.hook_failures import HookFailureCounts
from prism_memory.trigraph.keys import ApiKeyStore
from prism_memory.trigraph.ledger import AuditLedger


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
    one the service read, or the batch fails with ``Conflict``. ``pin_changes`` sets an
    operator's pin on memories (issue 31); a memory whose flag is already the one asked
    fails the batch with ``Conflict`` (another writer changed it since the service read it).
    """

    tenant_id: UUID
    new_memories: list[Memory] = field(default_factory=list)
    states: list[StateWrite] = field(default_factory=list)
    status_changes: list[tuple[UUID, Status]] = field(default_factory=list)
    pin_changes: list[tuple[UUID, bool]] = field(default_factory=list)
    audits: list[AuditDraft] = field(default_factory=list)
    idempotency: IdempotencyClaim | None = None
    expected_versions: dict[UUID, int] = field(default_factory=dict)


def pin_conflict(memory_id: UUID, pinned: bool) -> str:
    """The message both engines give a pin change that finds the flag already as asked."""
    now = "pinned" if pinned else "unpinned"
    return f"memory {memory_id} was {now} meanwhile by another writer; retry"


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
class RecallRequest:
    """One ranked recall, as an engine answers it (DESIGN §6; ``prism_memory.domain.ranking``).

    ``vector`` is the unit query vector (None for an empty query); ``query`` the text the
    lexical score reads; rows embedded by a model other than ``model`` score zero cosine.
    ``preselect_above`` tunes engines that rank in process (``ranking.rank``); engines that
    rank in the database may ignore it.
    """

    filter: CandidateFilter
    context: SessionContext
    query: str
    vector: Vector | None
    model: str
    weights: RankingWeights
    top_k: int
    include_inapplicable: bool = False
    preselect_above: int = 0


@dataclass(frozen=True)
class RankedPage:
    """The best ``top_k`` of a recall, best first, and how many candidates were ranked.

    ``subjects``: each ranked memory's kind and current subject, by id, when the engine read
    them with the ranking (PostgreSQL, in the same statement); None: ask ``subjects``.
    """

    ranked: list[Ranked]
    candidates: int
    subjects: dict[str, tuple[Kind, str | None]] | None = None


@dataclass(frozen=True)
class NearMatch:
    """A visible active memory whose vector is at least a threshold similar to a probe.

    ``applies`` holds its normalised persona/surface/specialization (absent keys: None).
    """

    memory_id: UUID
    similarity: float
    applies: dict[str, str | None]


@dataclass(frozen=True)
class ListFilter:
    """Which memories a listing returns: newest first (ids are time-ordered), one page.

    Visibility follows recall's (:class:`CandidateFilter`): the project's own memories and,
    with ``tenant_wide``, the tenant's ``global``/``org`` memorules of its other projects;
    ``viewer_persona`` (normalised) hides other personas' ``persona``-scope rules. ``applies``
    maps persona/surface/specialization to the normalised value a rule must name. Scope
    ``project`` also matches a memorule that names no scope. ``status`` None means any.

    ``pinned`` True keeps only memories an operator pinned (the brief's first tier).
    ``before`` is the keyset cursor: only memories whose id sorts below it.
    """

    project_id: UUID
    status: Status | None = Status.ACTIVE
    memorules_only: bool = False
    namespace: str | None = None
    memorule_kinds: tuple[MemoruleKind, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    scopes: tuple[Scope, ...] = ()
    applies: dict[str, str] = field(default_factory=dict)
    viewer_persona: str | None = None
    tenant_wide: bool = True
    pinned: bool = False
    before: UUID | None = None
    limit: int = 50


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


class WriteStore(Protocol):
    """Writes: every change is one atomic batch."""

    def write(self, batch: WriteBatch) -> WriteOutcome:
        """Apply a batch atomically; chain its audit drafts onto the tenant's chain.

        Raises:
            NotFound: a state, status or pin change names a memory the tenant does not have.
            Conflict: an expected version no longer holds, or a pin is already as asked.
            IdempotencyConflict: the key was claimed by a different request.
            StorageError: the engine failed.
        """
        ...

    def idempotent_result(self, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
        """The claim stored under ``key``, if any (a cheap pre-check before embedding)."""
        ...


class ReadStore(Protocol):
    """Reads of memories and their versions."""

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        """A memory and its current state."""
        ...

    def get_many(
        self, tenant_id: UUID, memory_ids: list[UUID]
    ) -> dict[UUID, tuple[Memory, MemoryState]]:
        """Memories and their current states, by id (missing ids are absent)."""
        ...

    def subjects(
        self, tenant_id: UUID, memory_ids: list[str]
    ) -> dict[str, tuple[Kind, str | None]]:
        """Each memory's kind and current subject, by id as a string (missing ids are
        absent): what recall's section smoothing reads of its window (``domain.sections``)."""
        ...

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        """Every state of a memory, version 1 first."""
        ...

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Vector | None:
        """The current vector of a memory."""
        ...

    def list_memories(self, tenant_id: UUID, flt: ListFilter) -> list[tuple[Memory, MemoryState]]:
        """One page of a listing: memories matching ``flt`` and their current states.

        Returns:
            At most ``flt.limit`` pairs, newest first (id descending).

        Raises:
            StorageError: the engine failed.
        """
        ...


class RecallStore(Protocol):
    """Ranked recall and the near-duplicate probe, next to the data."""

    def recall(self, tenant_id: UUID, request: RecallRequest) -> RankedPage:
        """Rank the tenant's visible, active memories for ``request`` and return the best.

        Every engine applies the same contract (DESIGN §6, ``prism_memory.domain.ranking``):
        visibility and applicability filters, then the score, ties to the newer record.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def note_places(
        self, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
    ) -> dict[str, NotePlace]:
        """Where each of ``memory_ids`` that is a live note of ``project_id`` stands in
        writing order in its namespace, exact up to ``reach`` places (absent: not such a
        note): what neighbour smoothing reads (``domain.neighbours``, ``note_places_sql``)."""
        ...

    def near_duplicates(
        self,
        tenant_id: UUID,
        flt: CandidateFilter,
        vector: Vector,
        model: str,
        threshold: float,
        limit: int,
    ) -> list[NearMatch]:
        """Active memories passing ``flt`` whose cosine with ``vector`` is ≥ ``threshold``.

        Returns:
            At most ``limit`` matches, most similar first (rows of another model never match).
        """
        ...


class AdherenceStore(Protocol):
    """What adherence reads (DESIGN §12): the rules whose checks a session is held to."""

    def memorules_with_checks(self, tenant_id: UUID, project_id: UUID) -> list[CheckedRule]:
        """The active memorules whose current version carries checks, visible from
        ``project_id``: the project's own and the tenant's ``global``/``org`` rules of every
        project. Nothing is embedded or ranked (the guard hook calls it on every tool use);
        which of them apply to a persona/surface/specialization is
        :func:`prism_memory.domain.adherence.rules.applicable`.

        Returns:
            The rules, by memorule id.

        Raises:
            StorageError: the engine failed.
        """
        ...


class AuditStore(Protocol):
    """The memorule audit trail."""

    def audit_events(self, tenant_id: UUID, flt: AuditFilter) -> list[MemoruleAudit]:
        """Audit events matching ``flt``, newest first."""
        ...

    def audit_chain(self, tenant_id: UUID) -> Iterator[MemoruleAudit]:
        """The tenant's whole chain, oldest first."""
        ...


class AdminStore(Protocol):
    """Schema, connections, counts and re-embedding."""

    def migrate(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Apply pending migrations in order. Returns the schema version now in force.

        ``progress`` is told (applied, pending) before each pending migration and once all
        are applied; it is not called when none is pending.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...

    def tenants(self) -> list[UUID]:
        """Every tenant that has a memory or an event."""
        ...

    def stats(self, tenant_id: UUID) -> dict[str, int]:
        """Counts: memories, states, audit events."""
        ...

    def stale_vectors(self, model: str, limit: int) -> list[tuple[UUID, UUID, str]]:
        """Up to ``limit`` memories (any tenant) whose vector was made by another model.

        Returns:
            ``(tenant_id, memory_id, text)`` with the current state's subject and body.
        """
        ...

    def set_vectors(self, tenant_id: UUID, vectors: list[tuple[UUID, Vector]], model: str) -> None:
        """Replace memories' current vectors (``prism reindex``); recall caches see it."""
        ...

    def vector_index(self, build: bool | None = None) -> bool | None:
        """The engine's optional approximate vector index (``prism migrate --vector-index``):
        whether it exists, or None for an engine that has none (SQLite ranks in memory);
        ``build`` True builds it, False drops it.

        Raises:
            InvalidInput: ``build`` given to an engine that has no such index.
        """
        ...


class EngineParts(Protocol):
    """What else an engine keeps beside the TriGraph, on its own connections: the composition
    root asks the engine for them (:mod:`prism_memory.bootstrap`), never guesses its type."""

    def key_store(self) -> ApiKeyStore:
        """The HTTP API keys stored on this engine."""
        ...

    def ledger(self) -> AuditLedger:
        """The audit ledger (verification reads, served receipts) of this engine."""
        ...

    def hook_failures(self) -> HookFailureCounts:
        """The client hooks' failures counted in this store (``/metrics``)."""
        ...


class TriGraphStore(
    WriteStore,
    ReadStore,
    RecallStore,
    AdherenceStore,
    AuditStore,
    AdminStore,
    TransferStore,
    EngineParts,
    Protocol,
):
    """A storage engine holding the TriGraph for many tenants: every part above.

    Services take the narrowest part they use; ``bootstrap`` builds a whole engine.
    """
