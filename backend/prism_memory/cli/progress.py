"""Progress of long commands (import-rules, reindex, dump, import, migrate, capture) on one
stderr line, redrawn in place, for people only: nothing when stderr is not a terminal (a pipe,
a file, a hook, CI) or when the command prints ``--json``, so scripts see exactly what they
did before.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import IO, TypeVar

T = TypeVar("T")
REDRAW_EVERY_S = 0.1  # at most ten redraws a second, whatever the pace of the work


class Progress:
    """``label: done/total (percent)`` or, without a total, ``label: done``.

    Args:
        label: what is counted, e.g. ``re-embedded``.
        enabled: draw at all (see :func:`progress_for`).
        total: how many there are, when known.
        stream: where to draw (stderr).
    """

    def __init__(
        self, label: str, enabled: bool, total: int | None = None, stream: IO[str] | None = None
    ) -> None:
        self.label = label
        self.enabled = enabled
        self.total = total
        self.stream = stream or sys.stderr
        self._drawn_at = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int | None = None) -> None:
        """Record ``done`` (and the total, if it is known only now); redraw when due."""
        if not self.enabled:
            return
        if total is not None:
            self.total = total
        now = time.monotonic()
        if now - self._drawn_at < REDRAW_EVERY_S and done != self.total:
            return
        self._drawn_at = now
        text = f"{self.label}: {done}"
        if self.total:
            text += f"/{self.total} ({100 * done // self.total}%)"
        self.stream.write(f"\r\x1b[K{text}")
        self.stream.flush()
        self._drawn = True

    def restart(self, label: str, total: int | None = None) -> None:
        """Count something else from now on (a command's next stage), drawn at the next call."""
        self.label = label
        self.total = total
        self._drawn_at = 0.0

    def counted(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, counting each as it passes."""
        for done, item in enumerate(items, start=1):
            self(done)
            yield item

    def close(self) -> None:
        """Clear the line, so the command's own output starts on a clean one."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def progress_for(as_json: bool, label: str, total: int | None = None) -> Progress:
    """A :class:`Progress` drawn only for a person: stderr is a terminal, not ``--json``,
    and ``TERM`` is not ``dumb``."""
    stream = sys.stderr
    enabled = not as_json and stream.isatty() and os.environ.get("TERM") != "dumb"
    return Progress(label, enabled, total, stream)
