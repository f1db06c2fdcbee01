"""Claude Code transcripts -> what the agent did: its commands and file edits (DESIGN §12).

Read from a session file (JSON Lines, the format :mod:`.transcript` describes) and from its
subagents' files (``<session>/subagents/agent-*.jsonl``, which newer Claude Code versions
write beside the session file; older ones put ``isSidechain`` entries in the session file
itself). Both are actions of the session; subagent actions are marked ``sidechain`` and merged
in time order.

Actions are ``tool_use`` blocks of assistant entries:

- ``Bash``: ``input.command``, the whole string as sent (a command);
- ``Edit``, ``MultiEdit``, ``Write``: ``input.file_path``; ``NotebookEdit``:
  ``input.notebook_path`` (an edit). Other tools are not actions.

An action did not run (an *attempt*, ``ran: false``) when its ``tool_result`` is a refusal in
Claude Code's own words, or its entry carries a denial marker:

- ``user_rejected``: "The user doesn't want to proceed with this tool use…", "The user doesn't
  want to take this action right now…", "User rejected tool use" (also the entry's
  ``toolUseResult``), or ``toolDenialKind: "user-rejected"``;
- ``hook_blocked``: "PreToolUse:<Tool> hook error: …" (a hook that exited 2 or denied), "…
  hook blocking error…", "… hook stopped continuation…", or a ``hook_blocking_error``
  attachment of a ``PreToolUse`` hook for that tool use;
- ``denied``: "Permission to use <Tool> … has been denied…", "Claude requested permissions to
  … but you haven't granted it yet", or any other ``toolDenialKind`` (``permission-rule``,
  ``automode-blocked``…).

The texts count only on a result marked as an error (``is_error`` not false), so a command
that merely prints them ran. Every other error means the tool ran: a failing test run, a
remote's "hook declined" on push, ``rm``'s own "Permission denied". A tool use with no result
in the file (the session ended first) is taken as run.

The session is the first ``sessionId`` (else the file's name); its ``cwd`` the first ``cwd``.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from prism_memory.domain.adherence.actions import (
    ACTIONS_MAX,
    COMMAND_MAX,
    PATH_MAX,
    SESSION_MAX,
    Action,
    SessionActions,
)
from prism_memory.domain.records import parse_iso
from prism_memory.errors import FieldError, InvalidInput

MAX_LINE_BYTES: Final = 8_000_000
SUBAGENT_FILES_MAX: Final = 500
_EDIT_TOOLS: Final = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
_CLASSIFY_CHARS: Final = 4_000  # the start of a result is enough to recognise a refusal
_EARLIEST: Final = datetime.min.replace(tzinfo=UTC)

_USER_REJECTED: Final = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
    "User rejected tool use",
)
_HOOK_BLOCKED: Final = re.compile(
    r"PreToolUse:\S+ hook (?:error|blocking error|stopped continuation)"
)
_DENIED: Final = re.compile(
    r"Permission to use \S+.*?has been denied"
    r"|Claude requested permissions? to .*?but you haven't granted it yet",
    re.DOTALL,
)


@dataclass(frozen=True)
class _Use:
    """A tool_use that is an action, before its result is known."""

    id: str | None
    type: str
    text: str
    tool: str
    at: datetime | None
    sidechain: bool


@dataclass
class _File:
    """What one transcript file holds: its actions in order, their results, its identity."""

    uses: list[_Use]
    refusals: dict[str, str]  # tool_use id -> why it did not run
    session: str | None
    cwd: str | None
    entries: int


def read_session(path: Path, *, subagents: bool = True) -> SessionActions:
    """The actions of the session in ``path`` and, unless ``subagents`` is false, of its
    subagents' files.

    Raises:
        InvalidInput: the file cannot be read, or is not a Claude Code transcript.
    """
    main = _read_file(path, sidechain=False)
    if main.entries == 0:
        message = f"{path.name} has no Claude Code transcript entries"
        raise InvalidInput([FieldError("transcript", "not_a_transcript", message)])
    others = [_read_file(p, sidechain=True) for p in _subagent_files(path)] if subagents else []
    return _session(main, others, path.stem)


def read_lines(
    lines: Iterable[bytes | str],
    name: str = "transcript",
    *,
    subagents: Iterable[Iterable[bytes | str]] = (),
) -> SessionActions:
    """The actions in JSON Lines ``lines`` (and in each subagent file's lines).

    Raises:
        InvalidInput: no line is a Claude Code transcript entry.
    """
    main = _scan(lines, sidechain=False)
    if main.entries == 0:
        message = f"{name} has no Claude Code transcript entries"
        raise InvalidInput([FieldError("transcript", "not_a_transcript", message)])
    return _session(main, [_scan(s, sidechain=True) for s in subagents], name)


def _subagent_files(path: Path) -> list[Path]:
    folder = path.with_suffix("") / "subagents"
    try:
        found = sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())
    except OSError:
        return []
    return found[:SUBAGENT_FILES_MAX]


def _read_file(path: Path, *, sidechain: bool) -> _File:
    try:
        with path.open("rb") as fh:
            return _scan(fh, sidechain=sidechain)
    except OSError as exc:
        message = f"cannot read transcript {path}: {exc.strerror}"
        raise InvalidInput([FieldError("transcript", "unreadable", message)]) from exc


def _session(main: _File, others: list[_File], fallback: str) -> SessionActions:
    session = (main.session or fallback or "session")[:SESSION_MAX]
    cwd = main.cwd or next((f.cwd for f in others if f.cwd), None)
    refusals = dict(main.refusals)
    for other in others:
        refusals.update(other.refusals)
    merged = heapq.merge(
        *(_timed(f.uses, rank) for rank, f in enumerate([main, *others])), key=lambda kv: kv[0]
    )
    actions: list[Action] = []
    for _key, use in merged:
        refusal = refusals.get(use.id) if use.id is not None else None
        actions.append(
            Action(
                type="command" if use.type == "command" else "edit",
                text=use.text,
                ran=refusal is None,
                at=use.at,
                tool=use.tool,
                id=use.id,
                sidechain=use.sidechain,
                refusal=refusal,
            )
        )
        if len(actions) >= ACTIONS_MAX:
            break
    return SessionActions(session=session, cwd=cwd, actions=tuple(actions))


def _timed(uses: list[_Use], rank: int) -> Iterator[tuple[tuple[datetime, int], _Use]]:
    """Each use with its merge key: its time (or the last time before it in its file)."""
    last = _EARLIEST
    for use in uses:
        last = use.at or last
        yield (last, rank), use


def _scan(lines: Iterable[bytes | str], *, sidechain: bool) -> _File:
    found = _File(uses=[], refusals={}, session=None, cwd=None, entries=0)
    seen: set[str] = set()
    for line in lines:
        if len(line) > MAX_LINE_BYTES:
            continue
        raw = _json_object(line)
        if raw is None or not isinstance(raw.get("type"), str):
            continue
        if "uuid" in raw or "sessionId" in raw or "message" in raw:
            found.entries += 1
        if found.session is None and isinstance(raw.get("sessionId"), str) and raw["sessionId"]:
            found.session = raw["sessionId"]
        cwd = raw.get("cwd")
        if found.cwd is None and isinstance(cwd, str) and cwd.startswith("/"):
            found.cwd = cwd[:PATH_MAX]
        kind = raw["type"]
        if kind == "assistant":
            in_sidechain = sidechain or raw.get("isSidechain") is True
            for use in _uses(raw, in_sidechain):
                if use.id is not None:
                    if use.id in seen:
                        continue  # the same tool_use logged again (a resumed session)
                    seen.add(use.id)
                found.uses.append(use)
        elif kind == "user":
            for use_id, refusal in _refused(raw):
                found.refusals.setdefault(use_id, refusal)
        elif kind == "attachment":
            blocked = _blocked_by_attachment(raw)
            if blocked is not None:
                found.refusals.setdefault(blocked, "hook_blocked")
    return found


def _json_object(line: bytes | str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _content(raw: dict[str, Any]) -> list[Any]:
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _uses(raw: dict[str, Any], sidechain: bool) -> Iterator[_Use]:
    at = _time(raw.get("timestamp"))
    for block in _content(raw):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        name, tool_input = block.get("name"), block.get("input")
        if not isinstance(name, str) or not isinstance(tool_input, dict):
            continue
        use_id = block.get("id") if isinstance(block.get("id"), str) else None
        if use_id is not None:
            use_id = use_id[:200]
        if name == "Bash":
            command = tool_input.get("command")
            if isinstance(command, str) and command.strip():
                yield _Use(use_id, "command", command[:COMMAND_MAX], name, at, sidechain)
        elif name in _EDIT_TOOLS:
            path = tool_input.get(_EDIT_TOOLS[name])
            if isinstance(path, str) and path.strip():
                yield _Use(use_id, "edit", path[:PATH_MAX], name, at, sidechain)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except (ValueError, OverflowError):
        return None


def _refused(raw: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(tool_use id, why it did not run) for each refused tool_result of a user entry."""
    marker = raw.get("toolDenialKind")
    entry_result = raw.get("toolUseResult")
    for block in _content(raw):
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str):
            continue
        refusal = None
        if block.get("is_error") is not False:
            refusal = _refusal_text(_text(block.get("content")))
        if refusal is None and isinstance(entry_result, str):
            refusal = _refusal_text(entry_result)
        if refusal is None and isinstance(marker, str) and marker:
            refusal = "user_rejected" if marker == "user-rejected" else "denied"
        if refusal is not None:
            yield use_id[:200], refusal


def _text(content: object) -> str:
    if isinstance(content, str):
        return content[:_CLASSIFY_CHARS]
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts)[:_CLASSIFY_CHARS]
    return ""


def _refusal_text(text: str) -> str | None:
    """Which refusal ``text`` is in Claude Code's words, or None (the tool ran)."""
    body = text[:_CLASSIFY_CHARS].strip()
    for prefix in ("Error: ", "<tool_use_error>"):
        if body.startswith(prefix):
            body = body[len(prefix) :].lstrip()
    if body.startswith(_USER_REJECTED):
        return "user_rejected"
    if _HOOK_BLOCKED.match(body):
        return "hook_blocked"
    if _DENIED.match(body):
        return "denied"
    return None


def _blocked_by_attachment(raw: dict[str, Any]) -> str | None:
    attachment = raw.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "hook_blocking_error":
        return None
    if attachment.get("hookEvent") != "PreToolUse":
        return None
    use_id = attachment.get("toolUseID")
    return use_id[:200] if isinstance(use_id, str) and use_id else None
