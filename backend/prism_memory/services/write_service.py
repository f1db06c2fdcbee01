"""New memories (``prism_remember``): a note is built here, a memorule in
:mod:`.memorule_service`; both go through one idempotent commit.

An idempotency key makes a retried write return the first result: :func:`replay` answers
before any work, and :func:`commit` hands the claim to the engine, which refuses a reused key
in the same transaction (the rule itself: :mod:`prism_memory.domain.idempotency`).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from prism_memory.domain.adherence.checks import checks_json
from prism_memory.domain.idempotency import check_same_request, request_hash
from prism_memory.domain.records import (
    Enforcement,
    Kind,
    MemoruleWrite,
    Memory,
    MemoryState,
    NoteWrite,
    SessionContext,
    WriteResult,
    first_version,
    parse_iso,
    utcnow,
)
from prism_memory.embeddings.port import Vector
from prism_memory.services.memory_deps import MemoryDeps, text_of
from prism_memory.trigraph.port import IdempotencyClaim, StateWrite, WriteBatch, WriteStore


class WriteService:
    """Write new notes and memorules (validated at the door)."""

    def __init__(self, deps: MemoryDeps) -> None:
        self.deps = deps

    def remember(
        self,
        ctx: SessionContext,
        write: NoteWrite | MemoruleWrite,
        corrected: tuple[Memory, MemoryState] | None = None,
    ) -> WriteResult:
        """``prism_remember``: write a note or a memorule.

        Args:
            ctx: the session context (tenant, project, session, persona...).
            write: the request, validated at the door (:func:`validate_remember`, DESIGN §5).
            corrected: the rule ``corrects`` names, when the caller has read it already
                (:meth:`AccessService.check_remember`); None reads it where it is needed.

        Returns:
            The write result; ``replayed`` when an idempotency key matched an earlier write.

        Raises:
            IdempotencyConflict: the key was used with different arguments.
            NearDuplicate: a strict memorule write found a near duplicate.
            NotFound, MemoryRetired: the rule ``corrects`` names is gone or retired.
        """
        deps = self.deps
        key = write.idempotency_key
        asked = request_hash("remember", ctx, hashed_arguments(write))
        if key is not None and (replayed := replay(deps.store, ctx, key, asked)):
            return replayed
        vector = deps.embedder.embed([text_of(write.subject, write.body)])[0]
        batch, result = self.build(ctx, write, vector, corrected)
        return commit(deps.store, batch, key, asked, result)

    def build(
        self,
        ctx: SessionContext,
        write: NoteWrite | MemoruleWrite,
        vector: Vector,
        corrected: tuple[Memory, MemoryState] | None = None,
    ) -> tuple[WriteBatch, WriteResult]:
        """Everything one new memory writes (not yet applied), and the result it will have.

        Raises:
            NearDuplicate, NotFound, MemoryRetired: from a memorule's checks.
        """
        warnings: list[dict[str, Any]] = []
        if isinstance(write, MemoruleWrite):
            batch, memory, state, audit, warnings = self.deps.memorules.build_create(
                ctx, write, vector, corrected
            )
            audit_id: UUID | None = audit.id
        else:
            batch, memory, state = self.build_note(ctx, write, vector)
            audit_id = None
        result = WriteResult(
            memory.id, state.id, 1, memory.kind, state.written_at, audit_id, tuple(warnings)
        )
        return batch, result

    def build_note(
        self, ctx: SessionContext, write: NoteWrite, vector: Vector
    ) -> tuple[WriteBatch, Memory, MemoryState]:
        """A new note's memory, its first state and the batch that writes them."""
        memory, state = first_version(
            ctx,
            Kind.NOTE,
            write.namespace,
            write.subject,
            write.body,
            self.deps.embedder.model_id,
            utcnow(),
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id, new_memories=[memory], states=[StateWrite(state, vector)]
        )
        return batch, memory, state


def replay(store: WriteStore, ctx: SessionContext, key: str, asked: str) -> WriteResult | None:
    """The first result written under ``key``, if any.

    Raises:
        IdempotencyConflict: the key was used for a different request.
    """
    claim = store.idempotent_result(ctx.tenant_id, key)
    if claim is None:
        return None
    check_same_request(key, claim.request_hash, asked)
    return result_from(claim.result)


def commit(
    store: WriteStore, batch: WriteBatch, key: str | None, asked: str, result: WriteResult
) -> WriteResult:
    """Apply ``batch``, claiming ``key`` for ``result`` in the same transaction; a claim that
    another writer made meanwhile answers with its result."""
    if key is not None:
        batch.idempotency = IdempotencyClaim(key, asked, result.to_dict())
    outcome = store.write(batch)
    if outcome.replay is not None:
        return result_from(outcome.replay.result)
    return result


def result_from(data: dict[str, Any]) -> WriteResult:
    """A stored result (``WriteResult.to_dict``) as a replayed result."""
    return WriteResult(
        id=UUID(data["id"]),
        state_id=UUID(data["state_id"]),
        version=int(data["version"]),
        kind=Kind(data["kind"]),
        written_at=parse_iso(data["written_at"]),
        audit_id=UUID(data["audit_id"]) if data.get("audit_id") else None,
        warnings=tuple(data.get("warnings", ())),
        replayed=True,
    )


def hashed_arguments(write: NoteWrite | MemoruleWrite) -> dict[str, Any]:
    """A validated write as the arguments its request hash covers (not the key itself)."""
    out = {k: v for k, v in write.__dict__.items() if k != "idempotency_key"}
    if isinstance(write, MemoruleWrite):
        out["applies_to"] = write.applies_to.to_dict()
        out["corrects"] = str(write.corrects) if write.corrects else None
        # A write without checks hashes as it did before they existed (a key stored then
        # still replays); with them, they are part of the request.
        del out["checks"], out["enforcement"]
        if write.checks or write.enforcement is not Enforcement.REMIND:
            out["checks"] = checks_json(write.checks)
            out["enforcement"] = write.enforcement.value
    return out
