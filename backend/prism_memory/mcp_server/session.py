"""Who is calling: the key and session context of every MCP request.

Every tool, resource and prompt acts with a key, through the same
:class:`~prism_memory.services.access_service.AccessService` checks as ``/v1``. Over HTTP the host's
``request_caller`` hook returns the caller of the request (the key its bearer secret names,
and that key's context). Over stdio, and wherever no hook is installed, the caller is the local
operator: an unrestricted admin key of the settings' tenant (never stored), bound to no
persona, so a ``context`` override may narrow the persona when the settings allow it.

Without a hook, tenant, project, persona, surface and specialization come from the server's
settings (``PRISM_*`` variables or ``prism mcp`` flags). The ``session_id`` recorded as
``written_by_session_id`` is:

- ``PRISM_SESSION_ID`` when it is set (every call, every transport);
- on stdio (and in-process clients): one id per server process, minted at start. Each MCP
  client launches its own ``prism mcp``, so the process is the session, whichever protocol
  era the client speaks;
- over Streamable HTTP: the ``Mcp-Session-Id`` of the MCP session, where the protocol has
  one (handshake-era clients, stateful server). Protocol ``2026-07-28`` requests (and a
  stateless server) carry no session: each such request is its own session and gets a
  fresh id. Prism does not invent a session the protocol does not have.

A call may narrow persona, surface or specialization with a ``context`` argument only when
``PRISM_MCP_ALLOW_CONTEXT_OVERRIDE`` is true; otherwise it is refused as ``forbidden``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from mcp.server.mcpserver import Context

from prism_memory.bootstrap import context_from
from prism_memory.domain import access
from prism_memory.domain.access import ApiKey, Caller
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import SessionContext
from prism_memory.errors import FieldError, InvalidInput, PermissionDenied
from prism_memory.mcp_server.arguments import ContextArgument
from prism_memory.mcp_server.parsing import parse
from prism_memory.settings import Settings

# (HTTP request) -> the caller: its key and base context; see build_mcp_asgi_app.
RequestCaller = Callable[[Any], Caller]
OVERRIDE_SETTING = "PRISM_MCP_ALLOW_CONTEXT_OVERRIDE"
_SESSION_HEADER = "mcp-session-id"
_HEADER_NAMESPACE = uuid.UUID("0c4b7a52-6a53-4f0e-9d55-094a11c0e5e1")


class SessionScope(StrEnum):
    """Where session ids come from."""

    PROCESS = "process"  # stdio and in-process clients: one per server
    TRANSPORT = "transport"  # HTTP: the MCP session's Mcp-Session-Id, else one per request


class Sessions:
    """Resolves the caller (key and :class:`SessionContext`) of each request.

    Args:
        settings: the server's settings; the base context is validated now, so a bad
            tenant or project stops the server at start rather than at the first call.
        scope: where session ids come from.
        request_caller: an optional hook returning the caller from the HTTP request (the
            key its secret names, and the context that key runs in); it may raise a
            ``PrismError``.

    Raises:
        InvalidInput: the settings name an invalid tenant, project or context value.
    """

    def __init__(
        self,
        settings: Settings,
        scope: SessionScope = SessionScope.PROCESS,
        request_caller: RequestCaller | None = None,
    ) -> None:
        self.base = context_from(settings)
        self.local_key: ApiKey = access.operator_key(self.base.tenant_id)
        self.fixed_session = bool(settings.session_id)
        self.allow_override = settings.mcp_allow_context_override
        self.precise_schemas = settings.mcp_tool_schemas == "precise"
        self.scope = scope
        self.request_caller = request_caller

    @property
    def per_request(self) -> bool:
        """Whether the caller depends on the request (an HTTP hook is installed)."""
        return self.request_caller is not None

    @property
    def local(self) -> Caller:
        """The local operator in the settings' context (no hook: stdio, in-process)."""
        return Caller(self.local_key, self.base)

    def resolve(self, mcp_ctx: Context, override: Any = None) -> Caller:
        """Who one request acts as: the key, and the context it runs in.

        Args:
            mcp_ctx: the SDK's request context.
            override: the call's ``context`` argument, if any.

        Raises:
            Unauthenticated, PermissionDenied, InvalidInput, StorageError: from the hook.
            PermissionDenied: the call narrows the context and the settings forbid it, or
                names a persona other than its persona-bound key's.
            InvalidInput: the override is malformed.
        """
        if self.request_caller is not None:
            caller = self.request_caller(mcp_ctx.request_context.request)
        else:
            caller = self.local
        ctx = dataclasses.replace(caller.ctx, session_id=self._session_id(mcp_ctx))
        return Caller(caller.key, self.narrow(caller.key, ctx, override))

    def _session_id(self, mcp_ctx: Context) -> uuid.UUID:
        if self.fixed_session or self.scope is SessionScope.PROCESS:
            return self.base.session_id
        header = (mcp_ctx.headers or {}).get(_SESSION_HEADER)
        if not header:
            return new_id()
        try:
            return uuid.UUID(header)
        except ValueError:
            return uuid.uuid5(_HEADER_NAMESPACE, header)

    def narrow(self, key: ApiKey, ctx: SessionContext, override: Any) -> SessionContext:
        """``ctx`` with the override's persona, surface and specialization on top.

        Raises:
            PermissionDenied: a persona-bound key names another persona (as the
                ``X-Prism-Persona`` header of ``/v1``); or a value is given and the settings
                forbid overrides.
            InvalidInput: the override is not an object of those three short strings.
        """
        if key.persona is not None and isinstance(override, Mapping) and override.get("persona"):
            access.resolve_persona(key, str(override["persona"]))
        if override is None or (isinstance(override, Mapping) and not any(override.values())):
            return ctx
        if not self.allow_override:
            raise PermissionDenied(
                "this server does not let a call change its persona, surface or "
                f"specialization; start it with {OVERRIDE_SETTING}=true (or "
                "--allow-context-override) to allow that",
                field="context",
                setting=OVERRIDE_SETTING,
            )
        if not isinstance(override, Mapping):
            raise InvalidInput(
                [
                    FieldError(
                        "context",
                        "wrong_type",
                        "'context' must be an object",
                        {"expected": "object"},
                    )
                ]
            )
        try:
            given = parse(ContextArgument, override)
        except InvalidInput as exc:
            raise InvalidInput(
                [dataclasses.replace(e, field=f"context.{e.field}") for e in exc.errors]
            ) from None
        values = {k: val.strip() for k, val in given.model_dump().items() if val is not None}
        blank = sorted(k for k, val in values.items() if not val)
        if blank:
            raise InvalidInput(
                [
                    FieldError(f"context.{k}", "empty", f"'context.{k}' must not be blank")
                    for k in blank
                ]
            )
        return dataclasses.replace(ctx, **values)
