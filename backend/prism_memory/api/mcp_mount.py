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

One look at the body, before the SDK parses it: a JSON string escape of a lone surrogate
(``"\\ud800"``) is valid JSON, which the SDK's parser nevertheless refuses as a parse error
(-32700, as if the request were not JSON at all). A request carrying one is answered, as any
other bad argument, with invalid params (-32602) naming the field, in Prism's error shape
(``data``). The body is already bounded (:class:`prism_memory.api.limits.BodyLimitMiddleware`);
only a body holding such an escape is decoded here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prism_memory.api.deps import ApiState, Call
from prism_memory.api.errors import error_response
from prism_memory.domain.access import Caller
from prism_memory.domain.characters import forbidden_character
from prism_memory.errors import FieldError, InvalidInput, PermissionDenied, PrismError
from prism_memory.services.auth_service import ContextRequest

MCP_PATH = "/mcp"
_CALLER = "prism_caller"
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F][0-9a-fA-F]{2}")
INVALID_PARAMS = -32602


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
        if scope.get("method") == "POST":
            body = await _body(receive)
            refusal = lone_surrogate_refusal(body)
            if refusal is not None:
                await JSONResponse(refusal)(scope, receive, send)
                return
            receive = _replay(body)
        await self.app(scope, receive, send)


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def lone_surrogate_refusal(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC invalid-params answer to a request whose strings hold a lone surrogate,
    naming the field; None for any other body (the SDK answers it, parse errors included)."""
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        message = json.loads(body)
        if not isinstance(message, dict):
            return None
        found = _surrogate_at(message.get("params"), ())
    except (ValueError, RecursionError):  # not JSON, or nested past what we walk: the SDK's
        return None
    if found is None:
        return None
    path, problem = found
    inside = path[1:] if path[:1] == ("arguments",) else ("params", *path)
    field = ".".join(inside)
    error = InvalidInput(
        [FieldError(field, "invalid_characters", f"'{field}' contains {problem}")]
    ).to_payload()
    return {
        "jsonrpc": "2.0",
        "id": message.get("id"),
        "error": {
            "code": INVALID_PARAMS,
            "message": f"Invalid params: '{field}' contains {problem}",
            "data": error,
        },
    }


def _surrogate_at(value: Any, path: tuple[str, ...]) -> tuple[tuple[str, ...], str] | None:
    if isinstance(value, str):
        problem = forbidden_character(value)
        return (path, problem) if problem and "surrogate" in problem else None
    items: Any = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    for key, item in items:
        if (
            isinstance(key, str)
            and (problem := forbidden_character(key))
            and "surrogate" in problem
        ):
            return ((*path, "<key>"), problem)
        found = _surrogate_at(item, (*path, str(key)))
        if found is not None:
            return found
    return None


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
