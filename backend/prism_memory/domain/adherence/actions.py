"""A session's actions in the one client-neutral shape (DESIGN §12).

Every door takes this shape (the MCP tool, the HTTP endpoint, ``prism adherence``), and the
Claude Code transcript reader produces it, so any agent or framework can be judged::

    {
      "session": "<the agent's session id>",
      "cwd": "/abs/path/of/the/session",           # relative paths are joined to it
      "actions": [
        {"type": "command", "command": "make test && git commit -m x",
         "ran": true, "at": "2026-12-05T10:00:00Z", "tool": "Bash",
         "id": "toolu_...", "sidechain": false},
        {"type": "edit", "path": "src/app.py", "ran": true, "at": "...", "tool": "Edit"},
        {"type": "edit", "path": "/abs/other.py", "ran": false, "refusal": "user_rejected"}
      ]
    }

Actions are in the order they happened. ``ran: false`` marks an *attempt* (refused by the
user, a hook or a permission rule): listed, never a violation, trigger or satisfier.
``at``, ``tool``, ``id``, ``sidechain`` and ``refusal`` are optional; a command names no
``path`` and an edit no ``command``. Text follows the one character rule of every text
(:mod:`prism_memory.domain.characters`); a command may hold any character a shell takes but
NUL and lone surrogates. :func:`parse_session`
refuses a bad shape with every field error at once; :meth:`SessionActions.to_json` gives the
shape back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from prism_memory.domain.characters import forbidden_character
from prism_memory.domain.records import iso, parse_iso
from prism_memory.errors import FieldError, InvalidInput

ACTIONS_MAX: Final = 20_000  # actions of one session
COMMAND_MAX: Final = 100_000  # characters of one command (longer ones are refused)
PATH_MAX: Final = 4_096
SESSION_MAX: Final = 200

ActionType = Literal["command", "edit"]
# RFC 3339 as clients write it (t/z in either case, a leap second, more than 6 digits of
# fraction), normalised before Python reads it.
_RFC3339: Final = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?([Zz]|[+-]\d{2}:\d{2})?$"
)
_COMMAND_FORBIDDEN: Final = re.compile("[\x00\ud800-\udfff]")  # no store keeps these
_ACTION_FIELDS: Final = frozenset(
    {"type", "command", "path", "ran", "at", "tool", "id", "sidechain", "refusal"}
)
_SESSION_FIELDS: Final = frozenset({"session", "cwd", "actions"})


@dataclass(frozen=True)
class Action:
    """One thing the agent did (or tried): a shell command, or a file created/edited."""

    type: ActionType
    text: str  # the command as sent, or the file path as the tool named it
    ran: bool = True
    at: datetime | None = None
    tool: str | None = None
    id: str | None = None
    sidechain: bool = False
    refusal: str | None = None  # why it did not run: user_rejected, hook_blocked, denied...

    @property
    def command(self) -> str | None:
        return self.text if self.type == "command" else None

    @property
    def path(self) -> str | None:
        return self.text if self.type == "edit" else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, self.type_key: self.text, "ran": self.ran}
        if self.at is not None:
            out["at"] = iso(self.at)
        if self.tool is not None:
            out["tool"] = self.tool
        if self.id is not None:
            out["id"] = self.id
        if self.sidechain:
            out["sidechain"] = True
        if self.refusal is not None:
            out["refusal"] = self.refusal
        return out

    @property
    def type_key(self) -> str:
        return "command" if self.type == "command" else "path"


@dataclass(frozen=True)
class SessionActions:
    """What one session did, in order; ``cwd`` is the session's working folder."""

    session: str
    cwd: str | None
    actions: tuple[Action, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "cwd": self.cwd,
            "actions": [a.to_json() for a in self.actions],
        }

    @property
    def attempts(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if not a.ran)


def parse_session(raw: Any, *, field_prefix: str = "") -> SessionActions:
    """The client-neutral JSON shape as :class:`SessionActions`.

    Raises:
        InvalidInput: every problem at once (``actions[3].command``: ``missing``...).
    """
    errors: list[FieldError] = []
    p = field_prefix
    if not isinstance(raw, Mapping):
        raise InvalidInput([FieldError(p or "session", "invalid_type", "must be an object")])
    for extra in sorted(str(k)[:40] for k in raw if k not in _SESSION_FIELDS):
        errors.append(FieldError(f"{p}{extra}", "unknown_field", f"unknown field {extra!r}"))
    session = raw.get("session")
    if not isinstance(session, str) or not session or len(session) > SESSION_MAX:
        errors.append(
            FieldError(
                f"{p}session",
                "invalid_session",
                f"session must be a non-empty string of at most {SESSION_MAX} characters",
            )
        )
    elif (problem := forbidden_character(session)) is not None:
        errors.append(FieldError(f"{p}session", "invalid_characters", f"session has {problem}"))
    cwd = raw.get("cwd")
    if cwd is not None and (
        not isinstance(cwd, str) or not cwd.startswith("/") or len(cwd) > PATH_MAX
    ):
        errors.append(FieldError(f"{p}cwd", "invalid_cwd", "cwd must be an absolute path"))
    elif cwd is not None and (problem := forbidden_character(cwd)) is not None:
        errors.append(FieldError(f"{p}cwd", "invalid_characters", f"cwd has {problem}"))
    items = raw.get("actions")
    actions: list[Action] = []
    if not isinstance(items, list):
        errors.append(FieldError(f"{p}actions", "invalid_type", "actions must be a list"))
    elif len(items) > ACTIONS_MAX:
        errors.append(
            FieldError(
                f"{p}actions",
                "too_many",
                f"at most {ACTIONS_MAX} actions ({len(items)} given)",
                {"max": ACTIONS_MAX},
            )
        )
    else:
        for i, item in enumerate(items):
            action = _action(item, f"{p}actions[{i}]", errors)
            if action is not None:
                actions.append(action)
            if len(errors) > 50:
                break
    if errors:
        raise InvalidInput(errors)
    assert isinstance(session, str)
    return SessionActions(session=session, cwd=cwd, actions=tuple(actions))


def _action(item: Any, loc: str, errors: list[FieldError]) -> Action | None:
    if not isinstance(item, Mapping):
        errors.append(FieldError(loc, "invalid_type", f"{loc} must be an object"))
        return None
    before = len(errors)
    kind = item.get("type")
    # A command names no path and an edit no command: the other key is not a field of it.
    other = {"command": "path", "edit": "command"}.get(kind) if isinstance(kind, str) else None
    for extra in sorted(str(k)[:40] for k in item if k not in _ACTION_FIELDS or k == other):
        errors.append(FieldError(f"{loc}.{extra}", "unknown_field", f"unknown field {extra!r}"))
    if kind not in ("command", "edit"):
        errors.append(
            FieldError(f"{loc}.type", "invalid_choice", "type must be 'command' or 'edit'")
        )
        return None
    key, bound = ("command", COMMAND_MAX) if kind == "command" else ("path", PATH_MAX)
    text = item.get(key)
    if not isinstance(text, str) or not text:
        errors.append(FieldError(f"{loc}.{key}", "missing", f"{loc}.{key} must be a string"))
    elif len(text) > bound:
        errors.append(
            FieldError(f"{loc}.{key}", "too_long", f"at most {bound} characters", {"max": bound})
        )
    elif (problem := _text_problem(kind, text)) is not None:
        errors.append(FieldError(f"{loc}.{key}", "invalid_characters", f"{key} has {problem}"))
    ran = item.get("ran", True)
    if not isinstance(ran, bool):
        errors.append(FieldError(f"{loc}.ran", "invalid_type", "ran must be true or false"))
    sidechain = item.get("sidechain", False)
    if not isinstance(sidechain, bool):
        errors.append(FieldError(f"{loc}.sidechain", "invalid_type", "must be true or false"))
    at: datetime | None = None
    if item.get("at") is not None:
        at = _instant(item["at"])
        if at is None:
            errors.append(FieldError(f"{loc}.at", "invalid_time", "at must be ISO 8601"))
    optional: dict[str, str | None] = {}
    for name in ("tool", "id", "refusal"):
        value = item.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > 200):
            errors.append(FieldError(f"{loc}.{name}", "invalid_type", "a string (≤ 200)"))
        elif isinstance(value, str) and (problem := forbidden_character(value)) is not None:
            errors.append(FieldError(f"{loc}.{name}", "invalid_characters", f"has {problem}"))
        optional[name] = value if isinstance(value, str) else None
    if len(errors) > before:
        return None
    assert isinstance(text, str) and isinstance(ran, bool)
    return Action(
        type=kind,
        text=text,
        ran=ran,
        at=at,
        tool=optional["tool"],
        id=optional["id"],
        sidechain=bool(sidechain),
        refusal=optional["refusal"],
    )


def _text_problem(kind: str, text: str) -> str | None:
    """A command may hold any character a shell takes but NUL and lone surrogates (no store
    keeps them); a path follows the one rule of every text."""
    if kind == "command":
        found = _COMMAND_FORBIDDEN.search(text)
        return None if found is None else f"a character no store keeps (U+{ord(found.group()):04X})"
    return forbidden_character(text)


def _instant(value: Any) -> datetime | None:
    """``value`` as an aware UTC time, or None when it is not an RFC 3339 / ISO 8601 time."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    found = _RFC3339.match(text)
    if found is not None:
        date, hh, mm, ss, fraction, offset = found.groups()
        second = min(int(ss), 59)  # a leap second is the second before it
        tail = f".{fraction[:6]}" if fraction else ""
        zone = "+00:00" if offset is None or offset in "Zz" else offset
        text = f"{date}T{hh}:{mm}:{second:02d}{tail}{zone}"
    try:
        return parse_iso(text)
    except (ValueError, OverflowError):  # a year-1 or year-9999 time off UTC overflows
        return None
