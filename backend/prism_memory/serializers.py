"""What every front door shows: the JSON shapes of memories and the ``ok`` envelopes of
every answer a service returns as a record.

The MCP server, the HTTP API, the CLI and the web console share these, so an answer reads the
same through every door; services return records and never build these envelopes. A memory,
a state, a recall match, a write result and an audit event are shaped from their response
models (:mod:`prism_memory.domain.contract.shapes`: the OpenAPI schema), field by field in the
model's order, so the shape is stated once and MCP sends the bytes HTTP does. (A record's
stored form stays with the record: ``WriteResult.to_dict`` is what an idempotency key keeps,
``MemoruleAudit.to_dict`` what a dump writes.)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from pydantic import BaseModel

from prism_memory.domain.adherence.checks import checks_json
from prism_memory.domain.contract.shapes import (
    AuditEventPublic,
    MemoryPublic,
    PinResultPublic,
    RecallMatchPublic,
    StatePublic,
    WriteResultPublic,
)
from prism_memory.domain.records import (
    AppliesTo,
    Kind,
    MemoruleAudit,
    Memory,
    MemoryState,
    PinResult,
    RecallMatch,
    RecallResult,
    WriteResult,
    iso,
)

if TYPE_CHECKING:  # only read here: a door that shows a brief loads no capture or transfer code
    from prism_memory.formats.rules_io.records import ImportReport
    from prism_memory.services.brief_service import Brief
    from prism_memory.services.capture_service import CaptureReport
    from prism_memory.services.ledger_service import ChainHeads, ServedPage
    from prism_memory.services.memorule_service import AuditPage
    from prism_memory.services.memory_reads import History, MemoryPage
    from prism_memory.services.transfer import TransferReport


def write_dict(result: WriteResult) -> dict[str, Any]:
    """A successful write (DESIGN §5, ``WriteResultPublic``): ``ok`` and the result, every
    field shown (``audit_id`` null on a note, ``warnings`` empty, ``replayed`` false)."""
    own = {"ok": True, "warnings": list(result.warnings)}
    return {
        name: own[name] if name in own else _plain(getattr(result, name))
        for name in WriteResultPublic.model_fields
    }


def pin_dict(result: PinResult) -> dict[str, Any]:
    """A memorule pinned or unpinned (``PinResultPublic``), every field shown."""
    own = {"ok": True}
    return {
        name: own[name] if name in own else _plain(getattr(result, name))
        for name in PinResultPublic.model_fields
    }


def audit_event_dict(event: MemoruleAudit) -> dict[str, Any]:
    """One audit event and its link in the chain (``AuditEventPublic``)."""
    return {name: _plain(getattr(event, name)) for name in AuditEventPublic.model_fields}


def recall_dict(result: RecallResult) -> dict[str, Any]:
    """A recall: ``ok``, the matches and how many candidates were ranked."""
    return {
        "ok": True,
        "matches": [match_dict(m) for m in result.matches],
        "count": len(result.matches),
        "candidates": result.candidates,
        "embedding_model": result.model,
    }


def match_dict(match: RecallMatch) -> dict[str, Any]:
    """One recalled memory (``RecallMatchPublic``): the memory's identity, its state, the
    score (rounded to 1e-6) and the score's ``why``."""
    m, s = match.memory, match.state
    own = {"score": round(match.score, 6), "applicable": match.applicable, "why": match.why}
    node = {
        "id": m.id,
        "kind": m.kind,
        "source_type": m.source_type,
        "namespace": m.namespace,
        "pinned": m.pinned,
    }

    def value(name: str) -> Any:
        if name in own:
            return own[name]
        return node[name] if name in node else getattr(s, name)

    return _shaped(RecallMatchPublic, value, s, m.kind is Kind.MEMORULE)


def memory_dict(m: Memory) -> dict[str, Any]:
    """A memory node (``MemoryPublic``; no content: that is its state)."""
    return {name: _plain(getattr(m, name)) for name in MemoryPublic.model_fields}


def state_dict(s: MemoryState) -> dict[str, Any]:
    """One version of a memory (``StatePublic``): its content and who wrote it when
    (memorule fields too)."""

    def value(name: str) -> Any:
        return getattr(s, "id" if name == "state_id" else name)

    return _shaped(StatePublic, value, s, s.memorule_kind is not None)


_ADHERENCE: Final = frozenset({"checks", "enforcement"})


def _shaped(
    model: type[BaseModel], value: Callable[[str], Any], s: MemoryState, memorule: bool
) -> dict[str, Any]:
    """``model``'s fields in its order, each ``value(name)`` as JSON. Its optional fields are
    a memorule's: shown only on a memorule (applies_to ``{}`` when it names none), and
    ``checks``/``enforcement`` only on a rule that has checks or an enforcement other than
    ``remind`` (``MemoryState.guarded``), so other answers read exactly as before them."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if not field.is_required() and (not memorule or (name in _ADHERENCE and not s.guarded)):
            continue
        v = value(name)
        out[name] = {} if v is None and name == "applies_to" else _plain(v)
    return out


def _plain(value: Any) -> Any:
    """A record's value as JSON: ids and enums as text, times as ISO 8601, a rule's checks
    as written."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, AppliesTo):
        return value.to_dict()
    if isinstance(value, tuple):  # a state's checks
        return checks_json(value)
    return value


def history_dict(h: History) -> dict[str, Any]:
    """``memory_history``: the memory, every version oldest first, its audit events."""
    return {
        "ok": True,
        "memory": memory_dict(h.memory),
        "versions": [state_dict(s) for s in h.states],
        "audit": [audit_event_dict(e) for e in h.events],
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
        "events": [audit_event_dict(e) for e in page.events],
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
                "pinned": m.memory.pinned,
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
