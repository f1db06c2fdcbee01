"""The guard's first question to a SQLite store, asked with nothing but ``sqlite3``, ``json``
and ``re``: could any rule's checks be broken by this action at all?

Most tool uses hit no rule, and a process that imports the domain (its dataclasses, dates,
enums) spends most of its life doing that. :func:`may_hit` answers False only when no check of
any active memorule of the store (every tenant and project: a superset of those that apply)
could make :func:`prism_memory.domain.adherence.judge.pending` answer: a command hits only a
``forbid_command`` or a ``require_before`` whose ``before`` it matches (``re.search``, as the
judge does), an edit only a ``forbid_edit`` whose glob matches the path as the session could
see it (:func:`edit_candidates`: the session's folder is not known here, so every folder the
path could be relative to is tried, with the judge's own glob matching). Anything it cannot
read or judge (no file, no checks column yet, a check it does not know or cannot compile, a
relative path that climbs with ``..``) answers True, so the guard's full path decides and
says why.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Final

BUSY_TIMEOUT_S: Final = 1.0
_SELECT: Final = (
    "SELECT DISTINCT s.checks FROM memory_state s "
    "CROSS JOIN memory m ON m.tenant_id = s.tenant_id AND m.id = s.memory_id "
    "WHERE s.checks IS NOT NULL AND m.current_version = s.version "
    "AND m.status = 'active' AND m.kind = 'memorule'"
)
_KINDS: Final = frozenset({"forbid_command", "forbid_edit", "require_before", "require_edit_with"})


def may_hit(path: Path, kind: str, text: str) -> bool:
    """Whether a ``command`` or ``edit`` (``text``: the command, or the path) could break a
    check of an active rule of the store at ``path``."""
    if not path.is_file():
        return True
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
        )
        try:
            rows = conn.execute(_SELECT).fetchall()
        finally:
            conn.close()
        return any(_may_hit(json.loads(raw), kind, text) for (raw,) in rows)
    except (sqlite3.Error, ValueError, TypeError, re.error, AttributeError):
        return True


def _may_hit(checks: Any, kind: str, text: str) -> bool:
    for item in checks:
        ((name, value),) = item.items()  # ValueError, AttributeError: not a check
        if name not in _KINDS:
            return True
        if kind == "edit" and name == "forbid_edit" and _edit_may_hit(value, text):
            return True
        if kind == "command":
            pattern = value if name == "forbid_command" else None
            if name == "require_before":
                pattern = value["before"]
            if pattern is not None and re.search(pattern, text):
                return True
    return False


def edit_candidates(path: str) -> list[tuple[str | None, str]] | None:
    """Every (relative path, file name) an edited ``path`` can have for the judge, whatever
    the session's folder: an absolute path is relative to each folder above it (or to none);
    a relative one is taken from the session's folder as it is. None when that cannot be
    bounded (a relative path that climbs out with ``..``)."""
    import posixpath

    normal = posixpath.normpath(path) if path else ""
    name = posixpath.basename(normal)
    if not path.startswith("/"):
        if normal == ".." or normal.startswith("../"):
            return None
        return [(normal, name)]
    parts = [p for p in normal.split("/") if p]
    return [(None, name)] + [("/".join(parts[i:]), name) for i in range(len(parts))]


def _edit_may_hit(glob: Any, path: str) -> bool:
    from prism_memory.domain.adherence.paths import SessionPath, glob_matches

    candidates = edit_candidates(path)
    if candidates is None or not isinstance(glob, str):
        return True
    return any(glob_matches(glob, SessionPath(None, rel, name)) for rel, name in candidates)
