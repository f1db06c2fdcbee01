"""Claude Code transcripts in their real format, for tests: the envelope every entry carries,
assistant ``tool_use`` entries and the ``user`` entries with their ``tool_result``, and the
exact words Claude Code writes when a tool use is refused."""

from __future__ import annotations

import json
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

USER_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def hook_blocked(tool: str = "Bash") -> str:
    return (
        f'PreToolUse:{tool} hook error: ["$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh]: '
        "Blocked: this command is not allowed here"
    )


def permission_denied(tool: str = "Bash", command: str = "git push --force") -> str:
    return f"Permission to use {tool} with command {command} has been denied."


@dataclass
class Transcript:
    """A session being written, entry by entry, as Claude Code writes it."""

    cwd: str = "/home/dev/shop"
    session: str = "7f3c2a10-5b6e-4d1a-9c8e-2b4f6a8d0e11"
    start: datetime = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    sidechain: bool = False
    agent_id: str | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)
    _parent: str | None = None
    _tick: int = 0
    _ids: int = 0

    def _envelope(self, kind: str) -> dict[str, Any]:
        self._tick += 1
        entry_id = str(
            uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{self.session}/{self.agent_id}/{self._tick}")
        )
        entry: dict[str, Any] = {
            "parentUuid": self._parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.0.37",
            "gitBranch": "main",
        }
        if self.agent_id is not None:
            entry["agentId"] = self.agent_id
        entry |= {
            "type": kind,
            "uuid": entry_id,
            "timestamp": (self.start + timedelta(seconds=30 * self._tick)).strftime(
                "%Y-%m-%dT%H:%M:%S.000Z"
            ),
        }
        self._parent = entry_id
        return entry

    def say(self, text: str) -> Transcript:
        entry = self._envelope("user")
        entry["message"] = {"role": "user", "content": text}
        self.lines.append(entry)
        return self

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        *,
        result: str = "",
        is_error: bool | None = None,
        tool_use_result: Any = None,
        denial: str | None = None,
        answered: bool = True,
    ) -> str:
        self._ids += 1
        use_id = f"toolu_01{self.agent_id or 'M'}{self._ids:04d}"
        entry = self._envelope("assistant")
        entry["message"] = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_01{self._ids:06d}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": use_id, "name": name, "input": tool_input}],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
        entry["requestId"] = f"req_{self._ids:06d}"
        self.lines.append(entry)
        if not answered:
            return use_id
        reply = self._envelope("user")
        block: dict[str, Any] = {"tool_use_id": use_id, "type": "tool_result", "content": result}
        if is_error is not None:
            block["is_error"] = is_error
        reply["message"] = {"role": "user", "content": [block]}
        reply["toolUseResult"] = tool_use_result
        if denial is not None:
            reply["toolDenialKind"] = denial
        self.lines.append(reply)
        return use_id

    def bash(self, command: str, *, output: str = "", error: bool = False) -> str:
        result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        text = f"Exit code 1\n{output}" if error else output
        return self.tool(
            "Bash",
            {"command": command, "description": "Run it"},
            result=text,
            is_error=error,
            tool_use_result=f"Error: {text}" if error else result,
        )

    def edit(self, path: str, *, tool: str = "Edit") -> str:
        key = "notebook_path" if tool == "NotebookEdit" else "file_path"
        tool_input: dict[str, Any] = {key: path}
        if tool == "Write":
            tool_input["content"] = "print('hi')\n"
        elif tool == "Edit":
            tool_input |= {"old_string": "a", "new_string": "b"}
        elif tool == "MultiEdit":
            tool_input["edits"] = [{"old_string": "a", "new_string": "b"}]
        else:
            tool_input |= {"new_source": "x = 1", "cell_id": "c1"}
        return self.tool(
            tool,
            tool_input,
            result=f"The file {path} has been updated.",
            tool_use_result={"filePath": path},
        )

    def reject(self, name: str, tool_input: dict[str, Any], *, marker: bool = True) -> str:
        return self.tool(
            name,
            tool_input,
            result=USER_REJECTED,
            is_error=True,
            tool_use_result="User rejected tool use",
            denial="user-rejected" if marker else None,
        )

    def refuse(self, name: str, tool_input: dict[str, Any], text: str) -> str:
        return self.tool(
            name, tool_input, result=text, is_error=True, tool_use_result=f"Error: {text}"
        )

    def hook_attachment(self, use_id: str, event: str = "PreToolUse") -> None:
        entry = self._envelope("attachment")
        entry["attachment"] = {
            "type": "hook_blocking_error",
            "hookName": f"{event}:Bash",
            "toolUseID": use_id,
            "hookEvent": event,
            "blockingError": {"blockingError": "Blocked", "command": "guard.sh"},
        }
        self.lines.append(entry)

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.text(), encoding="utf-8")
        return path

    def subagent(self, agent_id: str) -> Transcript:
        """A subagent's transcript (its own file under ``<session>/subagents/``)."""
        return Transcript(
            cwd=self.cwd,
            session=self.session,
            start=self.start + timedelta(seconds=30 * self._tick),
            sidechain=True,
            agent_id=agent_id,
        )
