"""Claude Code's ``SubagentStart`` hook: each subagent gets the rules for its role and task.

A subagent starts with a fresh context window: it sees neither the session-start brief nor
what the prompt hook added. Claude Code's input names the subagent (``agent_id``) and its
role (``agent_type``), not its task; the task is the newest ``Task``/``Agent`` tool call in
the parent session's transcript that started a subagent of that type (its ``description``
and ``prompt``). The brief is ranked by role and task, within a smaller budget, and its
served receipts are recorded under the subagent's own session (one per ``agent_id``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from uuid import UUID

from prism_memory.services.hook_answers import (
    SUBAGENT_TOKEN_BUDGET_DEFAULT as SUBAGENT_TOKEN_BUDGET_DEFAULT,
)

TRANSCRIPT_TAIL_BYTES: Final = 2_097_152
SUBAGENT_TOOLS: Final = frozenset({"Task", "Agent"})


def subagent_session(client: str, parent_session: str, agent_id: str) -> UUID:
    """The subagent's own Prism session: stable for one ``agent_id`` of one parent session."""
    from prism_memory.services.project_config import session_uuid

    return session_uuid(client, f"{parent_session}/subagent/{agent_id}")


def subagent_task(data: Mapping[str, Any], limit: int) -> str:
    """The text the subagent's brief is ranked by: its role, then its task when the parent's
    transcript names it. A transcript that cannot be read costs the task, never the brief."""
    agent_type = str(data.get("agent_type") or "").strip()
    task = ""
    path = data.get("transcript_path")
    if isinstance(path, str) and path:
        try:
            task = _task_in_transcript(Path(path), agent_type)
        except OSError:
            task = ""
    text = "\n".join(part for part in (agent_type, task) if part)
    return text[:limit]


def _task_in_transcript(path: Path, agent_type: str) -> str:
    """The newest subagent-starting tool call for ``agent_type`` in the transcript's tail
    (any type's when none matches)."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - TRANSCRIPT_TAIL_BYTES))
        tail = handle.read()
    fallback = ""
    for line in reversed(tail.splitlines()):
        for call in _tool_calls(line):
            text = _task_text(call)
            if not text:
                continue
            if call.get("subagent_type") == agent_type:
                return text
            fallback = fallback or text
    return fallback


def _tool_calls(line: bytes) -> list[dict[str, Any]]:
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    message = entry.get("message") if isinstance(entry, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        block["input"]
        for block in reversed(content)
        if isinstance(block, dict)
        and block.get("type") == "tool_use"
        and block.get("name") in SUBAGENT_TOOLS
        and isinstance(block.get("input"), dict)
    ]


def _task_text(call: Mapping[str, Any]) -> str:
    parts = [call.get("description"), call.get("prompt")]
    return "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
