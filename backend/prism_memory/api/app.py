"""The HTTP API: :func:`create_api` wires the ``/v1`` routes, limits, errors, docs, metrics.

Nothing happens at import; ``create_api`` only wires (no I/O) — the caller owns the services
and closes them. ``/healthz``, ``/readyz``, ``/metrics``, ``/openapi.json`` and ``/docs``
need no key; everything under ``/v1`` does. The server (``/v1`` with ``/mcp`` and the
console) is assembled by :mod:`prism_memory.asgi`; the middleware installed here serves all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from pydantic.json_schema import models_json_schema

from prism_memory.api import adherence_routes, audit_routes, hook_routes, proposals, routes
from prism_memory.api.deps import ApiState, StateDep
from prism_memory.api.docs import install_docs
from prism_memory.api.errors import InternalErrors, error_response, install_error_handlers
from prism_memory.api.headers import SecurityHeaders
from prism_memory.api.limits import BodyLimitMiddleware, ConcurrencyLimit
from prism_memory.api.metrics import (
    CONTENT_TYPE,
    DomainMetrics,
    MeteredAccess,
    Metrics,
    MetricsMiddleware,
)
from prism_memory.api.models import ErrorPublic, HealthPublic, ReadyPublic
from prism_memory.api.rate_limit import AnonymousRateLimit, RateLimits
from prism_memory.bootstrap import Services, build_auth, hook_failure_counts, verdict_counts
from prism_memory.errors import StorageError
from prism_memory.services.access_service import AccessService
from prism_memory.settings import Settings
from prism_memory.version import VERSION

TITLE = "Prism Memory"
DESCRIPTION = """Typed, scoped, auditable memory for teams of AI agents (SPEC-094 v0.4).

Every `/v1` request needs `Authorization: Bearer <key>` (create one with
`prism keys create`). The key fixes the tenant; `X-Prism-Project` picks the project (the
key must allow it). Errors always have one shape:
`{"ok": false, "error": {"code", "message", "fields"?}}`.
"""
Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def build_state(
    services: Services,
    settings: Settings,
    access: AccessService,
    *,
    insecure_local: bool = False,
    hook: tuple[str, str] | None = None,
) -> ApiState:
    """What every HTTP door authenticates with and calls (no I/O).

    Args:
        services: wired services (see :func:`prism_memory.bootstrap.build_services`); not closed
        here.
        settings: limits and defaults (rate limits, the insecure-local tenant and persona).
        access: the guarded operations (see :func:`prism_memory.bootstrap.build_access`).
        insecure_local: no keys: every request acts as an unrestricted admin of the
            settings' tenant. Only for a server bound to loopback (``prism serve`` checks).

    Raises:
        InvalidInput: the settings' tenant or project is malformed.
    """
    auth = build_auth(services)
    metrics = Metrics()
    engine = "postgresql" if settings.database_url else "sqlite"
    domain = DomainMetrics(
        metrics.registry,
        engine,
        services.ledger.writer,
        hook_failure_counts(services),
        verdict_counts(services),
    )
    return ApiState(
        settings=settings,
        auth=auth,
        access=MeteredAccess(access, domain),
        metrics=metrics,
        rate_limits=RateLimits(
            settings.http_rate_limit,
            settings.http_rate_limit_anonymous,
            settings.http_rate_limit_storage,
            metrics.rate_limited,
        ),
        local_key=auth.local_key(settings.tenant, settings.persona) if insecure_local else None,
        hook_token=hook[0] if hook else None,
        hook_store=hook[1] if hook else None,
    )


def create_api(state: ApiState, *, lifespan: Lifespan | None = None) -> FastAPI:
    """The HTTP API over ``state``: ``/v1``, probes, metrics, docs, and the middleware.

    Args:
        state: see :func:`build_state`.
        lifespan: the host's lifespan (the MCP session manager runs in it).
    """
    settings = state.settings
    app = FastAPI(
        lifespan=lifespan,
        title=TITLE,
        description=DESCRIPTION,
        version=VERSION,
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
    app.include_router(adherence_routes.router)  # judging sessions, the report (issue 28)
    app.include_router(hook_routes.router)  # the hooks' fast path asks here (issue 31)
    _install_probes(app)
    # Outermost last: headers on every answer; metrics see every status (429/503 too);
    # unexpected errors end as a 500 that keeps the connection; the address limit runs
    # before any body is read; only requests whose body arrived count as load. Routes
    # added to ``app`` later (the console, ``/mcp``) run inside the same stack.
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
