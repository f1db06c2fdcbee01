"""Which memorules a client session has already been given, kept in a small file per session.

The session-start hook records the rules its brief held; the prompt hook adds only rules
not yet recorded, and records them too. One JSON file per Prism session under the user data
directory (``~/.local/share/prism-memory/hook-sessions/`` on Linux), written atomically;
files untouched for :data:`KEEP_DAYS` days are removed when another one is written.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final
from uuid import UUID

KEEP_DAYS: Final = 30
MAX_IDS: Final = 1_000


def default_state_dir() -> Path:
    """``hook-sessions`` in Prism's user data directory."""
    from platformdirs import user_data_path

    return user_data_path("prism-memory", appauthor=False) / "hook-sessions"


class BriefedState:
    """The rules a session has been given.

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
        try:
            data = json.loads(self._path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        ids = data.get("briefed") if isinstance(data, dict) else None
        return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()

    def record(self, session_id: UUID, ids: Iterable[str], *, replace: bool = False) -> None:
        """Record ``ids`` as given (added to what is recorded, or replacing it).

        Raises:
            OSError: the folder or the file cannot be written.
        """
        known = [] if replace else sorted(self.briefed(session_id))
        merged = list(dict.fromkeys([*known, *ids]))[-MAX_IDS:]
        self.folder.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"session_id": str(session_id), "briefed": merged}, indent=1)
        # Created exclusively under a name no other writer uses (not tempfile: the hook's fast
        # path writes here, and tempfile imports shutil, random and the compressors).
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
