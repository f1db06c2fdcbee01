"""A memorule's ``checks`` as a field of the contract (DESIGN §12): one
:class:`~prism_memory.domain.contract.checks.Check` that validates the list with
:func:`~prism_memory.domain.adherence.checks.parse_checks` and states its JSON Schema."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails

from prism_memory.domain.adherence.checks import CHECKS_MAX, PATTERN_MAX, parse_checks
from prism_memory.domain.contract.checks import Check
from prism_memory.errors import InvalidInput, contract_error


class CheckList(Check):
    """A memorule's ``checks`` (DESIGN §12): :func:`~prism_memory.domain.adherence.checks.
    parse_checks` judges them, and each of its problems becomes a field error located inside
    the list (``checks.2.forbid_command``), all at once. Null or absent: no checks."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> tuple[Any, ...]:
        try:
            return parse_checks(value)
        except InvalidInput as exc:
            errors = [
                InitErrorDetails(
                    type=contract_error(e.code, e.message, **e.details),
                    loc=_inside("checks", e.field),
                    input=value,
                )
                for e in exc.errors
            ]
            raise ValidationError.from_exception_data("checks", errors) from None

    def schema(self) -> dict[str, Any]:
        # What parse_checks refuses that a schema can say: blank, control characters, a
        # backslash in a glob, a regex that does not compile. (Whether a glob's brackets
        # close or a regex could run away, only the server judges.)
        allowed = r"[^\x00-\x1f\x7f-\x9f]"
        regex = {
            "type": "string",
            "format": "regex",
            "minLength": 1,
            "maxLength": PATTERN_MAX,
            "pattern": rf"^{allowed}*[^\s\x00-\x1f\x7f-\x9f]{allowed}*$",
        }
        in_glob = r"[^\x00-\x1f\x7f-\x9f\\]"
        glob = {
            "type": "string",
            "minLength": 1,
            "maxLength": PATTERN_MAX,
            "pattern": rf"^{in_glob}*[^\s\x00-\x1f\x7f-\x9f\\]{in_glob}*$",
        }

        def pair(first: str, second: str, what: dict[str, Any]) -> dict[str, Any]:
            return {
                "type": "object",
                "properties": {first: what, second: what},
                "required": [first, second],
                "additionalProperties": False,
            }

        return {
            "type": "array",
            "maxItems": CHECKS_MAX,
            "items": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": False,
                "properties": {
                    "forbid_command": {
                        **regex,
                        "description": "A Python regex; a shell command it matches "
                        "(re.search on the whole command) is a violation.",
                    },
                    "forbid_edit": {
                        **glob,
                        "description": "A glob; a file created or edited whose path (relative "
                        "to the session's folder) matches is a violation. '*' stays in a "
                        "folder, '**' crosses folders; no '/' matches the name anywhere.",
                    },
                    "require_before": {
                        **pair("command", "before", regex),
                        "description": "Every command matching 'before' must follow a command "
                        "matching 'command' run since the last edit.",
                    },
                    "require_edit_with": {
                        **pair("edit", "also", glob),
                        "description": "A session that edits a file matching 'edit' must also "
                        "edit one matching 'also'.",
                    },
                },
            },
        }


def _inside(name: str, field: str) -> tuple[str | int, ...]:
    """The location of ``field`` (``checks.2.forbid_command``) below the field ``name``."""
    rest = field.removeprefix(name).lstrip(".")
    return tuple(int(p) if p.isdigit() else p for p in rest.split(".")) if rest else ()
