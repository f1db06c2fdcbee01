"""Prometheus metrics for the HTTP server (``/metrics``, text exposition format).

Each app gets its own registry (nothing global, nothing at import). Labels are bounded:
the route TEMPLATE (``/v1/memories/{memory_id}``, never an id), the method and the status;
the domain metrics (:class:`DomainMetrics`) the operation and the engine. No tenant, key or
project ever becomes a label.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prism_memory.domain.records import PinResult, RecallResult, WriteResult
from prism_memory.errors import StorageError
from prism_memory.services.access_service import AccessService
from prism_memory.services.brief_service import Brief
from prism_memory.services.receipt_writer import ReceiptWriter

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


class DomainMetrics:
    """What the service does, beside what HTTP sees: recall, brief and write latency by
    engine, and the served-receipts queue. Registered in the server's one registry.

    Args:
        registry: the server's registry.
        engine: ``sqlite`` or ``postgresql``.
        receipts: the served-receipts writer (None: receipts are off).
        hook_failures: reads the client hooks' failures counted in the store, by hook (every
            hook, 0 for those never failed).
        verdicts: reads the adherence verdicts and guard attempts recorded in the store, by
            kind (every kind, 0 for none).
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        engine: str,
        receipts: ReceiptWriter | None,
        hook_failures: Callable[[], dict[str, int]] | None = None,
        verdicts: Callable[[], dict[str, int]] | None = None,
    ) -> None:
        self.engine = engine
        self.latency = Histogram(
            "prism_operation_duration_seconds",
            "Time a recall, a brief or a write (remember, update, retire, restore, pin) took in "
            "the service, by operation and engine, whatever door it came through.",
            ("operation", "engine"),
            buckets=_BUCKETS,
            registry=registry,
        )
        if receipts is not None:
            registry.register(_ReceiptsCollector(receipts))
        if hook_failures is not None:
            registry.register(
                _StoreCounts("prism_hook_failures", _HOOK_FAILURES_HELP, "hook", hook_failures)
            )
        if verdicts is not None:
            registry.register(
                _StoreCounts("prism_adherence_verdicts", _VERDICTS_HELP, "verdict", verdicts)
            )

    def timed(self, operation: str) -> _Timer:
        return _Timer(self.latency.labels(operation, self.engine))


class _Timer:
    def __init__(self, histogram: Histogram) -> None:
        self.histogram = histogram

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.histogram.observe(time.perf_counter() - self.started)


class _ReceiptsCollector(Collector):
    """Read at every scrape: the queue's depth and its failed background writes."""

    def __init__(self, writer: ReceiptWriter) -> None:
        self.writer = writer

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "prism_served_receipts_pending",
            "Served receipts queued, not yet written to the audit ledger.",
            value=self.writer.pending(),
        )
        yield CounterMetricFamily(
            "prism_served_receipts_write_failures",
            "Background writes of served receipts that failed (their receipts stay queued "
            "and are retried; only a failure at shutdown loses them, and is logged).",
            value=self.writer.failed_writes,
        )


class _StoreCounts(Collector):
    """Read at every scrape: counts kept in the store by whatever process wrote them (hook
    failures, adherence records), as one counter family with one label. A store that cannot
    answer leaves the family out; the rest of the scrape goes on (/readyz says why)."""

    def __init__(
        self, name: str, documentation: str, label: str, counts: Callable[[], dict[str, int]]
    ) -> None:
        self.name, self.documentation, self.label, self.counts = name, documentation, label, counts

    def collect(self) -> Iterator[Metric]:
        try:
            counted = self.counts()
        except StorageError:
            return
        family = CounterMetricFamily(self.name, self.documentation, labels=(self.label,))
        for value, n in counted.items():
            family.add_metric((value,), n)
        yield family


_HOOK_FAILURES_HELP: Final = (
    "Client hook calls (brief, guard, capture, adherence) that failed open, as counted in the "
    "store by the hook process; failures that could not reach the store are not counted."
)
_VERDICTS_HELP: Final = (
    "Adherence records in the store's audit chains, every tenant: session verdicts (followed, "
    "violated) and guard attempts (reminded, blocked), whichever process recorded them (a Stop "
    "hook, the PreToolUse guard, a door)."
)


class MeteredAccess(AccessService):
    """The access service of ``base``, timing recall, brief and the writes into ``metrics``."""

    def __init__(self, base: AccessService, metrics: DomainMetrics) -> None:
        super().__init__(base.memory, base.memorules, base.briefs, base.proposals)
        self.metrics = metrics

    def recall(self, *args: Any, **kwargs: Any) -> RecallResult:
        with self.metrics.timed("recall"):
            return super().recall(*args, **kwargs)

    def brief(self, *args: Any, **kwargs: Any) -> Brief:
        with self.metrics.timed("brief"):
            return super().brief(*args, **kwargs)

    def remember(self, *args: Any, **kwargs: Any) -> WriteResult:
        with self.metrics.timed("write"):
            return super().remember(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> WriteResult:
        with self.metrics.timed("write"):
            return super().update(*args, **kwargs)

    def retire(self, *args: Any, **kwargs: Any) -> WriteResult:
        with self.metrics.timed("write"):
            return super().retire(*args, **kwargs)

    def restore(self, *args: Any, **kwargs: Any) -> WriteResult:
        with self.metrics.timed("write"):
            return super().restore(*args, **kwargs)

    def pin(self, *args: Any, **kwargs: Any) -> PinResult:
        with self.metrics.timed("write"):
            return super().pin(*args, **kwargs)
