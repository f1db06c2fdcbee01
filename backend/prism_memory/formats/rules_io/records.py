"""Records of rule-file import and export: what a file holds, what an import plans and did.

Pure data. A *unit* is one rule (a list item or a sentence-level instruction, with its code
blocks) or one stretch of descriptive text, with the lines it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.records import MemoruleKind

EVIDENCE_PREFIX: Final = "file:"
_TAG: Final = re.compile(r"^file:(?P<path>.+)#L(?P<start>\d+)-L(?P<end>\d+)$")
# Evidence ids are at most 200 characters (validation.EVIDENCE_MAX); the tag's own
# characters take at most 30 of them.
PATH_IN_TAG_MAX: Final = 170


class FileFormat(StrEnum):
    """The rule-file dialects Prism reads and writes."""

    MARKDOWN = "markdown"  # CLAUDE.md, AGENTS.md, .cursorrules, any .md
    CURSOR = "cursor"  # .cursor/rules/*.mdc: description / globs / alwaysApply
    COPILOT = "copilot"  # .github/copilot-instructions.md, *.instructions.md: applyTo


class NotesMode(StrEnum):
    """What happens to descriptive text that is not a rule."""

    KEEP = "keep"  # written as notes
    SKIP = "skip"  # counted and left out


class Action(StrEnum):
    """What an import does (or, on a dry run, would do) with one unit or stored record."""

    CREATE = "create"
    NOTE = "note"
    UPDATE = "update"
    UNCHANGED = "unchanged"
    SKIP = "skip"
    MISSING = "missing"
    RETIRE = "retire"


@dataclass(frozen=True)
class Location:
    """Where a unit sits in its file: a display path and a 1-based, inclusive line range."""

    path: str
    line_start: int
    line_end: int

    def tag(self) -> str:
        """The evidence id, e.g. ``file:CLAUDE.md#L12-L14`` (at most 200 characters)."""
        return f"{EVIDENCE_PREFIX}{shorten_path(self.path)}#L{self.line_start}-L{self.line_end}"


def shorten_path(path: str) -> str:
    """The path as it goes in a tag: long ones keep their tail, marked with a leading ``…``."""
    if len(path) <= PATH_IN_TAG_MAX:
        return path
    return "…" + path[-(PATH_IN_TAG_MAX - 1) :]


def parse_tag(text: str | None) -> Location | None:
    """The location an evidence id names, or None when it names no file lines."""
    if not text:
        return None
    found = _TAG.match(text)
    if found is None:
        return None
    return Location(found["path"], int(found["start"]), int(found["end"]))


@dataclass(frozen=True)
class Marker:
    """``<!-- prism:id=... v=N kind=K [h=DIGEST s="subject"] -->``: the memorule an exported
    rule came from; ``subject`` (with the digest of the body it belongs to) when the export
    had to state it because the file's structure would not give it back."""

    memory_id: UUID
    version: int
    kind: MemoruleKind | None = None
    subject: str | None = None
    digest: str | None = None


@dataclass(frozen=True)
class Unit:
    """One rule or one stretch of descriptive text.

    Attributes:
        text: the rule's full text as written (list marker and common indent removed).
        location: where it came from.
        context: the headings (and a parent item's label) it sits under, outermost first.
        kind: the memorule kind, or None for descriptive text.
        kind_from_heading: ``kind`` comes from a heading that names a kind ("## Conventions"),
            so it is the author's choice, not a guess.
        marker: the memorule an exported rule maps back to.
        applies_to: ``applies_to`` stated by the file (front matter, ``prism:applies_to``).
        applies_to_stated: ``applies_to`` came from a ``prism:applies_to`` comment.
        lead: the lead-in line carried into ``text`` as its first line ("All changes need
            to:", a parent item's label), or "".
    """

    text: str
    location: Location
    context: tuple[str, ...] = ()
    kind: MemoruleKind | None = None
    kind_from_heading: bool = False
    marker: Marker | None = None
    applies_to: dict[str, str] = field(default_factory=dict)
    applies_to_stated: bool = False
    lead: str = ""


@dataclass(frozen=True)
class FileWarning:
    """Something an import noticed and went on with (hidden characters, skipped text...)."""

    code: str
    path: str
    line: int | None
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            **self.details,
        }


WARNINGS_PER_CODE: Final = 20


def bounded(warnings: list[FileWarning], limit: int = WARNINGS_PER_CODE) -> list[FileWarning]:
    """The first ``limit`` warnings of each code and path, then one ``more_warnings``
    warning per code and path that counts the rest: a hostile file cannot make an import
    report grow with it."""
    seen: dict[tuple[str, str], int] = {}
    out: list[FileWarning] = []
    for warning in warnings:
        key = (warning.code, warning.path)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= limit:
            out.append(warning)
    for (code, path), count in seen.items():
        if count > limit:
            more = count - limit
            out.append(
                FileWarning(
                    "more_warnings",
                    path,
                    None,
                    f"{path}: {more} more {code} warnings (the first {limit} are listed)",
                    {"warning_code": code, "count": more},
                )
            )
    return out


@dataclass(frozen=True)
class ParsedFile:
    """A rule file, read safely and split into units."""

    path: str
    format: FileFormat
    units: list[Unit]
    warnings: list[FileWarning]
    front_matter: dict[str, Any] = field(default_factory=dict)
    exported: bool = False
    imports: list[tuple[str, int]] = field(default_factory=list)
    imported_from: str | None = None


@dataclass(frozen=True)
class Item:
    """One line of an import report: what happened to one unit or stored record."""

    action: Action
    path: str
    line_start: int | None
    line_end: int | None
    record: str  # "memorule" or "note"
    subject: str
    memorule_kind: str | None = None
    id: UUID | None = None
    version: int | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "path": self.path,
            "lines": [self.line_start, self.line_end] if self.line_start else None,
            "record": self.record,
            "subject": self.subject,
            "memorule_kind": self.memorule_kind,
            "id": str(self.id) if self.id else None,
            "version": self.version,
            "message": self.message,
        }


@dataclass
class ImportReport:
    """What an import did (or would do, on a dry run)."""

    dry_run: bool
    files: list[dict[str, Any]] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    # checks proposed from the text of the rules written (``prism checks propose``), if any
    check_proposals: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        """written (memorules created), updated, unchanged, skipped, notes, missing, retired."""
        tally = {a: 0 for a in Action}
        for item in self.items:
            tally[item.action] += 1
        return {
            "written": tally[Action.CREATE],
            "updated": tally[Action.UPDATE],
            "unchanged": tally[Action.UNCHANGED],
            "skipped": tally[Action.SKIP],
            "notes": tally[Action.NOTE],
            "missing": tally[Action.MISSING],
            "retired": tally[Action.RETIRE],
        }


@dataclass(frozen=True)
class ExportedFile:
    """One rendered rule file: its name, its text, and how many rules it holds."""

    name: str
    text: str
    rules: int
