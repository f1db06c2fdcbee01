"""A tiny, safe reader for the YAML-ish front matter rule files carry.

Only what Cursor (``description``, ``globs``, ``alwaysApply``) and Copilot (``applyTo``,
``description``) files use: ``key: value`` lines with plain, quoted, boolean, flow-list
(``[a, b]``) and block-list (``- a``) values, and ``|``/``>`` block text. No tags, anchors,
aliases or object construction: values are strings, booleans or lists of strings. Cursor
writes globs unquoted (``globs: **/*.py``), which a real YAML parser rejects as an alias.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

FrontValue = str | bool | list[str]

_FENCE: Final = re.compile(r"^---\s*$")
_END: Final = re.compile(r"^(---|\.\.\.)\s*$")
# Values are taken whole and stripped after: ``.*?\s*$`` would retry every offset of a
# long run of spaces.
_KEY: Final = re.compile(r"^(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:\s+(?P<value>.*))?$")
_ITEM: Final = re.compile(r"^\s+-\s+(?P<value>.*)$")
MAX_LINES: Final = 200
_TRUE: Final = frozenset({"true", "yes", "on"})
_FALSE: Final = frozenset({"false", "no", "off"})


@dataclass(frozen=True)
class FrontMatter:
    """Front matter values and where the body starts.

    Attributes:
        values: key → value (keys as written).
        body_start: index of the first body line (0 when there is no front matter).
        ignored: 1-based line numbers of lines that were not understood.
    """

    values: dict[str, FrontValue] = field(default_factory=dict)
    body_start: int = 0
    ignored: list[int] = field(default_factory=list)

    def text(self, key: str) -> str | None:
        """A value as one string (lists joined with commas)."""
        value = self.values.get(key)
        if isinstance(value, list):
            return ",".join(value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return value

    def flag(self, key: str) -> bool | None:
        """A boolean value (``true``/``false``), or None when absent or not a boolean."""
        value = self.values.get(key)
        return value if isinstance(value, bool) else None

    def globs(self, key: str) -> list[str]:
        """A glob list: a list value, or a comma-separated string, stripped of quotes."""
        value = self.values.get(key)
        if value is None or isinstance(value, bool):
            return []
        parts = value if isinstance(value, list) else value.split(",")
        return [p.strip().strip("'\"") for p in parts if p.strip().strip("'\"")]


def parse_front_matter(lines: list[str]) -> FrontMatter:
    """Read front matter from the top of a file.

    Args:
        lines: the file's lines (newlines removed).

    Returns:
        The values and the body's first line; an empty :class:`FrontMatter` when the file
        does not open with ``---`` or the block is never closed within :data:`MAX_LINES`.
    """
    if not lines or not _FENCE.match(lines[0]):
        return FrontMatter()
    end = next(
        (i for i in range(1, min(len(lines), MAX_LINES)) if _END.match(lines[i])),
        None,
    )
    if end is None:
        return FrontMatter()
    values: dict[str, FrontValue] = {}
    ignored: list[int] = []
    i = 1
    while i < end:
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        found = _KEY.match(line)
        if found is None:
            ignored.append(i + 1)
            i += 1
            continue
        key, raw = found["key"], (found["value"] or "").strip()
        i += 1
        if raw in ("|", ">", "|-", ">-", "|+", ">+"):
            block = []
            while i < end and (not lines[i].strip() or lines[i][:1] in " \t"):
                block.append(lines[i].strip())
                i += 1
            values[key] = ("\n" if raw.startswith("|") else " ").join(block).strip()
        elif not raw:
            items = []
            while i < end and (item := _ITEM.match(lines[i])):
                items.append(_scalar_text(item["value"].strip()))
                i += 1
            values[key] = items if items else ""
        else:
            values[key] = _value(raw)
    return FrontMatter(values, end + 1, ignored)


def _value(raw: str) -> FrontValue:
    if raw.startswith("[") and raw.endswith("]"):
        return [_scalar_text(p) for p in _split_flow(raw[1:-1]) if p.strip()]
    lowered = raw.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return _scalar_text(raw)


def _scalar_text(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] == '"' and (end := _closing(raw, '"')) > 0:
        inner = raw[1:end]
        return re.sub(r'\\(["\\nt])', lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), inner)
    if raw[:1] == "'" and (end := _closing(raw, "'")) > 0:
        return raw[1:end].replace("''", "'")
    if " #" in raw:  # a trailing comment on a plain value
        raw = raw.split(" #", 1)[0].rstrip()
    return raw


def _closing(raw: str, quote: str) -> int:
    """Index of the quote that closes ``raw[0]`` (-1 if none): ``\\"`` and ``''`` escape."""
    i = 1
    while i < len(raw):
        if quote == '"' and raw[i] == "\\":
            i += 2
            continue
        if raw[i] == quote:
            if quote == "'" and raw[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def _split_flow(inner: str) -> list[str]:
    parts, current, quote = [], [], ""
    for ch in inner:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts
