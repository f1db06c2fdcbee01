"""The HTTP API's one mapping of errors to responses.

Every :class:`~app.errors.PrismError` becomes ``exc.to_payload()`` with ``exc.http_status``;
FastAPI's own request-validation errors and Starlette's HTTP errors (unknown route, wrong
method) are put in the same shape; anything else is a bare 500 with no details.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import FieldError, InvalidInput, PrismError, StorageError, Unauthenticated

log = logging.getLogger("prism.api")

# pydantic's error types, in the codes the services' validators use.
_CODES = {
    "missing": "missing",
    "extra_forbidden": "unknown_field",
    "string_too_long": "too_long",
    "too_long": "too_long",
    "string_too_short": "too_short",
    "too_short": "too_short",
    "string_pattern_mismatch": "invalid_format",
    "uuid_parsing": "invalid_format",
    "uuid_type": "invalid_format",
    "datetime_parsing": "invalid_format",
    "datetime_from_date_parsing": "invalid_format",
    "json_invalid": "invalid_json",
    "greater_than": "out_of_range",
    "greater_than_equal": "out_of_range",
    "less_than": "out_of_range",
    "less_than_equal": "out_of_range",
    "enum": "invalid_choice",
    "literal_error": "invalid_choice",
}
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}
_DETAIL_KEYS = {"min_length": "min", "max_length": "max", "ge": "min", "le": "max"}


def error_response(exc: PrismError) -> JSONResponse:
    """The response for a Prism error: its payload and its status (401 adds the challenge)."""
    headers = (
        {"WWW-Authenticate": 'Bearer realm="prism"'} if isinstance(exc, Unauthenticated) else None
    )
    return JSONResponse(exc.to_payload(), status_code=exc.http_status, headers=headers)


def field_errors(errors: Any) -> InvalidInput:
    """pydantic/FastAPI validation errors as one :class:`InvalidInput`."""
    out = []
    for err in errors:
        loc = [str(part) for part in err.get("loc", ())]
        field = (
            ".".join(loc[1:])
            if loc and loc[0] in {"body", "query", "path", "header"}
            else ".".join(loc)
        )
        kind = str(err.get("type", "invalid"))
        code = _CODES.get(kind) or ("wrong_type" if kind.endswith(("_type", "_parsing")) else kind)
        details = {
            _DETAIL_KEYS[k]: value
            for k, value in (err.get("ctx") or {}).items()
            if k in _DETAIL_KEYS and isinstance(value, int | float)
        }
        out.append(FieldError(field, code, str(err.get("msg", "invalid value")), details))
    return InvalidInput(out)


async def _prism_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PrismError)
    if isinstance(exc, StorageError):
        log.warning("storage error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(field_errors(exc.errors()))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    payload = {"ok": False, "error": {"code": code, "message": str(exc.detail)}}
    return JSONResponse(payload, status_code=exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    payload = {"ok": False, "error": {"code": "internal_error", "message": "internal error"}}
    return JSONResponse(payload, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Map every error the app can raise to the one shape."""
    app.add_exception_handler(PrismError, _prism_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
