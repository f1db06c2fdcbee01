"""Each tool's own rule-file format: where its files live, the front matter it reads, and how
``applies_to.surface`` maps to its scoping key.

From each tool's documentation (checked against real files in public repositories):

- Claude Code: ``CLAUDE.md`` (no front matter); ``.claude/rules/*.md`` with an optional
  ``paths:`` list of globs — a rule without ``paths`` loads in every session.
- AGENTS.md, GEMINI.md, ``.cursorrules``, ``.windsurfrules``, a ``.clinerules`` file, and
  ``.github/copilot-instructions.md``: plain Markdown, no front matter.
- Cursor ``.cursor/rules/*.mdc``: ``description`` (text), ``globs`` (comma-separated text
  or a list), ``alwaysApply`` (a boolean; the string ``"true"`` is not one).
- Copilot ``.github/instructions/*.instructions.md``: ``applyTo`` (one text of
  comma-separated globs; ``**`` is every file), ``description``, ``name``,
  ``excludeAgent`` (``code-review`` or ``coding-agent``).
- Windsurf ``.windsurf/rules/*.md``: ``trigger`` (``always_on``, ``manual``,
  ``model_decision`` or ``glob``), ``globs``, ``description``.
- Cline ``.clinerules/*.md``: ``paths`` (a list of globs), the only condition it reads.

Single-file formats hold every group of rules in one file; folder formats write one file
per group (``--out`` is the folder: ``.cursor/rules``, ``.claude/rules``…), with the front
matter that scopes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from prism_memory.formats.rules_io.frontmatter import FrontValue
from prism_memory.formats.rules_io.records import FileFormat
from prism_memory.formats.rules_io.surfaces import globs_for

DERIVED_DESCRIPTION: Final = "Prism memorules - "
# A key's type check: None when the value is fine, else what the tool expects.
TypeCheck = Callable[[FrontValue], str | None]


def _text(value: FrontValue) -> str | None:
    return None if isinstance(value, str) else "a text"


def _flag(value: FrontValue) -> str | None:
    return None if isinstance(value, bool) else "true or false (unquoted)"


def _globs(value: FrontValue) -> str | None:
    if isinstance(value, str) or (isinstance(value, list) and value):
        return None
    return "a glob, comma-separated globs, or a list of globs"


def _glob_list(value: FrontValue) -> str | None:
    if isinstance(value, list) and value:
        return None
    if isinstance(value, str) and value:
        return None  # a single glob on one line: read by Claude Code and Cline alike
    return "a list of globs"


def _comma_text(value: FrontValue) -> str | None:
    return None if isinstance(value, str) and value else "one text of comma-separated globs"


def _one_of(*allowed: str) -> TypeCheck:
    def check(value: FrontValue) -> str | None:
        return None if value in allowed else "one of " + ", ".join(allowed)

    return check


@dataclass(frozen=True)
class Tool:
    """One tool's format.

    Attributes:
        fmt: the format (also the ``export-rules --format`` name).
        file_name: the one file of a single-file format; None for a folder format.
        suffix: a folder format's file name ending (``.mdc``, ``.instructions.md``, ``.md``).
        keys: the front matter keys the tool reads, each with its type check; empty when
            it reads no front matter.
        scope_key: the key that lists the globs a file applies to (``globs``, ``paths``,
            ``applyTo``), or None.
        derive: the front matter an export writes for a group's ``applies_to`` (before
            the kept front matter of the rules' source file is laid over it).
        title: how the tool and its file are named in help and findings.
        home: the folder, from the repository's root, the tool reads the files from.
    """

    fmt: FileFormat
    title: str
    home: str = "."
    file_name: str | None = None
    suffix: str = ".md"
    keys: dict[str, TypeCheck] = field(default_factory=dict)
    scope_key: str | None = None
    derive: Callable[[dict[str, str], str], dict[str, Any]] = lambda applies, title: {}

    @property
    def reads_front_matter(self) -> bool:
        return bool(self.keys)


def _cursor(applies: dict[str, str], title: str) -> dict[str, Any]:
    globs = globs_for(applies.get("surface"))
    out: dict[str, Any] = {"description": f"{DERIVED_DESCRIPTION}{title}"}
    if globs:
        out["globs"] = ",".join(globs)
    out["alwaysApply"] = not applies.get("surface")
    return out


def _copilot(applies: dict[str, str], title: str) -> dict[str, Any]:
    globs = globs_for(applies.get("surface"))
    return {"applyTo": ",".join(globs) if globs else "**"}


def _paths(applies: dict[str, str], title: str) -> dict[str, Any]:
    globs = globs_for(applies.get("surface"))
    return {"paths": list(globs)} if globs else {}


def _windsurf(applies: dict[str, str], title: str) -> dict[str, Any]:
    globs = globs_for(applies.get("surface"))
    if globs:
        return {"trigger": "glob", "globs": ",".join(globs)}
    return {"trigger": "always_on"}


TOOLS: Final[dict[FileFormat, Tool]] = {
    t.fmt: t
    for t in (
        Tool(FileFormat.AGENTS_MD, "AGENTS.md", file_name="AGENTS.md"),
        Tool(FileFormat.CLAUDE_MD, "CLAUDE.md", file_name="CLAUDE.md"),
        Tool(
            FileFormat.CLAUDE_RULES,
            "Claude Code rules (.claude/rules/*.md)",
            home=".claude/rules",
            keys={"paths": _glob_list},
            scope_key="paths",
            derive=_paths,
        ),
        Tool(FileFormat.GEMINI_MD, "GEMINI.md", file_name="GEMINI.md"),
        Tool(
            FileFormat.CURSOR,
            "Cursor rules (.cursor/rules/*.mdc)",
            home=".cursor/rules",
            suffix=".mdc",
            keys={"description": _text, "globs": _globs, "alwaysApply": _flag},
            scope_key="globs",
            derive=_cursor,
        ),
        Tool(FileFormat.CURSORRULES, ".cursorrules", file_name=".cursorrules"),
        Tool(
            FileFormat.COPILOT,
            "copilot-instructions.md",
            file_name="copilot-instructions.md",
            home=".github",
        ),
        Tool(
            FileFormat.COPILOT_INSTRUCTIONS,
            "Copilot instructions (.github/instructions/*.instructions.md)",
            home=".github/instructions",
            suffix=".instructions.md",
            keys={
                "applyTo": _comma_text,
                "description": _text,
                "name": _text,
                "excludeAgent": _one_of("code-review", "coding-agent"),
            },
            scope_key="applyTo",
            derive=_copilot,
        ),
        Tool(
            FileFormat.WINDSURF_RULES,
            "Windsurf rules (.windsurf/rules/*.md)",
            home=".windsurf/rules",
            keys={
                "trigger": _one_of("always_on", "manual", "model_decision", "glob"),
                "globs": _globs,
                "description": _text,
            },
            scope_key="globs",
            derive=_windsurf,
        ),
        Tool(FileFormat.WINDSURFRULES, ".windsurfrules", file_name=".windsurfrules"),
        Tool(FileFormat.CLINERULES, ".clinerules (one file)", file_name=".clinerules"),
        Tool(
            FileFormat.CLINE_RULES,
            "Cline rules (.clinerules/*.md)",
            home=".clinerules",
            keys={"paths": _glob_list},
            scope_key="paths",
            derive=_paths,
        ),
    )
}
# What a folder in a path says the files in it are.
_FOLDERS: Final = (
    (".claude/rules/", FileFormat.CLAUDE_RULES),
    (".windsurf/rules/", FileFormat.WINDSURF_RULES),
    (".clinerules/", FileFormat.CLINE_RULES),
    (".cursor/rules/", FileFormat.CURSOR),
)
_NAMES: Final = {
    "agents.md": FileFormat.AGENTS_MD,
    "agent.md": FileFormat.AGENTS_MD,
    "claude.md": FileFormat.CLAUDE_MD,
    "claude.local.md": FileFormat.CLAUDE_MD,
    "gemini.md": FileFormat.GEMINI_MD,
    ".cursorrules": FileFormat.CURSORRULES,
    "copilot-instructions.md": FileFormat.COPILOT,
    ".windsurfrules": FileFormat.WINDSURFRULES,
    ".clinerules": FileFormat.CLINERULES,
}
# Front matter keys only one tool reads: a Markdown file elsewhere that has one is that
# tool's (a rule file kept outside its usual folder).
_KEYS: Final = (
    ("applyTo", FileFormat.COPILOT_INSTRUCTIONS),
    ("alwaysApply", FileFormat.CURSOR),
    ("trigger", FileFormat.WINDSURF_RULES),
    ("paths", FileFormat.CLAUDE_RULES),
)


def format_by_path(path: str) -> FileFormat | None:
    """The format a path says a file is in, or None (any other Markdown)."""
    slashed = "/" + path.replace("\\", "/")
    name = slashed.rsplit("/", 1)[-1].lower()
    if name.endswith(".mdc"):
        return FileFormat.CURSOR
    if name.endswith(".instructions.md"):
        return FileFormat.COPILOT_INSTRUCTIONS
    if name in _NAMES:
        return _NAMES[name]
    for folder, fmt in _FOLDERS:
        if f"/{folder}" in slashed and name.endswith(".md"):
            return fmt
    return None


def format_by_front_matter(values: dict[str, Any]) -> FileFormat | None:
    """The tool whose own key the front matter uses, or None."""
    return next((fmt for key, fmt in _KEYS if key in values), None)


def kept_front_matter(
    tool: Tool, values: dict[str, Any], applies: dict[str, str]
) -> dict[str, Any]:
    """What of a file's front matter its ``applies_to`` does not give back: every key whose
    value differs from what an export would derive, and ``None`` for each derived key the
    file did not have. Empty when an export would write the same front matter. (A
    description of the form an export writes itself, ``Prism memorules - …``, is derived.)"""
    derived = tool.derive(applies, "")
    kept: dict[str, Any] = {}
    for key, value in values.items():
        if key == "description" and key in derived:
            if not (isinstance(value, str) and value.startswith(DERIVED_DESCRIPTION)):
                kept[key] = value
        elif not _same(derived.get(key), value):
            kept[key] = value
    for key in derived:
        if key not in values:
            kept[key] = None
    return kept


def _same(derived: Any, value: Any) -> bool:
    if isinstance(derived, list | str) and isinstance(value, list | str) and derived is not None:
        return _glob_set(derived) == _glob_set(value)
    return bool(derived == value and type(derived) is type(value))


def _glob_set(value: list[str] | str) -> list[str]:
    parts = value if isinstance(value, list) else value.split(",")
    return [p.strip() for p in parts if p.strip()]


def tool_for(fmt: FileFormat) -> Tool | None:
    """The tool of a format (None for plain Markdown, which is read but never written)."""
    return TOOLS.get(fmt)
