"""The wire form of a hook's request to the running server (``POST /v1/hooks/claude-code``),
judged field by field, every problem at once (:mod:`prism_memory.services.hook_answers`
holds the request and the answer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from prism_memory.domain.characters import forbidden_character
from prism_memory.domain.contract.bounds import TOKEN_BUDGET_MAX, TOKEN_BUDGET_MIN
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.services.hook_answers import (
    EVENTS,
    PROMPT_RULES_MAX,
    TOUCH_RULES_MAX,
    HookRequest,
)

STRIPPED: Final = frozenset({"persona", "surface", "specialization"})
BRIEFED_MAX: Final = 1_000  # ids a request may carry (the briefed state keeps at most this)
NAMESPACE_MAX: Final = 200

CONTEXT_FIELDS: Final = ("tenant", "project", "persona", "surface", "specialization", "session_id")
_INTS: Final = {
    "token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
    "top_k": (1, 100),
    "prompt_rules": (0, PROMPT_RULES_MAX),
    "subagent_token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
    "touch_rules": (0, TOUCH_RULES_MAX),
}
_FRACTIONS: Final = ("min_relevance", "touch_relevance")  # each 0 to 1
_TOP_LEVEL: Final = frozenset({"event", "text", "store", "context", "options", "briefed"})
TEXT_MAX: Final = 16_000  # what the hook sends; the answer reads TASK_MAX of it


def request_from(body: Mapping[str, Any]) -> tuple[HookRequest, dict[str, str | None], str]:
    """The request, its context strings and the store it was meant for, from a JSON body.

    Raises:
        InvalidInput: every field that is missing, of the wrong type or out of range.
    """
    errors: list[FieldError] = []
    for name in sorted(set(body) - _TOP_LEVEL):
        errors.append(FieldError(name, "unknown_field", f"'{name}' is not a field of this call"))
    event = body.get("event")
    if event not in EVENTS:
        errors.append(FieldError("event", "invalid_choice", f"'event' must be one of {EVENTS}"))
    text = body.get("text", "")
    if not isinstance(text, str) or len(text) > TEXT_MAX:
        errors.append(
            FieldError("text", "invalid_format", f"'text' must be a string of <= {TEXT_MAX}")
        )
    store = body.get("store")
    if not isinstance(store, str) or not store:
        errors.append(FieldError("store", "required", "'store' must name the store asked"))
    context = _context(body.get("context"), errors)
    options = _options(body.get("options", {}), errors)
    briefed = body.get("briefed", [])
    if (
        not isinstance(briefed, list)
        or len(briefed) > BRIEFED_MAX
        or not all(isinstance(i, str) and 0 < len(i) <= 64 for i in briefed)
    ):
        errors.append(
            FieldError("briefed", "invalid_format", f"'briefed' must be <= {BRIEFED_MAX} rule ids")
        )
    if errors:
        raise InvalidInput(errors)
    request = HookRequest(event=str(event), text=str(text), briefed=frozenset(briefed), **options)
    return request, context, str(store)


def _context(raw: Any, errors: list[FieldError]) -> dict[str, str | None]:
    if not isinstance(raw, dict):
        errors.append(FieldError("context", "wrong_type", "'context' must be an object"))
        return {}
    out: dict[str, str | None] = {}
    for name in sorted(set(raw) - set(CONTEXT_FIELDS)):
        errors.append(FieldError(f"context.{name}", "unknown_field", f"'{name}' is not a key"))
    for name in CONTEXT_FIELDS:
        value = raw.get(name)
        if value is not None and (not isinstance(value, str) or not value or len(value) > 200):
            errors.append(
                FieldError(f"context.{name}", "invalid_format", f"'{name}' must be 1 to 200 chars")
            )
            continue
        if value is not None and (wrong := forbidden_character(value)):
            errors.append(
                FieldError(f"context.{name}", "invalid_characters", f"'{name}' contains {wrong}")
            )
            continue
        # as the settings judge them for the in-process hook: the same value, the same answer
        out[name] = value.strip() if value is not None and name in STRIPPED else value
    if not out.get("session_id") and not any(e.field == "context.session_id" for e in errors):
        errors.append(FieldError("context.session_id", "required", "the session is required"))
    return out


def _options(raw: Any, errors: list[FieldError]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        errors.append(FieldError("options", "wrong_type", "'options' must be an object"))
        return {}
    out: dict[str, Any] = {}
    known = {*_INTS, *_FRACTIONS, "namespace"}
    for name in sorted(set(raw) - known):
        errors.append(FieldError(f"options.{name}", "unknown_field", f"'{name}' is not a key"))
    for name, (low, high) in _INTS.items():
        value = raw.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors.append(
                FieldError(f"options.{name}", "out_of_range", f"'{name}' must be {low} to {high}")
            )
        else:
            out[name] = value
    for name in _FRACTIONS:
        value = raw.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            ok = False
        else:
            ok = 0.0 <= float(value) <= 1.0
        if ok:
            out[name] = float(value)
        else:
            errors.append(FieldError(f"options.{name}", "out_of_range", f"'{name}' is 0 to 1"))
    namespace = raw.get("namespace")
    if namespace is not None:
        if isinstance(namespace, str) and 0 < len(namespace) <= NAMESPACE_MAX:
            out["namespace"] = namespace
        else:
            errors.append(
                FieldError("options.namespace", "invalid_format", "'namespace' is 1 to 200 chars")
            )
    return out
