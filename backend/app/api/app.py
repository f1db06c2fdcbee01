"""The HTTP API application: :func:`create_app` wires routes, limits, errors, docs, metrics.

Nothing happens at import; ``create_app`` only wires (no I/O) — the caller owns the services
and closes them. ``/healthz``, ``/readyz``, ``/metrics``, ``/openapi.json`` and ``/docs``
need no key; everything under ``/v1`` does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from mcp.server.transport_security import TransportSecuritySettings
from pydantic.json_schema import models_json_schema
from starlette.routing import Route

from app.api import audit_routes, proposals, routes
from app.api.deps import ApiState, StateDep
from app.api.docs import install_docs
from app.api.errors import InternalErrors, error_response, install_error_handlers
from app.api.headers import SecurityHeaders
from app.api.limits import BodyLimitMiddleware, ConcurrencyLimit
from app.api.mcp_mount import MCP_PATH, McpGate, mcp_policy
from app.api.metrics import CONTENT_TYPE, Metrics, MetricsMiddleware
from app.api.models import ErrorPublic, HealthPublic, ReadyPublic
from app.api.rate_limit import AnonymousRateLimit, RateLimits
from app.bootstrap import Services, build_auth
from app.errors import StorageError
from app.mcp_server.server import MCPHttpApp, build_mcp_asgi_app
from app.services.access_service import AccessService
from app.settings import Settings
from app.web import proposals_page
from app.web.console import install_console

TITLE = "Prism Memory"
DESCRIPTION = """Typed, scoped, auditable memory for teams of AI agents (SPEC-094 v0.4).

Every `/v1` request needs `Authorization: Bearer <key>` (create one with
`prism keys create`). The key fixes the tenant; `X-Prism-Project` picks the project (the
key must allow it). Errors always have one shape:
`{"ok": false, "error": {"code", "message", "fields"?}}`.
"""


def create_app(services: Services, settings: Settings, *, insecure_local: bool = False) -> FastAPI:
    """The HTTP API over ``services``.

    Args:
        services: wired services (see :func:`app.bootstrap.build_services`); not closed here.
        settings: limits and defaults (``max_body_bytes``, ``http_body_timeout_s``, ...).
        insecure_local: no keys: every request acts as an unrestricted admin of the
            settings' tenant. Only for a server bound to loopback (``prism serve`` checks).

    Raises:
        InvalidInput: the settings' tenant or project is malformed.
    """
    auth = build_auth(services)
    metrics = Metrics()
    state = ApiState(
        services=services,
        settings=settings,
        auth=auth,
        access=AccessService(services.memory, services.memorules, services.brief),
        metrics=metrics,
        rate_limits=RateLimits(
            settings.http_rate_limit,
            settings.http_rate_limit_anonymous,
            settings.http_rate_limit_storage,
            metrics.rate_limited,
        ),
        local_key=auth.local_key(settings.tenant, settings.persona) if insecure_local else None,
    )
    mcp = _build_mcp(services, settings, state, insecure_local)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.lifespan():  # the MCP session manager (mounted apps get no lifespan)
            yield

    app = FastAPI(
        lifespan=lifespan,
        title=TITLE,
        description=DESCRIPTION,
        version=_version(),
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.prism = state
    install_error_handlers(app)
    docs_csp = install_docs(app, TITLE)
    app.include_router(routes.router)
    app.include_router(proposals.router)  # the capture review queue (issue 20)
    app.include_router(audit_routes.router)
    _install_probes(app)
    install_console(app)  # the operator console at / (app.web)
    proposals_page.install(app)  # its review queue (issue 20)
    # A Route (not a Mount) so other paths keep their own 404/405; Starlette serves a
    # non-function endpoint as a plain ASGI app.
    app.router.routes.append(Route(MCP_PATH, McpGate(mcp.app, state), include_in_schema=False))
    # Outermost last: headers on every answer; metrics see every status (429/503 too);
    # unexpected errors end as a 500 that keeps the connection; the address limit runs
    # before any body is read; only requests whose body arrived count as load.
    app.add_middleware(ConcurrencyLimit, max_requests=settings.http_max_concurrency)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        timeout_s=settings.http_body_timeout_s,
    )
    app.add_middleware(AnonymousRateLimit, limits=state.rate_limits)
    app.add_middleware(InternalErrors)
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    app.add_middleware(SecurityHeaders, csp_by_path={"/docs": docs_csp})
    _install_openapi(app)
    return app


def _build_mcp(
    services: Services, settings: Settings, state: ApiState, insecure_local: bool
) -> MCPHttpApp:
    """The MCP app, its context from each request's key (see :mod:`app.api.mcp_mount`)."""
    # With keys, the key is the protection and the Host may be a real name; without, keep
    # the SDK's loopback-only Host check (DNS rebinding).
    security = (
        None if insecure_local else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    return build_mcp_asgi_app(
        services, settings, request_context=mcp_policy(state), transport_security=security
    )


def _install_probes(app: FastAPI) -> None:
    @app.get("/healthz", response_model=HealthPublic, tags=["operations"])
    async def healthz() -> dict[str, Any]:
        """Liveness: the process answers."""
        return {"ok": True, "status": "alive"}

    @app.get(
        "/readyz",
        response_model=ReadyPublic,
        responses={503: {"model": ErrorPublic, "description": "not migrated or unreachable"}},
        tags=["operations"],
    )
    async def readyz(state: StateDep) -> Any:
        """Readiness: the store answers and its schema is fully migrated."""
        if await anyio.to_thread.run_sync(state.auth.keys.ready):
            return {"ok": True, "ready": True}
        return error_response(StorageError("the store is unreachable or not migrated"))

    @app.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
        tags=["operations"],
    )
    def metrics(state: StateDep) -> Response:
        """Prometheus metrics (text exposition format 0.0.4)."""
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)


def _install_openapi(app: FastAPI) -> None:
    """Add the raw-body routes' documentation models to the OpenAPI components."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _, defs = models_json_schema(
                [(model, "validation") for model in routes.DOC_ONLY_MODELS],
                ref_template="#/components/schemas/{model}",
            )
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for name, definition in defs.get("$defs", {}).items():
                components.setdefault(name, definition)
            _no_null_parameters(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _no_null_parameters(schema: dict[str, Any]) -> None:
    """A header or query parameter is absent or a string, never JSON ``null``.

    FastAPI documents an optional ``str | None`` parameter as ``anyOf: [string, null]``;
    a client (schemathesis does) then sends the text ``null``, which is not "not given".
    """
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            for parameter in operation.get("parameters", ()) if isinstance(operation, dict) else ():
                options = parameter.get("schema", {}).get("anyOf")
                if not options:
                    continue
                kept = [o for o in options if o.get("type") != "null"]
                if len(kept) == 1:
                    rest = {k: v for k, v in parameter["schema"].items() if k != "anyOf"}
                    parameter["schema"] = {**kept[0], **rest}
                else:
                    parameter["schema"]["anyOf"] = kept


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prism-memory")
    except PackageNotFoundError:
        return "0.0.0"
