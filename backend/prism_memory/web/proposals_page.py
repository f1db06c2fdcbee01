"""The console's review queue: ``/proposals`` (approve, edit, merge, reject) and
``/evidence/{id}`` (the signals behind a rule, and promotion to ``observed``).

Thin, like the rest of the console: each page acts with its session's key and calls
:class:`~prism_memory.services.access_service.AccessService` once; readers see the queue, writers
and
admins get the forms. Every decision is one audit event.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response

from prism_memory.domain import access
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.records import SessionContext
from prism_memory.errors import FieldError, InvalidInput, PermissionDenied, PrismError
from prism_memory.serializers import memory_dict, state_dict
from prism_memory.web import views
from prism_memory.web.pages import Page, page_of, read_form, refusal, with_project

router = APIRouter(include_in_schema=False)
ACTIONS = ("approve", "reject", "merge")
PAGE_PREFIXES = ("/proposals", "/evidence")


def install(app: FastAPI) -> None:
    """Serve the review-queue pages on ``app`` (after
    :func:`prism_memory.web.console.install_console`);
    the security headers of every response come from the server's middleware."""
    app.include_router(router)


def _can_decide(key: ApiKey) -> bool:
    try:
        access.require_role(key, Role.WRITER, "decide on proposals")
    except PermissionDenied:
        return False
    return True


@router.get("/proposals")
async def proposals(request: Request) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    return await _queue(page)


async def _queue(page: Page, errors: list[FieldError] | None = None, failed: str = "") -> Response:
    queue = page.access

    def work(key: ApiKey, ctx: SessionContext) -> tuple[list[dict[str, Any]], bool]:
        rows = [
            {
                **memory_dict(m),
                **state_dict(s),
                "evidence": [e.to_dict() for e in ev],
            }
            for m, s, ev in queue.pending(key, ctx, 100)
        ]
        return rows, _can_decide(key)

    try:
        rows, can_decide = await page.run(work)
    except PrismError as exc:
        return page.error(exc)
    return page.render(
        "proposals.html",
        status=422 if errors else 200,
        rows=rows,
        can_decide=can_decide,
        options=views,
        shown=views.shown,
        errors=errors or [],
        failed=failed,
    )


@router.post("/proposals/{memory_id}/{action}")
async def decide(request: Request, memory_id: UUID, action: str) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    form = await read_form(page)
    if isinstance(form, Response):
        return form
    if action not in ACTIONS:
        return page.render("error.html", status=404, message="no such action")
    queue = page.access
    reason = form.get("reason", "").strip() or None

    def work(key: ApiKey, ctx: SessionContext) -> object:
        if action == "reject":
            return queue.reject(key, ctx, memory_id, reason)
        if action == "merge":
            return queue.merge(key, ctx, memory_id, _uuid(form.get("into", ""), "into"), reason)
        return queue.approve(key, ctx, memory_id, _edits(form), reason)

    try:
        await page.run(work)
    except InvalidInput as exc:  # nothing was written: the queue again, with the errors
        return await _queue(page, exc.errors, str(memory_id))
    except PrismError as exc:
        return page.error(exc)
    return page.redirect(with_project("/proposals", page.project))


def _uuid(value: str, field: str) -> UUID:
    try:
        return UUID(value.strip())
    except ValueError:
        raise InvalidInput(
            [FieldError(field, "invalid_format", f"'{field}' must be a memorule id (a UUID)")]
        ) from None


def _edits(form: dict[str, str]) -> dict[str, Any] | None:
    """What the approver changed: the text fields, and applies_to when any of it is given."""
    edits: dict[str, Any] = {}
    for name in ("subject", "body", "memorule_kind"):
        value = form.get(name, "").strip()
        if value and value != form.get(f"was_{name}", "").strip():
            edits[name] = value
    applies = {
        k: form.get(k, "").strip()
        for k in ("persona", "surface", "specialization", "scope")
        if form.get(k, "").strip()
    }
    was = {
        k: form.get(f"was_{k}", "").strip()
        for k in ("persona", "surface", "specialization", "scope")
        if form.get(f"was_{k}", "").strip()
    }
    if applies != was:
        edits["applies_to"] = applies
    return edits or None


@router.get("/evidence/{memory_id}")
async def evidence(request: Request, memory_id: UUID) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    queue = page.access

    def work(key: ApiKey, ctx: SessionContext) -> dict[str, Any]:
        signals = [e.to_dict() for e in queue.evidence(key, ctx, memory_id)]
        memory, state = queue.get(key, ctx, memory_id)
        return {
            "memory": memory_dict(memory),
            "current": state_dict(state),
            "evidence": signals,
            "can_decide": _can_decide(key),
        }

    try:
        found = await page.run(work)
    except PrismError as exc:
        return page.error(exc)
    return page.render("evidence.html", shown=views.shown, **found)


@router.post("/evidence/{memory_id}/promote")
async def promote(request: Request, memory_id: UUID) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    form = await read_form(page)
    if isinstance(form, Response):
        return form
    queue = page.access
    reason = form.get("reason", "").strip() or None
    try:
        await page.run(lambda key, ctx: queue.promote(key, ctx, memory_id, reason))
    except PrismError as exc:
        return page.error(exc)
    return page.redirect(with_project(f"/evidence/{memory_id}", page.project))
