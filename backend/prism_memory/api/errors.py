"""The HTTP API's one mapping of errors to responses.

Every :class:`~prism_memory.errors.PrismError` becomes ``exc.to_payload()`` with
``exc.http_status``;
FastAPI's own request-validation errors (through the one mapper,
:func:`prism_memory.errors.field_errors`) and Starlette's HTTP errors (unknown route, wrong method)
are
put in the same shape; anything else is a bare 500 with no details.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prism_memory.errors import (
    Overloaded,
    PrismError,
    RateLimited,
    StorageError,
    Unauthenticated,
    field_errors,
)

log = logging.getLogger("prism.api")

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def error_response(exc: PrismError) -> JSONResponse:
    """The response for a Prism error: its payload and its status (401 adds the challenge,
    429 and 503-overloaded add ``Retry-After``)."""
    headers: dict[str, str] = {}
    if isinstance(exc, Unauthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="prism"'
    if isinstance(exc, RateLimited | Overloaded):
        headers["Retry-After"] = str(exc.retry_after_s)
    return JSONResponse(exc.to_payload(), status_code=exc.http_status, headers=headers or None)


async def _prism_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PrismError)
    if isinstance(exc, StorageError):
        log.warning("storage error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(field_errors(exc.errors(), located=True))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    payload = {"ok": False, "error": {"code": code, "message": str(exc.detail)}}
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return JSONResponse(payload, status_code=exc.status_code, headers=headers or None)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette names only the first route's)."""
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL
            for route in request.app.router.routes
        )
    ]


INTERNAL_ERROR: dict[str, Any] = {
    "ok": False,
    "error": {"code": "internal_error", "message": "internal error"},
}


class InternalErrors:
    """ASGI middleware: an unexpected exception becomes the one-shape 500, and stops here.

    Starlette's own last-resort handler re-raises after answering, and uvicorn then closes
    the connection under the client's feet, resetting the next request on a keep-alive
    connection. This answers (if nothing was sent yet), logs, and returns normally, so the
    connection stays usable.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            log.error("unhandled error on %s %s", scope.get("method"), scope["path"], exc_info=exc)
            if started:
                raise  # a half-sent response: only closing the connection can end it
            await JSONResponse(INTERNAL_ERROR, status_code=500)(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    """Map every error the app can raise to the one shape (unexpected ones: :class:`InternalErrors`,
    added by the app as a middleware)."""
    app.add_exception_handler(PrismError, _prism_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
