"""``@path`` imports in CLAUDE.md, followed the way Claude Code follows them (issue 17).

Claude Code's memory documentation: paths are relative to the importing file (or
absolute, or ``~/``), imports are not evaluated in code spans or code blocks, and imported
files may import further files up to five hops deep.
"""

from __future__ import annotations

from pathlib import Path

from prism_memory.formats.rules_io.records import ParsedFile
from prism_memory.services.rules_import import read_rule_files


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def read(folder: Path, *names: str) -> dict[str, ParsedFile]:
    return {p.path: p for p in read_rule_files([folder / n for n in names], folder)}


def test_a_claude_md_that_only_imports_agents_md_yields_the_agents_md_rules(
    tmp_path: Path,
) -> None:
    write(tmp_path, "CLAUDE.md", "@AGENTS.md\n")
    write(tmp_path, "AGENTS.md", "# Agents\n\n- Always run `make test` before you push.\n")
    files = read(tmp_path, "CLAUDE.md")
    assert list(files) == ["CLAUDE.md", "AGENTS.md"]
    assert files["CLAUDE.md"].units == []
    [rule] = files["AGENTS.md"].units
    assert rule.location.tag() == "file:AGENTS.md#L3-L3"  # its own file and line
    assert files["AGENTS.md"].imported_from == "CLAUDE.md"


def test_imports_resolve_relative_to_the_importing_file(tmp_path: Path) -> None:
    write(tmp_path, "docs/CLAUDE.md", "See @../AGENTS.md and @guides/git.md for the rest.\n")
    write(tmp_path, "AGENTS.md", "- Never force-push to a shared branch.\n")
    write(tmp_path, "docs/guides/git.md", "- Rebase feature branches before merging.\n")
    write(tmp_path, "guides/git.md", "- This one is in the wrong folder and never read.\n")
    files = read(tmp_path, "docs/CLAUDE.md")
    assert list(files) == ["docs/CLAUDE.md", "AGENTS.md", "docs/guides/git.md"]
    assert files["docs/guides/git.md"].units[0].location.path == "docs/guides/git.md"


def test_imports_stop_after_five_hops(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md", "@hop1.md\n")
    for i in range(1, 7):
        write(tmp_path, f"hop{i}.md", f"- Rule number {i} of the chain.\n\n@hop{i + 1}.md\n")
    files = read(tmp_path, "CLAUDE.md")
    assert list(files) == ["CLAUDE.md", "hop1.md", "hop2.md", "hop3.md", "hop4.md", "hop5.md"]
    [warning] = [w for f in files.values() for w in f.warnings]
    assert (warning.code, warning.path, warning.line) == ("import_too_deep", "hop5.md", 3)


def test_an_import_cycle_is_refused_and_every_file_is_read_once(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md", "- Keep commits small.\n\n@a.md\n")
    write(tmp_path, "a.md", "- Write tests first.\n\n@CLAUDE.md\n@a.md\n")
    files = read(tmp_path, "CLAUDE.md", "a.md")
    assert list(files) == ["CLAUDE.md", "a.md"]
    assert [(w.code, w.line) for w in files["a.md"].warnings] == [
        ("import_cycle", 3),
        ("import_cycle", 4),
    ]


def test_imports_in_code_spans_code_blocks_and_addresses_are_not_followed(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "CLAUDE.md",
        "Mention `@AGENTS.md` in prose, mail ops@example.com, ping @claude.\n\n"
        "```\n@AGENTS.md\n```\n\n    @AGENTS.md\n",
    )
    write(tmp_path, "AGENTS.md", "- Always run the tests.\n")
    files = read(tmp_path, "CLAUDE.md")
    assert list(files) == ["CLAUDE.md"]
    assert files["CLAUDE.md"].imports == []


def test_only_claude_md_starts_imports_and_a_missing_file_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "- Follow @.cursor/rules/python.mdc for Python.\n")
    write(tmp_path, ".cursor/rules/python.mdc", "- Use type hints.\n")
    assert list(read(tmp_path, "AGENTS.md")) == ["AGENTS.md"]
    write(tmp_path, "CLAUDE.md", "@docs/missing.md\n")
    files = read(tmp_path, "CLAUDE.md")
    assert [(w.code, w.line) for w in files["CLAUDE.md"].warnings] == [("import_not_found", 1)]
