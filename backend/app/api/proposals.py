"""The ``/v1`` routes of the capture review queue: list proposals, decide, read evidence.

Thin, like :mod:`app.api.routes`: parse, call :class:`app.services.proposal_access.ProposalAccess`
once in the request's worker thread, return its record. Readers list; writers and admins
decide.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api import models as m
from app.api.deps import CallDep, StateDep
from app.domain import validation as v
from app.domain.records import AuditEventType, MemoruleKind
from app.serializers import memory_dict, state_dict
from app.services.proposal_access import ProposalAccess
from app.services.proposal_service import ProposalService

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": m.ErrorPublic, "description": text}
    for status, text in (
        (401, "missing, unknown or revoked API key"),
        (403, "the key's role, projects or persona forbid it"),
        (408, "the request body arrived too slowly"),
        (413, "the request body is too large"),
        (422, "validation failed: every field error at once"),
        (503, "the store is not ready"),
    )
}
_DECIDE = {
    **_ERRORS,
    404: {"model": m.ErrorPublic, "description": "no such proposal or memorule (for this key)"},
    409: {"model": m.ErrorPublic, "description": "not a pending proposal / not promotable"},
}

router = APIRouter(prefix="/v1", tags=["proposals"])


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApproveCreate(_Closed):
    """Approve a proposal; any field given replaces the proposal's (a new version)."""

    subject: str | None = Field(None, min_length=v.SUBJECT_MIN, max_length=v.SUBJECT_MAX)
    body: str | None = Field(None, min_length=v.MEMORULE_BODY_MIN, max_length=v.BODY_MAX)
    memorule_kind: MemoruleKind | None = None
    applies_to: m.AppliesToCreate | None = None
    reason: str | None = Field(None, max_length=v.REASON_MAX)


class RejectCreate(_Closed):
    """Reject a proposal; the reason is kept in the audit trail."""

    reason: str = Field(min_length=1, max_length=v.REASON_MAX)


class MergeCreate(_Closed):
    """Fold a proposal into the active memorule it repeats."""

    into: UUID
    reason: str | None = Field(None, max_length=v.REASON_MAX)


class PromoteCreate(_Closed):
    """Promote an inferred/asserted memorule with operator evidence to observed."""

    reason: str | None = Field(None, max_length=v.REASON_MAX)


class EvidencePublic(BaseModel):
    """One signal behind a rule and the audit event that kept it."""

    evidence_signal_id: str
    event: AuditEventType
    written_at: str


class ProposalPublic(BaseModel):
    memory: m.MemoryPublic
    state: m.StatePublic
    evidence: list[EvidencePublic]


class ProposalsPublic(BaseModel):
    """Pending proposals of the request's project, newest first."""

    ok: bool
    proposals: list[ProposalPublic]
    count: int


class EvidenceListPublic(BaseModel):
    ok: bool
    id: UUID
    evidence: list[EvidencePublic]


def _access(state: Any) -> ProposalAccess:
    s = state.services
    return ProposalAccess(ProposalService(s.store, s.embedder, s.memorules))


@router.get(
    "/proposals",
    response_model=ProposalsPublic,
    responses=_ERRORS,
    summary="The capture review queue: pending proposals",
)
async def list_proposals(
    state: StateDep, call: CallDep, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    """Memorules captured from operator messages, awaiting a decision (never recalled)."""
    found = await call.run(lambda key, ctx: _access(state).pending(key, ctx, limit))
    items = [
        {
            "memory": memory_dict(mem),
            "state": state_dict(st),
            "evidence": [e.to_dict() for e in ev],
        }
        for mem, st, ev in found
    ]
    return {"ok": True, "proposals": items, "count": len(items)}


@router.post(
    "/proposals/{memory_id}/approve",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Approve a proposal (optionally edited): it becomes an active memorule",
)
async def approve(
    state: StateDep, call: CallDep, memory_id: UUID, body: ApproveCreate
) -> dict[str, Any]:
    edits = body.model_dump(exclude_none=True, exclude={"reason"}, mode="json")
    result = await call.run(
        lambda key, ctx: _access(state).approve(key, ctx, memory_id, edits or None, body.reason)
    )
    return result.to_dict()


@router.post(
    "/proposals/{memory_id}/reject",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Reject a proposal, with a reason",
)
async def reject(
    state: StateDep, call: CallDep, memory_id: UUID, body: RejectCreate
) -> dict[str, Any]:
    result = await call.run(
        lambda key, ctx: _access(state).reject(key, ctx, memory_id, body.reason)
    )
    return result.to_dict()


@router.post(
    "/proposals/{memory_id}/merge",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Merge a proposal into the memorule it repeats (the rule gains evidence)",
)
async def merge(
    state: StateDep, call: CallDep, memory_id: UUID, body: MergeCreate
) -> dict[str, Any]:
    result = await call.run(
        lambda key, ctx: _access(state).merge(key, ctx, memory_id, body.into, body.reason)
    )
    return result.to_dict()


@router.post(
    "/memories/{memory_id}/promote",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Promote an inferred/asserted memorule with operator evidence to observed",
)
async def promote(
    state: StateDep, call: CallDep, memory_id: UUID, body: PromoteCreate
) -> dict[str, Any]:
    result = await call.run(
        lambda key, ctx: _access(state).promote(key, ctx, memory_id, body.reason)
    )
    return result.to_dict()


@router.get(
    "/memories/{memory_id}/evidence",
    response_model=EvidenceListPublic,
    responses={**_ERRORS, 404: _DECIDE[404]},
    summary="The signals behind a memorule (captured messages that stated or repeated it)",
)
async def evidence(state: StateDep, call: CallDep, memory_id: UUID) -> dict[str, Any]:
    found = await call.run(lambda key, ctx: _access(state).evidence(key, ctx, memory_id))
    return {"ok": True, "id": str(memory_id), "evidence": [e.to_dict() for e in found]}
