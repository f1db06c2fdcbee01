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
    ACTIONS_MAX,
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
            return parse_session(value)
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

    def schema(self) -> dict[str, Any]:
        text = {"type": "string", "maxLength": 200}
        action = {
            "type": "object",
            "additionalProperties": False,
            "required": ["type"],
            "properties": {
                "type": {"type": "string", "enum": ["command", "edit"]},
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": COMMAND_MAX,
                    "description": "type 'command': the shell command as sent",
                },
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": PATH_MAX,
                    "description": "type 'edit': the file created or edited",
                },
                "ran": {"type": "boolean", "description": "false: refused (an attempt)"},
                "at": {"type": "string", "format": "date-time"},
                "tool": text,
                "id": text,
                "sidechain": {"type": "boolean"},
                "refusal": text,
            },
        }
        return {
            "type": "object",
            "additionalProperties": False,
            "required": ["session", "actions"],
            "description": SESSION_DOC,
            "properties": {
                "session": {"type": "string", "minLength": 1, "maxLength": SESSION_MAX},
                "cwd": {"type": ["string", "null"], "maxLength": PATH_MAX},
                "actions": {"type": "array", "maxItems": ACTIONS_MAX, "items": action},
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
