"""Claude Code's ``PreToolUse`` hook as a moment to give rules: a session's first touch of a
file (answered by ``prism brief --hook claude-code``, beside the guard's own ``PreToolUse``
handler, :mod:`prism_memory.cli.guard_hook`).

The input names the tool (``tool_name``) and its arguments (``tool_input``): ``Read``,
``Edit``, ``MultiEdit`` and ``Write`` touch ``tool_input.file_path``, ``NotebookEdit``
touches ``tool_input.notebook_path``. The file is named by its path relative to the
project's folder (``$CLAUDE_PROJECT_DIR``, else the input's ``cwd``), the same every time
the session touches it, even after the agent changes directory, so a second touch is known
from the session's briefed state without opening the store. The
rules are ranked by the path's words (:func:`prism_memory.services.hook_answers.path_query`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

TOUCH_TOOLS: Final = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
PATH_MAX: Final = 4_096  # characters of a touched path kept in the session's state


class NotATouch(Exception):
    """The tool call touches no file this hook answers for; the message says why."""


def touched_file(data: Mapping[str, Any]) -> str:
    """The file a ``PreToolUse`` input touches, relative to the project's folder
    (:func:`project_folder`); a relative path in the input is read from the input's ``cwd``.

    Raises:
        NotATouch: the tool is not one that touches a file, or names no path.
    """
    tool = data.get("tool_name")
    key = TOUCH_TOOLS.get(tool) if isinstance(tool, str) else None
    if key is None:
        raise NotATouch(f"tool {tool!r} touches no file (only {', '.join(TOUCH_TOOLS)})")
    tool_input = data.get("tool_input")
    path = tool_input.get(key) if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path.strip():
        raise NotATouch(f"{tool} input has no tool_input.{key}")
    cwd = data.get("cwd")
    here = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    relative = relative_path(os.path.normpath(os.path.join(here, path)), project_folder(here))
    if len(relative) > PATH_MAX:
        raise NotATouch(f"the touched path is over {PATH_MAX} characters")
    return relative


def project_folder(here: str) -> str:
    """The folder touched files are named from: the project's (``$CLAUDE_PROJECT_DIR``, which
    Claude Code sets for its hooks and which stays put when the agent changes directory),
    else ``here`` (the input's ``cwd``)."""
    return os.environ.get("CLAUDE_PROJECT_DIR") or here


def relative_path(path: str, folder: str) -> str:
    """``path`` relative to ``folder`` (a relative path is taken as inside it already), or
    ``path`` as given when it lies outside the folder. Lexical: the file may not exist yet
    (``Write``), and no link is followed."""
    inside = os.path.normpath(os.path.join(folder, path))
    try:
        relative = os.path.relpath(inside, os.path.normpath(folder))
    except ValueError:  # another drive (Windows)
        return path
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return path
    return relative
