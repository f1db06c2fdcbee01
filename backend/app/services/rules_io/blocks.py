"""A small Markdown block scanner: headings, list items, paragraphs, code, tables, comments.

Enough of CommonMark for rule files: ATX and setext headings, ``-``/``*``/``+``/``1.`` list
items with indented and lazy continuation lines, fenced code, tables, block quotes, HTML
comments and thematic breaks. A list item keeps its content lines (dedented) so that the
caller can scan them again for nested lists. Every line keeps its 1-based file line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

Line = tuple[int, str]

_FENCE: Final = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HEADING: Final = re.compile(r"^(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?[ \t]*#*[ \t]*$")
_BREAK: Final = re.compile(r"^(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ITEM: Final = re.compile(r"^(?P<marker>[-*+]|\d{1,9}[.)])(?P<space>[ \t]+|$)(?P<rest>.*)$")
_SETEXT: Final = re.compile(r"^(?P<char>=+|-+)[ \t]*$")


@dataclass
class Block:
    """One block. ``kind`` is heading, item, paragraph, quote, code, table, comment or break.

    ``lines`` are the block's lines (item content dedented); ``level`` is a heading's level.
    """

    kind: str
    lines: list[Line] = field(default_factory=list)
    level: int = 0
    text: str = ""

    @property
    def start(self) -> int:
        return self.lines[0][0]

    @property
    def end(self) -> int:
        return self.lines[-1][0]


def indent_of(line: str) -> int:
    """Leading whitespace width (a tab advances to the next multiple of 4)."""
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def dedent(line: str, width: int) -> str:
    """Remove ``width`` columns of leading whitespace (a tab that overshoots leaves spaces)."""
    taken = 0
    for i, ch in enumerate(line):
        if taken >= width or ch not in " \t":
            return " " * (taken - width) + line[i:]
        taken += 1 if ch == " " else 4 - taken % 4
    return " " * max(0, taken - width)


def scan(lines: list[Line]) -> list[Block]:
    """Split lines into blocks, in order."""
    blocks: list[Block] = []
    i, n = 0, len(lines)
    while i < n:
        number, line = lines[i]
        if not line.strip():
            i += 1
            continue
        width, body = indent_of(line), line.lstrip(" \t")
        if width <= 3 and (fence := _FENCE.match(body)):
            i = _code(lines, i, fence["fence"], width, blocks)
        elif width <= 3 and body.startswith("<!--"):
            i = _comment(lines, i, blocks)
        elif width <= 3 and (heading := _HEADING.match(body)):
            text = (heading["text"] or "").strip()
            blocks.append(Block("heading", [(number, line)], len(heading["hashes"]), text))
            i += 1
        elif width <= 3 and _BREAK.match(body):
            blocks.append(Block("break", [(number, line)]))
            i += 1
        elif _ITEM.match(body):
            i = _item(lines, i, blocks)
        elif width <= 3 and body.startswith("|"):
            j = i
            while j < n and lines[j][1].lstrip().startswith("|"):
                j += 1
            blocks.append(Block("table", lines[i:j]))
            i = j
        elif width <= 3 and body.startswith(">"):
            j = i
            while j < n and lines[j][1].lstrip().startswith(">"):
                j += 1
            quoted = [(no, re.sub(r"^\s*>\s?", "", text)) for no, text in lines[i:j]]
            blocks.append(Block("quote", quoted))
            i = j
        else:
            i = _paragraph(lines, i, blocks)
    return blocks


def starts_block(line: str) -> bool:
    """True when ``line`` opens a block that interrupts a paragraph or a lazy continuation."""
    width, body = indent_of(line), line.lstrip(" \t")
    if width > 3:
        return False
    return bool(
        _FENCE.match(body)
        or _HEADING.match(body)
        or _BREAK.match(body)
        or _ITEM.match(body)
        or body.startswith(("<!--", "|", ">"))
    )


def _code(lines: list[Line], i: int, fence: str, width: int, blocks: list[Block]) -> int:
    j = i + 1
    while j < len(lines):
        body = lines[j][1].lstrip(" \t")
        closes = body.startswith(fence[0] * len(fence)) and not body.strip(fence[0]).strip()
        if indent_of(lines[j][1]) <= 3 and closes:
            j += 1
            break
        j += 1
    blocks.append(Block("code", [(no, dedent(text, width)) for no, text in lines[i:j]]))
    return j


def _comment(lines: list[Line], i: int, blocks: list[Block]) -> int:
    j = i
    while j < len(lines) and "-->" not in lines[j][1]:
        j += 1
    j = min(j + 1, len(lines))
    text = "\n".join(text for _, text in lines[i:j]).strip()
    blocks.append(Block("comment", lines[i:j], text=text))
    return j


def _paragraph(lines: list[Line], i: int, blocks: list[Block]) -> int:
    j = i + 1
    while j < len(lines) and lines[j][1].strip():
        if setext := _SETEXT.match(lines[j][1].strip()):
            text = " ".join(t.strip() for _, t in lines[i:j])
            level = 1 if setext["char"].startswith("=") else 2
            blocks.append(Block("heading", lines[i : j + 1], level, text))
            return j + 1
        if starts_block(lines[j][1]):
            break
        j += 1
    blocks.append(Block("paragraph", [(no, text.strip()) for no, text in lines[i:j]]))
    return j


def _item(lines: list[Line], i: int, blocks: list[Block]) -> int:
    number, line = lines[i]
    width = indent_of(line)
    found = _ITEM.match(line.lstrip(" \t"))
    assert found is not None
    space = len(found["space"].expandtabs(4)) if found["rest"] else 1
    content = width + len(found["marker"]) + (space if space <= 4 else 1)
    item: list[Line] = [(number, found["rest"])]
    fenced = found["rest"].lstrip().startswith(("```", "~~~"))
    j, n = i + 1, len(lines)
    while j < n:
        no, text = lines[j]
        if not text.strip():
            k = j
            while k < n and not lines[k][1].strip():
                k += 1
            if k < n and indent_of(lines[k][1]) >= content:
                item.extend((m, dedent(t, content)) for m, t in lines[j:k])
                j = k
                continue
            break
        if indent_of(text) >= content:
            inner = dedent(text, content)
            if inner.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            item.append((no, inner))
        elif not fenced and item[-1][1].strip() and not starts_block(text):
            item.append((no, text.strip()))  # a lazy continuation line
        else:
            break
        j += 1
    blocks.append(Block("item", item, level=width))
    return j
