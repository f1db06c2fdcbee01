"""Memorules (SPEC-094 v0.4): typed write routing, Watson audit emission, audit reads.

``WriteService.remember`` (:mod:`.write_service`) routes ``kind='memorule'`` writes here,
and the lifecycle (:mod:`.lifecycle_service`) asks here for what a memorule's update, retire
or restore adds: every memorule audit event is built in this module
(:meth:`MemoruleService.audit_draft`), and written in the same transaction as its state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from prism_memory.domain import audit as chain
from prism_memory.domain.ids import new_id
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    AppliesTo,
    AuditDraft,
    AuditEventType,
    Kind,
    MemoruleAudit,
    MemoruleKind,
    MemoruleWrite,
    Memory,
    MemoryState,
    SessionContext,
    Status,
    first_version,
    utcnow,
)
from prism_memory.embeddings.port import Embedder, Vector
from prism_memory.errors import MemoryRetired, NearDuplicate, NotFound
from prism_memory.services.ledger_service import LedgerService
from prism_memory.trigraph.port import (
    AuditFilter,
    CandidateFilter,
    StateWrite,
    TriGraphStore,
    WriteBatch,
)

AUDIT_PAGE_MAX = 500
NEAR_DUPLICATE_PROBE = 50  # near matches fetched before the applies_to compatibility check


@dataclass(frozen=True)
class AuditPage:
    """A page of audit events, newest first; ``next_cursor`` fetches the next page."""

    events: list[MemoruleAudit]
    next_cursor: int | None


class MemoruleService:
    """Memorule writes and the audit trail.

    Args:
        store: the TriGraph engine.
        embedder: the embedding model.
        near_duplicate_threshold: cosine similarity at or above which an active memorule of
            the same kind and compatible ``applies_to`` counts as a near duplicate.
        ledger: verification with content, heads and served receipts (None: links and
            hashes only, from records).
    """

    def __init__(
        self,
        store: TriGraphStore,
        embedder: Embedder,
        near_duplicate_threshold: float = 0.95,
        ledger: LedgerService | None = None,
    ) -> None:
        self.ledger = ledger
        self.store = store
        self.embedder = embedder
        self.near_duplicate_threshold = near_duplicate_threshold

    def build_create(
        self,
        ctx: SessionContext,
        write: MemoruleWrite,
        vector: Vector,
        corrected: tuple[Memory, MemoryState] | None = None,
    ) -> tuple[WriteBatch, Memory, MemoryState, AuditDraft, list[dict[str, Any]]]:
        """Everything a new memorule writes, as one batch (not yet applied).

        Args:
            ctx: the writer's context; the memorule is written in its project.
            write: the validated write.
            vector: the embedding of its subject and body.
            corrected: the rule ``write.corrects`` names, as the caller already read it
                (the access check does); None reads it here. Either way it is read once:
                the batch's expected version catches a change since.

        Raises:
            NearDuplicate: ``write.strict`` and a near duplicate exists.
            NotFound / MemoryRetired: ``corrects`` names no active memorule.
        """
        now = utcnow()
        memory, state = first_version(
            ctx,
            Kind.MEMORULE,
            write.namespace,
            write.subject,
            write.body,
            self.embedder.model_id,
            now,
            memorule_kind=write.memorule_kind,
            applies_to=write.applies_to,
            evidence_signal_id=write.evidence_signal_id,
            confidence=write.confidence,
            checks=write.checks,
            enforcement=write.enforcement,
        )
        created = self.audit_draft(
            ctx, memory, state, AuditEventType.CREATED, write.evidence_signal_id, now
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            new_memories=[memory],
            states=[StateWrite(state, vector)],
            audits=[created],
        )
        if write.corrects is not None:
            self._supersede_corrected(ctx, write, memory.id, batch, corrected)
        warnings = self.near_duplicate_warnings(ctx, write, vector, exclude=write.corrects)
        if warnings and write.strict:
            raise NearDuplicate(
                "a nearly identical active memorule exists; update it instead, or write without "
                "strict",
                duplicates=warnings,
            )
        return batch, memory, state, created, warnings

    def _supersede_corrected(
        self,
        ctx: SessionContext,
        write: MemoruleWrite,
        new_id_: UUID,
        batch: WriteBatch,
        corrected: tuple[Memory, MemoryState] | None,
    ) -> None:
        assert write.corrects is not None
        if corrected is not None and corrected[0].id != write.corrects:
            raise ValueError(
                f"handed memory {corrected[0].id}, but the write corrects {write.corrects}"
            )
        found = corrected or self.store.get(ctx.tenant_id, write.corrects)
        if found is None or found[0].kind is not Kind.MEMORULE:
            raise NotFound(f"no memorule {write.corrects} to correct", id=str(write.corrects))
        memory, state = found
        if memory.status is Status.RETIRED:
            raise MemoryRetired(f"memorule {memory.id} is already retired", id=str(memory.id))
        batch.status_changes.append((memory.id, Status.RETIRED))
        batch.expected_versions[memory.id] = memory.current_version
        batch.audits.append(
            self.audit_draft(
                ctx,
                memory,
                state,
                AuditEventType.SUPERSEDED,
                write.evidence_signal_id,
                utcnow(),
                reason=f"corrected by memorule {new_id_}",
            )
        )

    def build_supersede(
        self,
        ctx: SessionContext,
        memorule: Memory,
        state: MemoryState,
        write: MemoruleWrite,
        when: Any,
        reason: str | None,
    ) -> tuple[MemoryState, AuditDraft]:
        """A memorule's new version (``update``): ``state`` given the write's memorule fields,
        and the ``superseded`` event that names it."""
        state = MemoryState(
            **{
                **state.__dict__,
                "memorule_kind": write.memorule_kind,
                "applies_to": write.applies_to,
                "evidence_signal_id": write.evidence_signal_id,
                "confidence": write.confidence,
                "checks": write.checks,
                "enforcement": write.enforcement,
            }
        )
        draft = self.audit_draft(
            ctx,
            memorule,
            state,
            AuditEventType.SUPERSEDED,
            write.evidence_signal_id,
            when,
            reason,
        )
        return state, draft

    def status_event(
        self,
        ctx: SessionContext,
        memorule: Memory,
        state: MemoryState,
        status: Status,
        when: Any,
        reason: str | None,
    ) -> AuditDraft:
        """The event of a memorule retired (``status`` RETIRED) or restored (ACTIVE), naming
        its current ``state``."""
        event = AuditEventType.RETIRED if status is Status.RETIRED else AuditEventType.RESTORED
        return self.audit_draft(ctx, memorule, state, event, state.evidence_signal_id, when, reason)

    def pin_event(
        self,
        ctx: SessionContext,
        memorule: Memory,
        state: MemoryState,
        pinned: bool,
        when: Any,
        reason: str | None,
    ) -> AuditDraft:
        """The event of an operator pinning (``pinned``) or unpinning a memorule, naming its
        current ``state``; the operator's act carries no evidence signal."""
        event = AuditEventType.PINNED if pinned else AuditEventType.UNPINNED
        return self.audit_draft(ctx, memorule, state, event, None, when, reason)

    def audit_draft(
        self,
        ctx: SessionContext,
        memorule: Memory,
        state: MemoryState,
        event: AuditEventType,
        evidence_signal_id: str | None,
        when: Any,
        reason: str | None = None,
    ) -> AuditDraft:
        """The Watson hook: who wrote which memorule, on what evidence, when, and the
        content hash of the state it names and of the memorule's project (so the chain
        commits to the rule's text and to where it lives).

        ``memorule`` is the rule as the caller has it (a new one not yet written): its id and
        project are all that is taken from it, and a project never changes, so nothing is
        read here."""
        return AuditDraft(
            id=new_id(),
            memorule_id=memorule.id,
            state_id=state.id,
            content_hash=chain.content_hash(state, memorule.project_id),
            event=event,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            evidence_signal_id=evidence_signal_id,
            written_at=when,
            reason=reason,
        )

    def near_duplicate_warnings(
        self,
        ctx: SessionContext,
        write: MemoruleWrite,
        vector: Vector,
        exclude: UUID | None = None,
    ) -> list[dict[str, Any]]:
        """Active memorules of the same kind and compatible ``applies_to`` that say the same."""
        flt = CandidateFilter(
            project_id=ctx.project_id,
            persona=ctx.persona,
            memorules_only=True,
            memorule_kinds=(write.memorule_kind,),
        )
        found = self.store.near_duplicates(
            ctx.tenant_id,
            flt,
            vector,
            self.embedder.model_id,
            self.near_duplicate_threshold,
            NEAR_DUPLICATE_PROBE,
        )
        out = []
        for match in found:
            if exclude is not None and match.memory_id == exclude:
                continue
            if not _compatible(write.applies_to, match.applies):
                continue
            out.append(
                {
                    "code": "near_duplicate",
                    "memorule_id": str(match.memory_id),
                    "similarity": round(match.similarity, 4),
                }
            )
        return out[:5]

    def audit(self, ctx: SessionContext, flt: AuditFilter) -> AuditPage:
        """Audit events of the tenant, newest first, one page.

        Args:
            ctx: the caller's context (its tenant is searched).
            flt: filters and the ``before_seq`` cursor; ``limit`` at most 500.
        """
        limit = max(1, min(flt.limit, AUDIT_PAGE_MAX))
        events = self.store.audit_events(
            ctx.tenant_id,
            AuditFilter(
                flt.memorule_id,
                flt.session_id,
                flt.persona,
                flt.events,
                flt.since,
                flt.until,
                flt.before_seq,
                limit + 1,
            ),
        )
        more = len(events) > limit
        events = events[:limit]
        return AuditPage(events, events[-1].seq if more and events else None)

    def verify_chain(
        self,
        ctx: SessionContext,
        given: chain.Head | None = None,
        served_given: chain.Head | None = None,
    ) -> chain.ChainReport:
        """Recompute the tenant's audit hash chain and report the first broken link.

        With a ledger: also every content hash, the recorded head, ``given`` (a head kept
        elsewhere), the live rows against the events, and the served-receipt chain (with
        ``served_given``, a served head kept elsewhere; see :meth:`LedgerService.verify`).
        """
        if self.ledger is not None:
            return self.ledger.verify(ctx.tenant_id, given, served_given)
        return chain.verify(self.store.audit_chain(ctx.tenant_id))


def _compatible(applies_to: AppliesTo, theirs: dict[str, str | None]) -> bool:
    """No applies_to key names a value the other rule contradicts."""
    for key in APPLIES_TO_KEYS:
        mine = normalise_key(getattr(applies_to, key))
        other = theirs.get(key)
        if mine is not None and other is not None and mine != other:
            return False
    return True


def memorule_kinds() -> list[str]:
    return [k.value for k in MemoruleKind]
