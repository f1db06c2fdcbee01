"""Idempotency keys: what makes two requests "the same", and the rule when they are not.

A retried write names the key of the first; the service hashes the request
(:func:`request_hash`) and every engine, like the service before it, compares the hash stored
under the key with the one asked (:func:`check_same_request`). Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from prism_memory.domain.records import SessionContext
from prism_memory.errors import IdempotencyConflict


def request_hash(op: str, ctx: SessionContext, payload: dict[str, Any]) -> str:
    """The hash that identifies one request: operation, project, persona and arguments."""
    body = {"op": op, "project": str(ctx.project_id), "persona": ctx.persona, **payload}
    text = json.dumps(body, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def check_same_request(key: str, stored_hash: str, asked_hash: str) -> None:
    """Refuse a key reused for a different request.

    Raises:
        IdempotencyConflict: ``stored_hash`` (the key's first request) is not ``asked_hash``.
    """
    if stored_hash != asked_hash:
        raise IdempotencyConflict(
            f"idempotency key '{key}' was used for a different request", key=key
        )
