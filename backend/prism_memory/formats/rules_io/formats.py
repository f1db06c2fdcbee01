"""Rule-file formats: which tool's a file is, and what its front matter says about scope.

A file's format comes from its path (:func:`.tools.format_by_path`), else from the
``prism:export format=…`` header of a file Prism wrote, else from a front matter key only
one tool reads; anything else is plain Markdown.

- Scope: ``alwaysApply: true`` (Cursor), or a Windsurf ``trigger`` other than ``glob``,
  means every file (no surface); otherwise ``globs`` (Cursor,
  Windsurf), ``applyTo`` (Copilot) or ``paths`` (Claude Code, Cline) become
  ``applies_to.surface`` when they name one known surface (``**/*.py`` → python).
- Provenance: for a tool that reads front matter, what of it ``applies_to`` does not give
  back (a description, exact globs, a Windsurf trigger, a key the tool ignores) is kept in
  each rule's evidence id (:class:`.records.Front`), so an export in that tool's format
  writes it again. When it does not fit the evidence id's 1,000 characters it is not kept,
  and ``front_matter_not_kept`` says so.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from prism_memory.domain.contract.bounds import EVIDENCE_MAX
from prism_memory.domain.contract.bounds import MEMORULE_BODY_MIN as BODY_MIN
from prism_memory.formats.rules_io import jsonfile, tomlfile
from prism_memory.formats.rules_io.frontmatter import FrontMatter, parse_front_matter
from prism_memory.formats.rules_io.kinds import RULE_THRESHOLD
from prism_memory.formats.rules_io.learned import decide as learned_decision
from prism_memory.formats.rules_io.markdown import split_markdown
from prism_memory.formats.rules_io.reading import MAX_UNITS, SourceText, rejected
from prism_memory.formats.rules_io.records import (
    FileFormat,
    FileWarning,
    Front,
    ParsedFile,
    Unit,
)
from prism_memory.formats.rules_io.surfaces import surface_for
from prism_memory.formats.rules_io.tools import (
    format_by_front_matter,
    format_by_path,
    kept_front_matter,
    tool_for,
)

_HEADER: Final = re.compile(r"<!--\s*prism:export\s+format=(?P<fmt>[a-z-]+)")
HEADER_LINES: Final = 40


def format_of(
    path: str, lines: list[str] | None = None, front: FrontMatter | None = None
) -> FileFormat:
    """The format a file is in: by its path, else by the header of a file Prism wrote,
    else by a front matter key only one tool reads; plain Markdown otherwise."""
    by_path = format_by_path(path)
    if by_path is not None:
        return by_path
    start = front.body_start if front else 0
    for line in (lines or [])[start : start + HEADER_LINES]:
        found = _HEADER.search(line)
        if found and found["fmt"] in FileFormat.__members__.values():
            return FileFormat(found["fmt"])
    by_key = format_by_front_matter(front.values) if front else None
    return by_key or FileFormat.MARKDOWN


def parse_rule_file(
    source: SourceText, threshold: float = RULE_THRESHOLD, learned: bool = False
) -> ParsedFile:
    """Split a file that was read safely into units, with its front matter's scope.

    Args:
        source: the file's text and the warnings reading it raised.
        threshold: the :func:`~.kinds.rule_likeness` from which a piece is a rule.
        learned: re-decide what is a rule with the learned model (:mod:`.learned`);
            a ``prism`` export is never re-decided.

    Returns:
        The parsed file: units in file order, and every warning.

    Raises:
        InvalidInput: ``too_many_units``, a file that splits into more than
            :data:`~.reading.MAX_UNITS` rules and descriptive stretches.
    """
    lines = source.text.split("\n")
    front = parse_front_matter(lines)
    fmt = format_of(source.path, lines, front)
    warnings = list(source.warnings)
    for number in front.ignored:
        warnings.append(
            FileWarning(
                "front_matter_ignored",
                source.path,
                number,
                f"{source.path}:{number}: front matter line not understood; ignored",
            )
        )
    applies_to = _applies_to(source.path, front, warnings)
    numbered = [(i + 1, lines[i]) for i in range(front.body_start, len(lines))]
    # a rule file written as JSON or as TOML tables
    numbered = jsonfile.as_markdown(numbered) or tomlfile.as_markdown(numbered) or numbered
    split = split_markdown(source.path, numbered, applies_to, fmt.family, threshold)
    if len(split.units) > MAX_UNITS:
        raise rejected(
            source.path,
            "too_many_units",
            f"{len(split.units)} rules and descriptive stretches; a rule file holds at most "
            f"{MAX_UNITS}",
            max_units=MAX_UNITS,
            actual=len(split.units),
        )
    split_warnings = list(split.warnings)
    units = _with_front(source.path, fmt, front, applies_to, split.units, split_warnings)
    if learned and not split.exported:
        units = learned_decision(units, fmt, lines)
    if not split.imports and not any(_importable(u) for u in units):
        split_warnings.append(_nothing_imported(source.path, units, split.exported))
    return ParsedFile(
        path=source.path,
        format=fmt,
        units=units,
        warnings=warnings + split_warnings,
        front_matter=dict(front.values),
        exported=split.exported,
        imports=split.imports,
    )


def _with_front(
    path: str,
    fmt: FileFormat,
    front: FrontMatter,
    applies_to: dict[str, str],
    units: list[Unit],
    warnings: list[FileWarning],
) -> list[Unit]:
    """Units that carry the file's kept front matter (see the module doc)."""
    tool = tool_for(fmt)
    if tool is None or not tool.reads_front_matter:
        return units
    kept = Front(fmt.value, kept_front_matter(tool, front.values, applies_to))
    out = [replace(u, front=kept) for u in units]
    if any(len(u.evidence()) > EVIDENCE_MAX for u in out if u.kind is not None):
        warnings.append(
            FileWarning(
                "front_matter_not_kept",
                path,
                1,
                f"{path}: its front matter ({', '.join(sorted(kept.values))}) is too long to "
                "keep with its rules; an export writes the front matter their applies_to "
                "gives",
                {"keys": sorted(kept.values)},
            )
        )
        return units
    return out


def _importable(unit: Unit) -> bool:
    """A rule long enough to be a memorule (a shorter one is refused when it is written)."""
    return unit.kind is not None and len(unit.text.strip()) >= BODY_MIN


def _nothing_imported(path: str, units: list[Unit], exported: bool) -> FileWarning:
    """Why a file yields no rule: it holds no text, none of its text reads as a rule, or what
    reads as one is too short to be a memorule (a bare heading fragment, "项目简介")."""
    short = sum(1 for u in units if u.kind is not None)
    if not units:
        why = "it has no text outside headings, HTML comments, front matter and imports"
    elif short:
        why = (
            f"the {short} of its {len(units)} stretches of text that read as rules are "
            f"shorter than {BODY_MIN} characters, too short to be memorules (the others are "
            "listed as skipped, descriptive)"
        )
    else:
        why = (
            f"none of its {len(units)} stretches of text reads as a rule (they are listed as "
            "skipped, descriptive; --notes keep keeps them as notes)"
        )
    if exported:
        why += "; it was written by prism export-rules"
    return FileWarning("no_rules", path, None, f"{path}: no rule imported: {why}")


def _applies_to(path: str, front: FrontMatter, warnings: list[FileWarning]) -> dict[str, str]:
    if front.flag("alwaysApply"):
        return {}
    if front.values.get("trigger") not in (None, "glob"):
        return {}  # Windsurf: only a `glob` trigger scopes its rules by their globs
    globs = front.globs("globs") or front.globs("applyTo") or front.globs("paths")
    if not globs:
        return {}
    surface = surface_for(globs)
    if surface is None:
        if not {g.strip() for g in globs} <= {"**", "**/*", "*", "**/*.*"}:
            warnings.append(
                FileWarning(
                    "globs_not_mapped",
                    path,
                    None,
                    f"{path}: globs {', '.join(globs)} name no single known surface; "
                    "its rules are imported as general (give --surface to scope them)",
                    {"globs": globs},
                )
            )
        return {}
    return {"surface": surface}
