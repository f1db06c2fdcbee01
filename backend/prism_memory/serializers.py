"""What every front door shows: the JSON shapes of memories and the ``ok`` envelopes of
every answer a service returns as a record.

The MCP server, the HTTP API, the CLI and the web console share these, so an answer reads the
same through every door; services return records and never build these envelopes. (A
record's own shape, e.g. ``MemoruleAudit.to_dict``, stays with the record.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prism_memory.domain.records import Memory, MemoryState, RecallResult, WriteResult, iso

if TYPE_CHECKING:  # only read here: a door that shows a brief loads no capture or transfer code
    from prism_memory.formats.rules_io.records import ImportReport
    from prism_memory.services.brief_service import Brief
    from prism_memory.services.capture_service import CaptureReport
    from prism_memory.services.ledger_service import ChainHeads, ServedPage
    from prism_memory.services.memorule_service import AuditPage
    from prism_memory.services.memory_reads import History, MemoryPage
    from prism_memory.services.transfer import TransferReport


def write_dict(result: WriteResult) -> dict[str, Any]:
    """A successful write (DESIGN §5): ``ok`` and the result."""
    return {"ok": True, **result.to_dict()}


def recall_dict(result: RecallResult) -> dict[str, Any]:
    """A recall: ``ok``, the matches and how many candidates were ranked."""
    return {"ok": True, **result.to_dict()}


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
        out.update(s.adherence_dict())  # only on a rule with checks or an enforcement
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


def brief_dict(b: Brief) -> dict[str, Any]:
    """The brief as JSON: the Markdown plus what it holds."""
    return {
        "ok": True,
        "markdown": b.markdown,
        "included": [
            {
                "id": str(m.memory.id),
                "memorule_kind": m.state.memorule_kind.value if m.state.memorule_kind else None,
                "subject": m.state.subject,
                "confidence": m.state.confidence.value if m.state.confidence else None,
                "score": round(m.score, 6),
            }
            for m in b.included
        ],
        "omitted": b.omitted,
        "token_budget": b.token_budget,
        "estimated_tokens": b.estimated_tokens,
    }


def served_page_dict(page: ServedPage) -> dict[str, Any]:
    """One page of served receipts, oldest first, with the cursor of the next."""
    return {
        "ok": True,
        "served": [r.to_dict() for r in page.receipts],
        "next_cursor": page.next_cursor,
    }


def heads_dict(heads: ChainHeads) -> dict[str, Any]:
    """The tenant's chain heads: keep them elsewhere, verify against them later."""
    return {
        "ok": True,
        "tenant_id": str(heads.tenant_id),
        "audit": heads.audit.to_dict(),
        "served": heads.served.to_dict(),
    }


def capture_dict(report: CaptureReport) -> dict[str, Any]:
    """One capture run: messages read, detections and what became of each."""
    return {
        "ok": True,
        "dry_run": report.dry_run,
        "messages": report.messages,
        "detected": len(report.outcomes),
        "proposed": report.count("proposed"),
        "evidence": report.count("evidence"),
        "already_captured": report.count("already_captured"),
        "skipped": report.count("skipped"),
        "outcomes": [o.to_dict() for o in report.outcomes],
    }


def transfer_dict(report: TransferReport) -> dict[str, Any]:
    """What an export wrote or an import loaded, and each imported tenant's chain."""
    return {
        "ok": True,
        "counts": dict(report.counts),
        "tenants": [str(t) for t in report.tenants],
        "chains": {str(t): r.to_dict() for t, r in report.chains.items()},
    }


def import_dict(report: ImportReport) -> dict[str, Any]:
    """What a rule-file import did (or would do, on a dry run)."""
    return {
        "ok": True,
        "dry_run": report.dry_run,
        "counts": report.counts(),
        "files": report.files,
        "items": [i.to_dict() for i in report.items],
        "warnings": [w.to_dict() for w in report.warnings],
        **({"check_proposals": report.check_proposals} if report.check_proposals else {}),
    }
