"""Codex CLI session files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) -> the messages
the operator typed.

The format, as Codex writes it (``codex-rs/protocol/src/protocol.rs`` in openai/codex: a
``RolloutLine`` is a ``timestamp`` and a ``RolloutItem`` tagged ``type`` with its
``payload``):

- ``session_meta`` (the first line): ``id`` (the session), ``cwd``, ``source`` (``cli``,
  ``vscode``, ``exec``, or ``{"subagent": ...}`` for a session another agent started);
- ``turn_context``: the turn's ``cwd``, model, approval and sandbox policy;
- ``response_item``: what the model saw and said — ``message`` (``role`` ``user``/
  ``assistant``/``developer``, ``content`` blocks ``input_text``/``output_text``), tool calls
  (``function_call``, ``local_shell_call``, ``custom_tool_call``, ``web_search_call``) and their
  outputs, ``reasoning``;
- ``event_msg``: what happened in the session — ``user_message`` (``message``: what the
  operator typed), ``agent_message``, ``token_count``...;
- ``compacted``: a summary that replaced the history.

Kept: ``user_message`` events, whose text is exactly what the operator typed. Codex also writes
the same text as a ``user`` ``response_item``, next to context it injects as ``user`` messages
(``<environment_context>``, ``<user_instructions>``, AGENTS.md text); those are never read,
except in a file that has no ``user_message`` event at all (written before Codex kept them),
where ``user`` messages are read without the injected ones. Never kept: assistant and developer
messages, tool calls and their output, reasoning, compaction summaries, and every message of a
sub-agent's session (``source`` ``subagent``: the operator did not type them).

A message follows an action when a tool call was recorded since the previous operator message.
Lines carry no id: a message is named by its line number, stable because Codex only appends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prism_memory.capture.transcript import (
    ID_MAX,
    MAX_LINE_BYTES,
    OperatorMessage,
    Transcript,
    json_object,
    read,
)
from prism_memory.errors import FieldError, InvalidInput

AGENT = "codex"
# Context Codex writes as ``user`` messages on the operator's behalf.
_INJECTED = ("<environment_context>", "<user_instructions>", "<turn_aborted>", "# AGENTS.md")


@dataclass
class _Session:
    session_id: str | None = None
    cwd: str | None = None
    subagent: bool = False
    # a tool call since the last operator message, counted for each way of reading one
    acted_since_event: bool = False
    acted_since_item: bool = False


def read_codex(path: Path) -> Transcript:
    """A Codex session file: its operator's messages in file order, and what was skipped.

    Raises:
        InvalidInput: the file cannot be read, is not a regular file, has no Codex rollout
            line, or names no session.
    """
    return read(path, read_codex_lines)


def read_codex_lines(
    lines: Iterable[bytes | str], name: str = "transcript", skipped: Counter[str] | None = None
) -> Transcript:
    """The operator's messages in a Codex rollout's JSON Lines (see the module)."""
    skipped = Counter() if skipped is None else skipped
    session = _Session()
    typed: list[OperatorMessage] = []
    fallback: list[OperatorMessage] = []
    seen_any = False
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_BYTES:
            skipped["too_long"] += 1
            continue
        try:
            raw = json_object(line)
        except RecursionError:
            skipped["too_deep"] += 1
            continue
        payload = raw.get("payload") if raw is not None else None
        if raw is None or not isinstance(raw.get("type"), str) or not isinstance(payload, dict):
            continue
        seen_any = True
        kind = raw["type"]
        if kind == "session_meta":
            _meta(session, payload)
        elif kind == "turn_context" and isinstance(payload.get("cwd"), str):
            session.cwd = payload["cwd"] or session.cwd
        elif kind == "response_item":
            ptype = payload.get("type")
            if isinstance(ptype, str) and ptype.endswith("_call"):
                session.acted_since_event = session.acted_since_item = True
            text = _user_item_text(payload)
            if text is not None:
                fallback.append(_message(session, number, raw, text, session.acted_since_item))
                session.acted_since_item = False
        elif kind == "event_msg" and payload.get("type") == "user_message":
            text = payload.get("message")
            if isinstance(text, str) and text.strip() and not _injected(text):
                acted = session.acted_since_event
                typed.append(_message(session, number, raw, text.strip(), acted))
                session.acted_since_event = False
    if not seen_any:
        message = f"{name} has no Codex rollout lines"
        raise InvalidInput([FieldError("transcript", "not_a_transcript", message)])
    if session.session_id is None:
        message = f"{name} has no session_meta line naming its session"
        raise InvalidInput([FieldError("transcript", "no_session", message)])
    if session.subagent:
        return Transcript([], skipped)
    out = []
    for m in typed or fallback:
        # the session's id and folder, whichever line named them
        m = replace(m, session_id=session.session_id, cwd=m.cwd or session.cwd)
        try:
            m.text.encode("utf-8")
        except UnicodeEncodeError:
            skipped["not_unicode"] += 1
            continue
        out.append(m)
    return Transcript(out, skipped)


def _meta(session: _Session, payload: dict[str, Any]) -> None:
    sid = payload.get("id")
    if isinstance(sid, str) and sid and len(sid) <= ID_MAX:
        session.session_id = sid
    if isinstance(payload.get("cwd"), str) and payload["cwd"]:
        session.cwd = payload["cwd"]
    source = payload.get("source")
    session.subagent = isinstance(source, dict) and "subagent" in source


def _user_item_text(payload: dict[str, Any]) -> str | None:
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    content = payload.get("content")
    blocks = content if isinstance(content, list) else []
    parts = [
        b["text"].strip()
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "input_text" and isinstance(b.get("text"), str)
    ]
    texts = [p for p in parts if p and not _injected(p)]
    return "\n".join(texts) if texts else None


def _injected(text: str) -> bool:
    return text.lstrip().startswith(_INJECTED)


def _message(
    session: _Session, number: int, raw: dict[str, Any], text: str, acted: bool
) -> OperatorMessage:
    stamp = raw.get("timestamp")
    return OperatorMessage(
        session_id=session.session_id or "",
        uuid=f"line-{number}",
        parent_uuid=None,
        timestamp=stamp if isinstance(stamp, str) and stamp else None,
        cwd=session.cwd,
        text=text,
        after_action=acted,
        agent=AGENT,
    )
