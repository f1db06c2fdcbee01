"""The capture review queue (issue 20): list proposals, decide on them, keep evidence.

A person approves a proposal (optionally edited), merges it into an existing rule, or rejects
it; each decision is one audit event in the chain (``approved``, ``merged``, ``rejected``). The
evidence behind a rule is the distinct signals its audit events name (the message it was
captured from, each ``evidence`` event since); an ``inferred`` or ``asserted`` rule with
operator evidence can be promoted to ``observed`` (``promoted``). Capture itself is
:mod:`prism_memory.services.capture_service`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from prism_memory.domain import field_checks, validation
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import (
    AppliesTo,
    AuditEventType,
    Confidence,
    Kind,
    MemoruleAudit,
    MemoruleKind,
    MemoruleWrite,
    Memory,
    MemoryState,
    Scope,
    SessionContext,
    Status,
    WriteResult,
    iso,
    utcnow,
)
from prism_memory.embeddings.port import Embedder
from prism_memory.errors import Conflict, FieldError, InvalidInput, NotFound
from prism_memory.services.capture_service import QUEUE_PROBE, write_raw
from prism_memory.services.check_proposals import (
    CheckProposalService,
    proposal_target,
    refuse_edits,
)
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.trigraph.port import (
    AuditFilter,
    ListFilter,
    StateWrite,
    TriGraphStore,
    WriteBatch,
)

EDITABLE = frozenset({"subject", "body", "applies_to", "memorule_kind"})
OPERATOR_EVIDENCE = (AuditEventType.PROPOSED, AuditEventType.EVIDENCE)


@dataclass(frozen=True)
class Evidence:
    """One signal behind a rule: the message (or other signal) and the event that kept it."""

    evidence_signal_id: str
    event: AuditEventType
    written_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence_signal_id": self.evidence_signal_id,
            "event": self.event.value,
            "written_at": self.written_at,
        }


def evidence_of(events: list[MemoruleAudit]) -> list[Evidence]:
    """The distinct signals named by a rule's audit events, oldest first."""
    seen: set[str] = set()
    out = []
    for e in sorted(events, key=lambda e: e.seq):
        if e.evidence_signal_id and e.evidence_signal_id not in seen:
            seen.add(e.evidence_signal_id)
            out.append(Evidence(e.evidence_signal_id, e.event, iso(e.written_at)))
    return out


class ProposalService:
    """The review queue and its decisions.

    Args:
        store: the TriGraph engine.
        embedder: the embedding model (an edited approval is re-embedded).
        memorules: the memorule service (audit drafts).
    """

    def __init__(self, store: TriGraphStore, embedder: Embedder, memorules: MemoruleService):
        self.store = store
        self.embedder = embedder
        self.memorules = memorules

    def proposals(
        self, ctx: SessionContext, limit: int = 50, viewer_persona: str | None = None
    ) -> list[tuple[Memory, MemoryState]]:
        """Pending proposals of ``ctx``'s project, newest first (at most ``limit``, ≤ 500)."""
        flt = ListFilter(
            project_id=ctx.project_id,
            status=Status.PROPOSED,
            memorules_only=True,
            tenant_wide=False,
            viewer_persona=viewer_persona,
            limit=max(1, min(limit, QUEUE_PROBE)),
        )
        return self.store.list_memories(ctx.tenant_id, flt)

    def evidence(self, ctx: SessionContext, memorule_id: UUID) -> list[Evidence]:
        """The signals behind a memorule: the message it was captured from and every
        message that repeated it since."""
        events = self.store.audit_events(
            ctx.tenant_id, AuditFilter(memorule_id=memorule_id, limit=10_000)
        )
        return evidence_of(events)

    # -- decisions ---------------------------------------------------------------------

    def approve(
        self,
        ctx: SessionContext,
        proposal_id: UUID,
        edits: Mapping[str, Any] | None = None,
        reason: str | None = None,
        reach: Callable[[MemoryState, MemoruleWrite], None] | None = None,
    ) -> WriteResult:
        """Make a proposal an active memorule, optionally with its text, kind or
        ``applies_to`` edited (then as a new version). One ``approved`` event. A proposal of
        checks for an active rule gives that rule the checks instead
        (:meth:`CheckProposalService.approve`; no edits).

        Args:
            reach: judges the edited rule as validated (:func:`edited_write`), with the
                proposal's state, before anything is written (the caller's key rules);
                raises to refuse it.

        Raises:
            NotFound: no such proposal. Conflict: it is not pending.
            InvalidInput: an edit breaks the write contract, or names another field.
        """
        memory, state = self._proposal(ctx, proposal_id)
        reason = _reason(reason, required=False)
        if proposal_target(state) is not None:  # proposed checks for an active rule
            refuse_edits(dict(edits or {}))
            checks = CheckProposalService(self.store, self.embedder, self.memorules)
            return checks.approve(ctx, memory, state, reason)
        now = utcnow()
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            status_changes=[(memory.id, Status.ACTIVE)],
            expected_versions={memory.id: memory.current_version},
        )
        target = state
        if edits:
            write = edited_write(memory, state, edits)
            if reach is not None:
                reach(state, write)
            target = self._edited(ctx, state, write, reason, now)
            text_changed = (target.subject, target.body) != (state.subject, state.body)
            vector = self.embedder.embed([target.embedding_text()])[0] if text_changed else None
            batch.states.append(StateWrite(target, vector))
        draft = self.memorules.audit_draft(
            ctx,
            memory,
            target,
            AuditEventType.APPROVED,
            state.evidence_signal_id,
            now,
            reason,
        )
        batch.audits.append(draft)
        self.store.write(batch)
        return WriteResult(memory.id, target.id, target.version, memory.kind, now, draft.id)

    def _edited(
        self,
        ctx: SessionContext,
        state: MemoryState,
        write: MemoruleWrite,
        reason: str | None,
        now: Any,
    ) -> MemoryState:
        return dataclasses.replace(
            state,
            id=new_id(),
            version=state.version + 1,
            subject=write.subject,
            body=write.body,
            memorule_kind=write.memorule_kind,
            applies_to=write.applies_to,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            written_at=now,
            embedding_model=self.embedder.model_id,
            reason=reason or "edited on approval",
        )

    def reject(self, ctx: SessionContext, proposal_id: UUID, reason: str | None) -> WriteResult:
        """Take a proposal out of the queue for good (retired, with a ``rejected`` event).

        Raises:
            InvalidInput: no reason given. NotFound / Conflict: as :meth:`approve`.
        """
        memory, state = self._proposal(ctx, proposal_id)
        why = _reason(reason, required=True)
        return self._close(ctx, memory, state, AuditEventType.REJECTED, why)

    def merge(
        self, ctx: SessionContext, proposal_id: UUID, into: UUID, reason: str | None = None
    ) -> WriteResult:
        """Fold a proposal into an active memorule: the rule gains the proposal's evidence
        (an ``evidence`` event, no new version); the proposal is retired (``merged``).

        Raises:
            NotFound: no such proposal or rule. Conflict: the proposal is not pending, or the
                rule is not an active memorule.
        """
        memory, state = self._proposal(ctx, proposal_id)
        rule, rule_state = self._memorule(ctx, into)
        if rule.status is not Status.ACTIVE:
            raise Conflict(
                f"memorule {into} is not active; merge into an active rule", id=str(into)
            )
        why = _reason(reason, required=False)
        now = utcnow()
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            status_changes=[(memory.id, Status.RETIRED)],
            expected_versions={memory.id: memory.current_version},
        )
        merged = self.memorules.audit_draft(
            ctx,
            memory,
            state,
            AuditEventType.MERGED,
            state.evidence_signal_id,
            now,
            f"merged into memorule {into}" + (f": {why}" if why else ""),
        )
        gained = self.memorules.audit_draft(
            ctx,
            rule,
            rule_state,
            AuditEventType.EVIDENCE,
            state.evidence_signal_id,
            now,
            f"merged from proposal {memory.id}",
        )
        batch.audits += [merged, gained]
        self.store.write(batch)
        return WriteResult(rule.id, rule_state.id, rule_state.version, rule.kind, now, merged.id)

    def promote(
        self, ctx: SessionContext, memorule_id: UUID, reason: str | None = None
    ) -> WriteResult:
        """Raise an active ``inferred``/``asserted`` rule with operator evidence to
        ``observed``: a new version (text unchanged) and a ``promoted`` event.

        Raises:
            NotFound: no such memorule. Conflict: not active, already observed, or no operator
                evidence (a captured message that repeated it).
        """
        memory, state = self._memorule(ctx, memorule_id)
        if memory.status is not Status.ACTIVE:
            raise Conflict(f"memorule {memorule_id} is not active", id=str(memorule_id))
        if state.confidence is Confidence.OBSERVED:
            raise Conflict(f"memorule {memorule_id} is already observed", id=str(memorule_id))
        signals = [e for e in self.evidence(ctx, memorule_id) if e.event in OPERATOR_EVIDENCE]
        if not signals:
            raise Conflict(
                f"memorule {memorule_id} has no operator evidence to promote on",
                id=str(memorule_id),
            )
        why = _reason(reason, required=False) or f"observed: {signals[-1].evidence_signal_id}"
        now = utcnow()
        promoted = dataclasses.replace(
            state,
            id=new_id(),
            version=state.version + 1,
            confidence=Confidence.OBSERVED,
            evidence_signal_id=signals[-1].evidence_signal_id,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            written_at=now,
            reason=why,
        )
        draft = self.memorules.audit_draft(
            ctx,
            memory,
            promoted,
            AuditEventType.PROMOTED,
            promoted.evidence_signal_id,
            now,
            why,
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            states=[StateWrite(promoted, None)],
            audits=[draft],
            expected_versions={memory.id: memory.current_version},
        )
        self.store.write(batch)
        return WriteResult(memory.id, promoted.id, promoted.version, memory.kind, now, draft.id)

    def _close(
        self,
        ctx: SessionContext,
        memory: Memory,
        state: MemoryState,
        event: AuditEventType,
        reason: str | None,
    ) -> WriteResult:
        now = utcnow()
        draft = self.memorules.audit_draft(
            ctx, memory, state, event, state.evidence_signal_id, now, reason
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            status_changes=[(memory.id, Status.RETIRED)],
            audits=[draft],
            expected_versions={memory.id: memory.current_version},
        )
        self.store.write(batch)
        return WriteResult(memory.id, state.id, state.version, memory.kind, now, draft.id)

    def _memorule(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        found = self.store.get(ctx.tenant_id, memory_id)
        if found is None or found[0].kind is not Kind.MEMORULE:
            raise NotFound(f"no memorule {memory_id}", id=str(memory_id))
        return found

    def _proposal(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        memory, state = self._memorule(ctx, memory_id)
        if memory.status is not Status.PROPOSED:
            raise Conflict(
                f"memorule {memory_id} is not a pending proposal (it is {memory.status.value})",
                id=str(memory_id),
                status=memory.status.value,
            )
        return memory, state


def _reason(reason: str | None, required: bool) -> str | None:
    # The one rule for reasons (at every door, the CLI's and the console's too).
    return field_checks.check_reason(reason, required=required)


def edited_write(memory: Memory, state: MemoryState, edits: Mapping[str, Any]) -> MemoruleWrite:
    """A proposal as approved with ``edits``: its current text, kind and ``applies_to`` with
    the edits on top, validated as a new memorule write.

    Raises:
        InvalidInput: an edit names a field that cannot be edited on approval, or breaks the
            write contract (every field error at once).
    """
    unknown = sorted(set(edits) - EDITABLE)
    if unknown:
        raise InvalidInput(
            [FieldError(k, "not_editable", f"'{k}' cannot be edited on approval") for k in unknown]
        )
    current = MemoruleWrite(
        memorule_kind=state.memorule_kind or MemoruleKind.FEEDBACK,
        subject=state.subject or "",
        body=state.body,
        applies_to=state.applies_to or AppliesTo(scope=Scope.PROJECT),
        confidence=state.confidence or Confidence.OBSERVED,
        evidence_signal_id=state.evidence_signal_id,
        namespace=memory.namespace,
    )
    write = validation.validate_remember({**write_raw(current), **edits})
    assert isinstance(write, MemoruleWrite)
    return write
