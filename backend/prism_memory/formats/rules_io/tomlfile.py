"""A rule file written as TOML tables (a `.clinerules` of ``[section]`` tables and
``key = [ "…", … ]`` arrays of rules): read as the Markdown it stands for, line for line.

Read as Markdown such a file is a few paragraphs of brackets and quotes, and every rule in it
is descriptive text. When each line of the body is one of the shapes these files have (a
``# comment``, a table header ``[a.b]``, a ``key = [`` that opens an array, a ``key = value``
pair, a string or inline table of an array, the ``]`` that closes it) and there is a table or
an array, each line becomes its Markdown counterpart at the same line number: a table is a
``##`` heading named as written (a dotted name is a whole path, and a table is no document
title), a key that opens an array a heading below it, a pair the entry ``- key: value``, a
string of an array an entry, a comment its own text (a comment can say something) or nothing
when it holds no word (``# -----``). Arrays and inline tables written on one line stay as
written. The Markdown reader then decides what is a rule, as for a JSON rule file
(:mod:`.jsonfile`). The file need not be valid TOML (``{ phase: 1, name: "Types" }`` is a
common slip); anything else (a multi-line string, a comment inside an array, a value spread
over lines outside an array) leaves the file to the Markdown reader.
"""

from __future__ import annotations

import re
from typing import Final

from prism_memory.formats.rules_io.blocks import Line
from prism_memory.formats.rules_io.jsonfile import STRING as _BASIC
from prism_memory.formats.rules_io.jsonfile import scalar_text

_KEY: Final = rf"[A-Za-z0-9_-]+|{_BASIC}"
_LITERAL: Final = r"'[^'\n]*'"
_SCALAR: Final = rf"{_BASIC}|{_LITERAL}|[-+]?\d[\d_.eE:+-]*|true|false"
_TABLE: Final = re.compile(rf"^\s*\[\[?\s*(?P<name>(?:{_KEY})(?:\s*\.\s*(?:{_KEY}))*)\s*\]\]?\s*$")
_OPEN: Final = re.compile(rf"^\s*(?P<key>{_KEY})\s*=\s*\[\s*$")
_PAIR: Final = re.compile(rf"^\s*(?P<key>{_KEY})\s*=\s*(?P<value>{_SCALAR}|[\[{{].*[\]}}])\s*$")
_ITEM: Final = re.compile(rf"^\s*(?P<value>{_BASIC}|{_LITERAL})\s*,?\s*$")
_INLINE_ITEM: Final = re.compile(r"^\s*(?P<value>\{.*\}|\[.*\])\s*,?\s*$")
_CLOSE: Final = re.compile(r"^\s*\]\s*,?\s*$")
_COMMENT: Final = re.compile(r"^\s*#+\s?(?P<text>.*)$")
_WORD: Final = re.compile(r"\w")


def _text(literal: str) -> str:
    """A TOML key or scalar as text: a basic string unescaped, a literal string without its
    quotes, a bare key or number as written."""
    if literal.startswith('"'):
        try:
            return scalar_text(literal)  # a basic string is written as JSON's
        except ValueError:
            return literal[1:-1]  # with an escape JSON does not know ("\U0001F600")
    if literal.startswith("'"):
        return literal[1:-1]
    return literal


def as_markdown(lines: list[Line]) -> list[Line] | None:
    """``lines`` (a file's body) as Markdown, line for line, when they are TOML tables and
    arrays of rules; else None."""
    out: list[Line] = []
    in_array = False
    tables = arrays = 0
    for number, line in lines:
        if not line.strip():
            out.append((number, ""))
        elif in_array:
            if _CLOSE.match(line):
                in_array = False
                out.append((number, ""))
            elif found := _ITEM.match(line):
                out.append((number, f"- {_text(found['value'])}"))
            elif found := _INLINE_ITEM.match(line):
                out.append((number, f"- {found['value']}"))
            else:
                return None  # a comment between entries has no place in a list
        elif found := _COMMENT.match(line):
            text = found["text"].strip()
            out.append((number, text if _WORD.search(text) else ""))  # "# -----" is markup
        elif found := _TABLE.match(line):
            tables += 1
            out.append((number, f"## {found['name'].strip()}"))
        elif found := _OPEN.match(line):
            arrays += 1
            in_array = True
            # an array's key under the table it is in; before any table, a section of its own
            out.append((number, f"{'###' if tables else '##'} {_text(found['key'])}"))
        elif found := _PAIR.match(line):
            out.append((number, f"- {_text(found['key'])}: {_text(found['value'])}"))
        else:
            return None  # a shape this reading does not know: the Markdown reader's
    if in_array or not (tables or arrays):
        return None
    return out
