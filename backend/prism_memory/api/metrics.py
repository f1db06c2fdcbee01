"""Prometheus metrics for the HTTP server (``/metrics``, text exposition format).

Each app gets its own registry (nothing global, nothing at import). Labels are bounded:
the route TEMPLATE (``/v1/memories/{memory_id}``, never an id), the method and the status.
No tenant, key or project ever becomes a label.
"""

from __future__ import annotations

import time

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The server's metrics, in one registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        self.requests = Counter(
            "prism_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ("route", "method", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "prism_http_request_duration_seconds",
            "Time to answer an HTTP request, by route template and method.",
            ("route", "method"),
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "prism_http_requests_in_flight",
            "HTTP requests being answered now.",
            registry=self.registry,
        )
        self.rate_limited = Counter(
            "prism_http_rate_limited",
            "Requests refused with 429, by the limit spent: key or address.",
            ("scope",),
            registry=self.registry,
        )
        self.auth_failures = Counter(
            "prism_http_auth_failures",
            "Requests refused for a missing, unknown or revoked API key.",
            registry=self.registry,
        )

    def render(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts and times every HTTP request (pure ASGI, so streaming responses pass through).

    Args:
        app: the wrapped application.
        metrics: where to record.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if status == 401:
                    self.metrics.auth_failures.inc()
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, record_status)
        finally:
            self.metrics.in_flight.dec()
            route = _route_template(scope)
            method = str(scope.get("method", ""))
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.latency.labels(route, method).observe(time.perf_counter() - started)


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if str(scope.get("path", "")).startswith("/mcp"):
        return "/mcp"
    return "unmatched"
