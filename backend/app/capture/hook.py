"""What a Claude Code hook runs to capture a finished turn (for ``prism hooks install``).

``prism capture claude-code --hook`` reads the hook input from stdin, starts the capture in
the background and returns at once, printing nothing (``app.cli.capture_cmd``). These helpers
give the installer the exact entry to put under ``hooks.Stop`` (or ``hooks.SessionEnd``) of
``.claude/settings.json``, so the two never disagree.
"""

from __future__ import annotations

import shlex
from typing import Any

HOOK_EVENTS = ("Stop", "SessionEnd")
HOOK_MARK = "prism capture claude-code --hook"


def hook_command(persona: str | None = None, project: str | None = None) -> str:
    """The shell command of the capture hook, with the context options quoted."""
    parts = [HOOK_MARK]
    if persona:
        parts.append(f"--persona {shlex.quote(persona)}")
    if project:
        parts.append(f"--project {shlex.quote(project)}")
    return " ".join(parts)


def hook_entry(persona: str | None = None, project: str | None = None) -> dict[str, Any]:
    """One matcher group for ``settings.json``: ``{"hooks": [{"type": "command", ...}]}``."""
    return {"hooks": [{"type": "command", "command": hook_command(persona, project)}]}


def is_capture_hook(group: Any) -> bool:
    """Whether a ``settings.json`` matcher group is (already) the capture hook."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and str(h.get("command", "")).startswith(HOOK_MARK) for h in hooks
    )
