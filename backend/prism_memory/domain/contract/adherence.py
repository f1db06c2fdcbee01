"""Judging a session's actions (DESIGN §12): the request the MCP tool ``adherence_judge`` and
``POST /v1/adherence/judge`` take.

The session is the client-neutral shape of :mod:`prism_memory.domain.adherence.actions`;
:func:`~prism_memory.domain.adherence.actions.parse_session` judges it, and each of its
problems becomes a field error located inside ``session`` (``session.actions.3.command``),
all at once with the request's other errors.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails

from prism_memory.domain.adherence.actions import (
    COMMAND_MAX,
    PATH_MAX,
    SESSION_MAX,
    SessionActions,
    parse_session,
)
from prism_memory.domain.contract.base import Operation
from prism_memory.domain.contract.checks import Check, Flag, Text
from prism_memory.errors import InvalidInput, contract_error

CLIENT_MAX = 100
# Actions one request to a door may carry: what surely fits the HTTP body limit (256 KB), so
# a request over it is a field error, not a refused body. The CLI reads up to ACTIONS_MAX.
DOOR_ACTIONS_MAX = 1_000
_F = r"\x00-\x08\x0b-\x1f\x7f-\x9f"  # the characters no text may hold (domain.characters)
_CLEAN = rf"^[^{_F}]*$"
_INDEX = re.compile(r"^(\w+)\[(\d+)\]$")

SESSION_DOC = (
    "What one session did, in order: {session, cwd, actions: [{type: 'command', command} | "
    "{type: 'edit', path}, with optional ran (false: refused, an attempt), at (ISO time), "
    "tool, id, sidechain, refusal]}. Relative paths are joined to cwd."
)


class SessionCheck(Check):
    """A session's actions in the client-neutral shape (required)."""

    nullable = False
    missing_message = "'{field}' is required: {session, cwd, actions}"

    def check(self, value: Any, info: ValidationInfo | None = None) -> SessionActions:
        if value is None:
            raise self.missing()
        try:
            found = parse_session(value)
        except InvalidInput as exc:
            errors = [
                InitErrorDetails(
                    type=contract_error(e.code, e.message, **e.details),
                    loc=_location(e.field),
                    input=None,
                )
                for e in exc.errors
            ]
            raise ValidationError.from_exception_data("session", errors) from None
        if len(found.actions) > DOOR_ACTIONS_MAX:
            error = contract_error(
                "too_many",
                f"at most {DOOR_ACTIONS_MAX} actions in one request ({len(found.actions)} given)",
                max=DOOR_ACTIONS_MAX,
            )
            raise ValidationError.from_exception_data(
                "session", [InitErrorDetails(type=error, loc=("actions",), input=None)]
            )
        return found

    def schema(self) -> dict[str, Any]:
        # Exactly what parse_session takes: a command names no path, an edit no command; the
        # one character rule of every text (a command: anything a store keeps).
        text = {"type": ["string", "null"], "maxLength": 200, "pattern": _CLEAN}
        common: dict[str, Any] = {
            "ran": {"type": "boolean", "description": "false: refused (an attempt)"},
            "at": {"type": ["string", "null"], "format": "date-time"},
            "tool": text,
            "id": text,
            "sidechain": {"type": "boolean"},
            "refusal": text,
        }

        def action(kind: str, key: str, bound: int, pattern: str, what: str) -> dict[str, Any]:
            return {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", key],
                "properties": {
                    "type": {"type": "string", "const": kind},
                    key: {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": bound,
                        "pattern": pattern,
                        "description": what,
                    },
                    **common,
                },
            }

        return {
            "type": "object",
            "additionalProperties": False,
            "required": ["session", "actions"],
            "description": SESSION_DOC,
            "properties": {
                "session": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": SESSION_MAX,
                    "pattern": _CLEAN,
                },
                "cwd": {
                    "type": ["string", "null"],
                    "maxLength": PATH_MAX,
                    "pattern": f"^/{_CLEAN[1:]}",
                },
                "actions": {
                    "type": "array",
                    "maxItems": DOOR_ACTIONS_MAX,
                    "items": {
                        "oneOf": [
                            action(
                                "command",
                                "command",
                                COMMAND_MAX,
                                "^[^\\x00]*$",
                                "the shell command as sent",
                            ),
                            action("edit", "path", PATH_MAX, _CLEAN, "the file created or edited"),
                        ]
                    },
                },
            },
        }


def _location(field: str) -> tuple[str | int, ...]:
    """``actions[3].command`` -> ``("actions", 3, "command")`` (the contract's dotted form)."""
    out: list[str | int] = []
    for part in field.split("."):
        found = _INDEX.match(part)
        if found:
            out += [found.group(1), int(found.group(2))]
        elif part:
            out.append(part)
    return tuple(out)


class JudgeCreate(Operation):
    """Judge a session's actions against the rules with checks that apply to the caller's
    context; record the violated/followed verdicts unless ``dry_run``."""

    session: Annotated[SessionActions, SessionCheck(), Field(description=SESSION_DOC)]
    client: Annotated[
        str,
        Text(CLIENT_MAX, line=True, default="agent"),
        Field(
            description="The agent's client (claude-code, my-agent...): with the session "
            "id it names the Prism session whose served receipts count."
        ),
    ] = "agent"
    dry_run: Annotated[bool, Flag(), Field(description="Judge and answer; record nothing.")] = False
