"""MCP over Streamable HTTP at ``/mcp``, behind the same API keys and rules as ``/v1``.

Two layers, because the MCP tools call the services directly:

1. :class:`McpGate` (ASGI, in front of the MCP app) answers 401/403/422/503 for the HTTP
   request as ``/v1`` would, and keeps the caller (key + context) and the JSON-RPC message
   in the request's state;
2. :func:`mcp_policy` (the MCP server's ``request_context`` hook, called for every tool
   call, resource read and prompt) applies the key's role, project and persona rules to
   that message's arguments — the ids it names — through :class:`AccessService`, and
   returns the context (tenant from the key). Its refusals reach the agent as MCP errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.deps import ApiState, Caller
from app.api.errors import error_response
from app.domain import access
from app.domain.access import Role
from app.domain.records import SessionContext
from app.errors import FieldError, InvalidInput, PermissionDenied, PrismError, StorageError
from app.mcp_server.tools import WRITE_TOOLS
from app.services.auth_service import ContextRequest

MCP_PATH = "/mcp"
_CALLER = "prism_caller"
_MESSAGE = "prism_mcp_message"
_MEMORULE_URI = "prism://memorule/"
# Every action the policy below knows; any other (a tool added later) is refused over HTTP
# until its rules are written here — default deny, never a silent bypass of the checks.
CHECKED_ACTIONS = frozenset(
    {
        "prism_remember",
        "semantic_recall",
        "memorule_brief",
        "memorule_update",
        "memorule_retire",
        "memorule_restore",
        "memorule_history",
        "memorule_proposals",  # read-only: the project's review queue (a reader may list it)
        "memorule_audit",
        "memorule_served",
        "read_resource",
        "get_prompt",
    }
)


class McpGate:
    """Authenticates ``/mcp`` requests before the MCP app sees them.

    Args:
        app: the MCP ASGI app (answers only ``/mcp``).
        state: the API's state (auth, readiness, insecure-local key).
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
        request = Request(scope, receive)
        try:
            caller = await anyio.to_thread.run_sync(self._caller, request)
            message = await _json_message(request) if request.method == "POST" else None
        except PrismError as exc:
            await error_response(exc)(scope, receive, send)
            return
        scope.setdefault("state", {})
        scope["state"][_CALLER] = caller
        scope["state"][_MESSAGE] = message
        await self.app(scope, _replayed(request, receive), send)

    def _caller(self, request: Request) -> Caller:
        state = self.state
        if not state.is_ready():
            raise StorageError("the store is not ready (unreachable or not migrated)")
        if state.local_key is not None:
            key = state.local_key
        else:
            header = request.headers.get("authorization", "")
            scheme, _, secret = header.partition(" ")
            key = state.auth.authenticate(secret.strip() if scheme.lower() == "bearer" else None)
        state.rate_limits.charge_key(key.key_id)
        h = request.headers
        wanted = ContextRequest(
            project=h.get("x-prism-project"),
            persona=h.get("x-prism-persona"),
            surface=h.get("x-prism-surface"),
            specialization=h.get("x-prism-specialization"),
        )
        return Caller(key, state.auth.context_for(key, wanted))


async def _json_message(request: Request) -> Any:
    body = await request.body()
    try:
        return json.loads(body) if body.strip() else None
    except (ValueError, RecursionError):
        return None  # the MCP app answers a parse error itself


def _replayed(request: Request, receive: Receive) -> Receive:
    """The body was read (and cached) by the gate; hand it to the MCP app again."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent and request.method == "POST":
            sent = True
            return {"type": "http.request", "body": await request.body(), "more_body": False}
        return await receive()

    return replay


def mcp_policy(state: ApiState) -> Callable[[Any, str], SessionContext]:
    """The MCP ``request_context`` hook: the key's rules on each call's arguments.

    Raises (inside the hook):
        PermissionDenied, NotFound, InvalidInput: the call is refused, as on ``/v1``.
    """

    def hook(request: Any, action: str) -> SessionContext:
        caller: Caller | None = getattr(request.state, _CALLER, None) if request else None
        if caller is None:  # never: the gate runs first
            raise PermissionDenied("MCP over HTTP needs an API key")
        message = getattr(request.state, _MESSAGE, None)
        params = message.get("params") if isinstance(message, Mapping) else None
        params = params if isinstance(params, Mapping) else {}
        args = params.get("arguments")
        _check(state, caller, action, args if isinstance(args, Mapping) else {}, params)
        return caller.ctx

    return hook


def _check(
    state: ApiState,
    caller: Caller,
    action: str,
    args: Mapping[str, Any],
    params: Mapping[str, Any],
) -> None:
    key, ctx, guard = caller.key, caller.ctx, state.access
    if action not in CHECKED_ACTIONS:
        raise PermissionDenied(f"'{action}' is not available over HTTP with API keys")
    access.require_role(key, Role.WRITER if action in WRITE_TOOLS else Role.READER, action)
    override = args.get("context")
    if key.persona is not None and isinstance(override, Mapping) and override.get("persona"):
        access.resolve_persona(key, str(override["persona"]))
    if action == "prism_remember":
        guard.check_remember(key, ctx, args)
    elif action == "memorule_update":
        guard.check_update(key, ctx, _id(args.get("id"), "id"), _object(args.get("changes")))
    elif action in {"memorule_retire", "memorule_restore"}:
        guard.check_change(key, ctx, _id(args.get("id"), "id"))
    elif action == "memorule_history":
        guard.get(key, ctx, _id(args.get("id"), "id"))
    elif action == "memorule_audit":
        memorule = args.get("memorule_id")
        if memorule is not None:
            guard.get(key, ctx, _id(memorule, "memorule_id"))
        else:
            access.require_tenant_audit(key, "list the whole tenant's audit trail")
    elif action == "memorule_served":
        # Over HTTP the whole tenant's receipts only; a key reads its own sessions' receipts
        # through GET /v1/audit/served?session_id=.
        access.require_tenant_audit(key, "list the tenant's served receipts over MCP")
    elif action == "read_resource":
        uri = str(params.get("uri", ""))
        if uri.startswith(_MEMORULE_URI):
            guard.get(key, ctx, _id(uri[len(_MEMORULE_URI) :], "uri"))


def _object(value: Any) -> Any:
    """An object argument some clients send as JSON text (as the tools decode it)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def _id(value: Any, label: str) -> UUID:
    """An id argument, parsed as strictly as the tools parse it (a miss refuses the call)."""
    try:
        return UUID(str(value))
    except ValueError:
        raise InvalidInput(
            [FieldError(label, "invalid_format", f"'{label}' must be a memory id (a UUID)")]
        ) from None
