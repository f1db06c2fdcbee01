"""Edge parsing for tool arguments, with pydantic's errors in Prism's one error shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prism_memory.errors import field_errors

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], raw: Mapping[str, Any]) -> M:
    """Parse tool arguments with ``model``, reporting every problem in Prism's shape.

    Raises:
        InvalidInput: every field error, through the one mapper (:func:`field_errors`).
    """
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise field_errors(exc.errors()) from None


def decode_json_strings(raw: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Objects and arrays some clients send as JSON text, decoded (as the SDK itself does).

    Only top-level arguments whose published type is ``object`` or ``array`` are touched;
    text that does not decode to that type is left for the validator to refuse.
    """
    properties = schema.get("properties", {})
    out = dict(raw)
    for key, value in raw.items():
        kind = properties.get(key, {}).get("type")
        if not isinstance(value, str) or kind not in ("object", "array"):
            continue
        try:
            decoded = json.loads(value)
        except ValueError:
            continue
        if isinstance(decoded, dict if kind == "object" else list):
            out[key] = decoded
    return out
