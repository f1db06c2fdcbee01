"""Records of rule-file import and export: what a file holds, what an import plans and did.

Pure data. A *unit* is one rule (a list item or a sentence-level instruction, with its code
blocks) or one stretch of descriptive text, with the lines it came from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.records import MemoruleKind

EVIDENCE_PREFIX: Final = "file:"
_TAG: Final = re.compile(
    r"^file:(?P<path>.+?)#L(?P<start>\d+)-L(?P<end>\d+)"
    r"(?: fm=(?P<tool>[a-z-]+) (?P<front>\{.*\}))?$"
)
# Evidence ids are at most validation.EVIDENCE_MAX characters; the path in the tag is kept
# short (the tag's own characters take at most 30 more) to leave the rest to front matter.
PATH_IN_TAG_MAX: Final = 170


class FileFormat(StrEnum):
    """The rule-file formats Prism reads and writes: each tool's own (see :mod:`.tools`)."""

    MARKDOWN = "markdown"  # any other .md: read, never written
    AGENTS_MD = "agents-md"  # AGENTS.md
    CLAUDE_MD = "claude-md"  # CLAUDE.md
    CLAUDE_RULES = "claude-rules"  # .claude/rules/*.md: paths
    GEMINI_MD = "gemini-md"  # GEMINI.md
    CURSOR = "cursor"  # .cursor/rules/*.mdc: description / globs / alwaysApply
    CURSORRULES = "cursorrules"  # .cursorrules
    COPILOT = "copilot"  # .github/copilot-instructions.md
    COPILOT_INSTRUCTIONS = "copilot-instructions"  # .github/instructions/*.instructions.md
    WINDSURF_RULES = "windsurf-rules"  # .windsurf/rules/*.md: trigger / globs / description
    WINDSURFRULES = "windsurfrules"  # .windsurfrules
    CLINERULES = "clinerules"  # .clinerules (one file)
    CLINE_RULES = "cline-rules"  # .clinerules/*.md: paths

    @property
    def family(self) -> str:
        """The dialect the rule classifier weighs: ``cursor``, ``copilot`` or ``markdown``."""
        if self is FileFormat.CURSOR:
            return "cursor"
        if self in (FileFormat.COPILOT, FileFormat.COPILOT_INSTRUCTIONS):
            return "copilot"
        return "markdown"


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


def comparable(text: str) -> str:
    """A rule's text as an import compares it: white space at the ends of its lines is no
    part of it (an export indents a code block's blank-looking lines; a reader may keep or
    drop their spaces), so such a difference is never an edit."""
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


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
class Front:
    """The front matter a rule's file had beyond what its ``applies_to`` gives back: kept in
    the rule's provenance (its evidence id, ``file:P#L1-L2 fm=TOOL {...}``) so an export in
    the same tool's format writes the file's front matter again.

    Attributes:
        tool: the format whose front matter it is (``cursor``, ``copilot-instructions``...).
        values: key → value as read; ``None`` means "the file did not have this key" (a key
            the export would otherwise derive from ``applies_to``).
    """

    tool: str
    values: dict[str, Any]

    def suffix(self) -> str:
        """`` fm=TOOL {json}`` (one line; "" when there is nothing to keep)."""
        if not self.values:
            return ""
        text = json.dumps(self.values, ensure_ascii=False, separators=(",", ":"))
        return f" fm={self.tool} {text}"


def front_of(text: str | None) -> Front | None:
    """The front matter an evidence id keeps, or None when it keeps none."""
    found = _TAG.match(text or "")
    if found is None or not found["front"]:
        return None
    try:
        values = json.loads(found["front"])
    except ValueError:
        return None
    return Front(found["tool"], values) if isinstance(values, dict) else None


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
        front: the file's front matter beyond ``applies_to`` (its provenance), for files of
            a tool that reads front matter; None for the others.
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
    front: Front | None = None

    def evidence(self) -> str:
        """The evidence id: the source tag, and the file's kept front matter when it fits
        (see :func:`.formats.parse_rule_file`, which leaves ``front`` out when it does not)."""
        return self.location.tag() + (self.front.suffix() if self.front else "")


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
