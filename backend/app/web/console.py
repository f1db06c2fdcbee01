"""The operator console's routes: sign-in, memorules, what applies now, the audit trail.

Thin, like ``/v1``: every page authenticates and calls :class:`AccessService` through the
same :class:`~app.api.deps.Call` as the API, so roles, projects and personas are enforced by
the same code; the console only decides which controls to draw. Session and header policy:
:mod:`app.web.sessions`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode
from uuid import UUID

import anyio
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.staticfiles import StaticFiles

from app.api.deps import ApiState, Call, get_state
from app.domain import listing
from app.domain.access import ApiKey
from app.domain.field_checks import AUDIT_CURSOR_MAX
from app.domain.records import SessionContext
from app.errors import FieldError, InvalidInput, PermissionDenied, PrismError, Unauthenticated
from app.serializers import (
    audit_page_dict,
    heads_dict,
    history_dict,
    served_page_dict,
    state_dict,
)
from app.services.auth_service import ContextRequest
from app.trigraph.ledger import ServedFilter
from app.trigraph.port import AuditFilter
from app.web import served_view, views
from app.web.sessions import COOKIE, CSRF_COOKIE, ConsoleSession, CsrfSigner, SessionStore

T = TypeVar("T")
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
_MAX_FIELDS = 20

router = APIRouter(include_in_schema=False)


@dataclass
class Console:
    """The console's own state: its templates, sessions and CSRF signer (one per app)."""

    env: Environment
    sessions: SessionStore
    signer: CsrfSigner


def install_console(app: FastAPI) -> None:
    """Serve the console at ``/`` (pages, ``/static``, security headers) on ``app``."""
    env = Environment(
        loader=PackageLoader("app.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    max_sessions = app.state.prism.settings.console_max_sessions
    app.state.prism_console = Console(env, SessionStore(max_sessions=max_sessions), CsrfSigner())
    app.include_router(router)
    app.mount("/static", StaticFiles(packages=[("app.web", "static")]), name="console-static")
    # Security headers: app.api.headers, on every response of the server.


@dataclass
class Page:
    """One console request: the app's state, the browser's session, the project asked for."""

    request: Request
    state: ApiState
    console: Console
    session: ConsoleSession | None
    new_cookie: bool = False
    new_nonce: str | None = None

    @property
    def local(self) -> bool:
        return self.state.local_key is not None

    @property
    def signed_in(self) -> bool:
        return self.local or self.session is not None

    @property
    def project(self) -> str:
        return self.request.query_params.get("project", "").strip()[:100]

    async def run(self, work: Callable[[ApiKey, SessionContext], T], **context: str) -> T:
        """Authenticate the session's key and do ``work`` (one worker thread, as ``/v1``)."""
        secret = self.session.secret if self.session is not None else None
        wanted = ContextRequest(
            project=self.project or None,
            persona=context.get("persona") or None,
            surface=context.get("surface") or None,
            specialization=context.get("specialization") or None,
        )
        return await Call(self.state, secret, wanted).run(work)

    def form_token(self) -> str:
        """The CSRF token this page's forms carry: the session's, else a double-submit one."""
        if self.session is not None:
            return self.session.csrf
        nonce = self.request.cookies.get(CSRF_COOKIE) or self.new_nonce
        if not nonce:
            nonce = self.new_nonce = CsrfSigner.new_nonce()
        return self.console.signer.token(nonce)

    def form_ok(self, token: str | None) -> bool:
        """Whether a POSTed form's CSRF token is valid for this browser."""
        if self.session is not None:
            return self.session.csrf_ok(token)
        return self.console.signer.ok(self.request.cookies.get(CSRF_COOKIE), token)

    def render(self, template: str, status: int = 200, **values: Any) -> Response:
        html = self.console.env.get_template(template).render(
            csrf=self.form_token(),
            signed_in=self.signed_in,
            local=self.local,
            project=self.project,
            **values,
        )
        return self.cookie(HTMLResponse(html, status_code=status))

    def redirect(self, url: str) -> Response:
        return self.cookie(RedirectResponse(url, status_code=303))

    def cookie(self, response: Response) -> Response:
        secure = self.request.url.scheme == "https"
        if self.new_nonce is not None:
            response.set_cookie(
                CSRF_COOKIE, self.new_nonce, httponly=True, samesite="strict", secure=secure
            )
        if self.new_cookie and self.session is not None:
            response.set_cookie(
                COOKIE,
                self.session.sid,
                httponly=True,
                samesite="strict",
                secure=secure,
                path="/",
            )
        return response

    def error(self, exc: PrismError) -> Response:
        if isinstance(exc, Unauthenticated) and not self.local and self.session is not None:
            self.console.sessions.drop(self.session.sid)
            return self.redirect("/signin")
        return self.render("error.html", status=exc.http_status, message=str(exc))


def _page(request: Request) -> Page:
    console: Console = request.app.state.prism_console
    state = get_state(request)
    # No session before sign-in (see app.web.sessions): a visitor's forms are protected by a
    # double-submit token instead.
    return Page(request, state, console, console.sessions.get(request.cookies.get(COOKIE)))


def _loopback_host(request: Request) -> bool:
    # As /v1 in --insecure-local: only a loopback Host (a DNS-rebinding page sends its own).
    host = (request.url.hostname or "").strip("[]").lower()
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in _LOOPBACK_NAMES


async def _form(page: Page) -> dict[str, str] | Response:
    """The POSTed form, or the refusal: a CSRF token missing or wrong (403), or a body that
    is not a form — invalid UTF-8, more than ``_MAX_FIELDS`` fields (422)."""
    try:
        raw = (await page.request.body()).decode("utf-8")
        form = dict(parse_qsl(raw, max_num_fields=_MAX_FIELDS, errors="strict"))
    except UnicodeDecodeError:
        return page.render("error.html", status=422, message="the form is not valid UTF-8")
    except ValueError:
        return page.render(
            "error.html", status=422, message=f"the form has more than {_MAX_FIELDS} fields"
        )
    if not page.form_ok(form.get("csrf")):
        return page.render("error.html", status=403, message="the form's CSRF token is invalid")
    return form


def _guard(page: Page) -> Response | None:
    """The response for a visitor who may not see console pages (None: go on)."""
    if page.local and not _loopback_host(page.request):
        return page.render("error.html", status=403, message="loopback hosts only")
    if not page.signed_in:
        return page.redirect("/signin")
    return None


def _with_project(path: str, project: str, **more: str) -> str:
    query = {k: v for k, v in {"project": project, **more}.items() if v}
    return f"{path}?{urlencode(query)}" if query else path


@router.get("/")
async def home(request: Request) -> Response:
    page = _page(request)
    return page.redirect(_with_project("/memorules", page.project))


@router.get("/signin")
async def signin_form(request: Request) -> Response:
    page = _page(request)
    if page.signed_in:
        return page.redirect("/memorules")
    return page.render("signin.html")


@router.post("/signin")
async def signin(request: Request) -> Response:
    page = _page(request)
    form = await _form(page)
    if isinstance(form, Response):
        return form
    secret = form.get("api_key", "").strip()
    try:
        await anyio.to_thread.run_sync(page.state.auth.authenticate, secret)
    except PrismError:
        return page.render("signin.html", status=401, message="That key was not accepted.")
    page.console.sessions.drop(page.session.sid if page.session else None)
    page.session, page.new_cookie = page.console.sessions.create(secret), True
    response = page.redirect("/memorules")
    response.delete_cookie(CSRF_COOKIE)  # the session's own token takes over
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    page = _page(request)
    form = await _form(page)
    if isinstance(form, Response):
        return form
    page.console.sessions.drop(page.session.sid if page.session else None)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/memorules")
async def memorule_list(request: Request) -> Response:
    page = _page(request)
    if (refused := _guard(page)) is not None:
        return refused
    filters = views.ListFilters.from_query(request.query_params)
    access = page.state.access
    values: dict[str, Any] = {"filters": filters, "options": views, "rows": [], "errors": []}
    try:
        # The filters are judged once, by the listing's validator, in search mode too.
        listing.validate_list(filters.list_request())
    except InvalidInput as exc:
        return page.render("list.html", status=422, **{**values, "errors": exc.errors})

    def search(key: ApiKey, ctx: SessionContext) -> list[dict[str, Any]]:
        found = access.recall(key, ctx, filters.recall_request(100))
        rows = [{**m.to_dict(), "status": "active"} for m in found.matches]
        return [r for r in rows if filters.keeps(r)]

    def browse(key: ApiKey, ctx: SessionContext) -> tuple[list[dict[str, Any]], str | None]:
        found = access.list_memories(key, ctx, filters.list_request())
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


def _detail(key: ApiKey, ctx: SessionContext, state: ApiState, memory_id: UUID) -> dict[str, Any]:
    history = history_dict(state.access.history(key, ctx, memory_id))
    try:
        state.access.check_change(key, ctx, memory_id)
        can_write = True
    except PermissionDenied:
        can_write = False
    try:  # the tenant's served receipts: admin keys not restricted to projects
        served = state.access.served(key, ctx, ServedFilter(memorule_id=memory_id, limit=500))
        served_to: list[served_view.ServedSession] | None = served_view.sessions(
            served_page_dict(served)["served"]
        )
    except PermissionDenied:
        served_to = None
    return {**history, "can_write": can_write, "served_to": served_to}


@router.get("/memorules/{memory_id}")
async def memorule_page(request: Request, memory_id: UUID) -> Response:
    page = _page(request)
    if (refused := _guard(page)) is not None:
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
        found = await page.run(lambda key, ctx: _detail(key, ctx, page.state, memory_id))
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
    page = _page(request)
    if (refused := _guard(page)) is not None:
        return refused
    form = await _form(page)
    if isinstance(form, Response):
        return form
    access, reason = page.state.access, form.get("reason", "").strip() or None

    def work(key: ApiKey, ctx: SessionContext) -> object:
        if action == "retire":
            return access.retire(key, ctx, memory_id, reason)
        if action == "restore":
            return access.restore(key, ctx, memory_id, reason)
        current = access.get(key, ctx, memory_id)[1]
        changes = views.edit_changes(state_dict(current), form)
        return access.update(key, ctx, memory_id, changes, reason=reason)

    if action not in {"retire", "restore", "edit"}:
        return page.render("error.html", status=404, message="no such action")
    try:
        await page.run(work)
    except InvalidInput as exc:  # nothing was written: the page again, with each field's error
        return await _memorule_page(page, memory_id, form, exc.errors, action)
    except PrismError as exc:
        return page.error(exc)
    return page.redirect(_with_project(f"/memorules/{memory_id}", page.project))


@router.get("/applies")
async def applies_now(request: Request) -> Response:
    page = _page(request)
    if (refused := _guard(page)) is not None:
        return refused
    params = request.query_params
    context = {k: params.get(k, "").strip()[:100] for k in ("persona", "surface", "specialization")}
    task = params.get("task", "").strip()[:2000]
    brief = None
    if "show" in params:
        try:
            brief = await page.run(
                lambda key, ctx: page.state.access.brief(key, ctx, task=task), **context
            )
        except PrismError as exc:
            return page.error(exc)
    return page.render("applies.html", context=context, task=task, brief=brief)


@router.get("/audit")
async def audit(request: Request) -> Response:
    page = _page(request)
    if (refused := _guard(page)) is not None:
        return refused
    params = request.query_params
    before = params.get("before", "")
    # The API's bound for the same cursor: ASCII digits (``"²".isdigit()`` is true), in range.
    cursor_ok = before.isascii() and before.isdecimal() and len(before) <= 19
    if before and not (cursor_ok and 1 <= int(before) <= AUDIT_CURSOR_MAX):
        return page.render("error.html", status=422, message="'before' is not a page cursor")
    flt = AuditFilter(before_seq=int(before) if before else None, limit=100)
    access = page.state.access

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
