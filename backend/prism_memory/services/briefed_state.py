"""Which memorules a client session has already been given, and which files it has touched,
kept in a small file per session.

The session-start hook records the rules its brief held; the prompt hook adds only rules
not yet recorded, and records them too; the touch hook answers only a file's first touch
and records the file (relative to the session's folder) and the rules it added. A new
session-start brief (startup, resume, clear, compact) replaces both lists: the context was
rebuilt, so what left it may be given again. One JSON file per Prism session under the user
data directory (``~/.local/share/prism-memory/hook-sessions/`` on Linux), written atomically
under a lock on the folder (several tool calls of one session may run their hooks at once);
files untouched for :data:`KEEP_DAYS` days are removed when another one is written.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final
from uuid import UUID

KEEP_DAYS: Final = 30
MAX_IDS: Final = 1_000
MAX_FILES: Final = 1_000  # touched files kept per session (the newest)


def default_state_dir() -> Path:
    """``hook-sessions`` in Prism's user data directory."""
    from platformdirs import user_data_path

    return user_data_path("prism-memory", appauthor=False) / "hook-sessions"


class BriefedState:
    """The rules a session has been given and the files it has touched.

    Args:
        folder: where the per-session files live (created on the first write).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, session_id: UUID) -> Path:
        return self.folder / f"{session_id}.json"

    def briefed(self, session_id: UUID) -> set[str]:
        """The ids already given in this session (empty when none are recorded).

        A file that cannot be read or parsed counts as empty: at worst a rule is repeated.
        """
        return set(self._lists(session_id)[0])

    def touched(self, session_id: UUID) -> set[str]:
        """The files (paths relative to the session's folder) the session has touched.

        A file that cannot be read or parsed counts as empty: at worst a file's rules are
        given again.
        """
        return set(self._lists(session_id)[1])

    def _lists(self, session_id: UUID) -> tuple[list[str], list[str]]:
        try:
            data = json.loads(self._path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return [], []
        if not isinstance(data, dict):
            return [], []
        out: list[list[str]] = []
        for key in ("briefed", "touched"):
            items = data.get(key)
            out.append([i for i in items if isinstance(i, str)] if isinstance(items, list) else [])
        return out[0], out[1]

    def record(
        self,
        session_id: UUID,
        ids: Iterable[str],
        *,
        replace: bool = False,
        touched: Iterable[str] = (),
    ) -> None:
        """Record ``ids`` as given and ``touched`` files as touched (added to what is
        recorded; with ``replace`` a new brief: both lists start again from these).

        Raises:
            OSError: the folder or the file cannot be written.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        with _FolderLock(self.folder):
            known, files = ([], []) if replace else self._lists(session_id)
            merged = list(dict.fromkeys([*sorted(known), *ids]))[-MAX_IDS:]
            paths = list(dict.fromkeys([*files, *touched]))[-MAX_FILES:]
            payload = json.dumps(
                {"session_id": str(session_id), "briefed": merged, "touched": paths}, indent=1
            )
            # Created exclusively under a name no other writer uses (not tempfile: the hook's
            # fast path writes here, and tempfile imports shutil, random and the compressors).
            name = self.folder / f".state.{os.getpid()}.{time.monotonic_ns()}"
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(payload)
                os.replace(name, self._path(session_id))
            except BaseException:
                Path(name).unlink(missing_ok=True)
                raise
        self._prune()

    def _prune(self) -> None:
        cutoff = time.time() - KEEP_DAYS * 86_400
        for path in self.folder.glob("*.json"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                continue  # another hook removed it first


class _FolderLock:
    """An exclusive lock on the state folder while a session's file is read and rewritten, so
    two hooks of one session running at once (parallel tool calls) do not lose each other's
    ids. Where ``flock`` does not exist (Windows) there is no lock: at worst a rule or a
    file's rules are given twice."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.fd: int | None = None

    def __enter__(self) -> None:
        if sys.platform == "win32":
            return
        import fcntl

        self.fd = os.open(self.folder, os.O_RDONLY)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            self.fd = None
            raise

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock
            self.fd = None
