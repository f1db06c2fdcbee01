"""Prism's entries in a Claude Code ``settings.json``: added beside the user's hooks, removed
without touching them.

Claude Code reads hooks from ``~/.claude/settings.json`` (every project) and
``<project>/.claude/settings.json`` (one project) as
``{"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...,
"timeout": SECONDS}]}]}}``. Prism's handlers are recognised by their command, which always
ends with :data:`COMMAND_TAIL`: installing again adds nothing (or updates the path of the
``prism`` it runs), uninstalling removes those handlers and only the groups, events and
``hooks`` object that removing them left empty.
"""

from __future__ import annotations

import copy
import difflib
import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from prism_memory.errors import FieldError, InvalidInput
from prism_memory.services.atomic_file import write_atomically

BRIEF_ARGS: Final = ("brief", "--hook", "claude-code")
CAPTURE_ARGS: Final = ("capture", "claude-code", "--hook")
ADHERENCE_ARGS: Final = ("adherence", "claude-code", "--hook")
GUARD_ARGS: Final = ("guard", "claude-code")
COMMAND_TAIL: Final = " " + " ".join(BRIEF_ARGS)
SESSION_START_MATCHER: Final = "startup|resume|clear|compact"
SESSION_START_TIMEOUT_S: Final = 10
PROMPT_TIMEOUT_S: Final = 10
CAPTURE_EVENT: Final = "Stop"
CAPTURE_TIMEOUT_S: Final = 10  # the command returns at once; the capture runs detached
ADHERENCE_TIMEOUT_S: Final = 10  # likewise: the judging runs detached
GUARD_EVENT: Final = "PreToolUse"
GUARD_MATCHER: Final = "Bash|Edit|MultiEdit|Write|NotebookEdit"
GUARD_TIMEOUT_S: Final = 5
# The brief hook at a file's first touch: a PreToolUse group of its own, beside the guard's.
# Edits only, as bench/tasks measured it (the files a task's change touched): a session reads
# many more files than it changes, and each first read would cost a hook answer and add rules
# for a file the work does not change. The hook also answers Read, for a matcher set by hand.
TOUCH_EVENT: Final = "PreToolUse"
TOUCH_MATCHER: Final = "Edit|MultiEdit|Write|NotebookEdit"
TOUCH_TIMEOUT_S: Final = 10
SETTINGS_MAX_BYTES: Final = 4_194_304

Settings = dict[str, Any]


@dataclass(frozen=True)
class SettingsChange:
    """What an install or uninstall does to one settings file.

    Attributes:
        path: the settings file.
        before: its text before ('' when it did not exist).
        after: its text after ('' when the change removes the file).
        added: handlers added or updated, as ``EVENT: command``.
        removed: handlers removed, as ``EVENT: command``.
    """

    path: Path
    before: str
    after: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff from the file as it is to the file as it would be."""
        name = str(self.path)
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=name if self.before else "/dev/null",
            tofile=name if self.after else "/dev/null",
        )
        return "".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "changed": self.changed,
            "added": list(self.added),
            "removed": list(self.removed),
        }


Kind = Literal["brief", "capture", "adherence", "guard"]


def hook_command(prism: str, runner: Sequence[str] | None = None) -> str:
    """The brief handler's command for the ``prism`` executable at ``prism``, or run by
    ``runner`` (``PYTHON -P -m prism_memory``: its fast path asks the store's running server
    and skips the CLI framework), each word shell-quoted."""
    if runner:
        return " ".join(shlex.quote(word) for word in (*runner, *BRIEF_ARGS))
    return shlex.quote(prism) + COMMAND_TAIL


def capture_command(prism: str, options: Sequence[str] = ()) -> str:
    """The capture handler's command: ``PRISM capture claude-code --hook`` and ``options``
    (e.g. ``("--persona", "donna")``), each word shell-quoted."""
    return " ".join(shlex.quote(word) for word in (prism, *CAPTURE_ARGS, *options))


def adherence_command(prism: str, options: Sequence[str] = ()) -> str:
    """The adherence handler's command: ``PRISM adherence claude-code --hook`` and
    ``options``, each word shell-quoted."""
    return " ".join(shlex.quote(word) for word in (prism, *ADHERENCE_ARGS, *options))


def guard_command(runner: Sequence[str], options: Sequence[str] = ()) -> str:
    """The guard handler's command: ``RUNNER guard claude-code`` and ``options``, each word
    shell-quoted. The runner is ``PYTHON -m prism_memory`` (its fast path skips the CLI
    framework: the guard runs before every tool use) or a ``prism`` executable."""
    return " ".join(shlex.quote(word) for word in (*runner, *GUARD_ARGS, *options))


def handler_kind(handler: Any) -> Kind | None:
    """Which of Prism's handlers ``handler`` is: ``brief`` (its command ends with
    ``brief --hook claude-code``), ``capture`` (its command is ``PRISM capture claude-code
    --hook ...``), or None when it is not Prism's."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return None
    command = handler.get("command")
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) > len(BRIEF_ARGS) and tuple(words[-len(BRIEF_ARGS) :]) == BRIEF_ARGS:
        return "brief"
    if len(words) > len(CAPTURE_ARGS) and tuple(words[1 : len(CAPTURE_ARGS) + 1]) == CAPTURE_ARGS:
        return "capture"
    if (
        len(words) > len(ADHERENCE_ARGS)
        and tuple(words[1 : len(ADHERENCE_ARGS) + 1]) == ADHERENCE_ARGS
    ):
        return "adherence"
    # PYTHON -P -m prism_memory guard ... (or without -P, as installed before it had one)
    at = next(
        (i + 2 for i in (1, 2) if words[i : i + 2] == ["-m", "prism_memory"]),
        1,
    )
    if tuple(words[at : at + len(GUARD_ARGS)]) == GUARD_ARGS:
        return "guard"
    return None


def is_ours(handler: Any) -> bool:
    """Whether a hook handler is one Prism installs (either kind)."""
    return handler_kind(handler) is not None


def read_settings(path: Path) -> tuple[str, Settings]:
    """A settings file's text and its JSON object ('' and {} when the file does not exist).

    Raises:
        InvalidInput: the file is unreadable, too large, not JSON, or not a JSON object, or
            its ``hooks`` is not an object of lists (nothing is written then).
    """
    if not path.exists():
        return "", {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput([FieldError("settings", "unreadable", f"{path}: {exc}")]) from None
    if len(text) > SETTINGS_MAX_BYTES:
        raise InvalidInput([FieldError("settings", "too_large", f"{path} is over 4 MiB")])
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise InvalidInput(
            [FieldError("settings", "invalid_json", f"{path} is not JSON: {exc}")]
        ) from None
    if not isinstance(data, dict):
        raise InvalidInput([FieldError("settings", "not_an_object", f"{path} is not an object")])
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise InvalidInput(
            [
                FieldError(
                    "settings.hooks",
                    "wrong_type",
                    f"'hooks' in {path} must map each event to a list of matcher groups",
                )
            ]
        )
    return text, data


def render(settings: Settings) -> str:
    """The settings as Claude Code writes them: two-space JSON with a final newline."""
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def install(
    path: Path,
    prism: str,
    *,
    on_prompt: bool,
    capture: Sequence[str] | None = None,
    on_subagent: bool = False,
    adherence: Sequence[str] | None = None,
    guard: Sequence[str] | None = None,
    guard_runner: Sequence[str] | None = None,
    brief_runner: Sequence[str] | None = None,
    on_touch: bool = False,
) -> SettingsChange:
    """The change that adds Prism's ``SessionStart`` (and, with ``on_prompt``,
    ``UserPromptSubmit``; with ``on_subagent``, ``SubagentStart``; with ``on_touch``, a
    ``PreToolUse`` group for the tools that touch a file, beside the guard's) handlers to the
    settings file at ``path``; with ``capture`` (the
    capture command's options, possibly none) also the ``Stop`` handler that captures the
    session's transcript in the background; with ``adherence`` (the adherence command's
    options) also the ``Stop`` handler that judges the session in the background; with
    ``guard`` (the guard command's options) also the ``PreToolUse`` handler that puts the
    rules a command or edit would break in front of the agent before it runs (run by
    ``guard_runner``, default ``prism``). The brief handlers run ``brief_runner`` (default
    ``prism``).

    Raises:
        InvalidInput: see :func:`read_settings`.
    """
    before, data = read_settings(path)
    after = copy.deepcopy(data)
    brief = hook_command(prism, brief_runner)
    wanted: list[tuple[str, str | None, int, Kind, str]] = [
        ("SessionStart", SESSION_START_MATCHER, SESSION_START_TIMEOUT_S, "brief", brief)
    ]
    if on_prompt:
        wanted.append(("UserPromptSubmit", None, PROMPT_TIMEOUT_S, "brief", brief))
    if on_subagent:
        wanted.append(("SubagentStart", None, PROMPT_TIMEOUT_S, "brief", brief))
    if on_touch:
        wanted.append((TOUCH_EVENT, TOUCH_MATCHER, TOUCH_TIMEOUT_S, "brief", brief))
    if capture is not None:
        command = capture_command(prism, capture)
        wanted.append((CAPTURE_EVENT, None, CAPTURE_TIMEOUT_S, "capture", command))
    if adherence is not None:
        command = adherence_command(prism, adherence)
        wanted.append((CAPTURE_EVENT, None, ADHERENCE_TIMEOUT_S, "adherence", command))
    if guard is not None:
        command = guard_command(guard_runner or (prism,), guard)
        wanted.append((GUARD_EVENT, GUARD_MATCHER, GUARD_TIMEOUT_S, "guard", command))
    added = []
    for event, matcher, timeout, kind, command in wanted:
        handler = {"type": "command", "command": command, "timeout": timeout}
        groups = after.setdefault("hooks", {}).setdefault(event, [])
        if _place(groups, matcher, handler, kind):
            added.append(f"{event}: {command}")
    text = render(after) if added else before
    return SettingsChange(path, before, text, added=tuple(added))


def _place(groups: list[Any], matcher: str | None, handler: dict[str, Any], kind: Kind) -> bool:
    """Put ``handler`` in ``groups`` in place of Prism's handler of the same ``kind``; False
    when an identical one is already there."""

    def same(h: Any) -> bool:
        return handler_kind(h) == kind

    for group in groups:
        if not isinstance(group, dict) or group.get("matcher") != matcher:
            continue
        handlers = group.get("hooks")
        if not isinstance(handlers, list):
            continue
        for i, existing in enumerate(handlers):
            if same(existing):
                if existing == handler:
                    return False
                handlers[i] = handler  # another prism path or timeout: update it
                return True
    # Ours may sit under another matcher (an older install): move it, do not duplicate it.
    emptied = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(handlers, list) and any(same(h) for h in handlers):
            handlers[:] = [h for h in handlers if not same(h)]
            if not handlers:
                emptied.append(id(group))
    groups[:] = [g for g in groups if id(g) not in emptied]
    added: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
    added["hooks"] = [handler]
    groups.append(added)
    return True


def uninstall(path: Path) -> SettingsChange:
    """The change that removes every Prism handler from the settings file at ``path``, and
    the matcher groups, events and ``hooks`` object that removing them left empty.

    Raises:
        InvalidInput: see :func:`read_settings`.
    """
    before, data = read_settings(path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return SettingsChange(path, before, before)
    after = copy.deepcopy(data)
    removed = []
    for event in list(after["hooks"]):
        groups = after["hooks"][event]
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept_groups.append(group)
                continue
            removed += [f"{event}: {h['command']}" for h in handlers if is_ours(h)]
            rest = [h for h in handlers if not is_ours(h)]
            if rest:
                kept_groups.append({**group, "hooks": rest})
        if kept_groups or not groups:
            after["hooks"][event] = kept_groups
        else:
            del after["hooks"][event]
    if not removed:
        return SettingsChange(path, before, before)
    if not after["hooks"]:
        del after["hooks"]
    text = render(after) if after else ""
    return SettingsChange(path, before, text, removed=tuple(removed))


def apply(change: SettingsChange) -> Path | None:
    """Write the change, or delete the file when nothing is left in it.

    Atomic, never through a planted link, keeping the file's mode; a settings file that is
    a symbolic link is written through only to a regular file the user owns
    (:func:`prism_memory.services.atomic_file.write_atomically`).

    Returns:
        The link's target when the file was written through a link, else None.

    Raises:
        InvalidInput: the settings file is a link Prism will not write through.
    """
    if not change.changed:
        return None
    if not change.after:
        change.path.unlink(missing_ok=True)
        return None
    return write_atomically(change.path, change.after, field="settings")
