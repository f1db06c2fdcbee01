"""Memory (the v0.3 substrate and its v0.4 front): notes, recall over all memory, versions.

``remember`` is the one write entry every front door calls (``prism_remember``);
``recall`` is ``semantic_recall``. Memorule specifics live in :mod:`memorule_service`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.domain import field_checks, listing, validation
from app.domain.ids import new_id
from app.domain.ranking import RankingWeights, normalise_key
from app.domain.records import (
    APPLIES_TO_KEYS,
    AuditEventType,
    Kind,
    MemoruleAudit,
    MemoruleWrite,
    Memory,
    MemoryState,
    NoteWrite,
    RecallMatch,
    RecallQuery,
    RecallResult,
    SessionContext,
    SourceType,
    Status,
    WriteResult,
    iso,
    parse_iso,
    utcnow,
)
from app.domain.restated import without_restated
from app.embeddings.port import Embedder
from app.errors import Conflict, FieldError, InvalidInput, MemoryRetired, NotFound
from app.services.ledger_service import LedgerService
from app.services.memorule_service import MemoruleService
from app.trigraph.port import (
    AuditFilter,
    CandidateFilter,
    IdempotencyClaim,
    ListFilter,
    RecallRequest,
    StateWrite,
    TriGraphStore,
    WriteBatch,
)

UPDATABLE = {
    Kind.NOTE: frozenset({"body", "subject"}),
    Kind.MEMORULE: frozenset(
        {"memorule_kind", "subject", "body", "applies_to", "evidence_signal_id", "confidence"}
    ),
}


@dataclass(frozen=True)
class History:
    """Every version of a memory, oldest first, and its audit events, newest first."""

    memory: Memory
    states: list[MemoryState]
    events: list[MemoruleAudit]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "memory": memory_dict(self.memory),
            "versions": [state_dict(s) for s in self.states],
            "audit": [e.to_dict() for e in self.events],
        }


@dataclass(frozen=True)
class MemoryPage:
    """One page of a listing, newest first; ``next_cursor`` is None on the last page."""

    items: list[tuple[Memory, MemoryState]]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "items": [{"memory": memory_dict(m), "state": state_dict(s)} for m, s in self.items],
            "next_cursor": self.next_cursor,
        }


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
        self.served = served
        self.store = store
        self.preselect_above = preselect_above
        self.embedder = embedder
        self.memorules = memorules
        self.weights = weights or RankingWeights()

    # -- writes ------------------------------------------------------------------------

    def remember(self, ctx: SessionContext, raw: Mapping[str, Any]) -> WriteResult:
        """``prism_remember``: validate and write a note or a memorule.

        Args:
            ctx: the session context (tenant, project, session, persona...).
            raw: the request (DESIGN §5): ``kind`` defaults to ``note``.

        Returns:
            The write result; ``replayed`` when an idempotency key matched an earlier write.

        Raises:
            InvalidInput: every field error; nothing is written.
            IdempotencyConflict: the key was used with different arguments.
            NearDuplicate: a strict memorule write found a near duplicate.
        """
        write = validation.validate_remember(raw)
        key = write.idempotency_key
        request_hash = _request_hash("remember", ctx, _write_dict(write))
        if key is not None and (replay := self._replay(ctx, key, request_hash)):
            return replay
        vector = self.embedder.embed([_text(write.subject, write.body)])[0]
        warnings: list[dict[str, Any]] = []
        if isinstance(write, MemoruleWrite):
            batch, memory, state, audit, warnings = self.memorules.build_create(ctx, write, vector)
            audit_id: UUID | None = audit.id
        else:
            batch, memory, state = self._build_note(ctx, write, vector)
            audit_id = None
        result = WriteResult(
            memory.id, state.id, 1, memory.kind, state.written_at, audit_id, tuple(warnings)
        )
        return self._commit(batch, key, request_hash, result)

    def _build_note(
        self, ctx: SessionContext, write: NoteWrite, vector: Any
    ) -> tuple[WriteBatch, Memory, MemoryState]:
        now = utcnow()
        memory = Memory(
            id=new_id(),
            tenant_id=ctx.tenant_id,
            project_id=ctx.project_id,
            namespace=write.namespace,
            kind=Kind.NOTE,
            status=Status.ACTIVE,
            created_at=now,
        )
        state = MemoryState(
            id=new_id(),
            memory_id=memory.id,
            version=1,
            body=write.body,
            subject=write.subject,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            written_at=now,
            embedding_model=self.embedder.model_id,
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id, new_memories=[memory], states=[StateWrite(state, vector)]
        )
        return batch, memory, state

    def update(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        changes: Mapping[str, Any],
        reason: str | None = None,
        evidence_signal_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Supersede a memory's current state with a new version.

        Args:
            ctx: the session context.
            memory_id: the memory to change (active, in the caller's tenant).
            changes: fields to change; the resulting state is validated as a new write.
            reason: why (kept on the state and the audit event).
            evidence_signal_id: the signal that prompted the change (memorules).
            idempotency_key: makes a retried update return the first result.

        Raises:
            NotFound, MemoryRetired, InvalidInput, Conflict, IdempotencyConflict.
        """
        reason = field_checks.check_reason(reason, required=False)
        idempotency_key = field_checks.check_idempotency_key(idempotency_key)
        evidence_signal_id = field_checks.check_text(
            evidence_signal_id,
            "evidence_signal_id",
            max_len=validation.EVIDENCE_MAX,
            single_line=True,
        )
        found = self._get_active(ctx, memory_id)
        memory, current = found
        # Validated before anything else reads ``changes`` (the request hash included).
        merged = _merge(memory, current, changes, evidence_signal_id)
        write = validation.validate_remember(merged)
        request_hash = _request_hash(
            "update",
            ctx,
            {
                "id": str(memory_id),
                "changes": dict(changes),
                "reason": reason,
                "evidence_signal_id": evidence_signal_id,
            },
        )
        if idempotency_key and (replay := self._replay(ctx, idempotency_key, request_hash)):
            return replay
        text_changed = (write.subject, write.body) != (current.subject, current.body)
        vector = (
            self.embedder.embed([_text(write.subject, write.body)])[0] if text_changed else None
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
            embedding_model=self.embedder.model_id if text_changed else current.embedding_model,
            reason=reason,
        )
        audit_id = None
        batch = WriteBatch(tenant_id=ctx.tenant_id, expected_versions={memory.id: current.version})
        if isinstance(write, MemoruleWrite):
            state = MemoryState(
                **{
                    **state.__dict__,
                    "memorule_kind": write.memorule_kind,
                    "applies_to": write.applies_to,
                    "evidence_signal_id": write.evidence_signal_id,
                    "confidence": write.confidence,
                }
            )
            draft = self.memorules.audit_draft(
                ctx,
                memory.id,
                state,
                AuditEventType.SUPERSEDED,
                write.evidence_signal_id,
                now,
                reason,
            )
            batch.audits.append(draft)
            audit_id = draft.id
        batch.states.append(StateWrite(state, vector))
        result = WriteResult(memory.id, state.id, state.version, memory.kind, now, audit_id)
        return self._commit(batch, idempotency_key, request_hash, result)

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

    def _set_status(
        self,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        status: Status,
        idempotency_key: str | None,
    ) -> WriteResult:
        checked = field_checks.check_reason(reason, required=True)
        idempotency_key = field_checks.check_idempotency_key(idempotency_key)
        verb = "retire" if status is Status.RETIRED else "restore"
        request_hash = _request_hash(verb, ctx, {"id": str(memory_id), "reason": checked})
        if idempotency_key and (replay := self._replay(ctx, idempotency_key, request_hash)):
            return replay
        memory, state = self.get(ctx, memory_id)
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
            event = AuditEventType.RETIRED if status is Status.RETIRED else AuditEventType.RESTORED
            draft = self.memorules.audit_draft(
                ctx, memory.id, state, event, state.evidence_signal_id, now, checked
            )
            batch.audits.append(draft)
            audit_id = draft.id
        result = WriteResult(memory.id, state.id, state.version, memory.kind, now, audit_id)
        return self._commit(batch, idempotency_key, request_hash, result)

    def _replay(self, ctx: SessionContext, key: str, request_hash: str) -> WriteResult | None:
        claim = self.store.idempotent_result(ctx.tenant_id, key)
        if claim is None:
            return None
        if claim.request_hash != request_hash:
            from app.errors import IdempotencyConflict

            raise IdempotencyConflict(
                f"idempotency key '{key}' was used for a different request", key=key
            )
        return _result_from(claim.result)

    def _commit(
        self, batch: WriteBatch, key: str | None, request_hash: str, result: WriteResult
    ) -> WriteResult:
        if key is not None:
            batch.idempotency = IdempotencyClaim(key, request_hash, result.to_dict())
        outcome = self.store.write(batch)
        if outcome.replay is not None:
            return _result_from(outcome.replay.result)
        return result

    # -- reads -------------------------------------------------------------------------

    def get(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        """A memory and its current state (retired ones too).

        Raises:
            NotFound: no such memory in the caller's tenant.
        """
        found = self.store.get(ctx.tenant_id, memory_id)
        if found is None:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        return found

    def _get_active(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        memory, state = self.get(ctx, memory_id)
        if memory.status is Status.RETIRED:
            raise MemoryRetired(
                f"memory {memory_id} is retired; restore it before updating", id=str(memory_id)
            )
        return memory, state

    def history(self, ctx: SessionContext, memory_id: UUID) -> History:
        """Every version of a memory with its writers, and its audit events."""
        memory, _ = self.get(ctx, memory_id)
        states = self.store.states(ctx.tenant_id, memory_id)
        events = self.store.audit_events(
            ctx.tenant_id, AuditFilter(memorule_id=memory_id, limit=10_000)
        )
        return History(memory, states, events)

    def list_memories(
        self, ctx: SessionContext, raw: Mapping[str, Any], viewer_persona: str | None = None
    ) -> MemoryPage:
        """One page of the project's memories and the tenant's global/org memorules, newest
        first (retired ones with ``status='retired'`` or ``'all'``).

        Args:
            ctx: the session context (its tenant and project).
            raw: filters, ``cursor`` and ``limit`` (:func:`app.domain.listing.validate_list`).
            viewer_persona: a persona-bound caller's persona: other personas' ``persona``-scope
                rules are left out, as :func:`app.domain.access.can_see` does.

        Raises:
            InvalidInput: every field error (a bad filter value, a malformed cursor).
        """
        q = listing.validate_list(raw)
        flt = ListFilter(
            project_id=ctx.project_id,
            status=q.status,
            memorules_only=q.source_type is SourceType.MEMORULE,
            namespace=q.namespace,
            memorule_kinds=q.memorule_kinds,
            confidences=q.confidences,
            scopes=q.scopes,
            applies=q.applies,
            viewer_persona=normalise_key(viewer_persona),
            before=q.before,
            limit=q.limit + 1,  # one more tells whether a next page exists
        )
        found = self.store.list_memories(ctx.tenant_id, flt)
        items = found[: q.limit]
        more = len(found) > q.limit
        return MemoryPage(items, listing.encode_cursor(items[-1][0].id) if more else None)

    def recall(
        self,
        ctx: SessionContext,
        raw: Mapping[str, Any] | RecallQuery,
        served_as: str | None = "semantic_recall",
    ) -> RecallResult:
        """``semantic_recall``: the memories that apply to the context, best first.

        Args:
            ctx: the session context; its persona/surface/specialization drive applicability.
            raw: the request (DESIGN §6) or an already validated :class:`RecallQuery`.
            served_as: the tool its served receipts name (None: record none, e.g. a brief
                records what it finally shows itself).

        Raises:
            InvalidInput: every field error.
        """
        q = raw if isinstance(raw, RecallQuery) else validation.validate_recall(raw)
        conflicts: dict[str, str] = {}
        if not q.include_inapplicable:
            for key in APPLIES_TO_KEYS:
                value = normalise_key(ctx.value(key))
                if value is not None:
                    conflicts[key] = value
        flt = CandidateFilter(
            project_id=ctx.project_id,
            persona=ctx.persona,
            memorules_only=q.source_type is SourceType.MEMORULE,
            namespace=q.namespace,
            memorule_kinds=q.memorule_kinds,
            confidences=q.confidences,
            exclude_conflicts=conflicts,
        )
        # Relevance is scored without the words that only restate the context (DESIGN §6).
        text = without_restated(q.query, ctx, self.weights.restated)
        qvec = self.embedder.embed([text])[0] if text.strip() else None
        page = self.store.recall(
            ctx.tenant_id,
            RecallRequest(
                filter=flt,
                context=ctx,
                query=text,
                vector=qvec,
                model=self.embedder.model_id,
                weights=self.weights,
                top_k=q.top_k,
                include_inapplicable=q.include_inapplicable,
                preselect_above=self.preselect_above,
            ),
        )
        ranked = page.ranked
        found = self.store.get_many(ctx.tenant_id, [UUID(r.memory_id) for r in ranked])
        matches = []
        for r in ranked:
            pair = found.get(UUID(r.memory_id))
            if pair is not None:
                matches.append(RecallMatch(pair[0], pair[1], r.score, r.why, r.applicable))
        if served_as is not None and self.served is not None:
            self.served.record(ctx, served_as, q.query, matches)
        return RecallResult(matches, self.embedder.model_id, page.candidates)

    # -- bulk import -------------------------------------------------------------------

    def remember_many(
        self, ctx: SessionContext, raws: Sequence[Mapping[str, Any]], chunk: int = 256
    ) -> list[WriteResult]:
        """Bulk ``prism_remember``: validate every item, embed in batches, write by chunks.

        Each item becomes the same memory, state and audit event as :meth:`remember` would
        write. Differences: near-duplicate warnings compare an item with the store as it
        was before the item's chunk (not with earlier items of the same chunk), and an
        ``idempotency_key`` is refused (retried writes go through :meth:`remember`).

        Args:
            ctx: the session context every item is written in.
            raws: the requests, as for :meth:`remember`.
            chunk: items per embedding batch and per transaction.

        Returns:
            One result per item, in order.

        Raises:
            InvalidInput: every field error of every item (fields prefixed ``items[i].``);
                nothing is written.
            NearDuplicate: a strict item found a near duplicate; its chunk and later ones
                are not written.
        """
        writes: list[NoteWrite | MemoruleWrite] = []
        errors: list[FieldError] = []
        for i, raw in enumerate(raws):
            try:
                write = validation.validate_remember(raw)
            except InvalidInput as exc:
                errors.extend(
                    FieldError(f"items[{i}].{e.field}", e.code, e.message, e.details)
                    for e in exc.errors
                )
                continue
            if write.idempotency_key is not None:
                errors.append(
                    FieldError(
                        f"items[{i}].idempotency_key",
                        "not_allowed",
                        "bulk writes take no idempotency key; retry a single write instead",
                    )
                )
            writes.append(write)
        if errors:
            raise InvalidInput(errors)
        results: list[WriteResult] = []
        for start in range(0, len(writes), max(1, chunk)):
            part = writes[start : start + max(1, chunk)]
            vectors = self.embedder.embed([_text(w.subject, w.body) for w in part])
            merged = WriteBatch(tenant_id=ctx.tenant_id)
            for write, vector in zip(part, vectors, strict=True):
                warnings: list[dict[str, Any]] = []
                audit_id: UUID | None = None
                if isinstance(write, MemoruleWrite):
                    batch, memory, state, audit, warnings = self.memorules.build_create(
                        ctx, write, vector
                    )
                    audit_id = audit.id
                else:
                    batch, memory, state = self._build_note(ctx, write, vector)
                merged.new_memories.extend(batch.new_memories)
                merged.states.extend(batch.states)
                merged.status_changes.extend(batch.status_changes)
                merged.audits.extend(batch.audits)
                merged.expected_versions.update(batch.expected_versions)
                results.append(
                    WriteResult(
                        memory.id,
                        state.id,
                        1,
                        memory.kind,
                        state.written_at,
                        audit_id,
                        tuple(warnings),
                    )
                )
            self.store.write(merged)
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


def _text(subject: str | None, body: str) -> str:
    return f"{subject}\n{body}" if subject else body


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
        if current.evidence_signal_id is not None:
            merged["evidence_signal_id"] = current.evidence_signal_id
        if evidence_signal_id is not None:
            merged["evidence_signal_id"] = evidence_signal_id
    merged.update(changes)
    return merged


def _write_dict(write: NoteWrite | MemoruleWrite) -> dict[str, Any]:
    out = {k: v for k, v in write.__dict__.items() if k != "idempotency_key"}
    if isinstance(write, MemoruleWrite):
        out["applies_to"] = write.applies_to.to_dict()
        out["corrects"] = str(write.corrects) if write.corrects else None
    return out


def _request_hash(op: str, ctx: SessionContext, payload: dict[str, Any]) -> str:
    body = {"op": op, "project": str(ctx.project_id), "persona": ctx.persona, **payload}
    text = json.dumps(body, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _result_from(data: dict[str, Any]) -> WriteResult:
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


def memory_dict(m: Memory) -> dict[str, Any]:
    return {
        "id": str(m.id),
        "tenant_id": str(m.tenant_id),
        "project_id": str(m.project_id),
        "namespace": m.namespace,
        "kind": m.kind.value,
        "source_type": m.source_type.value,
        "status": m.status.value,
        "created_at": iso(m.created_at),
        "current_version": m.current_version,
    }


def state_dict(s: MemoryState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "state_id": str(s.id),
        "version": s.version,
        "subject": s.subject,
        "body": s.body,
        "written_by_session_id": str(s.written_by_session_id),
        "written_by_persona": s.written_by_persona,
        "written_at": iso(s.written_at),
        "embedding_model": s.embedding_model,
        "reason": s.reason,
    }
    if s.memorule_kind is not None:
        out.update(
            memorule_kind=s.memorule_kind.value,
            applies_to=s.applies_to.to_dict() if s.applies_to else {},
            confidence=s.confidence.value if s.confidence else None,
            evidence_signal_id=s.evidence_signal_id,
        )
    return out
