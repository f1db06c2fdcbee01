"""``prism export-rules --check``: does a folder hold exactly what ``export-rules`` would write?

For clients that read rule files and have no hooks (Cursor, Codex, Aider), a checked-in
AGENTS.md, CLAUDE.md or ``.cursor/rules/prism-*.mdc`` is the only way rules reach the agent,
and it goes stale silently when a rule changes in the store. The check compares, byte for
byte, each file the export would write with the file on disk, and reports prism-written
files the export would no longer write (a group whose rules are all retired).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from prism_memory.formats.rules_io.records import ExportedFile

EXPORT_MARK: Final = "<!-- prism:export"
DIFF_LINES_MAX: Final = 40


@dataclass(frozen=True)
class FileVerdict:
    """One file's state: ``current``, ``stale`` (differs), ``missing`` (export would write
    it, it is not there) or ``orphaned`` (prism wrote it, the export would not any more)."""

    path: Path
    state: str
    rules: int = 0
    diff: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": str(self.path), "state": self.state, "rules": self.rules}
        if self.diff:
            out["diff"] = self.diff
        return out


@dataclass(frozen=True)
class CheckReport:
    """The verdict on every file; ``ok`` when all are current."""

    fmt: str
    folder: Path
    files: list[FileVerdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.state == "current" for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "format": self.fmt,
            "out": str(self.folder),
            "files": [f.to_dict() for f in self.files],
        }

    def summary(self) -> str:
        """One line per file that is not current, then the verdict."""
        lines = []
        for f in self.files:
            if f.state == "current":
                continue
            lines.append(f"{f.state}: {f.path}")
            if f.diff:
                lines.append(f.diff.rstrip("\n"))
        fresh = sum(1 for f in self.files if f.state == "current")
        if self.ok:
            lines.append(f"rule files current: {fresh} file(s) in {self.folder} match the store")
        else:
            lines.append(
                f"rule files stale: {len(self.files) - fresh} of {len(self.files)} file(s) in "
                f"{self.folder} differ from what `prism export-rules --format {self.fmt}` "
                "would write"
            )
        return "\n".join(lines)


def check(fmt: str, folder: Path, expected: Sequence[ExportedFile]) -> CheckReport:
    """Compare the files an export would write with the files in ``folder``.

    Args:
        fmt: the export format (``agents-md``, ``claude-md``, ``cursor``).
        folder: where the export is checked in (``--out``).
        expected: the files the export would write now.
    """
    verdicts = []
    names = set()
    for exported in expected:
        path = folder / exported.name
        names.add(exported.name)
        try:
            on_disk = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            verdicts.append(FileVerdict(path, "missing", exported.rules))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            verdicts.append(FileVerdict(path, "stale", exported.rules, f"unreadable: {exc}"))
            continue
        if on_disk == exported.text:
            verdicts.append(FileVerdict(path, "current", exported.rules))
        else:
            verdicts.append(
                FileVerdict(path, "stale", exported.rules, _diff(path, on_disk, exported.text))
            )
    if fmt == "cursor" and folder.is_dir():
        for path in sorted(folder.glob("prism-*.mdc")):
            if path.name not in names and _written_by_prism(path):
                verdicts.append(FileVerdict(path, "orphaned"))
    return CheckReport(fmt, folder, verdicts)


def _diff(path: Path, old: str, new: str) -> str:
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{path} (checked in)",
            tofile=f"{path} (export now)",
            n=1,
        )
    )
    if len(lines) > DIFF_LINES_MAX:
        more = len(lines) - DIFF_LINES_MAX
        lines = [*lines[:DIFF_LINES_MAX], f"... {more} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _written_by_prism(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return EXPORT_MARK in handle.read(4096)
    except OSError:
        return False
