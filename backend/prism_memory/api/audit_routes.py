"""``/v1/audit/head`` and ``/v1/audit/served``: the chain heads and the served receipts."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Request
from pydantic import BaseModel

from prism_memory.api.deps import CallDep, StateDep
from prism_memory.api.models import ErrorPublic, HeadPublic, Timestamp
from prism_memory.api.query import query_doc, query_values
from prism_memory.domain.contract.audit import ServedQuery
from prism_memory.serializers import heads_dict, served_page_dict
from prism_memory.services.ledger_service import served_filter

router = APIRouter(prefix="/v1")
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorPublic, "description": text}
    for status, text in (
        (401, "missing, unknown or revoked API key"),
        (403, "the key's role or projects forbid it"),
        (422, "validation failed: every field error at once"),
        (503, "the store is not ready"),
    )
}


class HeadsPublic(BaseModel):
    """The heads of the tenant's audit chain and served-receipt chain: keep them elsewhere."""

    ok: Literal[True]
    tenant_id: UUID
    audit: HeadPublic
    served: HeadPublic


class ServedReceiptPublic(BaseModel):
    """One memorule version served by one recall or brief, and its link in the chain."""

    seq: int
    call_id: UUID
    served_at: Timestamp
    tool: str
    session_id: UUID
    persona: str | None
    project_id: UUID
    memorule_id: UUID
    state_id: UUID
    version: int
    rank: int
    query_sha256: str
    key_id: str | None
    prev_hash: str
    hash: str


class ServedPagePublic(BaseModel):
    """Receipts oldest first; pass ``next_cursor`` as ``after`` for the next page."""

    ok: Literal[True]
    served: list[ServedReceiptPublic]
    next_cursor: int | None


@router.get(
    "/audit/head",
    response_model=HeadsPublic,
    responses=_ERRORS,
    summary="The tenant's chain heads (sequence number, hash, time)",
    tags=["audit"],
)
async def audit_head(state: StateDep, call: CallDep) -> dict[str, Any]:
    """Store the audit head elsewhere; ``/v1/audit/verify?head=SEQ:HASH`` later proves the
    chain still extends it (admin keys not restricted to projects)."""
    return await call.run(lambda key, ctx: heads_dict(state.access.audit_head(key, ctx)))


@router.get(
    "/audit/served",
    response_model=ServedPagePublic,
    responses=_ERRORS,
    summary="Which memorule versions recalls and briefs served, to which session",
    tags=["audit"],
    openapi_extra=query_doc(ServedQuery),
)
async def audit_served(state: StateDep, call: CallDep, request: Request) -> dict[str, Any]:
    """Oldest first. Admin keys not restricted to projects read the whole tenant's; any
    other key reads one ``session_id``'s receipts of calls made with that same key. The
    same query as ``memorule_served`` (``memorule_id`` is accepted for ``memorule``);
    unknown parameters are refused, an empty one is no filter."""
    flt = served_filter(ServedQuery.parse(query_values(request, ServedQuery)))  # before the key
    return await call.run(lambda key, ctx: served_page_dict(state.access.served(key, ctx, flt)))
