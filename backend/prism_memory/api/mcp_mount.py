"""MCP over Streamable HTTP at ``/mcp``: authenticated as ``/v1`` is, then handed on untouched.

:class:`McpAuth` (ASGI, in front of the MCP app) finds the caller exactly as every ``/v1``
route does (:meth:`prism_memory.api.deps.Call.resolve`: readiness, the bearer key, the key's rate
limit, the context headers), answers 401/403/422/429/503 in the one JSON error shape when that
fails, and otherwise keeps the :class:`~prism_memory.domain.access.Caller` in the request's state.
It
never reads the body: what a call may do is decided by the tools themselves, which ask
:class:`~prism_memory.services.access_service.AccessService` with that caller's key
(:func:`request_caller` is the MCP server's hook that hands it to them).

An MCP session belongs to the key that opened it (DESIGN §10). The key is handed to the SDK's
session manager as the request's authenticated principal (``scope["user"]``), which binds a
new session to it and answers any other principal (another key of the same tenant or of
another) for that session id exactly as an unknown session: 404 "Session not found", for
tool calls, streams and DELETE alike. The session id is visible to readers of the audit
(``written_by_session_id``), so it must never act as a credential on its own.
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Receive, Scope, Send

from prism_memory.api.deps import ApiState, Call
from prism_memory.api.errors import error_response
from prism_memory.domain.access import Caller
from prism_memory.errors import PermissionDenied, PrismError
from prism_memory.services.auth_service import ContextRequest

MCP_PATH = "/mcp"
_CALLER = "prism_caller"


class McpAuth:
    """Authenticates ``/mcp`` requests before the MCP app sees them.

    Args:
        app: the MCP ASGI app (answers only ``/mcp``).
        state: the API's state (auth, readiness, rate limits, insecure-local key).
    """

    def __init__(self, app: ASGIApp, state: ApiState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") != MCP_PATH:
            payload = {"ok": False, "error": {"code": "not_found", "message": "Not Found"}}
            await JSONResponse(payload, status_code=404)(scope, receive, send)
            return
        headers = Request(scope).headers
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        wanted = ContextRequest(
            project=headers.get("x-prism-project"),
            persona=headers.get("x-prism-persona"),
            surface=headers.get("x-prism-surface"),
            specialization=headers.get("x-prism-specialization"),
        )
        call = Call(self.state, secret.strip() if scheme.lower() == "bearer" else None, wanted)
        try:
            caller = await anyio.to_thread.run_sync(call.resolve)
        except PrismError as exc:
            await error_response(exc)(scope, receive, send)
            return
        scope.setdefault("state", {})[_CALLER] = caller
        scope["user"] = session_owner(caller)
        await self.app(scope, receive, send)


def session_owner(caller: Caller) -> AuthenticatedUser:
    """The principal an MCP session is bound to: the caller's key (and its tenant).

    The SDK compares (client_id, issuer, subject) of every request on a session with the
    opener's; the secret itself is never kept (``token`` stays empty).
    """
    token = AccessToken(
        token="",
        client_id=caller.key.key_id,
        scopes=[caller.key.role.value],
        subject=str(caller.key.tenant_id),
    )
    return AuthenticatedUser(token)


def request_caller(request: Any) -> Caller:
    """The MCP server's ``request_caller`` hook: the caller :class:`McpAuth` found.

    Raises:
        PermissionDenied: no caller on the request (never behind :class:`McpAuth`).
    """
    caller: Caller | None = getattr(request.state, _CALLER, None) if request else None
    if caller is None:
        raise PermissionDenied("MCP over HTTP needs an API key")
    return caller
