"""Capture into the review queue (issue 20): each detected message becomes a ``proposed``
memorule, or evidence for the rule it repeats.

A proposal is a memorule with status ``proposed``: stored and audited (``proposed``), never
recalled or briefed (recall ranks active rows only). A message that repeats an active rule
(the memorule service's near-duplicate check) or a pending proposal (the same threshold, over
the queue) becomes an ``evidence`` audit event on it instead of a twin: no new version.

Re-capturing is idempotent: every captured message claims the idempotency key
``capture:<evidence id>`` in the transaction that records it, so a second run sees the claim
and writes nothing, whether the first run proposed, added evidence, or was later rejected.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import numpy as np

from prism_memory.capture.proposals import Candidate
from prism_memory.domain import validation
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import (
    AuditEventType,
    Kind,
    MemoruleKind,
    MemoruleWrite,
    Memory,
    MemoryState,
    SessionContext,
    Status,
    WriteResult,
    utcnow,
)
from prism_memory.embeddings.port import Embedder, Vector
from prism_memory.errors import FieldError, InvalidInput, NotFound
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.trigraph.port import (
    IdempotencyClaim,
    ListFilter,
    TriGraphStore,
    WriteBatch,
)

QUEUE_PROBE = 500  # pending proposals compared with each new candidate
EMBED_CHUNK = 128  # texts per embedding call: progress moves between calls (4 model batches)

# Told how far a run is: (stage, done, total); stages "embedded" then "decided".
CaptureProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CaptureOutcome:
    """What capture did with one message: ``proposed``, ``evidence`` (for an existing rule
    or pending proposal), ``already_captured``, or ``skipped`` (with its field errors)."""

    evidence_signal_id: str
    action: str
    memorule_kind: str
    subject: str
    memorule_id: UUID | None = None
    similarity: float | None = None
    errors: tuple[FieldError, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "evidence_signal_id": self.evidence_signal_id,
            "action": self.action,
            "memorule_kind": self.memorule_kind,
            "subject": self.subject,
            "memorule_id": str(self.memorule_id) if self.memorule_id else None,
            "similarity": self.similarity,
        }
        if self.errors:
            out["errors"] = [e.to_dict() for e in self.errors]
        return out


@dataclass
class CaptureReport:
    """One capture run: the operator messages read and what became of each detection."""

    messages: int
    dry_run: bool
    outcomes: list[CaptureOutcome] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for o in self.outcomes if o.action == action)


@dataclass(frozen=True)
class _Pending:
    memory_id: UUID
    kind: MemoruleKind | None
    vector: Vector


class CaptureService:
    """Put captured candidates into the review queue.

    Args:
        store: the TriGraph engine.
        embedder: the embedding model (proposals are embedded like any memorule).
        memorules: the memorule service (its near-duplicate check, drafts and threshold).
    """

    def __init__(self, store: TriGraphStore, embedder: Embedder, memorules: MemoruleService):
        self.store = store
        self.embedder = embedder
        self.memorules = memorules

    def capture(
        self,
        ctx: SessionContext,
        found: list[Candidate],
        messages: int,
        dry_run: bool = False,
        progress: CaptureProgress | None = None,
    ) -> CaptureReport:
        """Propose each candidate, or add it as evidence to the rule it repeats.

        Args:
            ctx: the context written under (its session is replaced by the transcript's when
                that is a UUID, so audit events name the Claude Code session).
            found: candidates from :func:`prism_memory.capture.proposals.candidates`.
            messages: how many operator messages were read (for the report).
            dry_run: decide everything, write nothing.
            progress: told the texts embedded so far, then the candidates decided (a long
                transcript: embedding takes most of the time).

        A candidate that breaks the write contract (an over-long or control-character line)
        is reported as ``skipped`` with its field errors; nothing of it is written.

        Raises:
            StorageError, EmbeddingUnavailable: the engine or the model failed.
        """
        report = CaptureReport(messages, dry_run)
        fresh = []
        for cand in found:
            key = cand.write.idempotency_key or ""
            if self.store.idempotent_result(ctx.tenant_id, key) is not None:
                report.outcomes.append(_outcome(cand, "already_captured"))
                continue
            try:
                checked = validation.validate_remember(write_raw(cand.write))
            except InvalidInput as exc:  # one odd message must not block the rest
                report.outcomes.append(_outcome(cand, "skipped", errors=exc.errors))
                continue
            assert isinstance(checked, MemoruleWrite)
            # the validated write (normalised values), keeping the capture's own key
            write = dataclasses.replace(checked, idempotency_key=cand.write.idempotency_key)
            fresh.append(dataclasses.replace(cand, write=write))
        if not fresh:
            return report
        texts = [f"{c.write.subject}\n{c.write.body}" for c in fresh]
        unique = list(dict.fromkeys(texts))  # a repeated message is embedded once
        embedded = self._embed(unique, progress)
        row = {text: i for i, text in enumerate(unique)}
        vectors = [embedded[row[text]] for text in texts]
        pending = self._pending(ctx)
        for done, (cand, vector) in enumerate(zip(fresh, vectors, strict=True)):
            if progress is not None:
                progress("decided", done, len(fresh))
            wctx = _session_of(ctx, cand)
            twins = self.memorules.near_duplicate_warnings(wctx, cand.write, vector)
            target: UUID | None
            sim: float | None
            if twins:
                target, sim = UUID(twins[0]["memorule_id"]), float(twins[0]["similarity"])
            else:
                target, sim = self._repeat_of(pending, cand.write.memorule_kind, vector)
            if target is not None:
                done = dry_run or self._add_evidence(wctx, target, cand)
                action = "evidence" if done else "already_captured"
                report.outcomes.append(_outcome(cand, action, target, sim))
                continue
            memory_id, fresh_write = (
                (new_id(), True) if dry_run else self._propose(wctx, cand, vector)
            )
            # a proposal another capture of this message committed first is still the one a
            # later repeat in this transcript must find
            pending.append(_Pending(memory_id, cand.write.memorule_kind, vector))
            action = "proposed" if fresh_write else "already_captured"
            report.outcomes.append(_outcome(cand, action, memory_id))
        if progress is not None:
            progress("decided", len(fresh), len(fresh))
        return report

    def _embed(self, texts: list[str], progress: CaptureProgress | None) -> list[Vector]:
        if progress is None:
            return list(self.embedder.embed(texts))
        out: list[Vector] = []
        for start in range(0, len(texts), EMBED_CHUNK):
            out.extend(self.embedder.embed(texts[start : start + EMBED_CHUNK]))
            progress("embedded", len(out), len(texts))
        return out

    def _pending(self, ctx: SessionContext) -> list[_Pending]:
        flt = ListFilter(
            project_id=ctx.project_id,
            status=Status.PROPOSED,
            memorules_only=True,
            tenant_wide=False,
            limit=QUEUE_PROBE,
        )
        out = []
        for memory, state in self.store.list_memories(ctx.tenant_id, flt):
            vector = self.store.vector(ctx.tenant_id, memory.id)
            if vector is not None and state.embedding_model == self.embedder.model_id:
                out.append(_Pending(memory.id, state.memorule_kind, vector))
        return out

    def _repeat_of(
        self, pending: list[_Pending], kind: MemoruleKind, vector: Vector
    ) -> tuple[UUID | None, float | None]:
        best: tuple[UUID | None, float | None] = (None, None)
        for p in pending:
            if p.kind is not kind:
                continue
            sim = float(np.dot(p.vector, vector))
            if sim >= self.memorules.near_duplicate_threshold and sim > (best[1] or -1.0):
                best = (p.memory_id, round(sim, 4))
        return best

    def _propose(self, ctx: SessionContext, cand: Candidate, vector: Vector) -> tuple[UUID, bool]:
        """Write the proposal: its id, and False when a concurrent capture of the same message
        committed first (then the id is that capture's)."""
        batch, memory, state, _, _ = self.memorules.build_create(
            ctx, dataclasses.replace(cand.write, idempotency_key=None), vector
        )
        proposed = Memory(**{**memory.__dict__, "status": Status.PROPOSED})
        batch.new_memories = [proposed]
        batch.audits = [
            self.memorules.audit_draft(
                ctx,
                proposed,
                state,
                AuditEventType.PROPOSED,
                cand.write.evidence_signal_id,
                state.written_at,
                reason="captured from an operator message",
            )
        ]
        result = WriteResult(memory.id, state.id, 1, Kind.MEMORULE, state.written_at)
        replay = self._write(batch, cand, result)
        if replay is None:
            return memory.id, True
        return UUID(str(replay.result["id"])), False

    def _add_evidence(self, ctx: SessionContext, target: UUID, cand: Candidate) -> bool:
        """Record the message as evidence for ``target``; False when already claimed."""
        memory, state = self._memorule(ctx, target)
        now = utcnow()
        draft = self.memorules.audit_draft(
            ctx,
            memory,
            state,
            AuditEventType.EVIDENCE,
            cand.write.evidence_signal_id,
            now,
            reason="an operator message repeated this rule",
        )
        batch = WriteBatch(tenant_id=ctx.tenant_id, audits=[draft])
        result = WriteResult(memory.id, state.id, state.version, memory.kind, now)
        return self._write(batch, cand, result) is None

    def _write(
        self, batch: WriteBatch, cand: Candidate, result: WriteResult
    ) -> IdempotencyClaim | None:
        """Apply ``batch`` with the message's claim; the earlier claim when one existed (two
        captures of one transcript at once: the claim keeps the second from writing)."""
        key = cand.write.idempotency_key or ""
        digest = hashlib.sha256(key.encode()).hexdigest()
        batch.idempotency = IdempotencyClaim(key, digest, result.to_dict())
        return self.store.write(batch).replay

    def _memorule(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        found = self.store.get(ctx.tenant_id, memory_id)
        if found is None or found[0].kind is not Kind.MEMORULE:
            raise NotFound(f"no memorule {memory_id}", id=str(memory_id))
        return found


def _outcome(
    cand: Candidate,
    action: str,
    memory_id: UUID | None = None,
    sim: float | None = None,
    errors: list[FieldError] | None = None,
) -> CaptureOutcome:
    return CaptureOutcome(
        cand.write.evidence_signal_id or "",
        action,
        cand.write.memorule_kind.value,
        cand.write.subject,
        memory_id,
        sim,
        tuple(errors or ()),
    )


def _session_of(ctx: SessionContext, cand: Candidate) -> SessionContext:
    try:
        return dataclasses.replace(ctx, session_id=UUID(cand.message.session_id))
    except ValueError:
        return ctx


def write_raw(write: MemoruleWrite) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": write.memorule_kind.value,
        "subject": write.subject,
        "body": write.body,
        "applies_to": write.applies_to.to_dict(),
        "confidence": write.confidence.value,
        "namespace": write.namespace,
    }
    if write.evidence_signal_id:
        raw["evidence_signal_id"] = write.evidence_signal_id
    return raw
