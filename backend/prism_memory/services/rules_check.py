"""``prism export-rules --check``: does a folder hold exactly what ``export-rules`` would write,
and would the tool read all of it?

For clients that read rule files and have no hooks (Cursor, Codex, Aider), a checked-in
AGENTS.md, CLAUDE.md or ``.cursor/rules/prism-*.mdc`` is the only way rules reach the agent,
and it goes stale silently when a rule changes in the store. The check compares, byte for
byte, each file the export would write with the file on disk, and reports prism-written
files the export would no longer write (a group whose rules are all retired). It then lints
every file of the format in the folder (:mod:`prism_memory.formats.rules_io.lint`): front
matter the tool would reject or ignore, and scoping patterns that match no file of the
repository (the nearest folder above ``--out`` that holds ``.git``, else the current one).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from prism_memory.formats.rules_io.lint import Finding, lint_rule_file
from prism_memory.formats.rules_io.records import ExportedFile, FileFormat
from prism_memory.formats.rules_io.tools import tool_for

EXPORT_MARK: Final = "<!-- prism:export"
DIFF_LINES_MAX: Final = 40
# Files listed to match the patterns against; a larger tree is not pattern-checked.
REPOSITORY_FILES_MAX: Final = 200_000
_SKIPPED_DIRS: Final = frozenset({".git", ".hg", ".svn"})


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
    findings: list[Finding] = field(default_factory=list)
    patterns_checked: bool = True

    @property
    def current(self) -> bool:
        return all(f.state == "current" for f in self.files)

    @property
    def ok(self) -> bool:
        return self.current and not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "format": self.fmt,
            "out": str(self.folder),
            "files": [f.to_dict() for f in self.files],
            "findings": [f.to_dict() for f in self.findings],
            "patterns_checked": self.patterns_checked,
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
        lines.extend(f"{f.code}: {f.message}" for f in self.findings)
        if not self.patterns_checked:
            lines.append(
                f"patterns not checked: the repository has over {REPOSITORY_FILES_MAX} files"
            )
        if self.findings:
            lines.append(
                f"rule files lint: {len(self.findings)} finding(s): what the tool would "
                "silently skip"
            )
        if self.current:
            lines.append(f"rule files current: {fresh} file(s) in {self.folder} match the store")
        else:
            lines.append(
                f"rule files stale: {len(self.files) - fresh} of {len(self.files)} file(s) in "
                f"{self.folder} differ from what `prism export-rules --format {self.fmt}` "
                "would write"
            )
        return "\n".join(lines)


def check(
    fmt: str, folder: Path, expected: Sequence[ExportedFile], root: Path | None = None
) -> CheckReport:
    """Compare the files an export would write with the files in ``folder``, and lint them.

    Args:
        fmt: the export format (``agents-md``, ``cursor``, ... see ``ExportFormat``).
        folder: where the export is checked in (``--out``).
        expected: the files the export would write now.
        root: the repository whose files the patterns must match (default: the nearest
            folder above ``folder`` with a ``.git``, else the current folder).
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
    tool = tool_for(FileFormat(fmt))
    folder_format = tool is not None and tool.file_name is None
    if folder_format and tool is not None and folder.is_dir():
        for path in sorted(folder.glob(f"prism-*{tool.suffix}")):
            if path.name not in names and _written_by_prism(path):
                verdicts.append(FileVerdict(path, "orphaned"))
    linted = sorted({folder / name for name in names})
    if folder_format and tool is not None and folder.is_dir():
        linted = sorted({*linted, *folder.glob(f"*{tool.suffix}")})
    files = repository_files(root or repository_root(folder))
    findings = []
    for path in linted:
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # missing or unreadable: the verdicts say so
        findings.extend(lint_rule_file(str(path), text, FileFormat(fmt), files or []))
    return CheckReport(fmt, folder, verdicts, findings, files is not None)


_HEADER_PROJECT: Final = re.compile(r"<!--\s*prism:export\s+format=\S+\s+project=(?P<project>\S+)")


def exported_project(fmt: str, folder: Path) -> str | None:
    """The project the checked-in files of ``fmt`` in ``folder`` were exported for (their
    header names it when ``export-rules`` was given ``--project``), or None."""
    tool = tool_for(FileFormat(fmt))
    if tool is None or not folder.is_dir():
        return None
    pattern = tool.file_name or f"prism-*{tool.suffix}"
    for path in sorted(folder.glob(pattern)):
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                head = handle.read(4096)
        except OSError:
            continue
        found = _HEADER_PROJECT.search(head)
        if found:
            return found["project"]
    return None


def repository_root(folder: Path) -> Path:
    """The nearest folder at or above ``folder`` that holds ``.git``; else the current one."""
    start = folder.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd()


def repository_files(root: Path) -> list[str] | None:
    """Every file under ``root`` (``/``-separated, relative; version-control folders left
    out), or None when there are more than :data:`REPOSITORY_FILES_MAX`."""
    found: list[str] = []
    for parent, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        base = Path(parent).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        found.extend(prefix + name for name in names)
        if len(found) > REPOSITORY_FILES_MAX:
            return None
    return found


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
