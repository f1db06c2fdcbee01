"""Rule-file dialects: which one a file is, and what its front matter says about scope.

- Cursor ``.mdc``: ``description``, ``globs`` (comma-separated or a list), ``alwaysApply``.
  ``alwaysApply: true`` (or no globs) means every file: no surface.
- Copilot ``*.instructions.md``: ``applyTo`` globs; ``copilot-instructions.md`` applies to
  the whole repository.
- Any other Markdown (``CLAUDE.md``, ``AGENTS.md``, ``.cursorrules``): optional front matter;
  ``globs``/``applyTo`` are read when present.

Globs become ``applies_to.surface`` when they name one known surface (``**/*.py`` → python).
"""

from __future__ import annotations

from prism_memory.formats.rules_io.frontmatter import FrontMatter, parse_front_matter
from prism_memory.formats.rules_io.markdown import split_markdown
from prism_memory.formats.rules_io.reading import MAX_UNITS, SourceText, rejected
from prism_memory.formats.rules_io.records import FileFormat, FileWarning, ParsedFile, Unit
from prism_memory.formats.rules_io.surfaces import surface_for


def format_of(path: str) -> FileFormat:
    """The dialect a file name says it is."""
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(".mdc"):
        return FileFormat.CURSOR
    if name.endswith(".instructions.md") or name == "copilot-instructions.md":
        return FileFormat.COPILOT
    return FileFormat.MARKDOWN


def parse_rule_file(source: SourceText) -> ParsedFile:
    """Split a file that was read safely into units, with its front matter's scope.

    Args:
        source: the file's text and the warnings reading it raised.

    Returns:
        The parsed file: units in file order, and every warning.

    Raises:
        InvalidInput: ``too_many_units``, a file that splits into more than
            :data:`~.reading.MAX_UNITS` rules and descriptive stretches.
    """
    lines = source.text.split("\n")
    front = parse_front_matter(lines)
    fmt = format_of(source.path)
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
    split = split_markdown(source.path, numbered, applies_to, fmt.value)
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
    if not split.imports and not any(u.kind is not None for u in split.units):
        split_warnings.append(_nothing_imported(source.path, split.units, split.exported))
    return ParsedFile(
        path=source.path,
        format=fmt,
        units=split.units,
        warnings=warnings + split_warnings,
        front_matter=dict(front.values),
        exported=split.exported,
        imports=split.imports,
    )


def _nothing_imported(path: str, units: list[Unit], exported: bool) -> FileWarning:
    """Why a file yields no rule: it holds no text, or none of its text reads as a rule."""
    if not units:
        why = "it has no text outside headings, HTML comments, front matter and imports"
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
    globs = front.globs("globs") or front.globs("applyTo")
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
