"""The units a rule file is split into, while they are being built: drafts, the splitter's
state (headings, ``applies_to``, the pending ``prism:id`` marker), and how a piece of text
becomes a unit (rule or descriptive, short rules given their heading).

Used by :mod:`.markdown`; nothing here parses Markdown.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Final
from uuid import UUID

from prism_memory.domain.records import MemoruleKind
from prism_memory.domain.validation import MEMORULE_BODY_MIN as BODY_MIN
from prism_memory.formats.rules_io import cues
from prism_memory.formats.rules_io.blocks import Line, Node, comment_lines
from prism_memory.formats.rules_io.headings import negating
from prism_memory.formats.rules_io.kinds import RULE_THRESHOLD, classify, rule_likeness
from prism_memory.formats.rules_io.records import FileWarning, Location, Marker, Unit

_SCOPE_TITLE: Final = re.compile(r"^(?:Global|Organisation|Project|Persona) rules\b")

MARKER: Final = re.compile(
    r"<!--\s*prism:id=(?P<id>[0-9a-fA-F-]{36})\s+v=(?P<v>\d+)(?:\s+kind=(?P<kind>[a-z_]+))?"
    r'(?:\s+h=(?P<h>[0-9a-f]{12})\s+s=(?P<s>"(?:[^"\\\n<>]|\\.)*"))?\s*-->'
)


COMMENTS_MAX: Final = 20  # comment warnings per file; the rest are counted in one


def trailing_marker(line: str) -> tuple[re.Match[str] | None, str]:
    """A ``prism:id`` marker ending ``line``, and the line without it (and the white space
    before it); found from the last ``<!--``, so no run of spaces is scanned twice."""
    at = line.rfind("<!--")
    found = MARKER.fullmatch(line[at:].rstrip()) if at >= 0 else None
    return (found, line[:at].rstrip()) if found else (None, line)


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
    threshold: float = RULE_THRESHOLD  # rule_likeness from which a piece is a rule
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
    comments: int = 0

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
        if self.exported or text[:40].lstrip("<!- ").startswith("prism:"):
            return
        self.comments += 1
        if self.comments > COMMENTS_MAX:
            return
        self.warnings.append(
            FileWarning(
                "comment_skipped",
                self.path,
                line,
                f"{self.path}:{line}: an HTML comment was not imported "
                "(agents reading the raw file still see it)",
                {"excerpt": " ".join(text[:400].split())[:80]},
            )
        )

    def comments_summary(self) -> None:
        """One warning counting the comments past :data:`COMMENTS_MAX`."""
        more = self.comments - COMMENTS_MAX
        if more > 0:
            self.warnings.append(
                FileWarning(
                    "comment_skipped_more",
                    self.path,
                    None,
                    f"{self.path}: {more} more HTML comments were not imported "
                    f"(the first {COMMENTS_MAX} are reported one by one)",
                    {"count": more},
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
    subject: str | None = None
    if found["s"]:
        try:
            value = json.loads(found["s"])
        except json.JSONDecodeError:
            value = None
        subject = value if isinstance(value, str) else None
    return Marker(
        UUID(found["id"]),
        int(found["v"]),
        MemoruleKind(kind) if known else None,
        subject,
        found["h"] if subject else None,
    )


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
    among_rules: bool = False,
    force: bool = False,
) -> None:
    own = text or join(lines)
    if list_entry and not lead and marker is None and context and negating(context[-1]):
        lead = context[-1]  # "Verboten" / "What to avoid": the entry says it only with it
    body = f"{lead}\n{own}" if lead else own
    kind: MemoruleKind | None = None
    decided = False
    if marker is not None:  # an exported rule: a rule whatever it says
        kind = marker.kind or state.section_kind or classify(own, context)
        decided = marker.kind is not None or state.section_kind is not None
    elif force or (
        not descriptive
        and rule_likeness(
            own,
            context,
            state.fmt,
            lead or lead_in or heading_lead(context, state.threshold),
            list_entry,
            among_rules,
        )
        >= state.threshold
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


def heading_lead(context: tuple[str, ...], threshold: float) -> str:
    """A heading that is itself an instruction ("DO NOT use high-cardinality attributes:")
    leads the entries under it; one over the files to know ("Important files") does not."""
    if not context or cues.FILES_HEADING.search(context[-1]):
        return ""
    return context[-1] if rule_likeness(context[-1]) >= threshold else ""


def report_inline(state: State, node: Node, comments: list[str]) -> None:
    raw = "\n".join(state.lines.get(n, "") for n in range(node.start, node.end + 1))
    for line, comment in zip(comment_lines(raw, comments, node.start), comments, strict=True):
        state.comment(line, comment)


def without_imports(text: str) -> str:
    return re.sub(r"(?:(?<=\s)|^)@\S+", "", text).strip(" \t\n-*:,.")


def span(state: State, node: Node) -> list[Line]:
    lines = [(n, state.lines.get(n, "")) for n in range(node.start, node.end + 1)]
    while lines and not lines[-1][1].strip():
        lines.pop()
    return lines


def line_at(offsets: list[int], position: int) -> int:
    """The index of the line (by its start offsets, ascending) that holds ``position``."""
    return max(0, bisect_right(offsets, position) - 1)


def join(lines: list[Line]) -> str:
    """Lines as one text, their common indentation removed, lines of white space empty."""
    texts = [t if t.strip() else "" for _, t in lines]
    indents = [len(t) - len(t.lstrip(" ")) for t in texts if t.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(t[cut:] if t[:cut].strip() == "" else t for t in texts).strip("\n").rstrip()
