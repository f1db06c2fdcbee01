"""Which edited files a glob of a check names (DESIGN §12). Pure: no I/O, no file system.

A file path is first made relative to the session's ``cwd`` (a relative path is joined to it,
``..`` and ``.`` are folded). Then, as in gitignore and Cursor globs:

- ``*`` and ``?`` match within one path part (never across ``/``); ``[abc]`` / ``[!abc]`` a
  character of a part;
- ``**`` as a whole part matches any number of folders, zero included (``src/**/x.py``
  matches ``src/x.py``); ``src/**`` matches everything under ``src/``;
- a glob without ``/`` matches the file's *name*, in any folder, outside ``cwd`` included
  (``*.lock`` matches ``/etc/x.lock``);
- a glob with ``/`` is anchored at ``cwd`` and never matches a path outside it. A leading
  ``/`` or ``./`` anchors at ``cwd`` too (``/src/*.py`` is ``src/*.py``); a trailing ``/``
  names a folder and everything under it (``src/generated/`` is ``src/generated/**``).

Matching is case-sensitive, like the file systems agents mostly run on.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final, NamedTuple

_CACHE_MAX: Final = 4096


class SessionPath(NamedTuple):
    """An edited file as the globs see it: ``relative`` to cwd (``None`` when outside it) and
    its ``name``. (A named tuple: the guard's fast path imports this module, and
    ``dataclasses`` alone would cost it more than the glob matching.)"""

    absolute: str | None
    relative: str | None
    name: str


def session_path(path: str, cwd: str | None) -> SessionPath:
    """``path`` (as the tool named it) seen from a session whose folder is ``cwd``."""
    if path.startswith("/"):
        absolute: str | None = posixpath.normpath(path)
    elif cwd is not None:
        absolute = posixpath.normpath(posixpath.join(cwd, path))
    else:
        absolute = None
    name = posixpath.basename(posixpath.normpath(path)) if path else ""
    if absolute is None:
        # No cwd to anchor at: a relative path is taken as relative to the session's folder.
        relative = posixpath.normpath(path)
        inside = relative != ".." and not relative.startswith("../")
        return SessionPath(None, relative if inside else None, name)
    if cwd is None:
        return SessionPath(absolute, None, name)
    root = posixpath.normpath(cwd)
    if root == "/":
        relative_path: str | None = absolute.lstrip("/") or None
    elif absolute.startswith(root + "/"):
        relative_path = absolute[len(root) + 1 :]
    else:
        relative_path = None  # the folder itself or outside it: no file of the session's tree
    return SessionPath(absolute, relative_path, name)


def glob_matches(glob: str, path: SessionPath) -> bool:
    """Whether ``glob`` names ``path`` (the rules in this module's docstring)."""
    anchored, regex = _compiled(glob)
    if anchored:
        return path.relative is not None and regex.fullmatch(path.relative) is not None
    return bool(path.name) and regex.fullmatch(path.name) is not None


_COMPILED: dict[str, tuple[bool, re.Pattern[str]]] = {}


def _compiled(glob: str) -> tuple[bool, re.Pattern[str]]:
    found = _COMPILED.get(glob)
    if found is None:
        if len(_COMPILED) > _CACHE_MAX:
            _COMPILED.clear()
        found = _COMPILED[glob] = _translate(glob)
    return found


def _translate(glob: str) -> tuple[bool, re.Pattern[str]]:
    """(anchored at cwd, the regex a relative path or a name must match in full)."""
    if "/" not in glob:
        return False, re.compile(_part(glob) if glob != "**" else ".*", re.DOTALL)
    body = glob
    while body.startswith("./"):
        body = body[2:]
    body = body.lstrip("/")
    if body.endswith("/"):
        body += "**"
    parts = [p for p in body.split("/") if p != "."]
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            # '**/' is zero or more folders; a final '**' is anything below (one part or more).
            out.append(".+" if last else "(?:[^/]+/)*")
        else:
            out.append(_part(part) + ("" if last else "/"))
    return True, re.compile("".join(out), re.DOTALL)


def _part(part: str) -> str:
    """One path part of a glob as a regex: ``*`` ``?`` ``[...]`` stay within the part."""
    out: list[str] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            while i + 1 < len(part) and part[i + 1] == "*":
                i += 1  # '**' inside a part cannot reach here (refused by parse_checks)
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and (end := part.find("]", i + 2)) != -1:
            inner = part[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            if negate:
                inner = inner[1:]
            escaped = inner.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
            out.append(f"[^/{escaped}]" if negate else f"[{escaped}]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)
