"""Importing rule files (issue 8): CLAUDE.md, AGENTS.md, Cursor .mdc, Copilot instructions.

Every fixture is written here for the tests; real third-party rules come from the shared
benchmark data at test time (skipped when it is absent).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.records import (
    AuditEventType,
    Kind,
    MemoruleKind,
    SessionContext,
    Status,
)
from prism_memory.errors import InvalidInput
from prism_memory.formats.rules_io.frontmatter import parse_front_matter
from prism_memory.formats.rules_io.kinds import guess_kind
from prism_memory.formats.rules_io.reading import MAX_FILE_BYTES
from prism_memory.formats.rules_io.records import ImportReport, NotesMode
from prism_memory.formats.rules_io.sentences import sentence_spans
from prism_memory.services.rules_import import ImportOptions, read_rule_files
from prism_memory.trigraph.dump import MemoryDump
from prism_memory.trigraph.port import AuditFilter
from tests.cli_run import invoke_prism
from tests.rules_helpers import operator_importer

BACKEND = Path(__file__).resolve().parents[1]
BENCH_RULES = BACKEND.parents[1] / "shared" / "bench" / "rules" / "rules.jsonl"

CLAUDE_MD = """\
# CLAUDE.md

This repository is the Prism API. It stores memories in SQLite.

## Testing

- Always run `make test` before you push.
- Use the fixtures in conftest.py, e.g. `services`. They build a real store.
- Run the linter with:
  ```bash
  make lint
  ```
- Migrations:
  - Never edit a migration that has shipped; add a new one.
  - Every migration must run in one transaction.

## Code style

Prefer small functions. Long ones are hard to review.
Name test files `test_<module>.py`.

Run the formatter like this:

```bash
ruff format .
```
"""

CURSOR_MDC = """\
---
description: Python rules for the backend
globs: **/*.py
alwaysApply: false
---
- Never catch bare `Exception` in services.
- Prefer dataclasses over dicts for records.
"""

ALWAYS_MDC = """\
---
description: Everywhere
globs:
alwaysApply: true
---
- Always answer in English, even when asked in another language.
"""

COPILOT_INSTRUCTIONS = """\
---
applyTo: "**/*.ts,**/*.tsx"
---
# TypeScript

- Never use `any`; use `unknown` for data you have not checked.
- Use named exports, not default exports.
"""

AGENTS_MD = """\
---
title: Agent guide
---
# AGENTS.md

## Commit messages

- Write commit messages in the imperative mood.
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_import(
    services: Services,
    ctx: SessionContext,
    folder: Path,
    *names: str,
    **options: Any,
) -> ImportReport:
    files = read_rule_files([folder / n for n in names], folder)
    importer = operator_importer(services, ctx)
    return importer.run(ctx, files, ImportOptions(**options))


def stored(services: Services, ctx: SessionContext) -> list[MemoryDump]:
    return [i for i in services.store.dump(ctx.tenant_id) if isinstance(i, MemoryDump)]


def counts(services: Services, ctx: SessionContext) -> dict[str, int]:
    return services.store.stats(ctx.tenant_id)


def by_evidence(services: Services, ctx: SessionContext) -> dict[str, MemoryDump]:
    """The imported memorules by their evidence's source tag (not the check proposals an
    import puts in the review queue: tests/test_adherence_propose.py); the front matter an
    evidence id keeps after the tag is left out (see the test of it)."""
    return {
        (d.states[-1].evidence_signal_id or "").split(" fm=", 1)[0]: d
        for d in stored(services, ctx)
        if d.memory.kind is Kind.MEMORULE and d.memory.status is not Status.PROPOSED
    }


# -- splitting, kinds, evidence --------------------------------------------------------------


def test_a_claude_md_becomes_one_memorule_per_rule_with_kinds_and_evidence_lines(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    report = run_import(services, ctx, tmp_path, "CLAUDE.md")
    assert report.counts() == {
        "written": 8,
        "updated": 0,
        "unchanged": 0,
        "skipped": 1,
        "notes": 0,
        "missing": 0,
        "retired": 0,
    }
    rules = by_evidence(services, ctx)
    got = {
        tag: (d.states[-1].memorule_kind.value if d.states[-1].memorule_kind else None)
        for tag, d in rules.items()
    }
    assert got == {
        "file:CLAUDE.md#L7-L7": "behavioral_rule",
        "file:CLAUDE.md#L8-L8": "behavioral_rule",
        "file:CLAUDE.md#L9-L12": "behavioral_rule",
        "file:CLAUDE.md#L14-L14": "behavioral_rule",
        "file:CLAUDE.md#L15-L15": "behavioral_rule",
        "file:CLAUDE.md#L19-L19": "preference",
        "file:CLAUDE.md#L20-L20": "convention",
        "file:CLAUDE.md#L22-L26": "convention",
    }
    for d in rules.values():
        state = d.states[-1]
        assert state.confidence is not None and state.confidence.value == "asserted"
        assert state.applies_to is not None and state.applies_to.to_dict() == {"scope": "project"}
        assert 4 <= len(state.subject or "") <= 300 and len(state.body) >= 10


def test_code_blocks_stay_with_their_rule_and_headings_become_subject_context(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    run_import(services, ctx, tmp_path, "CLAUDE.md")
    rules = by_evidence(services, ctx)
    lint = rules["file:CLAUDE.md#L9-L12"].states[-1]
    assert lint.body == "Run the linter with:\n```bash\nmake lint\n```"
    assert lint.subject == "Testing: Run the linter with"
    fmt = rules["file:CLAUDE.md#L22-L26"].states[-1]
    assert fmt.body.endswith("```bash\nruff format .\n```")
    nested = rules["file:CLAUDE.md#L14-L14"].states[-1]
    assert nested.subject == "Migrations: Never edit a migration that has shipped; add a new one"


def test_descriptive_text_is_skipped_by_default_and_kept_as_a_note_on_request(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    report = run_import(services, ctx, tmp_path, "CLAUDE.md", dry_run=True)
    [skipped] = [i for i in report.items if i.action.value == "skip"]
    assert (skipped.line_start, skipped.record) == (3, "note")
    run_import(services, ctx, tmp_path, "CLAUDE.md", notes=NotesMode.KEEP)
    notes = [d for d in stored(services, ctx) if d.memory.kind is Kind.NOTE]
    assert [n.states[-1].body for n in notes] == [
        "This repository is the Prism API. It stores memories in SQLite."
    ]
    assert notes[0].states[-1].subject is not None
    assert notes[0].states[-1].subject.endswith("(file:CLAUDE.md#L3-L3)")


def test_cursor_globs_and_copilot_apply_to_become_the_surface(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, ".cursor/rules/python.mdc", CURSOR_MDC)
    write(tmp_path, ".cursor/rules/always.mdc", ALWAYS_MDC)
    write(tmp_path, ".github/instructions/ts.instructions.md", COPILOT_INSTRUCTIONS)
    write(tmp_path, "AGENTS.md", AGENTS_MD)
    report = run_import(services, ctx, tmp_path, ".cursor", ".github", "AGENTS.md")
    assert [f["format"] for f in report.files] == [
        "cursor",
        "cursor",
        "copilot-instructions",
        "agents-md",
    ]
    surfaces = {
        tag: (d.states[-1].applies_to.to_dict() if d.states[-1].applies_to else {})
        for tag, d in by_evidence(services, ctx).items()
    }
    assert surfaces == {
        "file:.cursor/rules/always.mdc#L6-L6": {"scope": "project"},
        "file:.cursor/rules/python.mdc#L6-L6": {"surface": "python"},
        "file:.cursor/rules/python.mdc#L7-L7": {"surface": "python"},
        "file:.github/instructions/ts.instructions.md#L6-L6": {"surface": "typescript"},
        "file:.github/instructions/ts.instructions.md#L7-L7": {"surface": "typescript"},
        "file:AGENTS.md#L8-L8": {"scope": "project"},
    }
    kinds = {t: d.states[-1].memorule_kind for t, d in by_evidence(services, ctx).items()}
    assert kinds["file:.cursor/rules/python.mdc#L7-L7"] is MemoruleKind.PREFERENCE
    assert kinds["file:AGENTS.md#L8-L8"] is MemoruleKind.CONVENTION


@pytest.mark.parametrize(
    ("globs", "surface", "warned"),
    [
        ("**", None, False),
        ("'**/*.py, **/*.pyi'", "python", False),
        ("src/**/*.go", "go", False),
        ("src/api/**", None, True),
        ("**/*.py,**/*.ts", None, True),
    ],
)
def test_globs_map_to_one_known_surface_or_warn(
    tmp_path: Path, globs: str, surface: str | None, warned: bool
) -> None:
    write(tmp_path, "x.instructions.md", f"---\napplyTo: {globs}\n---\n- Always test.\n")
    [parsed] = read_rule_files([tmp_path / "x.instructions.md"], tmp_path)
    assert parsed.units[0].applies_to == ({"surface": surface} if surface else {})
    assert [w.code for w in parsed.warnings] == (["globs_not_mapped"] if warned else [])


def test_options_set_applies_to_of_new_rules_over_the_front_matter(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "python.mdc", CURSOR_MDC)
    applies = {"persona": "donna", "surface": "backend-python", "scope": "persona"}
    run_import(services, ctx, tmp_path, "python.mdc", applies_to=applies)
    for d in by_evidence(services, ctx).values():
        assert d.states[-1].applies_to is not None
        assert d.states[-1].applies_to.to_dict() == applies


def test_a_scope_persona_without_a_persona_is_refused_before_anything_is_written(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    with pytest.raises(InvalidInput) as caught:
        run_import(services, ctx, tmp_path, "CLAUDE.md", applies_to={"scope": "persona"})
    assert caught.value.errors[0].field == "applies_to.persona"
    assert counts(services, ctx)["memories"] == 0


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Always run the tests before pushing.", MemoruleKind.BEHAVIORAL_RULE),
        ("Don't commit generated files.", MemoruleKind.BEHAVIORAL_RULE),
        ("Use pytest for every new test.", MemoruleKind.CONVENTION),  # the tool used here
        ("Prefer composition over inheritance.", MemoruleKind.PREFERENCE),
        ("Favour small pull requests where possible.", MemoruleKind.PREFERENCE),
        ("Test files are named test_<module>.py.", MemoruleKind.CONVENTION),
        ("Use snake_case for module names.", MemoruleKind.CONVENTION),
        ("Common mistake: calling the API without a timeout.", MemoruleKind.CORRECTION),
        ("`datetime.utcnow()` is deprecated; use `datetime.now(UTC)`.", MemoruleKind.CORRECTION),
        ("Feedback: the last review asked for smaller commits.", MemoruleKind.FEEDBACK),
        ("When you change the schema, run `make migrate`.", MemoruleKind.BEHAVIORAL_RULE),
        ("It is important to pin every dependency.", MemoruleKind.BEHAVIORAL_RULE),
        ("Installation: `uv add <package>`", MemoruleKind.CONVENTION),
        ("This document holds critical information about the code.", None),
        ("This service stores memories for agents.", None),
        ("What does the cache invalidate on?", None),
    ],
)
def test_the_kind_guesser_reads_the_rule_shape(text: str, kind: MemoruleKind | None) -> None:
    assert guess_kind(text) is kind


def test_short_entries_after_a_colon_stay_with_their_rule_and_labels_become_context(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    text = (
        "## Changes\n\n"
        "When you break an API, document it in `docs/migration.md`. Include:\n\n"
        "- What changed\n"
        "- Why it changed\n\n"
        "1. Package Management\n"
        "   - ONLY use uv, NEVER pip\n"
        "   - Installation: `uv add <package>`\n"
    )
    write(tmp_path, "CLAUDE.md", text)
    report = run_import(services, ctx, tmp_path, "CLAUDE.md", dry_run=True)
    got = [(i.line_start, i.line_end, i.memorule_kind, i.subject) for i in report.items]
    assert got == [
        (
            3,
            6,
            "behavioral_rule",
            "Changes: When you break an API, document it in `docs/migration.md`",
        ),
        (9, 9, "behavioral_rule", "Package Management: ONLY use uv, NEVER pip"),
        (10, 10, "convention", "Package Management: Installation: `uv add <package>`"),
    ]


def test_a_heading_that_names_a_kind_decides_it(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "AGENTS.md", "## Preferences\n\n- Always use tabs in Makefiles.\n")
    run_import(services, ctx, tmp_path, "AGENTS.md")
    [rule] = by_evidence(services, ctx).values()
    assert rule.states[-1].memorule_kind is MemoruleKind.PREFERENCE


def test_sentences_split_at_ends_but_not_after_abbreviations_or_in_code() -> None:
    text = "Use e.g. `a.b. C` here. Then stop! Version 2. Is fine? Yes"
    parts = [text[a:b] for a, b in sentence_spans(text)]
    assert parts == ["Use e.g. `a.b. C` here.", "Then stop!", "Version 2. Is fine?", "Yes"]


def test_front_matter_is_read_without_a_yaml_engine() -> None:
    lines = [
        "---",
        "description: 'It''s fine' # a comment",
        "globs: **/*.py, src/**/*.pyi",
        "applyTo: [\"a.ts\", 'b.ts']",
        "alwaysApply: false",
        "tags:",
        "  - one",
        "  - two",
        "!!python/object:os.system ls",
        "---",
        "body",
    ]
    front = parse_front_matter(lines)
    assert front.values["description"] == "It's fine"
    assert front.globs("globs") == ["**/*.py", "src/**/*.pyi"]
    assert front.globs("applyTo") == ["a.ts", "b.ts"]
    assert front.flag("alwaysApply") is False
    assert front.values["tags"] == ["one", "two"]
    assert (front.body_start, front.ignored) == (10, [9])


# -- idempotency and versions --------------------------------------------------------------


def test_re_importing_an_unchanged_file_writes_nothing(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    run_import(services, ctx, tmp_path, "CLAUDE.md", notes=NotesMode.KEEP)
    before = counts(services, ctx)
    again = run_import(services, ctx, tmp_path, "CLAUDE.md", notes=NotesMode.KEEP)
    assert counts(services, ctx) == before
    assert again.counts()["unchanged"] == 9
    assert sum(again.counts().values()) == 9


def test_a_changed_rule_supersedes_its_earlier_version(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    path = write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    run_import(services, ctx, tmp_path, "CLAUDE.md")
    old = by_evidence(services, ctx)["file:CLAUDE.md#L8-L8"].memory.id
    path.write_text(CLAUDE_MD.replace("e.g. `services`", "e.g. `services` or `ctx`"))
    report = run_import(services, ctx, tmp_path, "CLAUDE.md")
    assert report.counts()["updated"] == 1 and report.counts()["written"] == 0
    memory, state = services.memory.reads.get(ctx, old)
    assert (memory.current_version, state.evidence_signal_id) == (2, "file:CLAUDE.md#L8-L8")
    assert "`services` or `ctx`" in state.body
    events = services.store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=old))
    assert [e.event for e in events] == [AuditEventType.SUPERSEDED, AuditEventType.CREATED]
    assert run_import(services, ctx, tmp_path, "CLAUDE.md").counts()["unchanged"] == 8


def test_moving_rules_down_the_file_writes_nothing(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    path = write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    run_import(services, ctx, tmp_path, "CLAUDE.md")
    before = counts(services, ctx)
    path.write_text(CLAUDE_MD.replace("## Testing\n", "## Testing\n\nIntroduction.\n"))
    report = run_import(services, ctx, tmp_path, "CLAUDE.md")
    assert counts(services, ctx) == before
    assert report.counts()["unchanged"] == 8


def test_a_removed_rule_is_reported_missing_and_retired_only_on_request(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    path = write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    run_import(services, ctx, tmp_path, "CLAUDE.md")
    path.write_text(CLAUDE_MD.replace("- Always run `make test` before you push.\n", ""))
    report = run_import(services, ctx, tmp_path, "CLAUDE.md")
    [gone] = [i for i in report.items if i.action.value == "missing"]
    assert gone.line_start == 7
    report = run_import(services, ctx, tmp_path, "CLAUDE.md", retire_missing=True)
    assert report.counts()["retired"] == 1
    assert gone.id is not None
    assert services.memory.reads.get(ctx, gone.id)[0].status.value == "retired"


def test_a_dry_run_reports_the_plan_and_writes_nothing(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    report = run_import(services, ctx, tmp_path, "CLAUDE.md", dry_run=True)
    assert report.dry_run and report.counts()["written"] == 8
    assert counts(services, ctx)["memories"] == 0


# -- safety ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
        ("\u2066", "LEFT-TO-RIGHT ISOLATE"),
        ("\u200b", "ZERO WIDTH SPACE"),
        ("\u200d", "ZERO WIDTH JOINER"),
        ("\u2060", "WORD JOINER"),
        ("\ufeff", "ZERO WIDTH NO-BREAK SPACE"),
        ("\U000e0041", "TAG LATIN CAPITAL LETTER A"),
    ],
)
def test_hidden_unicode_is_kept_and_reported_visibly_with_file_and_line(
    services: Services, ctx: SessionContext, tmp_path: Path, char: str, name: str
) -> None:
    write(tmp_path, "AGENTS.md", f"# Rules\n\n- Always review{char} the diff before merging.\n")
    report = run_import(services, ctx, tmp_path, "AGENTS.md")
    [warning] = [w for w in report.warnings if w.code == "hidden_unicode"]
    cp = ord(char)
    escaped = f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"
    assert (warning.path, warning.line, warning.details["column"]) == ("AGENTS.md", 3, 16)
    assert warning.details["name"] == name and escaped in warning.message
    assert char not in warning.message
    [rule] = by_evidence(services, ctx).values()
    assert char in rule.states[-1].body  # data is kept as written


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"# Rules\n- Always \x00 test\n", "binary_file"),
        (b"# Rules\n- Caf\xe9 rules\n", "not_utf8"),
        (b"- Always test.\n" + b"x" * MAX_FILE_BYTES, "too_large"),
    ],
)
def test_unsafe_files_are_refused_with_a_structured_error_and_nothing_is_written(
    services: Services, ctx: SessionContext, tmp_path: Path, content: bytes, code: str
) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    (tmp_path / "bad.md").write_bytes(content)
    with pytest.raises(InvalidInput) as caught:
        run_import(services, ctx, tmp_path, "CLAUDE.md", "bad.md")
    [error] = caught.value.errors
    assert (error.field, error.code, error.details["path"]) == ("path", code, "bad.md")
    assert counts(services, ctx)["memories"] == 0
    if code == "too_large":
        assert error.details["max_bytes"] == MAX_FILE_BYTES


def test_a_missing_path_is_refused(services: Services, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_rule_files([tmp_path / "nope.md"], tmp_path)
    assert caught.value.errors[0].code == "not_found"


def test_the_cli_prints_the_structured_error_and_exits_2_for_a_binary_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.mdc").write_bytes(b"\x00\x01binary")
    proc = prism(tmp_path, "import-rules", "bad.mdc", "--json")
    assert proc.returncode == 2, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "validation_failed"
    assert error["fields"][0]["code"] == "binary_file"


def test_the_cli_imports_a_file_then_finds_it_unchanged(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md", CLAUDE_MD)
    first = json.loads(prism(tmp_path, "import-rules", "CLAUDE.md", "--json").stdout)
    assert first["counts"]["written"] == 8
    human = prism(tmp_path, "import-rules", "CLAUDE.md")
    assert human.returncode == 0, human.stderr
    assert "written 0, updated 0, unchanged 8, skipped 1" in human.stdout
    dry = prism(tmp_path, "import-rules", "CLAUDE.md", "--dry-run", "--notes", "keep")
    assert "note" in dry.stdout and "dry run, would write 0" in dry.stdout


def prism(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return invoke_prism(cwd / "prism.db", *args, cwd=cwd)


# -- real rules: nothing lost ----------------------------------------------------------------


def bench_sample(n: int = 200, seed: int = 94) -> list[dict[str, Any]]:
    if not BENCH_RULES.exists():
        pytest.skip("shared/bench/rules/rules.jsonl is not here")
    with BENCH_RULES.open(encoding="utf-8") as handle:
        rules = [json.loads(line) for line in handle]
    return random.Random(seed).sample(rules, n)


def render_sample(rules: list[dict[str, Any]], fmt: str) -> str:
    """Rules back into a rule file: bullets as list items, sentences as paragraphs."""
    out: list[str] = []
    if fmt == "cursor":
        out += ["---", "description: sample", "globs: **/*", "alwaysApply: true", "---"]
    elif fmt == "copilot":
        out += ["---", "applyTo: '**'", "---"]
    section = object()
    for rule in rules:
        if rule["section"] != section:
            section = rule["section"]
            title = (section or "General").split(" > ")[-1]
            out += ["", f"## {' '.join(title.split())}", ""]
        if rule["unit"] == "bullet":
            out.append(f"- {rule['body']}")
        else:
            out += ["", rule["body"], ""]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("claude", "CLAUDE.md"),
        ("agents", "AGENTS.md"),
        ("cursor", ".cursor/rules/sample.mdc"),
        ("copilot", ".github/instructions/sample.instructions.md"),
    ],
)
def test_real_rules_rendered_into_each_format_import_with_nothing_lost(
    services: Services, ctx: SessionContext, tmp_path: Path, fmt: str, name: str
) -> None:
    rules = bench_sample()
    write(tmp_path, name, render_sample(rules, fmt))
    report = run_import(services, ctx, tmp_path, name, notes=NotesMode.KEEP)
    assert report.counts()["skipped"] == 0, [i for i in report.items if i.action.value == "skip"]
    bodies = " ".join(" ".join(d.states[-1].body.split()) for d in stored(services, ctx))
    missing = [r["id"] for r in rules if " ".join(r["body"].split()) not in bodies]
    assert missing == []
    lines = render_sample(rules, fmt).split("\n")
    for d in stored(services, ctx):
        state = d.states[-1]
        tag = state.evidence_signal_id or re.sub(r".*\((file:.*)\)$", r"\1", state.subject or "")
        found = re.fullmatch(r"file:(.+?)#L(\d+)-L(\d+)(?: fm=.*)?", tag)
        assert found is not None and found[1] == name
        quoted = "\n".join(lines[int(found[2]) - 1 : int(found[3])])
        first = state.body.split("\n")[0].strip()[:40]
        # A negating heading ("Common Pitfalls", "What to avoid") is carried into its items'
        # bodies (issue 30), so a body may open with its section's heading instead.
        headings = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
        assert first in quoted or any(first.rstrip(":") in h for h in headings), (first, quoted)


def test_the_cli_reports_what_it_wrote_kept_and_skipped_and_lists_all_with_verbose(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "AGENTS.md",
        "# Guide\n\nThis repository is the Prism API.\n\n"
        "- Always run `make test` before you push.\n- Prefer small pull requests.\n",
    )
    db = tmp_path / "prism.db"
    first = invoke_prism(db, "import-rules", "AGENTS.md", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    out = first.stdout.splitlines()
    assert out[0] == "AGENTS.md: 2 rules, 1 descriptive (agents-md)"
    # the descriptive stretch is listed as skipped with its reason (issue 30: nothing is
    # left out silently); only unchanged items are counted without a line
    assert [line.split()[:2] for line in out[1:4]] == [
        ["skip", "note"],
        ["written", "behavioral_rule"],
        ["written", "preference"],
    ]
    assert "descriptive text, not a rule" in out[1]
    assert out[4].startswith("written 2, updated 0, unchanged 0, skipped 1, notes 0")
    assert "not listed" not in out[4]
    again = invoke_prism(db, "import-rules", "AGENTS.md", "--verbose", cwd=tmp_path)
    lines = again.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ["skip", "unchanged", "unchanged"]
    assert "descriptive text" in lines[1]
    assert lines[4] == "written 0, updated 0, unchanged 2, skipped 1, notes 0, missing 0, retired 0"
    data = json.loads(invoke_prism(db, "import-rules", "AGENTS.md", "--json", cwd=tmp_path).stdout)
    assert data["counts"]["unchanged"] == 2 and len(data["items"]) == 3


def test_lenient_keeps_list_entries_without_a_cue_and_the_default_keeps_them_after(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "AGENTS.md",
        # entries with no cue under a heading that names no rules (a stack heading would:
        # its entries name what the project uses)
        "# Project\n\n## Patterns\n\n- Repository objects around the database\n"
        "- Event sourcing in the audit log\n\n"
        "## Rules\n\n- Always run `make test` before committing.\n",
    )

    def counts(*args: str) -> dict[str, int]:
        done = prism(tmp_path, "import-rules", *args, "--json")
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout)["counts"])

    default = counts("AGENTS.md", "--dry-run")
    assert (default["written"], default["skipped"]) == (1, 2)
    lenient = counts("AGENTS.md", "--lenient")
    assert (lenient["written"], lenient["skipped"]) == (3, 0)
    assert counts("AGENTS.md", "--lenient")["unchanged"] == 3
    after = counts("AGENTS.md", "--retire-missing")  # the default reading, later
    assert (after["unchanged"], after["written"], after["retired"]) == (3, 0, 0)
    exported = prism(tmp_path, "export-rules", "--format", "agents-md", "--out", "out")
    assert exported.returncode == 0, exported.stderr
    again = counts("out/AGENTS.md")
    assert (again["unchanged"], again["written"], again["updated"]) == (3, 0, 0)
