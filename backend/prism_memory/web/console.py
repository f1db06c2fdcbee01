"""The operator console's routes: sign-in, memorules, what applies now, the audit trail.

Thin, like ``/v1``: every page finds its caller through the same path as the API and calls
:class:`AccessService` with the session's key (both handed in as a
:class:`~prism_memory.web.pages.ConsoleDoor`), so roles, projects and personas are enforced by the
same
code; the console only decides which controls to draw. Session and header policy:
:mod:`prism_memory.web.sessions`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import anyio
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.staticfiles import StaticFiles

from prism_memory.domain import listing
from prism_memory.domain.access import ApiKey
from prism_memory.domain.contract.audit import AuditQuery
from prism_memory.domain.contract.recall import BriefCreate, RecallCreate
from prism_memory.domain.records import SessionContext
from prism_memory.errors import FieldError, InvalidInput, PermissionDenied, PrismError
from prism_memory.serializers import (
    audit_page_dict,
    heads_dict,
    history_dict,
    match_dict,
    served_page_dict,
    state_dict,
)
from prism_memory.services.access_service import AccessService
from prism_memory.services.ledger_service import audit_filter
from prism_memory.trigraph.ledger import ServedFilter
from prism_memory.web import served_view, views
from prism_memory.web.pages import (
    Console,
    ConsoleDoor,
    Page,
    key_shown,
    page_of,
    read_form,
    refusal,
    with_project,
)
from prism_memory.web.sessions import COOKIE, CSRF_COOKIE, ConsoleFull, CsrfSigner, SessionStore

router = APIRouter(include_in_schema=False)


def install_console(app: FastAPI, door: ConsoleDoor) -> None:
    """Serve the console at ``/`` (pages, ``/static``) on ``app``, acting through ``door``."""
    env = Environment(
        loader=PackageLoader("prism_memory.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    sessions = SessionStore(max_sessions=door.max_sessions, max_per_key=door.max_sessions_per_key)
    app.state.prism_console = Console(door, env, sessions, CsrfSigner())
    app.include_router(router)
    app.mount(
        "/static", StaticFiles(packages=[("prism_memory.web", "static")]), name="console-static"
    )
    # Security headers: prism_memory.api.headers, on every response of the server.


@router.get("/")
async def home(request: Request) -> Response:
    page = page_of(request)
    return page.redirect(with_project("/memorules", page.project))


@router.get("/signin")
async def signin_form(request: Request) -> Response:
    page = page_of(request)
    if page.signed_in:
        return page.redirect("/memorules")
    return page.render("signin.html")


@router.post("/signin")
async def signin(request: Request) -> Response:
    page = page_of(request)
    form = await read_form(page)
    if isinstance(form, Response):
        return form
    secret = form.get("api_key", "").strip()
    try:
        key = await anyio.to_thread.run_sync(page.console.door.sign_in, secret)
    except PrismError:
        return page.render("signin.html", status=401, message="That key was not accepted.")
    page.console.sessions.drop(page.session.sid if page.session else None)
    try:
        page.session = page.console.sessions.create(secret, key.key_id)
        page.session.shown = key_shown(key)
    except ConsoleFull:
        page.session = None
        message = "The console is full of signed-in sessions; try again later."
        return page.render("signin.html", status=503, message=message)
    page.new_cookie = True
    response = page.redirect("/memorules")
    response.delete_cookie(CSRF_COOKIE)  # the session's own token takes over
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    page = page_of(request)
    form = await read_form(page)
    if isinstance(form, Response):
        return form
    page.console.sessions.drop(page.session.sid if page.session else None)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/memorules")
async def memorule_list(request: Request) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    filters = views.ListFilters.from_query(request.query_params)
    access = page.access
    values: dict[str, Any] = {"filters": filters, "options": views, "rows": [], "errors": []}
    try:
        # The filters are judged once, by the listing's model, in search mode too.
        asked = listing.ListRequest.parse(filters.list_request())
    except InvalidInput as exc:
        return page.render("list.html", status=422, **{**values, "errors": exc.errors})

    def search(key: ApiKey, ctx: SessionContext) -> list[dict[str, Any]]:
        found = access.recall(key, ctx, RecallCreate.parse(filters.recall_request(100)))
        rows = [{**match_dict(m), "status": "active"} for m in found.matches]
        return [r for r in rows if filters.keeps(r)]

    def browse(key: ApiKey, ctx: SessionContext) -> tuple[list[dict[str, Any]], str | None]:
        found = access.list_memories(key, ctx, asked)
        rows = [
            {**state_dict(s), "id": str(m.id), "status": m.status.value}
            | {"elsewhere": m.project_id != ctx.project_id}
            for m, s in found.items
        ]
        return rows, found.next_cursor

    try:
        if filters.q:
            # Search runs AS the persona/surface filtered on, so their persona rules are
            # candidates; it finds active memorules only (recall never returns retired ones).
            as_filtered = {"persona": filters.persona, "surface": filters.surface}
            values["rows"] = await page.run(search, **as_filtered)
        else:
            values["rows"], next_cursor = await page.run(browse)
            values["older"] = filters.url(page.project, next_cursor) if next_cursor else None
            values["newest"] = filters.url(page.project) if filters.cursor else None
    except InvalidInput as exc:
        return page.render("list.html", status=422, **{**values, "errors": exc.errors})
    except PrismError as exc:
        return page.error(exc)
    return page.render("list.html", **values)


def _detail(
    key: ApiKey, ctx: SessionContext, access: AccessService, memory_id: UUID
) -> dict[str, Any]:
    history = history_dict(access.history(key, ctx, memory_id))
    try:
        access.check_change(key, ctx, memory_id)
        can_write = True
    except PermissionDenied:
        can_write = False
    try:  # the tenant's served receipts: admin keys not restricted to projects
        served = access.served(key, ctx, ServedFilter(memorule_id=memory_id, limit=500))
        served_to: list[served_view.ServedSession] | None = served_view.sessions(
            served_page_dict(served)["served"]
        )
    except PermissionDenied:
        served_to = None
    adherence = None
    if history["versions"][-1].get("checks"):  # what agents did against this rule's checks
        rules = access.adherence_report(key, ctx, memory_id).to_dict()["rules"]
        adherence = rules[0] if rules else None
    return {**history, "can_write": can_write, "served_to": served_to, "adherence": adherence}


@router.get("/memorules/{memory_id}")
async def memorule_page(request: Request, memory_id: UUID) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    return await _memorule_page(page, memory_id)


async def _memorule_page(
    page: Page,
    memory_id: UUID,
    form: dict[str, str] | None = None,
    errors: list[FieldError] | None = None,
    action: str = "",
) -> Response:
    """The memorule page; after a refused write, with the form as sent and its errors."""
    try:
        found = await page.run(lambda key, ctx: _detail(key, ctx, page.access, memory_id))
    except PrismError as exc:
        return page.error(exc)
    versions = found["versions"]
    current = versions[-1]
    return page.render(
        "memorule.html",
        status=422 if errors else 200,
        memory=found["memory"],
        current=current,
        versions=list(zip(versions, views.version_changes(versions), strict=True))[::-1],
        audit=found["audit"],
        served_to=found["served_to"],
        adherence=found["adherence"],
        can_write=found["can_write"],
        options=views,
        shown=views.shown,
        form=views.form_values(current, form if action == "edit" else None),
        errors=errors or [],
        field_errors=views.errors_by_input(errors or []) if action == "edit" else {},
        failed_action=action,
    )


@router.post("/memorules/{memory_id}/{action}")
async def memorule_write(request: Request, memory_id: UUID, action: str) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    form = await read_form(page)
    if isinstance(form, Response):
        return form
    access, reason = page.access, form.get("reason", "").strip() or None

    def work(key: ApiKey, ctx: SessionContext) -> object:
        if action == "retire":
            return access.retire(key, ctx, memory_id, reason)
        if action == "restore":
            return access.restore(key, ctx, memory_id, reason)
        if action in {"pin", "unpin"}:
            return access.pin(key, ctx, memory_id, action == "pin", reason)
        current = access.get(key, ctx, memory_id)[1]
        changes = views.edit_changes(state_dict(current), form)
        return access.update(key, ctx, memory_id, changes, reason=reason)

    if action not in {"retire", "restore", "pin", "unpin", "edit"}:
        return page.render("error.html", status=404, message="no such action")
    try:
        await page.run(work)
    except InvalidInput as exc:  # nothing was written: the page again, with each field's error
        return await _memorule_page(page, memory_id, form, exc.errors, action)
    except PrismError as exc:
        return page.error(exc)
    return page.redirect(with_project(f"/memorules/{memory_id}", page.project))


@router.get("/applies")
async def applies_now(request: Request) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    params = request.query_params
    context = {k: params.get(k, "").strip()[:100] for k in ("persona", "surface", "specialization")}
    task = params.get("task", "").strip()[:2000]
    brief = None
    if "show" in params:
        try:
            brief = await page.run(
                lambda key, ctx: page.access.brief(key, ctx, BriefCreate.parse({"task": task})),
                **context,
            )
        except PrismError as exc:
            return page.error(exc)
    return page.render("applies.html", context=context, task=task, brief=brief)


@router.get("/audit")
async def audit(request: Request) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    params = request.query_params
    try:  # the page cursor, judged as GET /v1/audit and memorule_audit judge it
        query = AuditQuery.parse({"before": params.get("before", ""), "limit": 100})
    except InvalidInput:
        return page.render("error.html", status=422, message="'before' is not a page cursor")
    flt = audit_filter(query)
    access = page.access

    def work(
        key: ApiKey, ctx: SessionContext
    ) -> tuple[dict[str, Any], dict[str, object] | None, dict[str, Any]]:
        events = audit_page_dict(access.audit(key, ctx, flt))
        report = access.verify_chain(key, ctx).to_dict() if "verify" in params else None
        return events, report, heads_dict(access.audit_head(key, ctx))

    try:
        events, report, heads = await page.run(work)
    except PrismError as exc:
        return page.error(exc)
    return page.render("audit.html", events=events, report=report, heads=heads)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """No icon (browsers ask on every page; an empty answer keeps their consoles clean)."""
    return Response(status_code=204)
