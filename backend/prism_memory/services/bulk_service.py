"""Many memories at once: bulk ``prism_remember`` and re-embedding after a model change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from prism_memory.domain.contract.remember import refuse_bulk_keys
from prism_memory.domain.records import MemoruleWrite, NoteWrite, SessionContext, WriteResult
from prism_memory.embeddings.port import Embedder
from prism_memory.services.memory_deps import MemoryDeps, text_of
from prism_memory.services.write_service import WriteService
from prism_memory.trigraph.port import TriGraphStore, WriteBatch


class BulkService:
    """Bulk writes: the same records as single writes, embedded in batches, written by chunks."""

    def __init__(self, deps: MemoryDeps, writes: WriteService) -> None:
        self.deps = deps
        self.writes = writes

    def remember_many(
        self,
        ctx: SessionContext,
        writes: Sequence[NoteWrite | MemoruleWrite],
        chunk: int = 256,
    ) -> list[WriteResult]:
        """Bulk ``prism_remember``: embed in batches, write by chunks.

        Each item becomes the same memory, state and audit event as ``remember`` would
        write. Differences: near-duplicate warnings compare an item with the store as it
        was before the item's chunk (not with earlier items of the same chunk), and an
        ``idempotency_key`` is refused (retried writes go through ``remember``).

        Args:
            ctx: the session context every item is written in.
            writes: the requests, validated at the door
                (:func:`~prism_memory.domain.contract.remember.validate_remember_many`, whose
                errors name the item: ``items[3].subject``).
            chunk: items per embedding batch and per transaction.

        Returns:
            One result per item, in order.

        Raises:
            InvalidInput: an item carries an ``idempotency_key`` (``items[i].idempotency_key``);
                nothing is written.
            NearDuplicate: a strict item found a near duplicate; its chunk and later ones
                are not written.
        """
        refuse_bulk_keys(writes)
        results: list[WriteResult] = []
        for start in range(0, len(writes), max(1, chunk)):
            part = writes[start : start + max(1, chunk)]
            vectors = self.deps.embedder.embed([text_of(w.subject, w.body) for w in part])
            merged = WriteBatch(tenant_id=ctx.tenant_id)
            for write, vector in zip(part, vectors, strict=True):
                batch, result = self.writes.build(ctx, write, vector)
                merged.new_memories.extend(batch.new_memories)
                merged.states.extend(batch.states)
                merged.status_changes.extend(batch.status_changes)
                merged.audits.extend(batch.audits)
                merged.expected_versions.update(batch.expected_versions)
                results.append(result)
            self.deps.store.write(merged)
        return results


def reindex(
    store: TriGraphStore,
    embedder: Embedder,
    batch: int = 64,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Re-embed every memory whose vector another model made (after a model change).

    Args:
        store: the engine.
        embedder: the model now in force.
        batch: texts embedded per call.
        progress: called with the running count after each batch.

    Returns:
        How many memories were re-embedded.
    """
    done = 0
    while stale := store.stale_vectors(embedder.model_id, batch):
        vectors = embedder.embed([text for _, _, text in stale])
        by_tenant: dict[UUID, list[tuple[UUID, Any]]] = {}
        for (tenant_id, memory_id, _), vector in zip(stale, vectors, strict=True):
            by_tenant.setdefault(tenant_id, []).append((memory_id, vector))
        for tenant_id, items in by_tenant.items():
            store.set_vectors(tenant_id, items, embedder.model_id)
        done += len(stale)
        if progress is not None:
            progress(done)
    return done
