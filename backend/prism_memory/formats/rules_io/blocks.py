"""Markdown as a tree of blocks, from markdown-it-py's CommonMark token stream.

The parser decides what a list item, a paragraph, a code span or a fence is; this module
only turns its flat token stream into nested :class:`Node` objects with 1-based file line
numbers, and reads back the source lines a node covers (the text is never re-rendered, so
``__init__`` and ``from __future__ import annotations`` stay as written). Tables are on;
raw HTML is recognised (comments are found as ``html_block`` / ``html_inline`` tokens).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.token import Token

Line = tuple[int, str]
_OPEN: Final = "<!--"
_CLOSE: Final = "-->"


@dataclass
class Node:
    """One block: ``kind`` is the token type without ``_open`` (``paragraph``, ``list_item``,
    ``bullet_list``, ``heading``, ``fence``, ``html_block``, ``table``...).

    ``start``/``end`` are 1-based inclusive file lines; ``inline`` is the inline token of a
    paragraph or heading; ``token`` the opening (or only) token.
    """

    kind: str
    token: Token
    start: int
    end: int
    children: list[Node] = field(default_factory=list)
    inline: Token | None = None

    @property
    def level(self) -> int:
        """A heading's level (1-6), else 0."""
        return int(self.token.tag[1]) if self.kind == "heading" else 0


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def parse(text: str, first_line: int) -> list[Node]:
    """The top-level blocks of ``text``, whose first line is file line ``first_line``.

    A line at the margin right after a list entry that a reader sees as a block of its own
    ("All database tables are defined in …", "**IMPORTANTE**") is, for CommonMark, the
    entry's lazy continuation; it is parsed as if a blank line came before it (the lines'
    numbers are those of the text as written)."""
    lines = text.split("\n")
    tokens = _parser().parse(text)
    breaks = _lazy_starts(tokens, lines)
    origin = list(range(len(lines)))
    if breaks:  # parsed again, only when a line is to start a block of its own
        spaced: list[str] = []
        origin = []
        for index, line in enumerate(lines):
            if index in breaks:
                spaced.append("")
                origin.append(index)  # the blank line stands where its line starts
            spaced.append(line)
            origin.append(index)
        tokens = _parser().parse("\n".join(spaced))
    root: list[Node] = []
    stack: list[Node] = []
    for token in tokens:
        if token.nesting == -1:
            stack.pop()
            continue
        begin, stop = token.map if token.map else (0, 0)
        if token.map:
            begin, stop = origin[begin], origin[stop - 1] + 1
        if token.type == "inline":
            if stack:
                stack[-1].inline = token
            continue
        node = Node(
            token.type.removesuffix("_open"), token, begin + first_line, stop + first_line - 1
        )
        (stack[-1].children if stack else root).append(node)
        if token.nesting == 1:
            stack.append(node)
    return root


# what a line that wraps on into the next ends with: a comma, a dash, a word that joins
_WRAPS_ON: Final = re.compile(
    r"(?:[,;:(–—\-/&+]|\b(?:and|or|the|a|an|to|of|for|with|in|on|by|und|oder|et|ou|y|e|o|de"
    r"|di|la|le|el|les|der|die|das))\s*$",
    re.IGNORECASE,
)
_OPENS: Final = re.compile(r"^(?:\*\*|[A-ZÀ-ÞА-ЯЁ])")
# a part of the entry above it, named by a short label ("Do: keep the defaults", "Do not: …",
# "Why: …"): the entry's own lines, not a block of their own
_PART: Final = re.compile(r"^(?:\*\*)?[^\s:*]+(?:\s[^\s:*]+){0,2}(?:\*\*)?:(?:\*\*)?\s")
# an entry that is only a bold title ("2. **Approval Required**"): the lines after it are
# its body, at the margin or not
_TITLE_ONLY: Final = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\*\*[^*\n]+\*\*[:：]?\s*$")


def _lazy_starts(tokens: list[Token], lines: list[str]) -> set[int]:
    """The 0-based lines where a list entry's lazy continuation opens a block of its own: a
    line at the margin of a paragraph inside a list item, opening with a capital or "**" and
    not with a short label of a part of the entry ("Do:", "Do not:"), after a line that does
    not go on into it, in an entry that is more than a bold title.
    (In Chinese and Japanese, which wrap no line, a line after an entry's is its body.)"""
    starts: set[int] = set()
    # the content column of each open list item; an inner item's is right of its parent's,
    # so the outermost one is the smallest
    columns: list[int] = []
    for token in tokens:
        if token.type == "list_item_open" and token.map:
            first = lines[token.map[0]]
            columns.append(indent_of(first) + len(token.info) + len(token.markup) + 1)
        elif token.type == "list_item_close":
            columns.pop()
        elif token.type == "paragraph_open" and token.map and columns:
            begin, stop = token.map
            if _TITLE_ONLY.match(lines[begin]):
                continue
            for index in range(begin + 1, min(stop, len(lines))):
                line = lines[index]
                if (
                    indent_of(line) < columns[0]
                    and _OPENS.match(line)
                    and not _PART.match(line)
                    and not _WRAPS_ON.search(lines[index - 1])
                ):
                    starts.add(index)
                    break
    return starts


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
    """Remove up to ``width`` columns of leading whitespace."""
    taken = 0
    for i, ch in enumerate(line):
        if taken >= width or ch not in " \t":
            return " " * max(0, taken - width) + line[i:]
        taken += 1 if ch == " " else 4 - taken % 4
    return ""


def item_lines(node: Node, lines: dict[int, str], skip: set[int]) -> list[Line]:
    """A list item's own source lines: its marker removed, its content indent removed,
    the lines in ``skip`` (nested lists, comments) left out, trailing blank lines dropped."""
    first = lines[node.start]
    width = indent_of(first)
    rest = first.lstrip(" \t")[len(node.token.markup) + len(node.token.info) :]
    gap = len(rest) - len(rest.lstrip(" \t"))
    content = width + len(node.token.info) + len(node.token.markup) + (gap if gap <= 4 else 1)
    out: list[Line] = [(node.start, rest.lstrip(" \t") if gap <= 4 else rest[1:])]
    for number in range(node.start + 1, node.end + 1):
        if number not in skip:
            out.append((number, dedent(lines.get(number, ""), content)))
    while out and not out[-1][1].strip():
        out.pop()
    return out


def comments_in(token: Token | None) -> list[str]:
    """The HTML comments of an inline token (outside code spans: the parser knows)."""
    if token is None or not token.children:
        return []
    return [
        c.content for c in token.children if c.type == "html_inline" and c.content.startswith(_OPEN)
    ]


def plain_inline(token: Token | None) -> str:
    """An inline token's text with emphasis markup dropped and code spans kept verbatim."""
    if token is None or not token.children:
        return ""
    out = []
    for child in token.children:
        if child.type == "code_inline":
            out.append(child.markup + child.content + child.markup)
        elif child.type in ("text", "html_inline") and not child.content.startswith(_OPEN):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return " ".join("".join(out).split())


def text_tokens(token: Token | None) -> list[str]:
    """The plain-text pieces of an inline token (no code spans, no HTML): where ``@path``
    imports may appear."""
    if token is None or not token.children:
        return []
    return [c.content for c in token.children if c.type == "text"]


def html_comments(text: str) -> list[tuple[int, str]]:
    """``(offset, comment)`` for every ``<!-- … -->`` of ``text``, in order: one linear scan
    (a ``<!--`` never closed is no comment, as ``<!--.*?-->`` would read it)."""
    found: list[tuple[int, str]] = []
    at = text.find(_OPEN)
    while at >= 0:
        close = text.find(_CLOSE, at + len(_OPEN))
        if close < 0:
            break
        found.append((at, text[at : close + len(_CLOSE)]))
        at = text.find(_OPEN, close + len(_CLOSE))
    return found


def strip_comments(text: str, comments: list[str]) -> str:
    """``text`` without the given comments (each once, in order), line ends trimmed outside
    fenced code."""
    pieces, cursor = [], 0
    for comment in comments:
        at = text.find(comment, cursor)
        if at < 0:
            continue
        pieces.append(text[cursor:at])
        cursor = at + len(comment)
    pieces.append(text[cursor:])
    lines = "".join(pieces).split("\n")
    # a code line keeps its trailing spaces: the body is the code as written, and a rule
    # exported into a list entry (with its marker comment) reads back the same
    return "\n".join(
        line if code else line.rstrip() for line, code in zip(lines, fenced(lines), strict=True)
    ).strip("\n")


def comment_lines(raw: str, comments: list[str], first_line: int) -> list[int]:
    """The file line each of ``comments`` (in order) starts on in ``raw``."""
    lines, cursor, line = [], 0, first_line
    for comment in comments:
        at = raw.find(comment, cursor)
        if at < 0:
            lines.append(line)
            continue
        line += raw.count("\n", cursor, at)
        lines.append(line)
        line += comment.count("\n")
        cursor = at + len(comment)
    return lines


def is_comment(text: str) -> bool:
    """True for an HTML block that is only comments."""
    if not text.strip():
        return False
    comments = html_comments(text)
    return not strip_comments(text, [c for _, c in comments]).strip()


_HASH_LINE: Final = re.compile(r"^# (?=\S)")
_CJK_NUMBER: Final = re.compile(r"^(\s*\d{1,3})[，、](?=\S)")


# a bullet a document or a web page leaves when its list is pasted as text
_PASTED_BULLET: Final = re.compile(r"^(\s*)[•●▪◦](?=[ \t])")


def _pasted_bullets(texts: list[str], code: list[bool]) -> list[str]:
    """A run of lines that open with a pasted bullet read as ``-`` entries, when what follows
    the run cannot go on the last entry's text (a blank line, an indented line, the end): a
    paragraph right after the run would be read as the last entry's lazy continuation."""
    out = list(texts)
    i = 0
    while i < len(out):
        if code[i] or not _PASTED_BULLET.match(out[i]):
            i += 1
            continue
        end = i
        while end < len(out) and not code[end] and _PASTED_BULLET.match(out[end]):
            end += 1
        after = out[end] if end < len(out) else ""
        if not after.strip() or after[:1].isspace():
            for j in range(i, end):
                out[j] = _PASTED_BULLET.sub(r"\1-", out[j], count=1)
        i = end
    return out


def as_list_items(texts: list[str]) -> list[str]:
    """The lines the Markdown parser reads: a file that uses ``#`` as a comment mark on its
    lines (most non-blank lines start with ``# ``, and most of those are followed by another
    one: no section has a body) has those lines read as list entries, not as headings; and
    ``1，`` / ``1、`` (a CJK enumeration) is read as ``1. ``, and a bullet pasted from a
    document (``•``, ``●``, ``▪``, ``◦``) as ``-``. Items are cut from the source
    lines by the marker's width, so every item's text is still its source text."""
    code = fenced(texts)  # a CJK number made "1. " opens or closes no fence
    out = [
        t if inside else _CJK_NUMBER.sub(lambda m: m[1] + ". ", t)
        for t, inside in zip(texts, code, strict=True)
    ]
    out = _pasted_bullets(out, code)
    filled = [t for t in out if t.strip()]
    hashed = [_HASH_LINE.match(t) is not None for t in filled]
    if sum(hashed) >= 3 and 3 * sum(hashed) >= 2 * len(filled):
        bare = sum(1 for a, b in itertools.pairwise(hashed) if a and b)
        if 2 * bare >= sum(hashed):
            out = [("- " + t[2:]) if _HASH_LINE.match(t) else t for t in out]
    return out


# A line that is only one opening or closing tag ("<law>", "</language_rules>", "<br/>");
# not a comment, not an autolink ("<https://…>").
_TAG_LINE: Final = re.compile(r"^ {0,3}</?[A-Za-z][\w.:-]*(?:\s+[^<>]*)?/?>\s*$")
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fenced(texts: list[str]) -> list[bool]:
    """For each line, whether it is inside fenced code (its fences too)."""
    out: list[bool] = []
    fence = ""
    for text in texts:
        opened = _FENCE.match(text)
        if fence:
            closes = (
                opened is not None and opened[1][0] == fence[0] and len(opened[1]) >= len(fence)
            )
            if closes and not text.strip().lstrip(fence[0]):
                fence = ""
            out.append(True)
            continue
        if opened is not None:
            fence = opened[1]
        out.append(opened is not None)
    return out


def without_tag_lines(texts: list[str]) -> list[str]:
    """The lines with every line that is only an opening or closing tag blank, outside fenced
    code. XML-style tags around rules (``<law>`` … ``</law>``, ``<language_rules>``, as
    prompts for Claude write them) are markup: the lines between are read as Markdown, not
    as one block of raw HTML, and no tag is a unit of its own. Line numbers are kept."""
    return [
        text if code or not _TAG_LINE.match(text) else ""
        for text, code in zip(texts, fenced(texts), strict=True)
    ]
