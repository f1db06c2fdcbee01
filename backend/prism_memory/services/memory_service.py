"""Memory (the v0.3 substrate and its v0.4 front): notes, recall over all memory, versions.

:class:`MemoryService` is the one entry the front doors and other services call
(``prism_remember`` is :meth:`~MemoryService.remember`, ``semantic_recall`` is
:meth:`~MemoryService.recall`). The work lives in rooms by concept, which share one
:class:`~prism_memory.services.memory_deps.MemoryDeps`:

- :mod:`.write_service` — new notes (memorules: :mod:`.memorule_service`), idempotent commits;
- :mod:`.lifecycle_service` — update (a new version), retire, restore;
- :mod:`.recall_service` — ``semantic_recall``;
- :mod:`.bulk_service` — bulk writes and re-embedding;
- :mod:`.memory_reads` — one memory, its history, listings.

What a door shows of these records (JSON, ``ok`` envelopes) is :mod:`prism_memory.serializers`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from prism_memory.domain.listing import ListRequest
from prism_memory.domain.ranking import RankingWeights
from prism_memory.domain.records import (
    MemoruleWrite,
    Memory,
    MemoryState,
    NoteWrite,
    PinResult,
    RecallQuery,
    RecallResult,
    SessionContext,
    WriteResult,
)
from prism_memory.embeddings.port import Embedder
from prism_memory.services.bulk_service import BulkService
from prism_memory.services.ledger_service import LedgerService
from prism_memory.services.lifecycle_service import LifecycleService
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_reads import History, MemoryPage, MemoryReads, get_memory
from prism_memory.services.recall_service import RecallService
from prism_memory.services.write_service import WriteService
from prism_memory.trigraph.port import TriGraphStore


class MemoryService:
    """Write, read, version and recall memories of every kind.

    Args:
        store: the TriGraph engine.
        embedder: the embedding model (loaded on first use).
        memorules: the memorule service writes of ``kind='memorule'`` route to.
        weights: recall ranking weights.
        preselect_above: candidate count above which recall prunes rows by the sketch's
            bound (same results; see ``ranking._relevance``); 0 scores every row.
        served: where recall records which memorule versions it served (None: nowhere).
    """

    def __init__(
        self,
        store: TriGraphStore,
        embedder: Embedder,
        memorules: MemoruleService,
        weights: RankingWeights | None = None,
        preselect_above: int = 8192,
        served: LedgerService | None = None,
    ) -> None:
        self.deps = MemoryDeps(
            store, embedder, memorules, weights or RankingWeights(), preselect_above, served
        )
        self.writes = WriteService(self.deps)
        self.lifecycle = LifecycleService(self.deps)
        self.recalls = RecallService(self.deps)
        self.bulk = BulkService(self.deps, self.writes)
        self.reads = MemoryReads(self.deps)

    # The wiring, shared by every room: a model swapped here is the one they all use.

    @property
    def store(self) -> TriGraphStore:
        return self.deps.store

    @property
    def embedder(self) -> Embedder:
        return self.deps.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self.deps.embedder = embedder

    @property
    def memorules(self) -> MemoruleService:
        return self.deps.memorules

    @property
    def weights(self) -> RankingWeights:
        return self.deps.weights

    @property
    def preselect_above(self) -> int:
        return self.deps.preselect_above

    @preselect_above.setter
    def preselect_above(self, value: int) -> None:
        self.deps.preselect_above = value

    @property
    def served(self) -> LedgerService | None:
        return self.deps.served

    # -- writes (:mod:`.write_service`, :mod:`.lifecycle_service`, :mod:`.bulk_service`) --

    def remember(
        self,
        ctx: SessionContext,
        write: NoteWrite | MemoruleWrite,
        corrected: tuple[Memory, MemoryState] | None = None,
    ) -> WriteResult:
        """``prism_remember`` (:meth:`WriteService.remember`)."""
        return self.writes.remember(ctx, write, corrected)

    def update(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        changes: Mapping[str, Any],
        reason: str | None = None,
        evidence_signal_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """A new version of a memory (:meth:`LifecycleService.update`)."""
        return self.lifecycle.update(
            ctx, memory_id, changes, reason, evidence_signal_id, idempotency_key
        )

    def retire(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Retire a memory (:meth:`LifecycleService.retire`)."""
        return self.lifecycle.retire(ctx, memory_id, reason, idempotency_key)

    def restore(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Bring a retired memory back (:meth:`LifecycleService.restore`)."""
        return self.lifecycle.restore(ctx, memory_id, reason, idempotency_key)

    def pin(
        self, ctx: SessionContext, memory_id: UUID, pinned: bool, reason: str | None
    ) -> PinResult:
        """Pin or unpin a memorule (:meth:`LifecycleService.pin`)."""
        return self.lifecycle.pin(ctx, memory_id, pinned, reason)

    def pinned_rules(
        self, ctx: SessionContext, namespace: str | None = None
    ) -> list[tuple[Memory, MemoryState]]:
        """The active pinned memorules that apply to ``ctx`` (:meth:`MemoryReads.pinned`)."""
        return self.reads.pinned(ctx, namespace)

    def remember_many(
        self, ctx: SessionContext, raws: Sequence[Mapping[str, Any]], chunk: int = 256
    ) -> list[WriteResult]:
        """Bulk ``prism_remember`` (:meth:`BulkService.remember_many`)."""
        return self.bulk.remember_many(ctx, raws, chunk)

    # -- reads (:mod:`.memory_reads`, :mod:`.recall_service`) ---------------------------

    def get(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        """A memory and its current state, retired ones too (:func:`get_memory`)."""
        return get_memory(self.deps.store, ctx, memory_id)

    def history(self, ctx: SessionContext, memory_id: UUID) -> History:
        """Every version of a memory and its audit events (:meth:`MemoryReads.history`)."""
        return self.reads.history(ctx, memory_id)

    def list_memories(
        self,
        ctx: SessionContext,
        raw: Mapping[str, Any] | ListRequest,
        viewer_persona: str | None = None,
    ) -> MemoryPage:
        """One page of memories, newest first (:meth:`MemoryReads.list_memories`)."""
        return self.reads.list_memories(ctx, raw, viewer_persona)

    def recall(
        self,
        ctx: SessionContext,
        query: RecallQuery,
        served_as: str | None = "semantic_recall",
    ) -> RecallResult:
        """``semantic_recall`` (:meth:`RecallService.recall`)."""
        return self.recalls.recall(ctx, query, served_as)
