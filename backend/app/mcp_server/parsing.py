"""Edge parsing for tool arguments, and pydantic's errors in Prism's one error shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.errors import FieldError, InvalidInput

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], raw: Mapping[str, Any]) -> M:
    """Parse tool arguments with ``model``, reporting every problem in Prism's shape.

    Raises:
        InvalidInput: one field error per pydantic error.
    """
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidInput([_field_error(e) for e in exc.errors()]) from None


def refuse_unknown(raw: Mapping[str, Any], model: type[BaseModel]) -> None:
    """Refuse fields ``model`` does not declare (for tools whose service takes keywords).

    Raises:
        InvalidInput: one ``unknown_field`` error per unknown field.
    """
    allowed = sorted(model.model_fields)
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise InvalidInput(
            [
                FieldError(
                    k,
                    "unknown_field",
                    f"'{k}' is not a field of this request",
                    {"allowed": allowed},
                )
                for k in unknown
            ]
        )


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


_CODES = {
    "missing": "missing",
    "extra_forbidden": "unknown_field",
    "string_too_short": "too_short",
    "string_too_long": "too_long",
    "too_long": "too_long",
    "too_short": "too_short",
    "greater_than_equal": "out_of_range",
    "less_than_equal": "out_of_range",
    "greater_than": "out_of_range",
    "less_than": "out_of_range",
    "literal_error": "invalid_choice",
    "enum": "invalid_choice",
    "uuid_parsing": "invalid_format",
    "uuid_type": "invalid_format",
    "datetime_parsing": "invalid_format",
    "datetime_from_date_parsing": "invalid_format",
    "string_pattern_mismatch": "invalid_format",
}
_DETAILS = {"ge": "min", "gt": "min", "le": "max", "lt": "max", "min_length": "min"}
_DETAILS |= {"max_length": "max", "expected": "allowed"}


def _field_error(error: Any) -> FieldError:
    field = ".".join(str(part) for part in error["loc"])
    code = _CODES.get(error["type"], "wrong_type")
    details = {
        _DETAILS[k]: val
        for k, val in (error.get("ctx") or {}).items()
        if k in _DETAILS and isinstance(val, str | int | float)
    }
    return FieldError(field, code, f"'{field}': {error['msg']}", details)
