"""One console request (:class:`Page`): its session, CSRF tokens, rendering, and the key it
acts with; shared by the console's pages (:mod:`prism_memory.web.console`,
:mod:`prism_memory.web.proposals_page`).

The console imports no other front door: the server's composition root (:mod:`prism_memory.asgi`)
hands it a :class:`ConsoleDoor` — the access service, the sign-in check and the same caller
lookup as ``/v1`` — so roles, projects and personas are enforced by the same code.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode

import anyio
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment

from prism_memory.domain.access import ApiKey, Caller
from prism_memory.domain.records import SessionContext
from prism_memory.errors import PrismError, Unauthenticated
from prism_memory.services.access_service import AccessService
from prism_memory.services.auth_service import ContextRequest
from prism_memory.web.sessions import COOKIE, CSRF_COOKIE, ConsoleSession, CsrfSigner, SessionStore

T = TypeVar("T")
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
_MAX_FIELDS = 20


@dataclass(frozen=True)
class ConsoleDoor:
    """What the console is given by the server's composition root (:mod:`prism_memory.asgi`).

    Attributes:
        access: the guarded operations every page calls with its session's key.
        sign_in: checks a key's secret at sign-in and returns its key (blocking; raises
            ``PrismError``).
        caller: the caller of a request: the session's secret (None: no session) and the
            context asked for, to a key and context — the same path as ``/v1`` (readiness,
            the key, its rate limit); blocking, raises ``PrismError``.
        local: ``--insecure-local``: nobody signs in, every page acts as the local key.
        max_sessions: at most this many signed-in browsers.
        max_sessions_per_key: at most this many signed-in browsers of one key.
    """

    access: AccessService
    sign_in: Callable[[str], ApiKey]
    caller: Callable[[str | None, ContextRequest], Caller]
    local: bool
    max_sessions: int
    max_sessions_per_key: int


def key_shown(key: ApiKey) -> str:
    """The signed-in key as the console's header names it: id, role, tenant (its slug as typed
    at ``prism keys create`` when stored, else its UUID)."""
    shown = key.to_dict()
    return f"{key.key_id} · {key.role.value} · tenant {shown['tenant_slug'] or key.tenant_id}"


@dataclass
class Console:
    """The console's own state: its door, templates, sessions and CSRF signer (one per app)."""

    door: ConsoleDoor
    env: Environment
    sessions: SessionStore
    signer: CsrfSigner


@dataclass
class Page:
    """One console request: the console, the browser's session, the project asked for."""

    request: Request
    console: Console
    session: ConsoleSession | None
    new_cookie: bool = False
    new_nonce: str | None = None

    @property
    def access(self) -> AccessService:
        return self.console.door.access

    @property
    def local(self) -> bool:
        return self.console.door.local

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
        caller = self.console.door.caller

        def job() -> T:
            found = caller(secret, wanted)
            return work(found.key, found.ctx)

        return await anyio.to_thread.run_sync(job)

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
            key_shown=self.session.shown if self.session is not None else "",
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


def page_of(request: Request) -> Page:
    """The console page a request asks for (its session, if signed in)."""
    console: Console = request.app.state.prism_console
    # No session before sign-in (see prism_memory.web.sessions): a visitor's forms are protected by
    # a
    # double-submit token instead.
    return Page(request, console, console.sessions.get(request.cookies.get(COOKIE)))


def _loopback_host(request: Request) -> bool:
    # As /v1 in --insecure-local: only a loopback Host (a DNS-rebinding page sends its own).
    host = (request.url.hostname or "").strip("[]").lower()
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in _LOOPBACK_NAMES


async def read_form(page: Page) -> dict[str, str] | Response:
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


def refusal(page: Page) -> Response | None:
    """The response for a visitor who may not see console pages (None: go on)."""
    if page.local and not _loopback_host(page.request):
        return page.render("error.html", status=403, message="loopback hosts only")
    if not page.signed_in:
        return page.redirect("/signin")
    return None


def with_project(path: str, project: str, **more: str) -> str:
    query = {k: v for k, v in {"project": project, **more}.items() if v}
    return f"{path}?{urlencode(query)}" if query else path
