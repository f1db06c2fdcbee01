"""Split a rule file's Markdown into units: one per rule, plus stretches of descriptive text.

The blocks come from markdown-it-py (:mod:`.blocks`); the text of a unit is always the
source as written (list marker and indent removed), so nothing inside it is reinterpreted.

- A list item is one rule, with its sub-items (exceptions, examples, the objects of "This
  includes:"). When the item is only a lead-in or a label ("Package Management",
  "All changes need to:"), each entry under it is a rule of its own that carries the
  lead-in as its first line, and the label as context.
- A paragraph ending in ":" before a list is the lead-in of every entry of that list —
  unless the entries are only short objects of it ("Include:" + "What changed"), which
  stay with it as one rule.
- A paragraph splits into sentences; an instruction starts a rule and the descriptive
  sentences after it stay with it; descriptive sentences before any instruction make one
  descriptive unit.
- Headings are context. A code block stays with the rule before it (same section, right
  after it or after a rule ending with ':'). Tables are descriptive.
- HTML comments, in blocks or inline, are left out and reported with their line; other
  raw HTML is text. ``@path`` in the text (never in code) is collected as an import.
- Prism's comments: ``<!-- prism:id=UUID v=N kind=K -->`` (at the end of an item's first
  line, or on the line before it) maps a rule back to its memorule; ``<!-- prism:applies_to
  {...} -->`` states ``applies_to`` until the next heading of its level or above;
  ``<!-- prism:export ... -->`` marks a file Prism wrote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from app.domain.records import MemoruleKind
from app.domain.validation import MEMORULE_BODY_MIN as BODY_MIN
from app.services.rules_io.blocks import (
    Line,
    Node,
    comments_in,
    is_comment,
    item_lines,
    parse,
    plain_inline,
    strip_comments,
)
from app.services.rules_io.imports import imports_in
from app.services.rules_io.kinds import classify, evidence, kind_of_heading, rule_likeness
from app.services.rules_io.records import FileWarning, Location, Marker, Unit
from app.services.rules_io.sentences import sentence_spans

MARKER: Final = re.compile(
    r"<!--\s*prism:id=(?P<id>[0-9a-fA-F-]{36})\s+v=(?P<v>\d+)(?:\s+kind=(?P<kind>[a-z_]+))?\s*-->"
)
_TRAILING_MARKER: Final = re.compile(r"\s*" + MARKER.pattern + r"\s*$")
_APPLIES: Final = re.compile(r"<!--\s*prism:applies_to\s+(?P<json>\{.*\})\s*-->", re.DOTALL)
_EXPORT: Final = re.compile(r"<!--\s*prism:export\b")
_SCOPE_TITLE: Final = re.compile(r"^(?:Global|Organisation|Project|Persona) rules\b")
_APPLIES_KEYS: Final = ("persona", "surface", "specialization", "scope")
_LISTS: Final = ("bullet_list", "ordered_list")
OBJECT_ENTRY: Final = 40  # an entry this short that reads as no rule is an object of its lead-in
LABEL_MAX: Final = 60


@dataclass
class _Draft:
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
class _State:
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
    drafts: list[_Draft] = field(default_factory=list)
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


def split_markdown(
    path: str, lines: list[Line], applies_to: dict[str, str], fmt: str = "markdown"
) -> Split:
    """Split Markdown lines (with their file line numbers) into units.

    Args:
        path: the display path, for locations and warnings.
        lines: the body's lines, front matter removed.
        applies_to: ``applies_to`` the front matter stated (a ``prism:applies_to`` comment
            replaces it for the rules after it).
        fmt: the file's dialect, a prior for the rule classifier.
    """
    if not lines:
        return Split([], [], False)
    state = _State(path, fmt, dict(lines), applies_to=dict(applies_to))
    state.exported = any(_EXPORT.search(text) for _, text in lines[:40])
    nodes = parse("\n".join(text for _, text in lines), lines[0][0])
    state.imports = imports_in(nodes)
    _blocks(state, nodes)
    units = [d.freeze(path) for d in state.drafts if d.text.strip()]
    return Split(units, state.warnings, state.exported, state.imports)


def _blocks(state: _State, nodes: list[Node]) -> None:
    i = 0
    while i < len(nodes):
        node = nodes[i]
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if node.kind == "heading":
            _heading(state, node)
        elif node.kind == "html_block":
            _html(state, node)
        elif node.kind == "paragraph":
            if following is not None and following.kind in _LISTS and _ends_with_colon(state, node):
                _lead_and_list(state, node, following)
                i += 1
            else:
                _paragraph(state, node)
        elif node.kind in _LISTS:
            _list(state, node, state.context(), "")
        elif node.kind in ("fence", "code_block"):
            _code(state, node)
        elif node.kind == "table":
            _add(state, _span(state, node), state.context(), None, descriptive=True)
        elif node.kind == "blockquote":
            _blocks(state, node.children)
        i += 1


def _heading(state: _State, node: Node) -> None:
    state.headings = [(lv, t) for lv, t in state.headings if lv < node.level]
    state.headings.append((node.level, plain_inline(node.inline)))
    state.section += 1
    state.section_kind = kind_of_heading(plain_inline(node.inline))
    if state.applies_stated and node.level <= state.applies_level:
        state.applies_to, state.applies_stated = {}, False


def _html(state: _State, node: Node) -> None:
    text = node.token.content.strip()
    if _EXPORT.search(text):
        state.exported = True
    elif marker := MARKER.fullmatch(text):
        state.pending = _marker(marker)
    elif applies := _APPLIES.fullmatch(text):
        _applies_comment(state, node, applies["json"])
    elif is_comment(text):
        state.comment(node.start, text)
    else:  # raw HTML an agent reads as text: its comments out, the rest a unit
        comments = re.findall(r"<!--.*?-->", text, re.DOTALL)
        for comment in comments:
            state.comment(node.start + text[: text.find(comment)].count("\n"), comment)
        lines = _span(state, node)
        _add(state, lines, state.context(), None, text=strip_comments(_join(lines), comments))


def _applies_comment(state: _State, node: Node, raw: str) -> None:
    stated = _applies(raw)
    if stated is None:
        state.warnings.append(
            FileWarning(
                "bad_prism_comment",
                state.path,
                node.start,
                f"{state.path}:{node.start}: prism:applies_to is not a JSON object of "
                "persona/surface/specialization/scope; ignored",
            )
        )
        return
    state.applies_to, state.applies_stated = stated, True
    state.applies_level = state.headings[-1][0] if state.headings else 0


def _applies(text: str) -> dict[str, str] | None:
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not set(value) <= set(_APPLIES_KEYS):
        return None
    if not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): str(v) for k, v in value.items()}


def _marker(found: re.Match[str]) -> Marker:
    kind = found["kind"]
    known = kind in {k.value for k in MemoruleKind}
    return Marker(UUID(found["id"]), int(found["v"]), MemoruleKind(kind) if known else None)


# -- adding units ----------------------------------------------------------------------


def _add(
    state: _State,
    lines: list[Line],
    context: tuple[str, ...],
    marker: Marker | None,
    text: str = "",
    lead: str = "",
    descriptive: bool = False,
    lead_in: str = "",
    list_entry: bool = False,
) -> None:
    own = text or _join(lines)
    body = f"{lead}\n{own}" if lead else own
    kind: MemoruleKind | None = None
    decided = False
    if marker is not None:  # an exported rule: a rule whatever it says
        kind = marker.kind or state.section_kind or classify(own, context)
        decided = marker.kind is not None or state.section_kind is not None
    elif (
        not descriptive
        and rule_likeness(
            own, context, state.fmt, lead or lead_in or _heading_lead(context), list_entry
        )
        >= 0.5
    ):
        kind = state.section_kind or classify(own, context)
        decided = state.section_kind is not None
    if kind is not None and len(body.strip()) < BODY_MIN and context:
        body = f"{context[-1]}:\n{body}"  # "Use tabs." keeps its heading, not dropped
    state.drafts.append(
        _Draft(
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


def _heading_lead(context: tuple[str, ...]) -> str:
    """A heading that is itself an instruction ("DO NOT use high-cardinality attributes:")
    leads the entries under it."""
    return context[-1] if context and rule_likeness(context[-1]) >= 0.5 else ""


def _paragraph(state: _State, node: Node, upto: int | None = None) -> None:
    lines = _span(state, node)
    comments = comments_in(node.inline)
    _report_inline(state, node, comments)
    if state.pending is not None:
        _add(state, lines, state.context(), state.pending, strip_comments(_join(lines), comments))
        state.pending = None
        return
    text = strip_comments("\n".join(t for _, t in lines), comments)
    if upto is not None:
        text = text[:upto].rstrip()
    if not _without_imports(text):
        return  # only "@AGENTS.md": an import, not a rule
    context = state.context()
    offsets, position = [], 0
    for line in text.split("\n"):
        offsets.append(position)
        position += len(line) + 1
    groups: list[tuple[int, int, bool]] = []  # start, end, is_rule
    for start, end in sentence_spans(text):
        rule = rule_likeness(text[start:end], context, state.fmt) >= 0.5
        if groups and not rule:
            groups[-1] = (groups[-1][0], end, groups[-1][2])
        else:
            groups.append((start, end, rule))
    for start, end, rule in groups:
        first, last = _line_at(offsets, start), _line_at(offsets, end - 1)
        piece = text[start:end].strip()
        _add(state, lines[first : last + 1], context, None, piece, descriptive=not rule)


def _lead_and_list(state: _State, para: Node, lst: Node) -> None:
    """A paragraph ending in ':' and the list it introduces."""
    text = strip_comments(_join(_span(state, para)), comments_in(para.inline))
    spans = sentence_spans(text)
    lead_start = spans[-1][0] if spans else 0
    lead = text[lead_start:].strip()
    if _objects_only(state, lst, lead):
        _report_inline(state, para, comments_in(para.inline))
        lines = _span(state, para) + _span(state, lst)
        merged = text + "\n" + _join(_span(state, lst))
        _add(state, lines, state.context(), None, merged, lead_in=lead)
        return
    entries = [_join(item_lines(i, state.lines, set())) for i in lst.children]
    rules = sum(1 for e in entries if rule_likeness(e, state.context(), state.fmt) >= 0.5)
    if rule_likeness(lead, state.context(), state.fmt) >= 0.5 and 2 * rules < len(entries):
        # a rule of its own ("…each may only import from layers below it:") over entries
        # that mostly describe: the paragraph is one rule, the entries stand alone
        _paragraph(state, para)
        _list(state, lst, state.context(), "")
        return
    if lead_start > 0:
        _paragraph(state, para, upto=lead_start)
    else:
        _report_inline(state, para, comments_in(para.inline))
    _list(state, lst, state.context(), lead)


def _list(state: _State, lst: Node, context: tuple[str, ...], lead: str) -> None:
    for item in lst.children:
        if item.kind == "list_item":
            _item(state, item, context, lead)


def _item(state: _State, item: Node, context: tuple[str, ...], lead: str) -> None:
    nested = [c for c in item.children if c.kind in _LISTS]
    comment_blocks = [
        c for c in item.children if c.kind == "html_block" and is_comment(c.token.content)
    ]
    for block in comment_blocks:
        state.comment(block.start, block.token.content)
    inline = [c.inline for c in item.children if c.kind == "paragraph"]
    comments = [c for token in inline for c in comments_in(token)]
    for child in item.children:
        if child.kind == "paragraph":
            _report_inline(state, child, comments_in(child.inline))
    skip = {n for block in comment_blocks for n in range(block.start, block.end + 1)}
    whole = item_lines(item, state.lines, skip)
    marker, whole = _item_marker(state, whole)
    if marker is not None:
        _add(state, whole, context, marker, strip_comments(_join(whole), comments))
        return
    own_skip = skip | {n for lst in nested for n in range(lst.start, lst.end + 1)}
    own = item_lines(item, state.lines, own_skip)
    own_text = strip_comments(_join(own), comments)
    if not _without_imports(own_text):
        return
    objects = all(_objects_only(state, lst, own_text) for lst in nested)
    if nested and _is_lead(own_text) and not objects:
        label = own_text.rstrip(":").replace("**", "").strip()
        carried = own_text if not lead else f"{lead}\n{own_text}"
        for lst in nested:
            _list(state, lst, (*context, label), carried)
        return
    text = strip_comments(_join(whole), comments)
    _add(state, whole, context, None, text, lead=lead, list_entry=True)


def _item_marker(state: _State, lines: list[Line]) -> tuple[Marker | None, list[Line]]:
    marker, state.pending = state.pending, None
    if lines and (found := _TRAILING_MARKER.search(lines[0][1])):
        marker = _marker(found)
        lines = [(lines[0][0], lines[0][1][: found.start()]), *lines[1:]]
    return marker, lines


def _is_lead(text: str) -> bool:
    """A list entry that only introduces the entries under it ("Testing:", "Code Quality")."""
    if "\n" in text.strip() or len(sentence_spans(text)) > 1:
        return False
    if text.rstrip().endswith(":"):
        return True
    ev = evidence(text)
    plain = text.replace("**", "").strip()
    return (
        len(plain) <= LABEL_MAX
        and not re.search(r"[.!?]$", plain)
        and not (ev.imperative or ev.hard or ev.soft or ev.prefer)
    )


def _objects_only(state: _State, lst: Node, lead: str) -> bool:
    """Entries that are only the objects of the line before them, no rules: short ones, or
    any that read as no rule when that line is itself an instruction ("Check X for:")."""
    instruction = rule_likeness(lead) >= 0.5
    for item in lst.children:
        if any(c.kind in _LISTS for c in item.children):
            return False
        text = _join(item_lines(item, state.lines, set()))
        if rule_likeness(text) >= 0.5:
            return False
        if not instruction and ("\n" in text or len(text) >= OBJECT_ENTRY):
            return False
    return True


def _code(state: _State, node: Node) -> None:
    lines = _span(state, node)
    last = state.drafts[-1] if state.drafts else None
    if last is not None and last.section == state.section:
        gap = node.start - last.end - 1
        if gap <= 1 or last.text.rstrip().endswith(":"):
            last.lines = [*last.lines, *lines]
            last.text = last.text + ("\n" if gap == 0 else "\n\n") + _join(lines)
            return
    _add(state, lines, state.context(), None, descriptive=True)


def _report_inline(state: _State, node: Node, comments: list[str]) -> None:
    raw = "\n".join(state.lines.get(n, "") for n in range(node.start, node.end + 1))
    for comment in comments:
        where = raw.find(comment)
        line = node.start + (raw[:where].count("\n") if where >= 0 else 0)
        state.comment(line, comment)


def _ends_with_colon(state: _State, node: Node) -> bool:
    text = strip_comments(_join(_span(state, node)), comments_in(node.inline))
    return text.rstrip().endswith(":")


def _without_imports(text: str) -> str:
    return re.sub(r"(?:(?<=\s)|^)@\S+", "", text).strip(" \t\n-*:,.")


def _span(state: _State, node: Node) -> list[Line]:
    lines = [(n, state.lines.get(n, "")) for n in range(node.start, node.end + 1)]
    while lines and not lines[-1][1].strip():
        lines.pop()
    return lines


def _line_at(offsets: list[int], position: int) -> int:
    return max(i for i, start in enumerate(offsets) if start <= position)


def _join(lines: list[Line]) -> str:
    """Lines as one text, their common indentation removed."""
    texts = [t for _, t in lines]
    indents = [len(t) - len(t.lstrip(" ")) for t in texts if t.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(t[cut:] if t[:cut].strip() == "" else t for t in texts).strip("\n").rstrip()
