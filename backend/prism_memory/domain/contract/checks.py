"""The contract's field types: each one validates a value AND states its JSON Schema.

A field is declared ``Annotated[T, Text(...)]`` (or ``Choice``, ``WholeNumber``...): pydantic
runs the check, and publishes the schema, from that one object. A check raises the
contract's own errors (:func:`prism_memory.errors.contract_error`): today's codes, messages and
details, whatever door the value came through. ``None`` means "not given" unless a check
says otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from enum import Enum
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError, ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from prism_memory.domain.characters import (
    EDGE_SPACE_CLASS,
    forbidden_character,
    strip_edges,
    text_pattern,
)
from prism_memory.domain.contract.bounds import FILTER_LIST_MAX, NAMESPACE_MAX, NAMESPACE_PATTERN
from prism_memory.errors import contract_error

_NULL: dict[str, Any] = {"type": "null"}


class Check:
    """A field's validation and schema. Subclasses define :meth:`check` and :meth:`schema`."""

    nullable = True  # whether the schema admits null ("not given")
    missing_message = "'{field}' is required"

    def check(self, value: Any, info: ValidationInfo | None) -> Any:
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def missing(self) -> PydanticCustomError:
        """The error for a required field that is absent or null."""
        return contract_error("missing", self.missing_message)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(self.check)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        own = self.schema()
        if not self.nullable:
            return own
        return {"anyOf": [*own["anyOf"], _NULL]} if "anyOf" in own else {"anyOf": [own, _NULL]}


class Text(Check):
    """Free text, judged without its surrounding whitespace (which is stripped).

    Args:
        max_len: the longest text accepted.
        min_len: the shortest (0: empty is fine; below it: ``empty`` or ``too_short``).
        line: refuse line breaks.
        required: refuse absent and null (``missing``).
        missing: the message for a missing value.
        default: what null means (when not required).
    """

    def __init__(
        self,
        max_len: int,
        min_len: int = 1,
        *,
        line: bool = False,
        required: bool = False,
        missing: str | None = None,
        default: str | None = None,
    ) -> None:
        self.max_len, self.min_len, self.line, self.required = max_len, min_len, line, required
        self.default = default
        self.nullable = not required
        if missing is not None:
            self.missing_message = missing

    def check(self, value: Any, info: ValidationInfo | None = None) -> str | None:
        if value is None:
            if self.required:
                raise self.missing()
            return self.default
        if not isinstance(value, str):
            raise contract_error("wrong_type", "'{field}' must be a string", expected="string")
        return self.judge(strip_edges(value))

    def judge(self, value: str) -> str:
        """The rules for text already stripped."""
        if (problem := forbidden_character(value)) is not None:
            raise contract_error("invalid_characters", "'{field}' contains " + problem)
        if self.line and ("\n" in value or "\r" in value):
            raise contract_error("invalid_characters", "'{field}' must be a single line")
        if len(value) < self.min_len:
            raise contract_error(
                "empty" if not value else "too_short",
                f"'{{field}}' must be at least {self.min_len} characters",
                min=self.min_len,
                actual=len(value),
            )
        if len(value) > self.max_len:
            raise contract_error(
                "too_long",
                f"'{{field}}' must be at most {self.max_len} characters",
                max=self.max_len,
                actual=len(value),
            )
        return value

    def schema(self) -> dict[str, Any]:
        # The bounds count the text without its whitespace, so they live in the pattern
        # (``maxLength`` would count the whitespace too; ``minLength`` is a true lower bound).
        pattern = text_pattern(min_len=self.min_len, max_len=self.max_len, single_line=self.line)
        out: dict[str, Any] = {"type": "string", "pattern": pattern}
        if self.min_len > 0:
            out["minLength"] = self.min_len
        return out


class Namespace(Text):
    """A namespace: one line of letters, digits and ``. _ : / -``, starting with one of the
    first two."""

    def __init__(self, *, blank_ok: bool = False) -> None:
        super().__init__(NAMESPACE_MAX, line=True)
        self.blank_ok = blank_ok

    def judge(self, value: str) -> str:
        value = super().judge(value)
        if not NAMESPACE_PATTERN.match(value):
            raise contract_error(
                "invalid_format",
                "'{field}' takes letters, digits and . _ : / - and starts with one of the "
                "first two",
            )
        return value

    def schema(self) -> dict[str, Any]:
        core = rf"[A-Za-z0-9][A-Za-z0-9._:/-]{{0,{NAMESPACE_MAX - 1}}}"
        if self.blank_ok:  # a listing's blank namespace is no filter
            core = f"(?:{core})?"
        # The spaces the validator trims, spelled out (ECMA's \s also takes U+000C, which
        # the validator refuses).
        space = rf"[{EDGE_SPACE_CLASS}]*"
        return {"type": "string", "pattern": rf"^{space}{core}{space}$", "examples": ["default"]}


def _values(choices: type[Enum] | Sequence[str]) -> list[str]:
    if isinstance(choices, type):
        return [str(e.value) for e in choices]
    return list(choices)


class Choice(Check):
    """One of an enum's values (or of a list of strings); null means ``default``.

    Args:
        choices: an Enum (the value becomes its member) or the allowed strings.
        default: what null or absence means.
        required: refuse null (``missing``, naming the allowed values).
    """

    def __init__(
        self,
        choices: type[Enum] | Sequence[str],
        default: Any = None,
        *,
        required: bool = False,
    ) -> None:
        self.choices, self.default, self.required = choices, default, required
        self.allowed = _values(choices)
        self.nullable = not required

    def missing(self) -> PydanticCustomError:
        return contract_error("missing", self.missing_message, allowed=self.allowed)

    def check(self, value: Any, info: ValidationInfo | None = None) -> Any:
        if value is None:
            if self.required:
                raise self.missing()
            return self.default
        return self.one(value)

    def one(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in self.allowed:
            raise contract_error(
                "invalid_choice",
                f"'{{field}}' must be one of {', '.join(self.allowed)}",
                allowed=self.allowed,
            )
        return self.choices(value) if isinstance(self.choices, type) else value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": self.allowed}


class Choices(Choice):
    """A filter: one value or a list of at most ``max_items``, each a choice (a value given
    twice counts once). ``skip_blank``: empty strings are no value (a form's, a query
    string's). ``indexed``: a list's bad element is named by its place (``scope.0``)."""

    def __init__(
        self,
        choices: type[Enum],
        *,
        skip_blank: bool = False,
        indexed: bool = False,
        max_items: int = FILTER_LIST_MAX,
    ) -> None:
        super().__init__(choices, ())
        self.skip_blank, self.indexed, self.max_items = skip_blank, indexed, max_items

    def check(self, value: Any, info: ValidationInfo | None = None) -> tuple[Any, ...]:
        if value is None:
            return ()
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or len(items) > self.max_items:
            raise contract_error(
                "wrong_type",
                f"'{{field}}' must be a value or a list of at most {self.max_items} values",
                allowed=self.allowed,
            )
        at_place = self.indexed and not isinstance(value, str)
        errors, out = [], []
        for place, item in enumerate(items):
            if self.skip_blank and item == "":
                continue
            try:
                out.append(self.one(item))
            except PydanticCustomError as exc:
                loc: tuple[int, ...] = (place,) if at_place else ()
                errors.append(InitErrorDetails(type=exc, loc=loc, input=value))
        if errors:
            raise ValidationError.from_exception_data("choices", errors)
        return tuple(dict.fromkeys(out))

    def schema(self) -> dict[str, Any]:
        one = super().schema()
        return {"anyOf": [one, {"type": "array", "items": one, "maxItems": self.max_items}]}


def whole_number(value: Any) -> Any:
    """A JSON number with no fraction as an ``int`` (``13.0`` is 13, as JSON Schema's
    ``integer`` says); anything else unchanged, for the caller to judge."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class WholeNumber(Check):
    """An integer in ``[low, high]``; ``default`` for null (``None``: null is refused)."""

    def __init__(self, low: int, high: int, default: int | None = None) -> None:
        self.low, self.high, self.default = low, high, default
        self.nullable = default is not None

    def check(self, value: Any, info: ValidationInfo | None = None) -> int:
        if value is None and self.default is not None:
            return self.default
        value = whole_number(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise contract_error(
                "wrong_type", "'{field}' must be a whole number", expected="integer"
            )
        if not self.low <= value <= self.high:
            raise contract_error(
                "out_of_range",
                f"'{{field}}' must be between {self.low} and {self.high}",
                min=self.low,
                max=self.high,
                actual=value,
            )
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.low, "maximum": self.high}


class Flag(Check):
    """``true`` or ``false``; null is ``default`` (not given), as at every door."""

    def __init__(self, default: bool = False) -> None:
        self.default = default

    def check(self, value: Any, info: ValidationInfo | None = None) -> bool:
        if value is None:
            return self.default
        if not isinstance(value, bool):
            raise contract_error(
                "wrong_type", "'{field}' must be true or false", expected="boolean"
            )
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


class MemoryId(Check):
    """A memory id (a UUID). ``required``: refuse null. ``what``: the id's name in errors."""

    def __init__(self, *, required: bool = False, what: str = "a memory id") -> None:
        self.required, self.what = required, what
        self.nullable = not required

    def check(self, value: Any, info: ValidationInfo | None = None) -> uuid.UUID | None:
        if value is None:
            if self.required:
                raise self.missing()
            return None
        if isinstance(value, uuid.UUID):
            return value
        try:
            return uuid.UUID(str(value))
        except ValueError:
            raise contract_error(
                "invalid_format", f"'{{field}}' must be {self.what} (a UUID)"
            ) from None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "uuid"}
