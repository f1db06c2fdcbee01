"""A memory's life after its first write: new versions (update), retire and restore, and an
operator's pin on a memorule (issue 31: the brief's must-include tier).

Notes and memorules share the path; what a memorule adds (its fields on the new state, the
``superseded`` / ``retired`` / ``restored`` audit event) is built by
:class:`~prism_memory.services.memorule_service.MemoruleService`, where all memorule audit emission
is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from prism_memory.domain import field_checks, validation
from prism_memory.domain.idempotency import request_hash
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import (
    Kind,
    MemoruleWrite,
    Memory,
    MemoryState,
    NoteWrite,
    PinResult,
    SessionContext,
    Status,
    WriteResult,
    utcnow,
)
from prism_memory.errors import Conflict, FieldError, InvalidInput, MemoryRetired, NotAMemorule
from prism_memory.services.memory_deps import MemoryDeps, text_of
from prism_memory.services.memory_reads import get_memory
from prism_memory.services.write_service import commit, replay
from prism_memory.trigraph.port import StateWrite, WriteBatch

# Judges an update's new version (validated) against the current state; raises to refuse.
Reach = Callable[[MemoryState, NoteWrite | MemoruleWrite], None]

UPDATABLE = {
    Kind.NOTE: frozenset({"body", "subject"}),
    Kind.MEMORULE: frozenset(
        {
            "memorule_kind",
            "subject",
            "body",
            "applies_to",
            "evidence_signal_id",
            "confidence",
            "checks",
            "enforcement",
        }
    ),
}


class LifecycleService:
    """Update, retire and restore memories of every kind."""

    def __init__(self, deps: MemoryDeps) -> None:
        self.deps = deps

    def update(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        changes: Mapping[str, Any],
        reason: str | None = None,
        evidence_signal_id: str | None = None,
        idempotency_key: str | None = None,
        reach: Reach | None = None,
    ) -> WriteResult:
        """Supersede a memory's current state with a new version.

        Args:
            ctx: the session context.
            memory_id: the memory to change (active, in the caller's tenant).
            changes: fields to change; the resulting state is validated as a new write.
            reason: why (kept on the state and the audit event).
            evidence_signal_id: the signal that prompted the change (memorules).
            idempotency_key: makes a retried update return the first result.
            reach: judges the new version as validated, with the current state it is merged
                from, before anything else reads it (the caller's key rules); raises to
                refuse it.

        Raises:
            NotFound, MemoryRetired, InvalidInput, Conflict, IdempotencyConflict; and what
            ``reach`` raises.
        """
        deps = self.deps
        reason = field_checks.check_reason(reason, required=False)
        idempotency_key = field_checks.check_idempotency_key(idempotency_key)
        evidence_signal_id = field_checks.check_text(
            evidence_signal_id,
            "evidence_signal_id",
            max_len=validation.EVIDENCE_MAX,
            single_line=True,
        )
        memory, current = self._get_active(ctx, memory_id)
        # Validated before anything else reads ``changes`` (the request hash included).
        write = updated_write(memory, current, changes, evidence_signal_id)
        if reach is not None:
            reach(current, write)
        asked = request_hash(
            "update",
            ctx,
            {
                "id": str(memory_id),
                "changes": dict(changes),
                "reason": reason,
                "evidence_signal_id": evidence_signal_id,
            },
        )
        if idempotency_key and (replayed := replay(deps.store, ctx, idempotency_key, asked)):
            return replayed
        text_changed = (write.subject, write.body) != (current.subject, current.body)
        vector = (
            deps.embedder.embed([text_of(write.subject, write.body)])[0] if text_changed else None
        )
        now = utcnow()
        state = MemoryState(
            id=new_id(),
            memory_id=memory.id,
            version=current.version + 1,
            body=write.body,
            subject=write.subject,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            written_at=now,
            embedding_model=deps.embedder.model_id if text_changed else current.embedding_model,
            reason=reason,
        )
        audit_id = None
        batch = WriteBatch(tenant_id=ctx.tenant_id, expected_versions={memory.id: current.version})
        if isinstance(write, MemoruleWrite):
            state, draft = deps.memorules.build_supersede(ctx, memory, state, write, now, reason)
            batch.audits.append(draft)
            audit_id = draft.id
        batch.states.append(StateWrite(state, vector))
        result = WriteResult(memory.id, state.id, state.version, memory.kind, now, audit_id)
        return commit(deps.store, batch, idempotency_key, asked, result)

    def retire(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Retire a memory: recall never returns it; it stays readable by id and in history."""
        return self._set_status(ctx, memory_id, reason, Status.RETIRED, idempotency_key)

    def restore(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Bring a retired memory back into recall."""
        return self._set_status(ctx, memory_id, reason, Status.ACTIVE, idempotency_key)

    def pin(
        self, ctx: SessionContext, memory_id: UUID, pinned: bool, reason: str | None
    ) -> PinResult:
        """Pin an active memorule (``pinned`` True: the brief shows it first, before every
        ranked rule, inside its budget) or unpin it. The flag is on the memory, not a new
        version; a ``pinned``/``unpinned`` audit event names the current state and keeps the
        reason. Idempotent: a rule already so is answered ``changed: False`` and nothing is
        written. Retiring a rule keeps its flag, which has no effect while it is retired (a
        retired rule is never briefed); an unpin is accepted on a retired rule.

        Raises:
            InvalidInput: no reason (or a bad one).
            NotAMemorule: the memory is a note.
            NotFound: no such memory in the caller's tenant.
            MemoryRetired: pinning a retired rule.
            Conflict: pinning a proposal; another writer changed the pin meanwhile.
        """
        checked = field_checks.check_reason(reason, required=True)
        memory, state = get_memory(self.deps.store, ctx, memory_id)
        if memory.kind is not Kind.MEMORULE:
            raise NotAMemorule(
                f"memory {memory_id} is a {memory.kind.value}: only a memorule is pinned",
                id=str(memory_id),
                kind=memory.kind.value,
            )
        if memory.pinned is pinned:
            return PinResult(memory.id, pinned, changed=False)
        if pinned and memory.status is Status.RETIRED:
            raise MemoryRetired(
                f"memory {memory_id} is retired; restore it before pinning", id=str(memory_id)
            )
        if pinned and memory.status is not Status.ACTIVE:
            raise Conflict(
                f"memory {memory_id} is {memory.status.value}; only an active memorule is pinned",
                id=str(memory_id),
                status=memory.status.value,
            )
        draft = self.deps.memorules.pin_event(ctx, memory, state, pinned, utcnow(), checked)
        self.deps.store.write(
            WriteBatch(tenant_id=ctx.tenant_id, pin_changes=[(memory.id, pinned)], audits=[draft])
        )
        return PinResult(memory.id, pinned, changed=True, audit_id=draft.id)

    def _set_status(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        status: Status,
        idempotency_key: str | None,
    ) -> WriteResult:
        deps = self.deps
        checked = field_checks.check_reason(reason, required=True)
        idempotency_key = field_checks.check_idempotency_key(idempotency_key)
        verb = "retire" if status is Status.RETIRED else "restore"
        asked = request_hash(verb, ctx, {"id": str(memory_id), "reason": checked})
        if idempotency_key and (replayed := replay(deps.store, ctx, idempotency_key, asked)):
            return replayed
        memory, state = get_memory(deps.store, ctx, memory_id)
        if memory.status is status:
            if status is Status.RETIRED:
                raise MemoryRetired(f"memory {memory_id} is already retired", id=str(memory_id))
            raise Conflict(f"memory {memory_id} is not retired", id=str(memory_id))
        now = utcnow()
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            status_changes=[(memory.id, status)],
            expected_versions={memory.id: memory.current_version},
        )
        audit_id = None
        if memory.kind is Kind.MEMORULE:
            draft = deps.memorules.status_event(ctx, memory, state, status, now, checked)
            batch.audits.append(draft)
            audit_id = draft.id
        result = WriteResult(memory.id, state.id, state.version, memory.kind, now, audit_id)
        return commit(deps.store, batch, idempotency_key, asked, result)

    def _get_active(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        memory, state = get_memory(self.deps.store, ctx, memory_id)
        if memory.status is Status.RETIRED:
            raise MemoryRetired(
                f"memory {memory_id} is retired; restore it before updating", id=str(memory_id)
            )
        return memory, state


def updated_write(
    memory: Memory,
    current: MemoryState,
    changes: Mapping[str, Any],
    evidence_signal_id: str | None = None,
) -> NoteWrite | MemoruleWrite:
    """A memory's next version as the write it makes: the current version with ``changes``
    on top, validated as a new write.

    Args:
        memory: the memory updated.
        current: its current state.
        changes: the fields to change, as sent.
        evidence_signal_id: the signal that prompted the change (memorules).

    Raises:
        InvalidInput: no changes, a field the memory's kind cannot change, or a merged
            version that breaks the write contract (every field error at once).
    """
    return validation.validate_remember(_merge(memory, current, changes, evidence_signal_id))


def _merge(
    memory: Memory, current: MemoryState, changes: Mapping[str, Any], evidence_signal_id: str | None
) -> dict[str, Any]:
    if not isinstance(changes, Mapping) or not changes:
        raise InvalidInput(
            [
                FieldError(
                    "changes",
                    "empty",
                    "give at least one field to change",
                    {"allowed": sorted(UPDATABLE[memory.kind])},
                )
            ]
        )
    errors = [
        FieldError(
            key,
            "not_updatable",
            f"'{key}' cannot be changed on a {memory.kind.value}",
            {"allowed": sorted(UPDATABLE[memory.kind])},
        )
        for key in sorted(set(changes) - UPDATABLE[memory.kind])
    ]
    if errors:
        raise InvalidInput(errors)
    merged: dict[str, Any] = {
        "kind": memory.kind.value,
        "namespace": memory.namespace,
        "body": current.body,
    }
    if current.subject is not None:
        merged["subject"] = current.subject
    if memory.kind is Kind.MEMORULE:
        merged.update(
            memorule_kind=current.memorule_kind.value if current.memorule_kind else None,
            applies_to=current.applies_to.to_dict() if current.applies_to else None,
            confidence=current.confidence.value if current.confidence else None,
        )
        if current.guarded:
            merged.update(current.adherence_dict())
        if current.evidence_signal_id is not None:
            merged["evidence_signal_id"] = current.evidence_signal_id
        if evidence_signal_id is not None:
            merged["evidence_signal_id"] = evidence_signal_id
    merged.update(changes)
    return merged
