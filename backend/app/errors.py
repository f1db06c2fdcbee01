"""Prism's one error hierarchy.

Every front door (CLI, MCP, HTTP) maps these to its own form exactly once, at
the entry point, via :meth:`PrismError.to_payload` and :attr:`PrismError.http_status`.

::

    PrismError
    ├── InvalidInput            validation_failed   one or more field errors (422)
    ├── NotFound                not_found           no such id in this tenant (404)
    ├── Conflict                conflict            the request clashes with state (409)
    │   ├── IdempotencyConflict idempotency_conflict same key, different request
    │   ├── MemoryRetired       memory_retired      the memory is retired
    │   └── NearDuplicate       near_duplicate      refused by a strict write
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
from typing import Any

from app.domain.characters import printable


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
