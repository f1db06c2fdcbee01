"""What every ``/v1`` route depends on: the app's state, the caller (key + context), bodies.

The tenant ALWAYS comes from the API key. The rest of the context comes from optional
``X-Prism-*`` headers: project (default: the key's only project, else the server's), persona
(a key bound to a persona acts as it; naming another is refused with 403), surface,
specialization, session. Every authenticated request costs one hit of the key's rate limit.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar
from uuid import UUID

import anyio
from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from prism_memory.api.access_log import note_tenant
from prism_memory.api.metrics import Metrics
from prism_memory.api.rate_limit import RateLimits
from prism_memory.domain.access import ApiKey, Caller
from prism_memory.domain.records import SessionContext
from prism_memory.errors import FieldError, InvalidInput, PermissionDenied, StorageError
from prism_memory.services.access_service import AccessService
from prism_memory.services.auth_service import AuthService, ContextRequest
from prism_memory.settings import Settings

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key from `prism keys create`: `Authorization: Bearer prism_...`",
)
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
# The context headers' contract, published in the OpenAPI document and enforced by FastAPI
# before the key is looked up: 1 to 100 printable ASCII characters, no blank at either end
# (persona, surface, specialization); a UUID or a slug (project); the session is a UUID.
_UUID = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
CONTEXT_HEADER_PATTERN = "^[!-~](?:[ -~]{0,98}[!-~])?$"
PROJECT_HEADER_PATTERN = f"^(?:{_UUID}|[A-Za-z0-9][A-Za-z0-9._-]{{0,99}})$"
T = TypeVar("T")


@dataclass
class ApiState:
    """Everything the routes use, built once by :func:`prism_memory.api.app.build_state`."""

    settings: Settings
    auth: AuthService
    access: AccessService
    metrics: Metrics
    rate_limits: RateLimits
    local_key: ApiKey | None = None
    # The local hook route's token and the store it answers for (prism serve writes both
    # into the store's discovery file); None: the route refuses every request.
    hook_token: str | None = None
    hook_store: str | None = None
    _ready: bool = field(default=False, repr=False)

    def is_ready(self) -> bool:
        """Whether the store answers and is migrated (cached once true: schemas only grow)."""
        if not self._ready:
            self._ready = self.auth.keys.ready()
        return self._ready


def get_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.prism
    return state


StateDep = Annotated[ApiState, Depends(get_state)]


@dataclass(frozen=True)
class Call:
    """A request not yet authenticated: its secret and the context it asks for.

    Every HTTP door finds its caller here: the ``/v1`` routes, ``/mcp``
    (:class:`prism_memory.api.mcp_mount.McpAuth`) and the console (injected by
    :mod:`prism_memory.asgi`).

    :meth:`run` authenticates and does the route's work in ONE worker-thread hop (the key
    lookup and the service call both touch the database; each hop costs real time).
    """

    state: ApiState
    secret: str | None
    wanted: ContextRequest

    def resolve(self) -> Caller:
        """The caller (blocking: reads the key store).

        Raises:
            StorageError: the store is not ready (503).
            Unauthenticated: no, unknown or revoked key (401).
            PermissionDenied: a project or persona the key may not use (403).
            InvalidInput: malformed context headers (422).
            RateLimited: the key's rate limit is spent (429).
        """
        state = self.state
        if not state.is_ready():
            raise StorageError("the store is not ready (unreachable or not migrated)")
        key = state.local_key or state.auth.authenticate(self.secret)
        note_tenant(key.tenant_id)
        state.rate_limits.charge_key(key.key_id)
        return Caller(key, state.auth.context_for(key, self.wanted))

    async def run(self, work: Callable[[ApiKey, SessionContext], T]) -> T:
        """Authenticate, then ``work(key, ctx)``, in one worker thread."""

        def job() -> T:
            caller = self.resolve()
            return work(caller.key, caller.ctx)

        return await anyio.to_thread.run_sync(job)


async def call(
    request: Request,
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    x_prism_project: Annotated[
        str | None,
        Header(
            description="project UUID or slug (default: the key's only one)",
            pattern=PROJECT_HEADER_PATTERN,
        ),
    ] = None,
    x_prism_persona: Annotated[
        str | None,
        Header(
            description="acting persona (a persona-bound key may name only its own: else 403)",
            pattern=CONTEXT_HEADER_PATTERN,
        ),
    ] = None,
    x_prism_surface: Annotated[
        str | None, Header(description="e.g. python, github", pattern=CONTEXT_HEADER_PATTERN)
    ] = None,
    x_prism_specialization: Annotated[
        str | None, Header(description="e.g. backend", pattern=CONTEXT_HEADER_PATTERN)
    ] = None,
    x_prism_session: Annotated[
        UUID | None, Header(description="session UUID (default: a new one per request)")
    ] = None,
) -> Call:
    """The request's key and context headers (no I/O; :meth:`Call.run` checks them)."""
    if state.local_key is not None:
        _loopback_only(request)
    wanted = ContextRequest(
        project=x_prism_project,
        persona=x_prism_persona,
        surface=x_prism_surface,
        specialization=x_prism_specialization,
        session_id=str(x_prism_session) if x_prism_session is not None else None,
    )
    return Call(state, credentials.credentials if credentials is not None else None, wanted)


CallDep = Annotated[Call, Depends(call)]


def _loopback_only(request: Request) -> None:
    """``--insecure-local`` trusts loopback clients only, and only JSON requests.

    The Host check stops DNS-rebinding pages; requiring a JSON content type on bodies makes
    a browser send a CORS preflight (which we never answer) before any cross-site write.
    """
    host = (request.url.hostname or "").strip("[]").lower()
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host in _LOOPBACK_NAMES
    if not loopback:
        raise PermissionDenied("insecure-local mode answers only requests to a loopback host")
    if request.method in {"POST", "PUT", "PATCH"}:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise PermissionDenied("insecure-local mode accepts only application/json bodies")


async def json_object(request: Request) -> dict[str, Any]:
    """The request body as a JSON object (an empty body is ``{}``); size already bounded."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise InvalidInput(
            [FieldError("", "invalid_json", "the request body is not valid JSON")]
        ) from None
    if not isinstance(data, dict):
        raise InvalidInput([FieldError("", "wrong_type", "the request must be a JSON object")])
    return data


JsonBody = Annotated[dict[str, Any], Depends(json_object)]
