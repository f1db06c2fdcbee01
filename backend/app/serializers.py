"""What every front door shows of memories: their JSON shapes and ``ok`` envelopes.

The MCP server, the HTTP API, the CLI and the web console share these, so a memory reads the
same through every door; services return records and never build these shapes.
"""

from __future__ import annotations

from typing import Any

from app.domain.records import Memory, MemoryState, iso
from app.services.memorule_service import AuditPage
from app.services.memory_reads import History, MemoryPage


def memory_dict(m: Memory) -> dict[str, Any]:
    """A memory node (no content: that is its state)."""
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
    """One version of a memory: its content and who wrote it when (memorule fields too)."""
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


def history_dict(h: History) -> dict[str, Any]:
    """``memory_history``: the memory, every version oldest first, its audit events."""
    return {
        "ok": True,
        "memory": memory_dict(h.memory),
        "versions": [state_dict(s) for s in h.states],
        "audit": [e.to_dict() for e in h.events],
    }


def memory_page_dict(page: MemoryPage) -> dict[str, Any]:
    """One page of a listing, with the cursor of the next (None on the last page)."""
    return {
        "ok": True,
        "items": [{"memory": memory_dict(m), "state": state_dict(s)} for m, s in page.items],
        "next_cursor": page.next_cursor,
    }


def audit_page_dict(page: AuditPage) -> dict[str, Any]:
    """One page of audit events, newest first, with the cursor of the next."""
    return {
        "ok": True,
        "events": [e.to_dict() for e in page.events],
        "next_cursor": page.next_cursor,
    }
