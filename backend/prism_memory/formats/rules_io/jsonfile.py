"""A rule file written as JSON (a `.clinerules` or `.cursorrules` holding one object of rules):
read as the Markdown it stands for, line for line.

Some teams write their rule file as a JSON object (``{"document_management": {"cardinal_rule":
"Never create new memory-bank documents, …", "procedure": ["1. Before …", …]}}``); read as
Markdown it is one paragraph of punctuation, and every rule in it is lost. When the whole body
parses as JSON and every line is one of the shapes a pretty-printed JSON document has — a key
that opens an object or array, a ``"key": value`` pair, a string of an array, a bracket — each
line becomes its Markdown counterpart at the same line number: a key that opens a container is
a heading (one level per depth), a pair is the entry ``- key: value``, a string of an array is
an entry (a numbered one stays numbered), brackets are blank. The Markdown reader then decides
what is a rule, so a JSON file's rules are read by the same cues as any other file's, and each
keeps its file lines as evidence. A value that is itself an array or object written on its
key's line (``"order": ["builtin", "external"],``) stays as written: one entry, as a value
spread over lines under its key is one heading. Anything else (a string spread over lines,
several pairs on one line) leaves the file to the Markdown reader, as before.
"""

from __future__ import annotations

import json
import re
from typing import Final

from prism_memory.formats.rules_io.blocks import Line

STRING: Final = r'"(?:[^"\\]|\\.)*"'  # a JSON string; TOML's basic string too
_SCALAR: Final = rf"{STRING}|-?\d[\d.eE+-]*|true|false|null"
_KEY_OPEN: Final = re.compile(rf"^\s*(?P<key>{STRING})\s*:\s*(?P<open>[\[{{])\s*$")
_PAIR: Final = re.compile(rf"^\s*(?P<key>{STRING})\s*:\s*(?P<value>{_SCALAR})\s*,?\s*$")
_ITEM: Final = re.compile(rf"^\s*(?P<value>{_SCALAR})\s*,?\s*$")
_BRACKETS: Final = re.compile(r"^\s*[\[\]{}]\s*,?\s*$")
_EMPTY: Final = re.compile(rf"^\s*(?P<key>{STRING})\s*:\s*(?:\[\s*\]|\{{\s*\}})\s*,?\s*$")
_INLINE: Final = re.compile(rf"^\s*(?:(?P<key>{STRING})\s*:\s*)?(?P<value>[\[{{].*[\]}}])\s*,?\s*$")
_NUMBERED: Final = re.compile(r"^\d{1,3}[.)]\s")
MAX_LEVEL: Final = 6


def scalar_text(literal: str) -> str:
    """A JSON scalar as text: a string unescaped (its line breaks as spaces), else as written."""
    value = json.loads(literal)
    if isinstance(value, str):
        return " ".join(value.split("\n")).strip()
    return literal


def _container(found: re.Match[str]) -> bool:
    """Whether the value ``found`` is a whole JSON array or object that holds something
    (``["a", "b"]``, ``{"a": 1}``)."""
    try:
        value = json.loads(found["value"])
    except ValueError:
        return False
    return isinstance(value, (list, dict)) and bool(value)


def as_markdown(lines: list[Line]) -> list[Line] | None:
    """``lines`` (a file's body) as Markdown, line for line, when they are a pretty-printed
    JSON object or array of rules; else None."""
    body = "\n".join(text for _, text in lines).strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        json.loads(body)
    except ValueError:
        return None
    out: list[Line] = []
    depth = 0  # containers open, the outermost one counted
    for number, line in lines:
        if not line.strip():
            out.append((number, ""))
        elif found := _KEY_OPEN.match(line):
            level = min(MAX_LEVEL, depth + 1)
            out.append((number, f"{'#' * level} {scalar_text(found['key'])}"))
            depth += 1
        elif found := _EMPTY.match(line):
            out.append((number, ""))
        elif found := _PAIR.match(line):
            out.append((number, f"- {scalar_text(found['key'])}: {scalar_text(found['value'])}"))
        elif found := _ITEM.match(line):
            value = scalar_text(found["value"])
            out.append((number, value if _NUMBERED.match(value) else f"- {value}"))
        elif (found := _INLINE.match(line)) and (found["key"] or depth) and _container(found):
            key = f"{scalar_text(found['key'])}: " if found["key"] else ""
            out.append((number, f"- {key}{found['value']}"))
        elif _BRACKETS.match(line):
            stripped = line.strip().rstrip(",")
            depth += 1 if stripped in ("{", "[") else -1
            out.append((number, ""))
        else:
            return None  # a shape this reading does not know: the Markdown reader's
    return out
