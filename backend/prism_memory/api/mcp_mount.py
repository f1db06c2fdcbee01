"""MCP over Streamable HTTP at ``/mcp``: authenticated as ``/v1`` is, then handed on untouched.

:class:`McpAuth` (ASGI, in front of the MCP app) finds the caller exactly as every ``/v1``
route does (:meth:`prism_memory.api.deps.Call.resolve`: readiness, the bearer key, the key's rate
limit, the context headers), answers 401/403/422/429/503 in the one JSON error shape when that
fails, and otherwise keeps the :class:`~prism_memory.domain.access.Caller` in the request's state.
It
never reads the body: what a call may do is decided by the tools themselves, which ask
:class:`~prism_memory.services.access_service.AccessService` with that caller's key
(:func:`request_caller` is the MCP server's hook that hands it to them).
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse
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
        await self.app(scope, receive, send)


def request_caller(request: Any) -> Caller:
    """The MCP server's ``request_caller`` hook: the caller :class:`McpAuth` found.

    Raises:
        PermissionDenied: no caller on the request (never behind :class:`McpAuth`).
    """
    caller: Caller | None = getattr(request.state, _CALLER, None) if request else None
    if caller is None:
        raise PermissionDenied("MCP over HTTP needs an API key")
    return caller
