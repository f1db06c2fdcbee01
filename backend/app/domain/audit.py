"""The per-tenant audit hash chain (the Watson hook's tamper evidence).

Each event's hash covers its own fields and the previous event's hash, so editing,
deleting or reordering any stored event breaks every link after it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from app.domain.records import AuditDraft, MemoruleAudit, iso

GENESIS_HASH = "0" * 64


def chain_hash(prev_hash: str, tenant_id: UUID, seq: int, draft: AuditDraft) -> str:
    """The hash of one event given the one before it."""
    payload = {
        "id": str(draft.id),
        "tenant_id": str(tenant_id),
        "seq": seq,
        "memorule_id": str(draft.memorule_id),
        "state_id": str(draft.state_id),
        "event": draft.event.value,
        "written_by_session_id": str(draft.written_by_session_id),
        "written_by_persona": draft.written_by_persona,
        "evidence_signal_id": draft.evidence_signal_id,
        "written_at": iso(draft.written_at),
        "reason": draft.reason,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{prev_hash}\n{canonical}".encode()).hexdigest()


def link(tenant_id: UUID, seq: int, prev_hash: str, draft: AuditDraft) -> MemoruleAudit:
    """Chain a draft after ``prev_hash`` as event number ``seq``."""
    return MemoruleAudit(
        id=draft.id,
        tenant_id=tenant_id,
        seq=seq,
        memorule_id=draft.memorule_id,
        state_id=draft.state_id,
        event=draft.event,
        written_by_session_id=draft.written_by_session_id,
        written_by_persona=draft.written_by_persona,
        evidence_signal_id=draft.evidence_signal_id,
        written_at=draft.written_at,
        reason=draft.reason,
        prev_hash=prev_hash,
        hash=chain_hash(prev_hash, tenant_id, seq, draft),
    )


@dataclass(frozen=True)
class ChainReport:
    """The outcome of recomputing a tenant's chain."""

    ok: bool
    events: int
    head: str
    broken_at_seq: int | None = None
    broken_event_id: str | None = None
    problem: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "events": self.events,
            "head": self.head,
            "broken_at_seq": self.broken_at_seq,
            "broken_event_id": self.broken_event_id,
            "problem": self.problem,
        }


def verify(events: Iterable[MemoruleAudit]) -> ChainReport:
    """Recompute a chain in ``seq`` order and report its first broken link."""
    prev, count = GENESIS_HASH, 0
    for event in events:
        count += 1
        problem = None
        if event.seq != count:
            problem = f"expected event number {count}, found {event.seq} (an event is missing)"
        elif event.prev_hash != prev:
            problem = "prev_hash does not match the hash of the event before it"
        else:
            draft = AuditDraft(
                id=event.id,
                memorule_id=event.memorule_id,
                state_id=event.state_id,
                event=event.event,
                written_by_session_id=event.written_by_session_id,
                written_by_persona=event.written_by_persona,
                evidence_signal_id=event.evidence_signal_id,
                written_at=event.written_at,
                reason=event.reason,
            )
            if chain_hash(prev, event.tenant_id, event.seq, draft) != event.hash:
                problem = "the event's fields do not match its hash (it was edited)"
        if problem:
            return ChainReport(False, count, prev, event.seq, str(event.id), problem)
        prev = event.hash
    return ChainReport(True, count, prev)
