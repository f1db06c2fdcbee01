"""Prism's one error hierarchy.

Every front door (CLI, MCP, HTTP) maps these to its own form exactly once, at
the entry point, via :meth:`PrismError.to_payload` and :attr:`PrismError.http_status`.
pydantic's errors (the contract's models, FastAPI's parameters, the settings) become one
:class:`InvalidInput` through one mapper, :func:`field_errors`.

::

    PrismError
    ├── InvalidInput            validation_failed   one or more field errors (422)
    ├── NotFound                not_found           no such id in this tenant (404)
    ├── Conflict                conflict            the request clashes with state (409)
    │   ├── IdempotencyConflict idempotency_conflict same key, different request
    │   ├── MemoryRetired       memory_retired      the memory is retired
    │   ├── NearDuplicate       near_duplicate      refused by a strict write
    │   └── NotAMemorule        not_a_memorule      only a memorule may be pinned
    ├── PermissionDenied        forbidden           the caller's role or scope forbids it (403)
    ├── Unauthenticated         unauthenticated     no or unknown credentials (401)
    ├── TooLarge                too_large           the request body is over the limit (413)
    ├── RequestTimeout          request_timeout     the request body came too slowly (408)
    ├── RateLimited             rate_limited        too many requests; retry later (429)
    ├── Overloaded              overloaded          the server is at its concurrency limit (503)
    ├── EmbeddingUnavailable    embedding_unavailable the model could not be loaded (503)
    └── StorageError            storage_error       the database failed (503)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from prism_memory.domain.characters import printable

if TYPE_CHECKING:  # imported where used: the guard hook's process never loads pydantic
    from pydantic_core import PydanticCustomError


@dataclasses.dataclass(frozen=True)
class FieldError:
    """One problem with one input field."""

    field: str
    code: str
    message: str
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # The field name and message may quote what the caller sent (an unknown key): never
        # echo a character no JSON encoder or terminal should carry.
        return {
            "field": printable(self.field),
            "code": self.code,
            "message": printable(self.message),
            **self.details,
        }


class PrismError(Exception):
    """Base of every error Prism raises on purpose."""

    code = "error"
    http_status = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_payload(self) -> dict[str, Any]:
        """The one error shape: ``{"ok": false, "error": {"code", "message", ...}}``."""
        return {"ok": False, "error": {"code": self.code, "message": self.message, **self.details}}


class InvalidInput(PrismError):
    """The input broke the contract; carries every field error at once."""

    code = "validation_failed"
    http_status = 422

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = list(errors)
        noun = "error" if len(self.errors) == 1 else "errors"
        super().__init__(f"{len(self.errors)} field {noun}")

    def to_payload(self) -> dict[str, Any]:
        return {
            "ok": False,
            "error": {
                "code": self.code,
                "message": self.message,
                "fields": [e.to_dict() for e in self.errors],
            },
        }


class NotFound(PrismError):
    """No such record in the caller's tenant."""

    code = "not_found"
    http_status = 404


class Conflict(PrismError):
    """The request clashes with the stored state."""

    code = "conflict"
    http_status = 409


class IdempotencyConflict(Conflict):
    """The idempotency key was used before with different arguments."""

    code = "idempotency_conflict"


class MemoryRetired(Conflict):
    """The memory is retired; restore it first."""

    code = "memory_retired"


class NearDuplicate(Conflict):
    """A strict write found a nearly identical active memorule."""

    code = "near_duplicate"


class NotAMemorule(Conflict):
    """The memory named is a note, and the operation is only for memorules (a pin)."""

    code = "not_a_memorule"


class PermissionDenied(PrismError):
    """The caller's role or scope does not allow this."""

    code = "forbidden"
    http_status = 403


class Unauthenticated(PrismError):
    """No credentials, or credentials Prism does not know."""

    code = "unauthenticated"
    http_status = 401


class TooLarge(PrismError):
    """The request is larger than the server accepts."""

    code = "too_large"
    http_status = 413


class RequestTimeout(PrismError):
    """The client did not finish sending its request in time."""

    code = "request_timeout"
    http_status = 408


class RateLimited(PrismError):
    """The caller sent more requests than its rate limit allows; ``retry_after_s`` says when."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message, retry_after_s=retry_after_s)
        self.retry_after_s = retry_after_s


class Overloaded(PrismError):
    """The server is answering as many requests as it may at once; retry shortly."""

    code = "overloaded"
    http_status = 503

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message, retry_after_s=retry_after_s)
        self.retry_after_s = retry_after_s


class EmbeddingUnavailable(PrismError):
    """The embedding model could not be loaded or run."""

    code = "embedding_unavailable"
    http_status = 503


class StorageError(PrismError):
    """The storage engine failed in a way the caller cannot fix."""

    code = "storage_error"
    http_status = 503


# -- pydantic's errors in the one shape ----------------------------------------------------

# The type of every pydantic error the contract raises itself (prism_memory.domain.contract): its
# ``ctx`` holds the Prism message (``{field}`` stands for the field's dotted name) and details.
CONTRACT_ERROR = "prism:"
# pydantic's own error types, in the contract's codes.
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
_DETAILS = {"ge": "min", "gt": "min", "le": "max", "lt": "max", "min_length": "min"}
_DETAILS |= {"max_length": "max"}
# FastAPI locates a request's errors by where the value came from: ("body", "subject").
_SOURCES = frozenset({"body", "query", "path", "header", "cookie"})


def contract_error(code: str, message: str, **details: Any) -> PydanticCustomError:
    """A pydantic error that is one Prism field error (raised inside a model's validator).

    Args:
        code: the field error's code (``too_long``, ``invalid_choice``...).
        message: for people; ``{field}`` is replaced by the field's dotted name.
        details: extra keys of the field error (``max``, ``allowed``...).
    """
    from pydantic_core import PydanticCustomError

    return PydanticCustomError(CONTRACT_ERROR + code, "{message}", {"message": message, **details})


def field_errors(errors: Iterable[Mapping[str, Any]], *, located: bool = False) -> InvalidInput:
    """pydantic's errors as ONE :class:`InvalidInput`: the one mapper of every door.

    The contract's own errors (:func:`contract_error`) keep their code, message and details;
    pydantic's built-in ones (FastAPI parameters, settings) get the contract's codes.

    Args:
        errors: ``ValidationError.errors()`` or ``RequestValidationError.errors()``.
        located: the locations start with where the value came from (FastAPI's
            ``("body", ...)``, ``("query", ...)``): drop that part.
    """
    return InvalidInput([_field_error(error, located) for error in errors])


def _field_error(error: Mapping[str, Any], located: bool) -> FieldError:
    loc = [str(part) for part in error.get("loc", ())]
    if located and loc and loc[0] in _SOURCES:
        loc = loc[1:]
    field = ".".join(loc)
    kind = str(error.get("type", ""))
    ctx = dict(error.get("ctx") or {})
    if kind.startswith(CONTRACT_ERROR):
        message = str(ctx.pop("message", "")).replace("{field}", field)
        return FieldError(field, kind.removeprefix(CONTRACT_ERROR), message, ctx)
    code = _CODES.get(kind) or ("wrong_type" if kind.endswith(("_type", "_parsing")) else "invalid")
    if code == "missing":
        message = f"'{field}' is required"
    elif code == "unknown_field":
        message = f"'{field}' is not a field of this request"
    else:
        text = str(error.get("msg", "invalid value"))
        message = f"'{field}': {text}" if field else text
    details = {
        _DETAILS[key]: value
        for key, value in ctx.items()
        if key in _DETAILS and isinstance(value, int | float) and not isinstance(value, bool)
    }
    return FieldError(field, code, message, details)
