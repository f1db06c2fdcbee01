"""Split a rule file's Markdown into units: one per rule, plus stretches of descriptive text.

- A list item is one rule. A nested list splits into rules of its own, under the parent's
  label ("Testing:") as context — unless its entries are too short to stand alone, when the
  item and its entries stay one rule.
- A paragraph splits into sentences. An instruction starts a rule; the descriptive sentences
  after it stay with it (its rationale); descriptive sentences before any instruction make
  one descriptive unit.
- Headings are context. A heading that names a kind ("## Conventions") decides the kind.
- A code block stays with the rule before it (in the same section, right after it or after
  a rule ending with ':'); otherwise it is descriptive text of its own.
- Prism's comments: ``<!-- prism:id=UUID v=N -->`` (at the end of an item's first line, or
  on the line before it) maps a rule back to its memorule and keeps the whole item as one
  rule; ``<!-- prism:applies_to {...} -->`` states ``applies_to`` until the next H1/H2;
  ``<!-- prism:export ... -->`` marks a file Prism wrote (its headings are structure only).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from app.domain.records import MemoruleKind
from app.services.rules_io.blocks import Block, Line, scan
from app.services.rules_io.kinds import guess_kind, kind_of_heading
from app.services.rules_io.records import FileWarning, Location, Marker, Unit
from app.services.rules_io.sentences import sentence_spans

MARKER: Final = re.compile(r"<!--\s*prism:id=(?P<id>[0-9a-fA-F-]{36})\s+v=(?P<v>\d+)\s*-->")
_TRAILING_MARKER: Final = re.compile(r"(?: |\s*)" + MARKER.pattern + r"\s*$")
_APPLIES: Final = re.compile(r"<!--\s*prism:applies_to\s+(?P<json>\{.*\})\s*-->", re.DOTALL)
_EXPORT: Final = re.compile(r"<!--\s*prism:export\b")
_APPLIES_KEYS: Final = ("persona", "surface", "specialization", "scope")
SHORT_ENTRY: Final = 10  # a nested entry this short is not a rule of its own
BRIEF_ENTRY: Final = 25  # when every entry is this short, the list belongs to its item
INTRODUCED_ENTRY: Final = 40  # a descriptive entry this short, after "...:", belongs to it


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
    introduces: bool = False  # took the short list entries after its closing ':'

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
        )


@dataclass
class _State:
    path: str
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

    def context(self) -> tuple[str, ...]:
        """Headings over the current line; a lone H1 title and headings of exports are not."""
        if self.exported:
            return ()
        deeper = any(level > 1 for level, _ in self.headings)
        return tuple(
            text
            for level, text in self.headings
            if not (level == 1 and (deeper or text.lower().endswith((".md", ".mdc"))))
        )


@dataclass(frozen=True)
class Split:
    """The units of one file, and whether Prism wrote it (an export)."""

    units: list[Unit]
    warnings: list[FileWarning]
    exported: bool


def split_markdown(path: str, lines: list[Line], applies_to: dict[str, str]) -> Split:
    """Split Markdown lines (with their file line numbers) into units.

    Args:
        path: the display path, for locations and warnings.
        lines: the body's lines, front matter removed.
        applies_to: ``applies_to`` the front matter stated (a ``prism:applies_to`` comment
            replaces it for the rules after it).
    """
    state = _State(path, applies_to=dict(applies_to))
    for block in scan(lines):
        _block(state, block)
    units = [d.freeze(path) for d in state.drafts if d.text]
    return Split(units, state.warnings, state.exported)


def _block(state: _State, block: Block) -> None:
    if block.kind == "heading":
        state.headings = [(lv, t) for lv, t in state.headings if lv < block.level]
        state.headings.append((block.level, _plain(block.text)))
        state.section += 1
        state.section_kind = kind_of_heading(block.text)
        if state.applies_stated and block.level <= state.applies_level:
            state.applies_to, state.applies_stated = {}, False
    elif block.kind == "comment":
        _comment(state, block)
    elif block.kind == "item":
        entry = _short_entry(block) if state.pending is None else None
        intro = state.drafts[-1] if state.drafts else None
        opened = intro is not None and (intro.text.endswith(":") or intro.introduces)
        if entry and intro and opened and intro.section == state.section:
            intro.lines = [*intro.lines, *block.lines]
            intro.text = f"{intro.text}\n- {entry}"
            intro.introduces = True
            return
        _item(state, block, state.context(), state.pending)
        state.pending = None
    elif block.kind in ("paragraph", "quote"):
        _paragraph(state, block)
    elif block.kind == "table":
        _add(state, block.lines, state.context(), None)
    elif block.kind == "code":
        _code(state, block)


def _comment(state: _State, block: Block) -> None:
    if _EXPORT.search(block.text):
        state.exported = True
    elif marker := MARKER.fullmatch(block.text):
        state.pending = Marker(UUID(marker["id"]), int(marker["v"]))
    elif applies := _APPLIES.fullmatch(block.text):
        stated = _applies(applies["json"])
        if stated is None:
            state.warnings.append(
                FileWarning(
                    "bad_prism_comment",
                    state.path,
                    block.start,
                    f"{state.path}:{block.start}: prism:applies_to is not a JSON object of "
                    "persona/surface/specialization/scope; ignored",
                )
            )
        else:
            state.applies_to, state.applies_stated = stated, True
            state.applies_level = state.headings[-1][0] if state.headings else 0
    elif not state.exported and not block.text.startswith("<!-- prism:"):
        state.warnings.append(
            FileWarning(
                "comment_skipped",
                state.path,
                block.start,
                f"{state.path}:{block.start}-{block.end}: an HTML comment was not imported "
                "(agents reading the raw file still see it)",
            )
        )


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


def _add(
    state: _State,
    lines: list[Line],
    context: tuple[str, ...],
    marker: Marker | None,
    text: str = "",
    kind_text: str = "",
) -> _Draft:
    body = text or _join(lines)
    kind: MemoruleKind | None = state.section_kind
    decided = kind is not None
    if kind is None:
        kind = guess_kind(kind_text or body, context[-1] if context else None)
    draft = _Draft(
        lines,
        body,
        context,
        state.section,
        kind,
        decided,
        marker,
        dict(state.applies_to),
        state.applies_stated,
    )
    state.drafts.append(draft)
    return draft


def _item(state: _State, block: Block, context: tuple[str, ...], pending: Marker | None) -> None:
    first_no, first = block.lines[0]
    marker = pending
    if found := _TRAILING_MARKER.search(first):
        marker = Marker(UUID(found["id"]), int(found["v"]))
        first = first[: found.start()]
    lines = [(first_no, first), *block.lines[1:]]
    if marker is not None:  # an exported rule: the whole item is the rule, verbatim
        _add(state, lines, context, marker)
        return
    children = [b for b in scan(lines[1:]) if b.kind == "item"] if len(lines) > 1 else []
    if not children:
        _add(state, lines, context, None)
        return
    nested = {no for child in children for no, _ in child.lines}
    own = [(no, text) for no, text in lines if no not in nested]
    entries = [_join(child.lines) for child in children]
    if any(len(e) < SHORT_ENTRY for e in entries) or all(len(e) < BRIEF_ENTRY for e in entries):
        _add(state, lines, context, None)
        return
    own_text = _join(own)
    label = _plain(own_text).rstrip(":").strip()
    if not _is_label(own_text):
        _add(state, own, context, None)
        label = _plain(own_text.split("\n", 1)[0])[:80].rstrip(" .:")
    for child in children:
        _item(state, child, (*context, label), None)


def _is_label(text: str) -> bool:
    """A list entry that only names what its nested entries are about ("Testing:")."""
    text = text.strip()
    if text.endswith(":"):
        return len(text) <= 160
    return len(text) <= 60 and guess_kind(text) is None and not re.search(r"[.!?](\s|$)", text)


def _short_entry(block: Block) -> str | None:
    """The text of a one-line, non-rule list entry (part of the rule before it), or None."""
    text = _join(block.lines)
    if len(block.lines) > 1 or len(text) >= INTRODUCED_ENTRY or guess_kind(text) is not None:
        return None
    return text


def _paragraph(state: _State, block: Block) -> None:
    context = state.context()
    if state.pending is not None:
        _add(state, block.lines, context, state.pending)
        state.pending = None
        return
    text = "\n".join(line for _, line in block.lines)
    offsets, position = [], 0
    for _, line in block.lines:
        offsets.append(position)
        position += len(line) + 1
    # [start, end, is_rule, first sentence]: a rule keeps the descriptive sentences after it
    groups: list[tuple[int, int, bool, str]] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end].strip()
        is_rule = guess_kind(sentence, context[-1] if context else None) is not None
        if groups and (not is_rule or len(sentence) < BRIEF_ENTRY):
            first_start, _, rule, lead = groups[-1]
            groups[-1] = (first_start, end, rule, lead)
        else:
            groups.append((start, end, is_rule, sentence))
    for start, end, _, lead in groups:
        first, last = _line_at(offsets, start), _line_at(offsets, end - 1)
        _add(state, block.lines[first : last + 1], context, None, text[start:end].strip(), lead)


def _line_at(offsets: list[int], position: int) -> int:
    return max(i for i, start in enumerate(offsets) if start <= position)


def _code(state: _State, block: Block) -> None:
    last = state.drafts[-1] if state.drafts else None
    if last is not None and last.section == state.section:
        gap = block.start - last.end - 1
        if gap <= 1 or last.text.rstrip().endswith(":"):
            last.lines = [*last.lines, *block.lines]
            last.text = last.text + ("\n" if gap == 0 else "\n\n") + _join(block.lines)
            return
    _add(state, block.lines, state.context(), None)


def _join(lines: list[Line]) -> str:
    return "\n".join(text for _, text in lines).strip()


def _plain(text: str) -> str:
    return re.sub(r"(\*\*|__|`)", "", text).strip()
