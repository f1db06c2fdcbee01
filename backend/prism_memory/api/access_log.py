"""Structured logs for ``prism serve`` (``PRISM_LOG_FORMAT=json``): one JSON object per line.

Every request gets an id (the caller's ``X-Request-ID`` when it is a short token, else a new
one), echoed in the response's ``X-Request-ID`` header and written in its access line with
the tenant the key resolved to, the route TEMPLATE (never a path with ids or a query), the
method, the status and the latency. Nothing a caller wrote (rule text, queries, keys,
headers) is ever put in a log line: the fields are fixed, and the tenant is a UUID.

The tenant is learnt deep in the request (when its key is resolved, in a worker thread);
:func:`note_tenant` writes it into the request's record, which the worker thread reaches
through the context anyio copies into it.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ACCESS_LOGGER = "prism.access"
REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_current: ContextVar[dict[str, str] | None] = ContextVar("prism_request_log", default=None)
# The standard attributes of a LogRecord: anything else on a record is a structured field.
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's ANSI-coloured copy of the message
}


def note_tenant(tenant_id: UUID) -> None:
    """Record the tenant of the request being answered (no-op outside a request)."""
    record = _current.get()
    if record is not None:
        record["tenant"] = str(tenant_id)


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object: time, level, logger, message and its extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({k: v for k, v in vars(record).items() if k not in _RECORD_ATTRS})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for uvicorn and Prism: JSON lines on stderr."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    logger = {"handlers": ["json"], "level": level.upper(), "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"json": handler},
        "loggers": {"uvicorn": logger, "uvicorn.error": logger, "prism": logger},
    }


class AccessLogMiddleware:
    """One ``prism.access`` line per HTTP request, and its ``X-Request-ID`` (pure ASGI).

    Args:
        app: the wrapped application.
        write: write the access lines (``prism serve --no-access-log``: only the ids).
    """

    def __init__(self, app: ASGIApp, write: bool = True) -> None:
        self.app = app
        self.write = write
        self.log = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(REQUEST_ID_HEADER.encode(), b"")
        text = given.decode("latin-1")
        request_id = text if _REQUEST_ID.match(text) else uuid.uuid4().hex
        record = {"request_id": request_id}
        token = _current.set(record)
        status = 500
        started = time.perf_counter()

        async def stamp(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers") or [])
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, stamp)
        finally:
            _current.reset(token)
            if self.write:
                self._line(scope, record, request_id, status, started)

    def _line(
        self, scope: Scope, record: dict[str, str], request_id: str, status: int, started: float
    ) -> None:
        route = getattr(scope.get("route"), "path", None)
        if not isinstance(route, str):
            route = "/mcp" if str(scope.get("path", "")).startswith("/mcp") else "unmatched"
        self.log.info(
            "request",
            extra={
                "request_id": request_id,
                "tenant": record.get("tenant"),
                "method": str(scope.get("method", "")),
                "route": route,
                "status": status,
                "latency_ms": round((time.perf_counter() - started) * 1000, 2),
            },
        )
