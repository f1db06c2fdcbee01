"""Every tool's own rule-file format, both ways (issue 30): import and export CLAUDE.md,
``.claude/rules``, AGENTS.md, GEMINI.md, Cursor ``.mdc`` and ``.cursorrules``, Copilot's two
files, Windsurf's two and Cline's two; front matter kept in the rules' provenance so the
round trip gives it back; and ``export-rules --check``'s lint of what a tool would skip."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.records import Kind, SessionContext, Status
from prism_memory.formats.rules_io.exporter import (
    ExportFormat,
    applicable_memorules,
    render,
    render_front_matter,
)
from prism_memory.formats.rules_io.formats import format_of
from prism_memory.formats.rules_io.frontmatter import parse_front_matter
from prism_memory.formats.rules_io.lint import lint_rule_file, matches_any
from prism_memory.formats.rules_io.records import (
    ExportedFile,
    FileFormat,
    Front,
    ImportReport,
    front_of,
)
from prism_memory.formats.rules_io.tools import TOOLS
from prism_memory.services.rules_import import ImportOptions, read_rule_files
from tests.cli_run import run_prism
from tests.conftest import ContextFactory
from tests.rules_helpers import operator_importer

RULES = """\
# Conventions

- Always run `make test` before you push.
- Never commit secrets or `.env` files.
- Prefer small pull requests that change one thing.
"""

# One real-shaped file per format, at the path its tool reads it from.
SOURCES: dict[ExportFormat, tuple[str, str]] = {
    ExportFormat.AGENTS_MD: ("AGENTS.md", "# AGENTS.md\n\n" + RULES),
    ExportFormat.CLAUDE_MD: ("CLAUDE.md", RULES),
    ExportFormat.CLAUDE_RULES: (
        ".claude/rules/testing.md",
        '---\npaths:\n  - "src/**/*.test.ts"\n  - "src/**/*.spec.ts"\n---\n\n' + RULES,
    ),
    ExportFormat.GEMINI_MD: ("GEMINI.md", RULES),
    ExportFormat.CURSOR: (
        ".cursor/rules/api.mdc",
        "---\ndescription: API handlers and their errors\nglobs: src/api/**/*.ts\n"
        "alwaysApply: false\n---\n\n" + RULES,
    ),
    ExportFormat.CURSORRULES: (".cursorrules", RULES),
    ExportFormat.COPILOT: (".github/copilot-instructions.md", RULES),
    ExportFormat.COPILOT_INSTRUCTIONS: (
        ".github/instructions/python.instructions.md",
        '---\napplyTo: "**/*.py"\ndescription: "Python conventions"\n'
        'excludeAgent: "code-review"\n---\n\n' + RULES,
    ),
    ExportFormat.WINDSURF_RULES: (
        ".windsurf/rules/style.md",
        "---\ntrigger: glob\nglobs: *.py, scripts/*.sh\ndescription: Style of the code\n"
        "---\n\n" + RULES,
    ),
    ExportFormat.WINDSURFRULES: (".windsurfrules", RULES),
    ExportFormat.CLINERULES: (".clinerules", RULES),
    ExportFormat.CLINE_RULES: (
        ".clinerules/01-react.md",
        '---\npaths:\n  - "src/components/**"\n  - "src/hooks/**"\n---\n\n' + RULES,
    ),
}
_MARKER = re.compile(r"prism:id=\S+ v=\d+")


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_import(services: Services, ctx: SessionContext, root: Path, *names: str) -> ImportReport:
    files = read_rule_files([root / n for n in names], root)
    return operator_importer(services, ctx).run(ctx, files, ImportOptions())


def export(services: Services, ctx: SessionContext, fmt: ExportFormat) -> list[ExportedFile]:
    return render(fmt, applicable_memorules(services.store, ctx), ctx)


def written(report: ImportReport) -> int:
    counts = report.counts()
    return counts["written"] + counts["updated"] + counts["notes"]


def rules_of(services: Services, ctx: SessionContext) -> list[tuple[str, str, str, str]]:
    """The active memorules of ``ctx``'s project as import → export → import compares them."""
    out = []
    for item in services.store.dump(ctx.tenant_id):
        memory = getattr(item, "memory", None)
        if memory is None or memory.project_id != ctx.project_id:
            continue
        state = item.states[-1]  # type: ignore[attr-defined]
        if memory.kind is not Kind.MEMORULE or memory.status is not Status.ACTIVE:
            continue
        applies = state.applies_to.to_dict() if state.applies_to else {}
        kind = state.memorule_kind.value if state.memorule_kind else ""
        out.append((state.subject or "", state.body, kind, json.dumps(applies, sort_keys=True)))
    return sorted(out)


def front(text: str) -> dict[str, Any]:
    """Front matter as the tool reads it: glob keys as lists of globs."""
    values = parse_front_matter(text.split("\n")).values
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key in ("globs", "paths", "applyTo"):
            parts = value if isinstance(value, list) else str(value).split(",")
            value = [p.strip() for p in parts if p.strip()]
        out[key] = value
    return out


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_each_tool_format_imports_exports_and_imports_back_to_the_same_rules_and_front_matter(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat
) -> None:
    ctx = make_ctx(project="one")
    name, text = SOURCES[fmt]
    write(tmp_path / "src", name, text)
    first = run_import(services, ctx, tmp_path / "src", name)
    assert [f["format"] for f in first.files] == [fmt.value]
    assert first.counts()["written"] == 3 and first.counts()["skipped"] == 0
    files = export(services, ctx, fmt)
    tool = fmt.tool
    if tool.file_name is not None:
        assert [f.name for f in files] == [tool.file_name]
        assert not parse_front_matter(files[0].text.split("\n")).values
    else:
        assert [f.name.endswith(tool.suffix) for f in files] == [True]
        assert front(files[0].text) == front(text)  # the source's front matter, back
    out = tmp_path / "out"
    for f in files:
        write(out, f.name, f.text)
    names = [f.name for f in files]
    again = run_import(services, ctx, out, *names)
    assert written(again) == 0 and again.counts()["unchanged"] == 3
    assert [f["format"] for f in again.files] == [fmt.value]  # by path or by the header
    # into a tenant that has never seen the rules: the same memorules, the same export
    fresh = make_ctx(tenant="elsewhere", project="two")
    run_import(services, fresh, out, *names)
    assert rules_of(services, fresh) == rules_of(services, ctx)
    second = export(services, fresh, fmt)
    assert [_MARKER.sub("", f.text) for f in second] == [_MARKER.sub("", f.text) for f in files]
    for f in second:
        write(out, f.name, f.text)
    assert written(run_import(services, fresh, out, *names)) == 0


def test_front_matter_beyond_applies_to_is_kept_in_each_rules_evidence(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    name, text = SOURCES[ExportFormat.COPILOT_INSTRUCTIONS]
    write(tmp_path, name, text.replace('"**/*.py"', '"src/**/*.py"'))
    run_import(services, ctx, tmp_path, name)
    kept = [front_of(s.evidence_signal_id) for _, s in applicable_memorules(services.store, ctx)]
    assert (
        kept
        == [
            Front(
                "copilot-instructions",
                {
                    "applyTo": "src/**/*.py",
                    "description": "Python conventions",
                    "excludeAgent": "code-review",
                },
            )
        ]
        * 3
    )
    # a key applies_to gives back exactly is not kept: `**/*.py` alone is not python's
    # mapping (which adds `**/*.pyi`), so it stays; `alwaysApply: true` with no globs is
    # Cursor's derived default and is not
    write(tmp_path, "a.mdc", "---\ndescription: Everywhere\nalwaysApply: true\n---\n" + RULES)
    parsed = read_rule_files([tmp_path / "a.mdc"], tmp_path)[0]
    fronts = [u.front.values if u.front else None for u in parsed.units if u.kind is not None]
    assert fronts == [{"description": "Everywhere"}] * 3


def test_an_edited_front_matter_becomes_a_new_version_and_then_nothing_is_written(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    name, text = SOURCES[ExportFormat.CURSOR]
    write(tmp_path, name, text)
    run_import(services, ctx, tmp_path, name)
    write(tmp_path, name, text.replace("API handlers", "HTTP handlers"))
    edited = run_import(services, ctx, tmp_path, name)
    assert edited.counts()["updated"] == 3 and edited.counts()["written"] == 0
    assert {i.message for i in edited.items if i.action.value == "update"} == {"front matter"}
    assert written(run_import(services, ctx, tmp_path, name)) == 0
    (exported,) = export(services, ctx, ExportFormat.CURSOR)
    assert front(exported.text)["description"] == "HTTP handlers and their errors"


def test_front_matter_too_long_for_the_evidence_id_is_reported_not_lost_silently(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    text = f"---\ndescription: {'Very long description of the rules. ' * 30}\n---\n" + RULES
    write(tmp_path, ".cursor/rules/long.mdc", text)
    report = run_import(services, ctx, tmp_path, ".cursor/rules/long.mdc")
    assert report.counts()["written"] == 3
    (warning,) = [w for w in report.warnings if w.code == "front_matter_not_kept"]
    assert warning.details == {"keys": ["alwaysApply", "description"]}
    evidence = [s.evidence_signal_id for _, s in applicable_memorules(services.store, ctx)]
    assert all(e and " fm=" not in e for e in evidence)
    assert written(run_import(services, ctx, tmp_path, ".cursor/rules/long.mdc")) == 0


def test_a_description_with_several_exact_globs_is_kept_and_written_back(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    # A rule file about rule files: a description and three globs no surface names (about
    # 200 characters of front matter, which an evidence id of 200 characters did not hold).
    head = (
        "---\ntrigger: glob\n"
        'description: "How the rule files of this repository are written and reviewed."\n'
        'globs: ".windsurf/rules/*.md,.windsurf/rules/**/*.md,docs/agents/global_rules.md"\n'
        "---\n"
    )
    name = ".windsurf/rules/authoring.md"
    write(tmp_path, name, head + RULES)
    report = run_import(services, ctx, tmp_path, name)
    assert report.counts()["written"] == 3
    assert not [w for w in report.warnings if w.code == "front_matter_not_kept"]
    (exported,) = export(services, ctx, ExportFormat.WINDSURF_RULES)
    assert front(exported.text) == front(head + "x")
    write(tmp_path, "out/" + exported.name, exported.text)
    assert written(run_import(services, ctx, tmp_path, "out/" + exported.name)) == 0


@pytest.mark.parametrize(
    ("path", "head", "expected"),
    [
        ("AGENTS.md", "", FileFormat.AGENTS_MD),
        ("sub/AGENT.md", "", FileFormat.AGENTS_MD),
        ("dot_claude/CLAUDE.md", "", FileFormat.CLAUDE_MD),
        (".claude/rules/frontend/react.md", "", FileFormat.CLAUDE_RULES),
        ("GEMINI.md", "", FileFormat.GEMINI_MD),
        (".cursor/rules/a.mdc", "", FileFormat.CURSOR),
        (".cursorrules", "", FileFormat.CURSORRULES),
        (".github/copilot-instructions.md", "", FileFormat.COPILOT),
        (".github/instructions/x.instructions.md", "", FileFormat.COPILOT_INSTRUCTIONS),
        (".windsurf/rules/a.md", "", FileFormat.WINDSURF_RULES),
        (".windsurfrules", "", FileFormat.WINDSURFRULES),
        (".clinerules", "", FileFormat.CLINERULES),
        (".clinerules/01-style.md", "", FileFormat.CLINE_RULES),
        ("README.md", "", FileFormat.MARKDOWN),
        # a file Prism wrote, outside its tool's folder: its header says which
        ("out/prism-project.md", "<!-- prism:export format=windsurf-rules -->", None),
        # a front matter key only one tool reads
        ("docs/rules.md", "---\ntrigger: always_on\n---", FileFormat.WINDSURF_RULES),
        ("docs/py.md", '---\napplyTo: "**/*.py"\n---', FileFormat.COPILOT_INSTRUCTIONS),
    ],
)
def test_a_files_format_comes_from_its_path_its_export_header_or_its_front_matter(
    path: str, head: str, expected: FileFormat | None
) -> None:
    lines = [*head.split("\n"), "- Always run the tests."]
    found = format_of(path, lines, parse_front_matter(lines))
    assert found is (expected or FileFormat.WINDSURF_RULES)


@pytest.mark.parametrize(
    "value",
    [
        "plain words",
        "true",
        "no",
        "a: b # not a comment",
        "[not a list]",
        "'quoted'",
        'say "hi"',
        "  spaced  ",
        "line one\nline two",
        "日本語の説明",
        "**/*.py,**/*.pyi",
        "",
        True,
        False,
        ["src/**", "a b", "x,y"],
    ],
)
def test_front_matter_the_export_writes_reads_back_as_the_same_values(value: Any) -> None:
    for tool in TOOLS.values():
        for key in ("description", tool.scope_key or "globs", "mode"):
            text = render_front_matter(tool, {key: value})
            assert parse_front_matter(text.split("\n")).values == {key: value}, text


# -- the lint -----------------------------------------------------------------------------

REPO_FILES = ["src/api/users.ts", "src/app.py", "scripts/run.sh", "README.md"]


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        (FileFormat.CURSOR, "---\nglobs: src/api/**/*.ts\nalwaysApply: false\n---\n", []),
        (
            FileFormat.CURSOR,
            '---\nglobs: lib/**/*.rb\nalwaysApply: "true"\nmode: agent\n---\n',
            [
                ("pattern_matches_nothing", 2, "globs", "lib/**/*.rb"),
                ("ill_typed_key", 3, "alwaysApply", "true"),
                ("unknown_key", 4, "mode", "agent"),
            ],
        ),
        (
            FileFormat.COPILOT_INSTRUCTIONS,
            '---\napplyTo:\n  - "**/*.py"\nexcludeAgent: "reviewer"\n---\n',
            [
                ("ill_typed_key", 2, "applyTo", ["**/*.py"]),
                ("ill_typed_key", 4, "excludeAgent", "reviewer"),
            ],
        ),
        (
            FileFormat.COPILOT_INSTRUCTIONS,
            '---\napplyTo: "**/*.py,docs/**/*.md"\n---\n',
            [("pattern_matches_nothing", 2, "applyTo", "docs/**/*.md")],
        ),
        (
            FileFormat.CLAUDE_RULES,
            '---\npaths:\n  - "src/**/*.{ts,tsx}"\nglobs: "*.py"\n---\n',
            [("unknown_key", 4, "globs", "*.py")],
        ),
        (
            FileFormat.WINDSURF_RULES,
            "---\ntrigger: sometimes\nglobs: *.py\n---\n",
            [("ill_typed_key", 2, "trigger", "sometimes")],
        ),
        (
            FileFormat.CLINE_RULES,
            '---\npaths:\n  - "src/hooks/**"\n---\n',
            [("pattern_matches_nothing", 2, "paths", "src/hooks/**")],
        ),
        (
            FileFormat.AGENTS_MD,
            "---\ndescription: rules\n---\n",
            [("front_matter_not_read", 2, "description", "rules")],
        ),
        (
            FileFormat.CURSOR,
            "---\nglobs: **/*.py\nnot a key\n---\n",
            [("front_matter_invalid", 3, None, None)],
        ),
        # the globs an export writes for a surface: `**/*.pyi` beside a `**/*.py` that matches
        (FileFormat.CURSOR, "---\nglobs: **/*.py,**/*.pyi\n---\n", []),
    ],
)
def test_the_lint_names_what_each_tool_would_skip(
    fmt: FileFormat, text: str, expected: list[tuple[str, int, str | None, Any]]
) -> None:
    findings = lint_rule_file("f", text + RULES, fmt, REPO_FILES)
    assert [(f.code, f.line, f.key, f.value) for f in findings] == expected
    assert all(f.message.startswith(f"f:{f.line}: ") for f in findings)


@pytest.mark.parametrize(
    ("pattern", "hit"),
    [
        ("**/*.py", True),
        ("*.py", True),  # a bare name: in any folder
        ("src/**", True),
        ("src/api", True),  # a folder names what is in it
        ("src/**/*.{ts,tsx}", True),
        ("./scripts/*.sh", True),
        ("src/*.ts", False),
        ("src/[ab]pp.py", True),
        ("lib/**", False),
    ],
)
def test_patterns_match_as_the_tools_read_them_leniently(pattern: str, hit: bool) -> None:
    assert matches_any(pattern, REPO_FILES) is hit


def test_export_rules_check_lints_with_findings_as_json_and_a_non_zero_exit(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, "src/api/users.ts", "export {}\n")
    name, text = SOURCES[ExportFormat.CURSOR]
    write(tmp_path, name, text)
    db = tmp_path / "prism.db"
    assert run_prism(db, "import-rules", name, cwd=tmp_path).returncode == 0
    out = ".cursor/rules"
    made = run_prism(db, "export-rules", "--format", "cursor", "--out", out, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    clean = run_prism(
        db, "export-rules", "--check", "--format", "cursor", "--out", out, "--json", cwd=tmp_path
    )
    assert clean.returncode == 0, clean.stdout
    assert json.loads(clean.stdout)["findings"] == []
    write(
        tmp_path,
        ".cursor/rules/hand.mdc",
        "---\nglobs: lib/**/*.rb\nalwaysApply: yes please\n---\n- Use tabs.\n",
    )
    found = run_prism(
        db, "export-rules", "--check", "--format", "cursor", "--out", out, "--json", cwd=tmp_path
    )
    assert found.returncode == 1
    report = json.loads(found.stdout)
    assert report["ok"] is False and {f["state"] for f in report["files"]} == {"current"}
    assert [(f["code"], f["path"], f["line"], f["key"]) for f in report["findings"]] == [
        ("pattern_matches_nothing", ".cursor/rules/hand.mdc", 2, "globs"),
        ("ill_typed_key", ".cursor/rules/hand.mdc", 3, "alwaysApply"),
    ]
    text_out = run_prism(
        db, "export-rules", "--check", "--format", "cursor", "--out", out, cwd=tmp_path
    )
    assert text_out.returncode == 1
    assert (
        "ill_typed_key: .cursor/rules/hand.mdc:3: 'alwaysApply' is 'yes please'" in text_out.stdout
    )


def test_a_file_exported_with_project_is_checked_against_that_project(tmp_path: Path) -> None:
    """Issue 29: the header named the persona, not the project, so `--check` without
    `--project` (a pre-commit hook) compared the file with another project's rules."""
    write(tmp_path, "AGENTS.md", RULES)
    db = tmp_path / "prism.db"
    assert (
        run_prism(db, "import-rules", "AGENTS.md", "--project", "alpha", cwd=tmp_path).returncode
        == 0
    )
    args = ("export-rules", "--format", "agents-md", "--out", "out")
    assert run_prism(db, *args, "--project", "alpha", cwd=tmp_path).returncode == 0
    exported = (tmp_path / "out" / "AGENTS.md").read_text(encoding="utf-8")
    assert "<!-- prism:export format=agents-md project=alpha -->" in exported
    assert run_prism(db, *args, "--check", cwd=tmp_path).returncode == 0
    # without the project in its header, the same file is checked against the default
    # project, which holds none of its rules: stale, as before the fix
    write(tmp_path, "out/AGENTS.md", exported.replace(" project=alpha", ""))
    stale = run_prism(db, *args, "--check", cwd=tmp_path)
    assert stale.returncode == 1 and "stale: out/AGENTS.md" in stale.stdout
    # an explicit --project (or PRISM_PROJECT) still wins over the header
    write(tmp_path, "out/AGENTS.md", exported)
    other = run_prism(db, *args, "--check", "--project", "beta", cwd=tmp_path)
    assert other.returncode == 1


# Where each tool reads the files `--out` is given for, in a repository.
TOOL_FOLDERS: dict[ExportFormat, str] = {
    ExportFormat.CLAUDE_RULES: ".claude/rules",
    ExportFormat.CURSOR: ".cursor/rules",
    ExportFormat.COPILOT: ".github",
    ExportFormat.COPILOT_INSTRUCTIONS: ".github/instructions",
    ExportFormat.WINDSURF_RULES: ".windsurf/rules",
    ExportFormat.CLINE_RULES: ".clinerules",
}


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_the_cli_exports_each_format_where_its_tool_reads_it_and_imports_it_back(
    tmp_path: Path, fmt: ExportFormat
) -> None:
    name, text = SOURCES[fmt]
    write(tmp_path / "src", name, text)
    db = tmp_path / "prism.db"
    first = run_prism(db, "import-rules", "src", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"({fmt.value})" in first.stdout.splitlines()[0]
    repo = tmp_path / "repo"
    repo.mkdir()
    out = TOOL_FOLDERS.get(fmt, ".")
    made = run_prism(db, "export-rules", "--format", fmt.value, "--out", out, cwd=repo)
    assert made.returncode == 0, made.stderr
    (path,) = [p for p in repo.rglob("*") if p.is_file()]
    assert format_of(str(path.relative_to(repo))) is FileFormat(fmt.value)  # by its path
    again = run_prism(db, "import-rules", str(path.relative_to(repo)), cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "written 0, updated 0, unchanged 3," in again.stdout


def test_a_rule_edited_in_another_tools_file_keeps_its_own_front_matter(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    name, text = SOURCES[ExportFormat.CURSOR]
    write(tmp_path, name, text)
    run_import(services, ctx, tmp_path, name)
    (agents,) = export(services, ctx, ExportFormat.AGENTS_MD)
    write(tmp_path, "AGENTS.md", agents.text.replace("small pull requests", "tiny pull requests"))
    edited = run_import(services, ctx, tmp_path, "AGENTS.md")
    assert edited.counts()["updated"] == 1 and written(edited) == 1
    (cursor,) = export(services, ctx, ExportFormat.CURSOR)  # one file: the same front matter
    assert front(cursor.text) == front(text) and "tiny pull requests" in cursor.text
    updated = [
        s.evidence_signal_id
        for _, s in applicable_memorules(services.store, ctx)
        if "tiny" in s.body
    ]
    assert [e.split(" fm=")[0] for e in updated if e] == ["file:AGENTS.md#L14-L14"]
    assert [front_of(e) for e in updated] == [
        Front(
            "cursor", {"description": "API handlers and their errors", "globs": "src/api/**/*.ts"}
        )
    ]


@pytest.mark.parametrize(
    ("trigger", "surface"), [("glob", {"surface": "python"}), ("always_on", {}), ("manual", {})]
)
def test_windsurf_globs_scope_rules_only_with_a_glob_trigger(
    tmp_path: Path, trigger: str, surface: dict[str, str]
) -> None:
    write(
        tmp_path, ".windsurf/rules/py.md", f"---\ntrigger: {trigger}\nglobs: **/*.py\n---\n{RULES}"
    )
    (parsed,) = read_rule_files([tmp_path / ".windsurf/rules/py.md"], tmp_path)
    assert {json.dumps(u.applies_to) for u in parsed.units if u.kind} == {json.dumps(surface)}


# a rule whose code block (not in a list) holds a line of spaces only, as editors leave them
SPACED = (
    "# Pull requests\n\n"
    "**Always write the pull request's description in this form:**\n\n"
    "```markdown\n# Title\n\n1. **What changed**\n   - details\n   \n2. **Why**\n```\n"
)


def round_trip_one_rule(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat, text: str
) -> str:
    """Import ``text`` (one rule), export it in ``fmt``, and check that importing the export
    writes nothing and gives a fresh store the same rule; its body."""
    ctx = make_ctx(project="one")
    name = SOURCES[fmt][0]
    write(tmp_path / "src", name, text)
    assert run_import(services, ctx, tmp_path / "src", name).counts()["written"] == 1
    [(_, body, _, _)] = rules_of(services, ctx)
    out = tmp_path / "out"
    files = export(services, ctx, fmt)  # a list entry with its marker comment, code indented
    for f in files:
        write(out, f.name, f.text)
    assert written(run_import(services, ctx, out, *[f.name for f in files])) == 0
    fresh = make_ctx(tenant="elsewhere", project="two")
    run_import(services, fresh, out, *[f.name for f in files])
    assert rules_of(services, fresh) == rules_of(services, ctx)
    # the file unchanged, read again: nothing written
    assert written(run_import(services, ctx, tmp_path / "src", name)) == 0
    return body


@pytest.mark.parametrize("fmt", [ExportFormat.COPILOT, ExportFormat.AGENTS_MD])
def test_a_code_line_of_spaces_neither_breaks_the_round_trip_nor_reads_as_an_edit(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat
) -> None:
    body = round_trip_one_rule(services, make_ctx, tmp_path, fmt, SPACED)
    assert "\n   \n" not in body and "   - details\n\n2. **Why**" in body


# a code line with trailing spaces ("Category.Sports "), under a lead that ends in ":"
TRAILING = (
    "## Example\n\nDon't do this:\n\n```\nvar item = new Item()\n{\n"
    "    Category = Category.Sports \n}\n```\n"
)


@pytest.mark.parametrize("fmt", [ExportFormat.COPILOT, ExportFormat.AGENTS_MD])
def test_a_code_lines_trailing_spaces_come_back_from_a_list_entry(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat
) -> None:
    body = round_trip_one_rule(services, make_ctx, tmp_path, fmt, TRAILING)
    assert "Category.Sports \n" in body
