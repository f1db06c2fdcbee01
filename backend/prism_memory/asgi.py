"""The server's composition root: ``/v1``, ``/mcp`` and the console as one ASGI app.

``prism serve`` runs :func:`create_app`. The front doors do not know one another: the HTTP
API (:mod:`prism_memory.api`), the MCP server (:mod:`prism_memory.mcp_server`) and the console
(:mod:`prism_memory.web`)
are each handed what they need here — one
:class:`~prism_memory.services.access_service.AccessService`
that all three call with the key they act with, and one way to find that key (the ``/v1``
caller lookup: readiness, the bearer key, its rate limit, the context headers).

Nothing happens at import; ``create_app`` only wires (no I/O) — the caller owns the services
and closes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from prism_memory.api import mcp_mount
from prism_memory.api.access_log import AccessLogMiddleware
from prism_memory.api.app import build_state, create_api
from prism_memory.api.deps import ApiState, Call
from prism_memory.bootstrap import Services, build_access
from prism_memory.domain.access import Caller
from prism_memory.mcp_server.server import MCPHttpApp, build_mcp_asgi_app
from prism_memory.services.auth_service import ContextRequest
from prism_memory.settings import Settings
from prism_memory.web import adherence_page, proposals_page
from prism_memory.web.console import install_console
from prism_memory.web.pages import ConsoleDoor


def create_app(
    services: Services,
    settings: Settings,
    *,
    insecure_local: bool = False,
    json_logs: bool = False,
    access_log: bool = True,
    hook: tuple[str, str] | None = None,
) -> FastAPI:
    """The whole server over ``services``: the HTTP API, MCP at ``/mcp``, the console at ``/``.

    Args:
        services: wired services (see :func:`prism_memory.bootstrap.build_services`); not closed
        here.
        settings: limits and defaults (``max_body_bytes``, ``http_body_timeout_s``, ...).
        insecure_local: no keys: every request acts as an unrestricted admin of the
            settings' tenant. Only for a server bound to loopback (``prism serve`` checks).
        json_logs: give every request an ``X-Request-ID`` and, with ``access_log``, one JSON
            ``prism.access`` line (:mod:`prism_memory.api.access_log`).
        access_log: with ``json_logs``, write the access lines.
        hook: the token and store of the local hook route (``prism serve`` writes them into
            the store's discovery file); None: the route refuses every request.

    Raises:
        InvalidInput: the settings' tenant or project is malformed.
    """
    access = build_access(services)
    state = build_state(services, settings, access, insecure_local=insecure_local, hook=hook)
    mcp = _build_mcp(services, settings, state, insecure_local)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.lifespan():  # the MCP session manager (mounted apps get no lifespan)
            yield

    app = create_api(state, lifespan=lifespan)
    install_console(app, _console_door(state))  # the operator console at /
    proposals_page.install(app)  # its review queue (issue 20)
    adherence_page.install(app)  # its adherence report (issue 28)
    # A Route (not a Mount) so other paths keep their own 404/405; Starlette serves a
    # non-function endpoint as a plain ASGI app.
    route = Route(mcp_mount.MCP_PATH, mcp_mount.McpAuth(mcp.app, state), include_in_schema=False)
    app.router.routes.append(route)
    if json_logs:
        app.add_middleware(AccessLogMiddleware, write=access_log)  # outermost: sees every answer
    return app


def _build_mcp(
    services: Services, settings: Settings, state: ApiState, insecure_local: bool
) -> MCPHttpApp:
    """The MCP app; each call acts with the key its HTTP request carried."""
    # With keys, the key is the protection and the Host may be a real name; without, keep
    # the SDK's loopback-only Host check (DNS rebinding).
    security = (
        None if insecure_local else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    return build_mcp_asgi_app(
        services,
        settings,
        request_caller=mcp_mount.request_caller,
        access=state.access,
        transport_security=security,
    )


def _console_door(state: ApiState) -> ConsoleDoor:
    def caller(secret: str | None, wanted: ContextRequest) -> Caller:
        return Call(state, secret, wanted).resolve()

    return ConsoleDoor(
        access=state.access,
        sign_in=state.auth.authenticate,
        caller=caller,
        local=state.local_key is not None,
        max_sessions=state.settings.console_max_sessions,
        max_sessions_per_key=state.settings.console_max_sessions_per_key,
    )
