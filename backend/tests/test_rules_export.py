"""Exporting memorules as rule files (issue 8), and the import → export → import round trip."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import MemoruleKind, SessionContext
from prism_memory.formats.rules_io.exporter import ExportFormat, applicable_memorules, render
from prism_memory.formats.rules_io.records import ExportedFile, ImportReport, NotesMode
from prism_memory.services.rules_import import ImportOptions, read_rule_files
from tests.cli_run import invoke_prism
from tests.conftest import ContextFactory
from tests.rules_helpers import operator_importer

BACKEND = Path(__file__).resolve().parents[1]

HAND_WRITTEN = """\
# CLAUDE.md

We build the Prism API.

## Rules

- Always run `make test` before you push.
- Prefer small functions; split anything over 50 lines.
- Test files are named `test_<module>.py`.
- Common mistake: forgetting `await` on a coroutine.
- Show the migration with:
  ```sql
  SELECT version FROM schema_migrations;
  ```
"""


def rule(kind: str, subject: str, body: str, **applies: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": kind,
        "subject": subject,
        "body": body,
        "applies_to": applies or {"scope": "project"},
    }


def seed(services: Services, make_ctx: ContextFactory) -> SessionContext:
    """Rules of every kind in several scopes, surfaces and personas, plus a note."""
    ctx = make_ctx(persona="donna")
    other_project = make_ctx(project="web", persona="donna")
    writes = [
        (
            ctx,
            rule("behavioral_rule", "Testing: Run tests", "Always run the tests before pushing."),
        ),
        (ctx, rule("convention", "Snake case", "Module names use snake_case.", surface="python")),
        (ctx, rule("preference", "Small PRs", "Prefer small pull requests.", scope="global")),
        (ctx, rule("correction", "Await", "Forgetting await leaves the coroutine unrun.")),
        (ctx, rule("feedback", "Cite spec", "Cite the spec section in every review.")),
        (ctx, rule("behavioral_rule", "TS any", "Never use any in TypeScript.", surface="ts")),
        (
            ctx,
            rule(
                "behavioral_rule",
                "Donna only",
                "Donna reviews every schema change.\n\n```sql\nSELECT 1;\n```",
                persona="donna",
                scope="persona",
            ),
        ),
        (ctx, rule("behavioral_rule", "Texi only", "Texi signs architecture off.", persona="texi")),
        (other_project, rule("convention", "Web only", "Web pages use kebab-case file names.")),
        (
            other_project,
            rule("convention", "Org wide", "Every repo has a CODEOWNERS.", scope="org"),
        ),
    ]
    for who, raw in writes:
        services.memory.writes.remember(who, validate_remember(raw))
    services.memory.writes.remember(
        ctx, validate_remember({"kind": "note", "body": "A note is never exported."})
    )
    return ctx


def export_text(services: Services, ctx: SessionContext, fmt: ExportFormat) -> list[ExportedFile]:
    return render(fmt, applicable_memorules(services.store, ctx), ctx)


def run_import(
    services: Services, ctx: SessionContext, folder: Path, *names: str, **options: Any
) -> ImportReport:
    files = read_rule_files([folder / n for n in names], folder)
    return operator_importer(services, ctx).run(ctx, files, ImportOptions(**options))


def write_files(folder: Path, files: list[ExportedFile]) -> list[str]:
    for f in files:
        (folder / f.name).write_text(f.text, encoding="utf-8")
    return [f.name for f in files]


def test_the_export_holds_what_recall_returns_for_the_context(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    for context in (ctx, make_ctx(persona="texi", surface="python"), make_ctx(surface="ts")):
        recalled = services.memory.recalls.recall(
            context, validate_recall({"query": "", "top_k": 100, "source_type": "memorule"})
        )
        exported = applicable_memorules(services.store, context)
        assert {m.memory.id for m in recalled.matches} == {m.id for m, _ in exported}


def test_an_export_is_not_cut_at_recalls_top_k(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx()
    for i in range(130):
        services.memory.writes.remember(
            ctx, validate_remember(rule("convention", f"Rule {i:03d}", f"Convention {i:03d}."))
        )
    [agents] = export_text(services, ctx, ExportFormat.AGENTS_MD)
    assert agents.rules == 130 and agents.text.count("<!-- prism:id=") == 130


def test_agents_md_groups_by_scope_and_applies_to_then_by_source_heading_with_ids_and_kinds(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    [agents] = export_text(services, ctx, ExportFormat.AGENTS_MD)
    text = agents.text
    assert text.startswith("# AGENTS.md\n\n<!-- prism:export format=agents-md persona=donna -->")
    headings = [line for line in text.split("\n") if line.startswith("#")]
    assert headings == [
        "# AGENTS.md",
        "## Global rules",
        "## Organisation rules",
        "## Project rules",
        "### Testing",  # the heading the rule's subject names, not its kind
        "## Project rules (surface python)",
        "## Project rules (surface ts)",
        "## Persona rules (persona donna)",
    ]
    project = text.split("## Project rules\n")[1].split("\n## ")[0]
    assert project.index("Forgetting await") < project.index("### Testing")
    assert re.search(
        r"- Forgetting await leaves the coroutine unrun\. <!-- prism:id=\S+ v=1 "
        r"kind=correction -->",
        project,
    )
    assert "Texi signs" not in text and "kebab-case" not in text and "never exported" not in text
    assert '<!-- prism:applies_to {"scope": "global"} -->' in text
    assert agents.rules == 8
    donna = text.split("## Persona rules (persona donna)")[1]
    assert "- Donna reviews every schema change. <!-- prism:id=" in donna
    assert "\n\n  ```sql\n  SELECT 1;\n  ```\n" in donna


def test_claude_md_is_the_same_rules_under_its_own_title(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    [agents] = export_text(services, ctx, ExportFormat.AGENTS_MD)
    [claude] = export_text(services, ctx, ExportFormat.CLAUDE_MD)
    assert claude.name == "CLAUDE.md" and claude.text.startswith("# CLAUDE.md\n")
    assert claude.text.replace("CLAUDE.md", "X").replace("claude-md", "x") == agents.text.replace(
        "AGENTS.md", "X"
    ).replace("agents-md", "x")


def test_cursor_gets_one_mdc_per_group_with_globs_from_the_surface(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    files = {f.name: f.text for f in export_text(services, ctx, ExportFormat.CURSOR)}
    assert list(files) == [
        "prism-global.mdc",
        "prism-org.mdc",
        "prism-project.mdc",
        "prism-project-python.mdc",
        "prism-project-ts.mdc",
        "prism-persona-donna.mdc",
    ]
    python = next(t for n, t in files.items() if n.endswith("python.mdc"))
    assert python.startswith(
        "---\ndescription: Prism memorules - Project rules (surface python)\n"
        "globs: **/*.py,**/*.pyi\nalwaysApply: false\n---\n"
    )
    assert "alwaysApply: true" in files["prism-global.mdc"]
    ts = next(t for n, t in files.items() if n.endswith("ts.mdc"))
    assert "globs:" not in ts and "alwaysApply: false" in ts  # no known globs for 'ts'


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_the_same_store_exports_byte_identical_files(
    services: Services, make_ctx: ContextFactory, fmt: ExportFormat
) -> None:
    ctx = seed(services, make_ctx)
    first = export_text(services, ctx, fmt)
    again = export_text(services, make_ctx(persona="donna"), fmt)
    assert [(f.name, f.text) for f in first] == [(f.name, f.text) for f in again]
    written_at = [
        s.written_at.isoformat()[:10] for _, s in applicable_memorules(services.store, ctx)
    ]
    assert not any(day in f.text for f in first for day in written_at)  # no timestamps


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_import_export_import_is_a_fixed_point(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat
) -> None:
    ctx = make_ctx(persona="donna")
    (tmp_path / "CLAUDE.md").write_text(HAND_WRITTEN, encoding="utf-8")
    first = run_import(services, ctx, tmp_path, "CLAUDE.md", notes=NotesMode.KEEP)
    assert first.counts()["written"] == 5 and first.counts()["notes"] == 1
    before = services.store.stats(ctx.tenant_id)
    out = tmp_path / "out"
    out.mkdir()
    exported = export_text(services, ctx, fmt)
    names = [f"out/{name}" for name in write_files(out, exported)]
    again = run_import(services, ctx, tmp_path, *names, notes=NotesMode.KEEP)
    assert services.store.stats(ctx.tenant_id) == before
    assert again.counts()["unchanged"] == 5 and sum(again.counts().values()) == 5
    assert all(f["exported_by_prism"] for f in again.files)
    assert [f.text for f in export_text(services, ctx, fmt)] == [f.text for f in exported]
    third = run_import(services, ctx, tmp_path, "CLAUDE.md", notes=NotesMode.KEEP)
    assert services.store.stats(ctx.tenant_id) == before
    assert third.counts()["unchanged"] == 6


def test_an_edited_export_updates_its_memorules_instead_of_duplicating_them(
    services: Services, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    ctx = seed(services, make_ctx)
    [agents] = export_text(services, ctx, ExportFormat.AGENTS_MD)
    edited = agents.text.replace(
        "Prefer small pull requests.", "Prefer pull requests under 400 lines."
    )
    edited = edited.replace("kind=correction", "kind=behavioral_rule")  # its kind, edited
    (tmp_path / "AGENTS.md").write_text(edited, encoding="utf-8")
    memories = services.store.stats(ctx.tenant_id)["memories"]
    report = run_import(services, ctx, tmp_path, "AGENTS.md")
    assert report.counts() == {
        "written": 0,
        "updated": 2,
        "unchanged": 6,
        "skipped": 0,
        "notes": 0,
        "missing": 0,
        "retired": 0,
    }
    assert services.store.stats(ctx.tenant_id)["memories"] == memories
    by_subject = {i.subject: i for i in report.items if i.action.value == "update"}
    small = by_subject["Prefer pull requests under 400 lines"]
    assert small.version == 2
    assert small.id is not None
    _, state = services.memory.reads.get(ctx, small.id)
    assert state.evidence_signal_id is not None
    assert state.evidence_signal_id.startswith("file:AGENTS.md#L")
    moved = [i for i in report.items if i.action.value == "update" and i is not small]
    assert moved[0].id is not None
    assert (
        services.memory.reads.get(ctx, moved[0].id)[1].memorule_kind is MemoruleKind.BEHAVIORAL_RULE
    )


def test_editing_a_stale_export_is_refused_for_that_rule(
    services: Services, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    ctx = seed(services, make_ctx)
    [agents] = export_text(services, ctx, ExportFormat.AGENTS_MD)
    rules = {m.id: s for m, s in applicable_memorules(services.store, ctx)}
    target = next(i for i, s in rules.items() if s.body == "Prefer small pull requests.")
    services.memory.lifecycle.update(ctx, target, {"body": "Prefer small, reviewed pull requests."})
    edited = agents.text.replace("Prefer small pull requests.", "Prefer tiny pull requests.")
    (tmp_path / "AGENTS.md").write_text(edited, encoding="utf-8")
    report = run_import(services, ctx, tmp_path, "AGENTS.md")
    assert report.counts()["skipped"] == 1 and report.counts()["updated"] == 0
    assert [w.code for w in report.warnings] == ["stale_export"]
    assert services.memory.reads.get(ctx, target)[1].version == 2


def test_an_export_imported_into_an_empty_store_keeps_kinds_and_applies_to(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, engine_settings: Any
) -> None:
    ctx = seed(services, make_ctx)
    original = sorted(
        (s.body, s.memorule_kind, json.dumps(s.applies_to.to_dict() if s.applies_to else {}))
        for _, s in applicable_memorules(services.store, ctx)
    )
    names = write_files(tmp_path, export_text(services, ctx, ExportFormat.CURSOR))
    fresh = make_ctx(tenant="elsewhere", persona="donna")
    report = run_import(services, fresh, tmp_path, *names)
    assert report.counts()["written"] == 8
    copied = sorted(
        (s.body, s.memorule_kind, json.dumps(s.applies_to.to_dict() if s.applies_to else {}))
        for _, s in applicable_memorules(services.store, fresh)
    )
    assert copied == original


def test_the_cli_writes_files_and_refuses_to_overwrite_a_hand_written_one(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text(HAND_WRITTEN, encoding="utf-8")
    assert prism(tmp_path, "import-rules", "CLAUDE.md").returncode == 0
    refused = prism(tmp_path, "export-rules", "--format", "claude-md", "--out", ".", "--json")
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"]["fields"][0]["code"] == "not_a_prism_export"
    wrote = prism(tmp_path, "export-rules", "--format", "agents-md", "--out", "out")
    assert wrote.returncode == 0, wrote.stderr
    assert wrote.stdout.strip() == f"wrote {Path('out') / 'AGENTS.md'} (5 rules)"
    again = prism(tmp_path, "export-rules", "--format", "agents-md", "--out", "out")
    assert again.returncode == 0
    stdout = prism(tmp_path, "export-rules", "--format", "agents-md")
    assert stdout.stdout == (tmp_path / "out" / "AGENTS.md").read_text(encoding="utf-8")
    cursor = prism(tmp_path, "export-rules", "--format", "cursor", "--out", "rules", "--json")
    assert [f["rules"] for f in json.loads(cursor.stdout)["files"]] == [5]


def prism(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return invoke_prism(cwd / "prism.db", *args, cwd=cwd)


CORPUS = BACKEND.parent / "bench" / "rules_files" / "corpus"


@pytest.mark.parametrize("fmt", [ExportFormat.AGENTS_MD, ExportFormat.CURSOR])
def test_the_real_corpus_is_a_fixed_point_of_import_export_import(
    services: Services, make_ctx: ContextFactory, tmp_path: Path, fmt: ExportFormat
) -> None:
    """The 30 real rule files of bench/rules_files: their rules survive an export and a
    re-import unchanged, and a second export is byte-identical."""
    ctx = make_ctx(persona="donna")
    importer = operator_importer(services, ctx)
    first = importer.run(
        ctx, read_rule_files([CORPUS], CORPUS), ImportOptions(notes=NotesMode.KEEP)
    )
    written, notes = first.counts()["written"], first.counts()["notes"]
    assert written > 200 and notes > 50
    before = services.store.stats(ctx.tenant_id)
    out = tmp_path / "out"
    out.mkdir()
    exported = export_text(services, ctx, fmt)
    names = write_files(out, exported)
    again = run_import(services, ctx, out, *names, notes=NotesMode.KEEP)
    assert services.store.stats(ctx.tenant_id) == before
    assert again.counts()["unchanged"] == written and sum(again.counts().values()) == written
    assert [f.text for f in export_text(services, ctx, fmt)] == [f.text for f in exported]
    third = importer.run(
        ctx, read_rule_files([CORPUS], CORPUS), ImportOptions(notes=NotesMode.KEEP)
    )
    assert services.store.stats(ctx.tenant_id) == before
    assert third.counts()["unchanged"] == written + notes


def test_exported_files_get_the_umask_mode_and_keep_an_existing_files_mode(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text(HAND_WRITTEN, encoding="utf-8")
    assert prism(tmp_path, "import-rules", "CLAUDE.md").returncode == 0
    previous = os.umask(0o027)
    try:
        assert (
            prism(tmp_path, "export-rules", "--format", "agents-md", "--out", "o").returncode == 0
        )
        assert stat.S_IMODE((tmp_path / "o" / "AGENTS.md").stat().st_mode) == 0o640
        (tmp_path / "o" / "AGENTS.md").chmod(0o604)
        assert (
            prism(tmp_path, "export-rules", "--format", "agents-md", "--out", "o").returncode == 0
        )
        assert stat.S_IMODE((tmp_path / "o" / "AGENTS.md").stat().st_mode) == 0o604
    finally:
        os.umask(previous)


def test_a_byte_order_mark_before_the_front_matter_is_no_part_of_it(
    services: Services, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    """An editor that writes a BOM must not cost a file its front matter, either way."""
    ctx = make_ctx(persona="donna")
    folder = tmp_path / ".windsurf" / "rules"
    folder.mkdir(parents=True)
    text = "---\ntitle: Git\ntrigger: always_on\n---\n\n# Git\n\n- Always squash commits.\n"
    (folder / "git.md").write_bytes(("\ufeff" + text).encode("utf-8"))
    report = run_import(services, ctx, tmp_path, ".windsurf/rules/git.md")
    assert report.counts()["written"] == 1
    assert not [w for w in report.warnings if w.code == "hidden_unicode"]
    [exported] = export_text(services, ctx, ExportFormat.WINDSURF_RULES)
    assert exported.text.startswith("---\ntrigger: always_on\ntitle: Git\n---\n")
    out = tmp_path / "out"
    out.mkdir()
    again = run_import(services, ctx, tmp_path, *[f"out/{n}" for n in write_files(out, [exported])])
    assert again.counts()["unchanged"] == 1 and sum(again.counts().values()) == 1
