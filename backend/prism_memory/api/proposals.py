"""The ``/v1`` routes of the capture review queue: list proposals, decide, read evidence.

Thin, like :mod:`prism_memory.api.routes`: parse, call
:class:`prism_memory.services.access_service.AccessService`
once in the request's worker thread, return its record. Readers list; writers and admins
decide.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel

from prism_memory.api import models as m
from prism_memory.api.deps import CallDep, JsonBody, StateDep
from prism_memory.api.routes import body_doc
from prism_memory.domain.contract.bounds import PROPOSALS_LIMIT_DEFAULT, PROPOSALS_LIMIT_MAX
from prism_memory.domain.contract.proposals import (
    ApproveCreate,
    MergeCreate,
    PromoteCreate,
    RejectCreate,
)
from prism_memory.domain.records import AuditEventType
from prism_memory.serializers import memory_dict, state_dict, write_dict

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


@router.get(
    "/proposals",
    response_model=ProposalsPublic,
    responses=_ERRORS,
    summary="The capture review queue: pending proposals",
)
async def list_proposals(
    state: StateDep,
    call: CallDep,
    limit: Annotated[int, Query(ge=1, le=PROPOSALS_LIMIT_MAX)] = PROPOSALS_LIMIT_DEFAULT,
) -> dict[str, Any]:
    """Memorules captured from operator messages, awaiting a decision (never recalled)."""
    found = await call.run(lambda key, ctx: state.access.pending(key, ctx, limit))
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
    openapi_extra=body_doc(ApproveCreate, required=False),
)
async def approve(state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody) -> dict[str, Any]:
    body = ApproveCreate.parse(raw)
    edits = body.model_dump(exclude_none=True, exclude={"reason"}, mode="json")
    result = await call.run(
        lambda key, ctx: state.access.approve(key, ctx, memory_id, edits or None, body.reason)
    )
    return write_dict(result)


@router.post(
    "/proposals/{memory_id}/reject",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Reject a proposal, with a reason",
    openapi_extra=body_doc(RejectCreate),
)
async def reject(state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody) -> dict[str, Any]:
    body = RejectCreate.parse(raw)
    result = await call.run(lambda key, ctx: state.access.reject(key, ctx, memory_id, body.reason))
    return write_dict(result)


@router.post(
    "/proposals/{memory_id}/merge",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Merge a proposal into the memorule it repeats (the rule gains evidence)",
    openapi_extra=body_doc(MergeCreate),
)
async def merge(state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody) -> dict[str, Any]:
    body = MergeCreate.parse(raw)
    result = await call.run(
        lambda key, ctx: state.access.merge(key, ctx, memory_id, body.into, body.reason)
    )
    return write_dict(result)


@router.post(
    "/memories/{memory_id}/promote",
    response_model=m.WriteResultPublic,
    responses=_DECIDE,
    summary="Promote an inferred/asserted memorule with operator evidence to observed",
    openapi_extra=body_doc(PromoteCreate, required=False),
)
async def promote(state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody) -> dict[str, Any]:
    body = PromoteCreate.parse(raw)
    result = await call.run(lambda key, ctx: state.access.promote(key, ctx, memory_id, body.reason))
    return write_dict(result)


@router.get(
    "/memories/{memory_id}/evidence",
    response_model=EvidenceListPublic,
    responses={**_ERRORS, 404: _DECIDE[404]},
    summary="The signals behind a memorule (captured messages that stated or repeated it)",
)
async def evidence(state: StateDep, call: CallDep, memory_id: UUID) -> dict[str, Any]:
    found = await call.run(lambda key, ctx: state.access.evidence(key, ctx, memory_id))
    return {"ok": True, "id": str(memory_id), "evidence": [e.to_dict() for e in found]}
