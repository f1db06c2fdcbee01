"""The ``/v1`` routes: thin — parse, call the access service once, return its record.

The core is sync: each route hands authentication and its service call to ONE worker
thread (:meth:`prism_memory.api.deps.Call.run`).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, Request

from prism_memory.api import models as m
from prism_memory.api.deps import CallDep, JsonBody, StateDep
from prism_memory.api.models import ErrorPublic
from prism_memory.api.query import query_doc, query_values
from prism_memory.domain.access import Caller
from prism_memory.domain.contract.audit import AuditQuery, VerifyQuery
from prism_memory.domain.contract.proposals import (
    ApproveCreate,
    MergeCreate,
    PromoteCreate,
    RejectCreate,
)
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.listing import ListRequest
from prism_memory.serializers import (
    audit_page_dict,
    brief_dict,
    history_dict,
    memory_dict,
    memory_page_dict,
    pin_dict,
    recall_dict,
    state_dict,
    write_dict,
)
from prism_memory.services.ledger_service import audit_filter

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorPublic, "description": text}
    for status, text in (
        (401, "missing, unknown or revoked API key"),
        (403, "the key's role, projects or persona forbid it"),
        (408, "the request body arrived too slowly"),
        (413, "the request body is too large"),
        (422, "validation failed: every field error at once"),
        (503, "the store is not ready"),
    )
}
_BY_ID = {**_ERRORS, 404: {"model": ErrorPublic, "description": "no such memory (for this key)"}}
_WRITE = {**_BY_ID, 409: {"model": ErrorPublic, "description": "conflict with the stored state"}}


def body_doc(model: type[Any], *alternatives: type[Any], required: bool = True) -> dict[str, Any]:
    """An OpenAPI requestBody for a raw JSON route (validated by its model, not FastAPI).

    ``required=False``: an empty body means ``{}`` (every field at its default).
    """
    refs = [{"$ref": f"#/components/schemas/{t.__name__}"} for t in (model, *alternatives)]
    schema = refs[0] if len(refs) == 1 else {"oneOf": refs}
    content = {"application/json": {"schema": schema}}
    return {"requestBody": {"required": required, "content": content}}


# The raw-body routes' models (they validate the bodies, and the services the same way);
# app.create_app adds them to the OpenAPI components, which body_doc refers to.
DOC_ONLY_MODELS = (
    m.NoteCreate,
    m.MemoruleCreate,
    m.RecallCreate,
    m.BriefCreate,
    m.MemoryUpdate,
    m.StatusChange,
    m.PinChange,
    ApproveCreate,
    RejectCreate,
    MergeCreate,
    PromoteCreate,
)

router = APIRouter(prefix="/v1")


@router.post(
    "/memories",
    status_code=201,
    response_model=m.WriteResultPublic,
    responses=_WRITE,
    openapi_extra=body_doc(m.NoteCreate, m.MemoruleCreate),
    summary="Remember a note or a memorule (prism_remember)",
    tags=["memories"],
)
async def remember(state: StateDep, call: CallDep, body: JsonBody) -> dict[str, Any]:
    """Write a note (``kind='note'``, the default) or a memorule, in the request's project,
    as the key's persona when the key is bound to one. A replayed ``idempotency_key`` returns
    the first result (``replayed: true``)."""
    return await call.run(
        lambda key, ctx: write_dict(state.access.remember(key, ctx, validate_remember(body)))
    )


@router.post(
    "/recall",
    response_model=m.RecallPublic,
    responses=_ERRORS,
    openapi_extra=body_doc(m.RecallCreate, required=False),
    summary="Recall what applies (semantic_recall)",
    tags=["memories"],
)
async def recall(state: StateDep, call: CallDep, body: JsonBody) -> dict[str, Any]:
    """The memories that apply to the request's context, best first; ``query`` may be empty."""
    return await call.run(
        lambda key, ctx: recall_dict(state.access.recall(key, ctx, m.RecallCreate.parse(body)))
    )


@router.get(
    "/memories",
    response_model=m.MemoryPagePublic,
    responses=_ERRORS,
    summary="List memories, newest first (filters, cursor pages)",
    tags=["memories"],
    openapi_extra=query_doc(ListRequest),
)
async def list_memories(state: StateDep, call: CallDep, request: Request) -> dict[str, Any]:
    """The request's project: its notes and memorules and the tenant's global/org memorules,
    as the key may see them (``persona``, ``surface``, ``specialization``: the value a rule's
    ``applies_to`` names). Unknown parameters are refused; a blank one is no filter."""
    query = ListRequest.parse(query_values(request, ListRequest))  # before the key
    return await call.run(
        lambda key, ctx: memory_page_dict(state.access.list_memories(key, ctx, query))
    )


@router.get(
    "/memories/{memory_id}",
    response_model=m.MemoryWithStatePublic,
    responses=_BY_ID,
    summary="Read one memory and its current version",
    tags=["memories"],
)
async def get_memory(state: StateDep, call: CallDep, memory_id: UUID) -> dict[str, Any]:
    """A memory (retired ones too) and its current state."""
    memory, current = await call.run(lambda key, ctx: state.access.get(key, ctx, memory_id))
    return {"ok": True, "memory": memory_dict(memory), "state": state_dict(current)}


@router.patch(
    "/memories/{memory_id}",
    response_model=m.WriteResultPublic,
    responses=_WRITE,
    openapi_extra=body_doc(m.MemoryUpdate),
    summary="Update a memory (a new version; history keeps the old ones)",
    tags=["memories"],
)
async def update_memory(
    state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody
) -> dict[str, Any]:
    """Supersede the memory's current state; the result is validated as a new write."""
    body = m.MemoryUpdate.parse(raw)
    result = await call.run(
        lambda key, ctx: state.access.update(
            key,
            ctx,
            memory_id,
            body.changes.raw,
            reason=body.reason,
            evidence_signal_id=body.evidence_signal_id,
            idempotency_key=body.idempotency_key,
        )
    )
    return write_dict(result)


@router.post(
    "/memories/{memory_id}/retire",
    response_model=m.WriteResultPublic,
    responses=_WRITE,
    openapi_extra=body_doc(m.StatusChange),
    summary="Retire a memory (recall stops returning it)",
    tags=["memories"],
)
async def retire_memory(
    state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody
) -> dict[str, Any]:
    """Retire a memory; it stays readable by id and in its history."""
    body = m.StatusChange.parse(raw)
    result = await call.run(
        lambda key, ctx: state.access.retire(key, ctx, memory_id, body.reason, body.idempotency_key)
    )
    return write_dict(result)


@router.post(
    "/memories/{memory_id}/restore",
    response_model=m.WriteResultPublic,
    responses=_WRITE,
    openapi_extra=body_doc(m.StatusChange),
    summary="Restore a retired memory",
    tags=["memories"],
)
async def restore_memory(
    state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody
) -> dict[str, Any]:
    """Bring a retired memory back into recall."""
    body = m.StatusChange.parse(raw)
    result = await call.run(
        lambda key, ctx: state.access.restore(
            key, ctx, memory_id, body.reason, body.idempotency_key
        )
    )
    return write_dict(result)


def _pin_route(verb: str) -> None:
    pinned = verb == "pin"

    @router.post(
        f"/memories/{{memory_id}}/{verb}",
        response_model=m.PinResultPublic,
        responses=_WRITE,
        openapi_extra=body_doc(m.PinChange),
        summary="Pin a memorule (the brief shows it first)"
        if pinned
        else "Unpin a memorule (the brief ranks it again)",
        tags=["memories"],
        name=f"{verb}_memory",
    )
    async def route(
        state: StateDep, call: CallDep, memory_id: UUID, raw: JsonBody
    ) -> dict[str, Any]:
        body = m.PinChange.parse(raw)
        result = await call.run(
            lambda key, ctx: state.access.pin(key, ctx, memory_id, pinned, body.reason)
        )
        return pin_dict(result)

    route.__doc__ = (
        "Pin an active memorule: every brief shows it first, under 'Pinned by an operator'. "
        "Pinning a pinned rule writes nothing (changed: false)."
        if pinned
        else "Unpin a memorule. Unpinning a rule that is not pinned writes nothing."
    )


_pin_route("pin")
_pin_route("unpin")


@router.get(
    "/memories/{memory_id}/history",
    response_model=m.HistoryPublic,
    responses=_BY_ID,
    summary="Every version of a memory and its audit events",
    tags=["memories"],
)
async def memory_history(state: StateDep, call: CallDep, memory_id: UUID) -> dict[str, Any]:
    """Versions oldest first, with who wrote each and when; audit events newest first."""
    return await call.run(lambda key, ctx: history_dict(state.access.history(key, ctx, memory_id)))


@router.get(
    "/audit",
    response_model=m.AuditPagePublic,
    responses=_BY_ID,
    summary="List memorule audit events (cursor pages)",
    tags=["audit"],
    openapi_extra=query_doc(AuditQuery),
)
async def list_audit(state: StateDep, call: CallDep, request: Request) -> dict[str, Any]:
    """Newest first. Without ``memorule`` this reads the whole tenant's trail: admin keys
    that are not restricted to projects only. The same query as ``memorule_audit`` (whose
    names ``memorule_id``, ``written_by_session_id`` and ``written_by_persona`` are accepted
    too); unknown parameters are refused, an empty one is no filter."""
    query = AuditQuery.parse(query_values(request, AuditQuery))  # before the key
    flt = audit_filter(query)
    return await call.run(lambda key, ctx: audit_page_dict(state.access.audit(key, ctx, flt)))


@router.get(
    "/audit/verify",
    response_model=m.ChainReportPublic,
    responses=_ERRORS,
    summary="Verify the tenant's audit hash chain",
    tags=["audit"],
    openapi_extra=query_doc(VerifyQuery),
)
async def verify_audit(state: StateDep, call: CallDep, request: Request) -> dict[str, Any]:
    """Recompute the chain (links, hashes, content hashes, the recorded head, the served
    receipts); ``ok: false`` names the first flaw (admin keys not restricted to projects)."""
    query = VerifyQuery.parse(query_values(request, VerifyQuery))  # before the key
    return await call.run(
        lambda key, ctx: dict(
            state.access.verify_chain(key, ctx, query.head, query.served_head).to_dict()
        )
    )


@router.post(
    "/brief",
    response_model=m.BriefPublic,
    responses=_ERRORS,
    openapi_extra=body_doc(m.BriefCreate, required=False),
    summary="The task-start brief: the memorules that apply, as Markdown",
    tags=["memories"],
)
async def brief(state: StateDep, call: CallDep, body: JsonBody) -> dict[str, Any]:
    """Memorules that apply to the context (and the task), grouped by kind, in a budget."""
    m.BriefCreate.refuse_unknown(body)  # before the key, as always; the values after it
    return await call.run(
        lambda key, ctx: brief_dict(state.access.brief(key, ctx, m.BriefCreate.parse(body)))
    )


@router.get(
    "/whoami",
    response_model=m.WhoAmIPublic,
    responses=_ERRORS,
    summary="The caller's key and the project the request runs in",
    tags=["keys"],
)
async def whoami(call: CallDep) -> dict[str, Any]:
    """Check a key: its tenant, role, projects and persona (never its secret)."""
    caller = await call.run(Caller)
    key = caller.key
    shown = key.to_dict()
    return {
        "ok": True,
        "key_id": key.key_id,
        "tenant_id": key.tenant_id,
        "tenant_slug": shown["tenant_slug"],
        "role": key.role,
        "projects": list(key.projects),
        "project_slugs": shown["project_slugs"],
        "persona": key.persona,
        "project_id": caller.ctx.project_id,
    }
