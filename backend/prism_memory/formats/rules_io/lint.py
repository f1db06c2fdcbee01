"""What a tool would silently skip in a rule file: ``prism export-rules --check``'s lint.

A tool that does not understand a rule file's front matter says nothing: Cursor treats a
quoted ``alwaysApply: "true"`` as not always-applied, Copilot ignores an ``applyTo`` list,
and a ``globs``/``paths``/``applyTo`` pattern that names no file of the repository never
loads its rules. Each finding names the file, the line, the key, the value, and what the
tool expects (the keys and types of :mod:`.tools`, from each tool's documentation):

- ``front_matter_not_read``: front matter in a file of a tool that reads none (AGENTS.md,
  CLAUDE.md, GEMINI.md, ``.cursorrules``, ``copilot-instructions.md``…): the agent sees it
  as text, and nothing in it scopes the rules.
- ``front_matter_invalid``: a line of the front matter that is not ``key: value`` (or an
  item of a list): the tool's YAML reader rejects the block.
- ``unknown_key``: a key the tool does not read.
- ``ill_typed_key``: a key the tool reads, with a value of another type or outside the
  values it knows.
- ``pattern_matches_nothing``: a glob that matches no file under the repository's root
  (except one of the globs an export writes for a surface, ``**/*.pyi`` beside a
  ``**/*.py`` that matches: the surface's breadth, not a mistake).

Globs are matched leniently, so a finding is never a matter of dialect: ``**`` spans
folders, ``{a,b}`` alternates, and a pattern without a ``/`` (``*.py``) matches a file of
that name in any folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from prism_memory.formats.rules_io.frontmatter import FrontMatter, parse_front_matter
from prism_memory.formats.rules_io.records import FileFormat
from prism_memory.formats.rules_io.surfaces import SURFACE_GLOBS
from prism_memory.formats.rules_io.tools import Tool, tool_for

BRACE_EXPANSIONS_MAX: Final = 64
# The globs an export writes for a surface: one that matches nothing beside one that does
# is the surface's breadth (no `.pyi` files), not a mistake.
_SURFACE_GLOBS: Final = frozenset(g for globs in SURFACE_GLOBS.values() for g in globs)
_BRACES: Final = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Finding:
    """One thing the tool would skip, and why."""

    code: str
    path: str
    line: int | None
    message: str
    key: str | None = None
    value: Any = None
    expected: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "key": self.key,
            "value": self.value,
            "expected": self.expected,
            "message": self.message,
        }


def lint_rule_file(path: str, text: str, fmt: FileFormat, files: Sequence[str]) -> list[Finding]:
    """Findings for one file of ``fmt``'s tool.

    Args:
        path: the file as shown in findings.
        text: its text.
        fmt: the tool's format (from ``--format``).
        files: every file of the repository, relative to its root with ``/`` separators
            (empty: the patterns are not checked).
    """
    tool = tool_for(fmt)
    if tool is None:
        return []
    lines = text.split("\n")
    front = parse_front_matter(lines)
    if not front.values and not front.ignored:
        return []
    where = _key_lines(lines, front)
    if not tool.reads_front_matter:
        return [
            Finding(
                "front_matter_not_read",
                path,
                where.get(key),
                f"{path}:{where.get(key)}: {tool.title} reads no front matter; '{key}' is "
                "shown to the agent as text and scopes nothing",
                key,
                value,
                "no front matter",
            )
            for key, value in front.values.items()
        ]
    findings = [
        Finding(
            "front_matter_invalid",
            path,
            number,
            f"{path}:{number}: not a 'key: value' line; {tool.title} cannot read this front matter",
        )
        for number in front.ignored
    ]
    for key, value in front.values.items():
        findings.extend(_key_findings(tool, path, where.get(key), key, value, files))
    return findings


def _key_findings(
    tool: Tool, path: str, line: int | None, key: str, value: Any, files: Sequence[str]
) -> list[Finding]:
    check = tool.keys.get(key)
    if check is None:
        known = ", ".join(tool.keys)
        return [
            Finding(
                "unknown_key",
                path,
                line,
                f"{path}:{line}: {tool.title} does not read '{key}' (it reads {known})",
                key,
                value,
                known,
            )
        ]
    expected = check(value)
    if expected is not None:
        return [
            Finding(
                "ill_typed_key",
                path,
                line,
                f"{path}:{line}: '{key}' is {value!r}; {tool.title} expects {expected}",
                key,
                value,
                expected,
            )
        ]
    if key != tool.scope_key or not files:
        return []
    patterns = _patterns(value)
    unmatched = [p for p in patterns if not matches_any(p, files)]
    if len(unmatched) < len(patterns):  # a surface's own globs (`**/*.pyi` beside `**/*.py`)
        unmatched = [p for p in unmatched if p not in _SURFACE_GLOBS]
    return [
        Finding(
            "pattern_matches_nothing",
            path,
            line,
            f"{path}:{line}: {key} pattern '{pattern}' matches no file in the repository; "
            "its rules never load",
            key,
            pattern,
            "a pattern that matches a file",
        )
        for pattern in unmatched
    ]


def _patterns(value: Any) -> list[str]:
    parts = value if isinstance(value, list) else str(value).split(",")
    return [p.strip().strip("'\"") for p in parts if p.strip().strip("'\"")]


def _key_lines(lines: list[str], front: FrontMatter) -> dict[str, int]:
    """The 1-based line of each front matter key."""
    found: dict[str, int] = {}
    for i in range(1, max(front.body_start - 1, 1)):
        key = re.match(r"^([A-Za-z_][\w.-]*)[ \t]*:", lines[i])
        if key:
            found.setdefault(key[1], i + 1)
    return found


def matches_any(pattern: str, files: Iterable[str]) -> bool:
    """Whether a glob matches one of ``files`` (see the module doc for the dialect)."""
    regexes = [_regex(p) for p in _expand(pattern.strip().removeprefix("./").lstrip("/"))]
    return any(r.fullmatch(f) for f in files for r in regexes)


def _expand(pattern: str) -> list[str]:
    """``{a,b}`` alternatives spelled out, at most :data:`BRACE_EXPANSIONS_MAX`."""
    out: list[str] = []
    todo = [pattern]
    while todo and len(out) + len(todo) <= BRACE_EXPANSIONS_MAX:
        current = todo.pop()
        found = _BRACES.search(current)
        if found is None:
            out.append(current)
            continue
        head, tail = current[: found.start()], current[found.end() :]
        todo.extend(head + choice + tail for choice in found[1].split(","))
    return out + todo


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    anywhere = "/" not in pattern.rstrip("/")
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[" and (end := pattern.find("]", i + 2)) > 0:
            inner = pattern[i + 1 : end]
            inner = "^" + inner[1:] if inner.startswith("!") else inner
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    body = "".join(out).rstrip("/")
    # A folder names what is in it; a bare name matches in any folder.
    return re.compile(("(?:.*/)?" if anywhere else "") + body + "(?:/.*)?")
