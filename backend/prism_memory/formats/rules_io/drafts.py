"""The units a rule file is split into, while they are being built: drafts, the splitter's
state (headings, ``applies_to``, the pending ``prism:id`` marker), and how a piece of text
becomes a unit (rule or descriptive, short rules given their heading).

Used by :mod:`.markdown`; nothing here parses Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final
from uuid import UUID

from prism_memory.domain.records import MemoruleKind
from prism_memory.domain.validation import MEMORULE_BODY_MIN as BODY_MIN
from prism_memory.formats.rules_io.blocks import Line, Node
from prism_memory.formats.rules_io.kinds import classify, rule_likeness
from prism_memory.formats.rules_io.records import FileWarning, Location, Marker, Unit

_SCOPE_TITLE: Final = re.compile(r"^(?:Global|Organisation|Project|Persona) rules\b")

MARKER: Final = re.compile(
    r"<!--\s*prism:id=(?P<id>[0-9a-fA-F-]{36})\s+v=(?P<v>\d+)(?:\s+kind=(?P<kind>[a-z_]+))?\s*-->"
)


TRAILING_MARKER: Final = re.compile(r"\s*" + MARKER.pattern + r"\s*$")


@dataclass
class Draft:
    lines: list[Line]
    text: str
    context: tuple[str, ...]
    section: int
    kind: MemoruleKind | None
    kind_from_heading: bool
    marker: Marker | None
    applies_to: dict[str, str]
    applies_stated: bool
    lead: str = ""

    @property
    def end(self) -> int:
        return self.lines[-1][0]

    def freeze(self, path: str) -> Unit:
        return Unit(
            text=self.text,
            location=Location(path, self.lines[0][0], self.end),
            context=self.context,
            kind=self.kind,
            kind_from_heading=self.kind_from_heading,
            marker=self.marker,
            applies_to=self.applies_to,
            applies_to_stated=self.applies_stated,
            lead=self.lead,
        )


@dataclass
class State:
    path: str
    fmt: str
    lines: dict[int, str]
    exported: bool = False
    headings: list[tuple[int, str]] = field(default_factory=list)
    section: int = 0
    section_kind: MemoruleKind | None = None
    applies_to: dict[str, str] = field(default_factory=dict)
    applies_stated: bool = False
    applies_level: int = 0
    pending: Marker | None = None
    drafts: list[Draft] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    imports: list[tuple[str, int]] = field(default_factory=list)

    def context(self) -> tuple[str, ...]:
        """Headings over the current line; a lone H1 title and an export's own are not."""
        deeper = any(level > 1 for level, _ in self.headings)
        return tuple(
            text
            for level, text in self.headings
            if not (level == 1 and (deeper or text.lower().endswith((".md", ".mdc"))))
            and not (self.exported and (level == 1 or _SCOPE_TITLE.match(text)))
        )

    def comment(self, line: int, text: str) -> None:
        if self.exported or text.lstrip("<!- ").startswith("prism:"):
            return
        self.warnings.append(
            FileWarning(
                "comment_skipped",
                self.path,
                line,
                f"{self.path}:{line}: an HTML comment was not imported "
                "(agents reading the raw file still see it)",
                {"excerpt": " ".join(text.split())[:80]},
            )
        )


@dataclass(frozen=True)
class Split:
    """The units of one file, its ``@path`` imports, and whether Prism wrote it."""

    units: list[Unit]
    warnings: list[FileWarning]
    exported: bool
    imports: list[tuple[str, int]] = field(default_factory=list)


def marker_of(found: re.Match[str]) -> Marker:
    kind = found["kind"]
    known = kind in {k.value for k in MemoruleKind}
    return Marker(UUID(found["id"]), int(found["v"]), MemoruleKind(kind) if known else None)


def add(
    state: State,
    lines: list[Line],
    context: tuple[str, ...],
    marker: Marker | None,
    text: str = "",
    lead: str = "",
    descriptive: bool = False,
    lead_in: str = "",
    list_entry: bool = False,
) -> None:
    own = text or join(lines)
    body = f"{lead}\n{own}" if lead else own
    kind: MemoruleKind | None = None
    decided = False
    if marker is not None:  # an exported rule: a rule whatever it says
        kind = marker.kind or state.section_kind or classify(own, context)
        decided = marker.kind is not None or state.section_kind is not None
    elif (
        not descriptive
        and rule_likeness(
            own, context, state.fmt, lead or lead_in or heading_lead(context), list_entry
        )
        >= 0.5
    ):
        kind = state.section_kind or classify(own, context)
        decided = state.section_kind is not None
    if kind is not None and len(body.strip()) < BODY_MIN and context:
        body = f"{context[-1]}:\n{body}"  # "Use tabs." keeps its heading, not dropped
    state.drafts.append(
        Draft(
            lines,
            body,
            context,
            state.section,
            kind,
            decided,
            marker,
            dict(state.applies_to),
            state.applies_stated,
            lead,
        )
    )


def heading_lead(context: tuple[str, ...]) -> str:
    """A heading that is itself an instruction ("DO NOT use high-cardinality attributes:")
    leads the entries under it."""
    return context[-1] if context and rule_likeness(context[-1]) >= 0.5 else ""


def report_inline(state: State, node: Node, comments: list[str]) -> None:
    raw = "\n".join(state.lines.get(n, "") for n in range(node.start, node.end + 1))
    for comment in comments:
        where = raw.find(comment)
        line = node.start + (raw[:where].count("\n") if where >= 0 else 0)
        state.comment(line, comment)


def without_imports(text: str) -> str:
    return re.sub(r"(?:(?<=\s)|^)@\S+", "", text).strip(" \t\n-*:,.")


def span(state: State, node: Node) -> list[Line]:
    lines = [(n, state.lines.get(n, "")) for n in range(node.start, node.end + 1)]
    while lines and not lines[-1][1].strip():
        lines.pop()
    return lines


def line_at(offsets: list[int], position: int) -> int:
    return max(i for i, start in enumerate(offsets) if start <= position)


def join(lines: list[Line]) -> str:
    """Lines as one text, their common indentation removed."""
    texts = [t for _, t in lines]
    indents = [len(t) - len(t.lstrip(" ")) for t in texts if t.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(t[cut:] if t[:cut].strip() == "" else t for t in texts).strip("\n").rstrip()
