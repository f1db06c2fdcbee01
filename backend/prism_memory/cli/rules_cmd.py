"""``prism import-rules``, ``prism export-rules`` and ``prism export``: rule files and graphs.

Thin front doors over :mod:`prism_memory.formats.rules_io` and
:mod:`prism_memory.formats.graph_export`.
Each function here builds one command around :func:`prism_memory.cli.runtime.common` (the context,
``--db`` and ``--json`` options, and the one error mapping).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TextIO

import click

from prism_memory.cli.acting import as_operator
from prism_memory.cli.runtime import Runtime, common
from prism_memory.domain.records import Scope
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.formats.graph_export import write_cypher
from prism_memory.formats.rules_io.exporter import ExportFormat, Rule, render
from prism_memory.formats.rules_io.kinds import LENIENT_THRESHOLD, RULE_THRESHOLD
from prism_memory.formats.rules_io.reading import escape_hidden
from prism_memory.formats.rules_io.records import Action, NotesMode
from prism_memory.serializers import import_dict
from prism_memory.services.rules_import import ImportOptions, RulesImporter, read_rule_files
from prism_memory.services.transfer import write_jsonl
from prism_memory.trigraph.dump import DumpItem

GraphWriter = Callable[[Iterable[DumpItem], TextIO, str], dict[str, int]]
# `prism export --format X`: one entry per format.
GRAPH_FORMATS: Final[dict[str, GraphWriter]] = {
    "cypher": lambda items, out, label: write_cypher(items, out, label).to_dict(),
    "jsonl": lambda items, out, label: write_jsonl(items, out).line_counts(),
}
_EXPORT_MARK: Final = "<!-- prism:export"


def import_rules() -> click.Command:
    """``prism import-rules``."""

    @click.command("import-rules")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
    @click.option(
        "--scope",
        type=click.Choice([s.value for s in Scope]),
        help="applies_to.scope of new rules (default: project)",
    )
    @click.option(
        "--notes",
        type=click.Choice([m.value for m in NotesMode]),
        default=NotesMode.SKIP.value,
        show_default=True,
        help="descriptive text that is not a rule: keep it as notes, or skip it",
    )
    @click.option("--dry-run", is_flag=True, help="show what would be written; write nothing")
    @click.option("--retire-missing", is_flag=True, help="retire rules no longer in their file")
    @click.option(
        "--lenient",
        is_flag=True,
        help="also keep as rules the list entries with no instruction cue (a list of patterns "
        "written as plain entries; a stack under a heading that does not name it), which the "
        "default skips as descriptive: more rules, more of them descriptions",
    )
    @click.option(
        "--learned",
        is_flag=True,
        help="let a model trained on hand-labelled rule files decide what is a rule (it "
        "keeps more of the conventions stated as facts, stacks and placements that the "
        "default skips; measured in docs/rules-files.md)",
    )
    @click.option(
        "--verbose", "-v", is_flag=True, help="list every item (unchanged and descriptive too)"
    )
    @common
    def command(
        rt: Runtime,
        paths: tuple[Path, ...],
        scope: str | None,
        notes: str,
        dry_run: bool,
        retire_missing: bool,
        lenient: bool,
        learned: bool,
        verbose: bool,
    ) -> None:
        """Import every tool's rule files as memorules.

        The tools: CLAUDE.md and .claude/rules, AGENTS.md, GEMINI.md, Cursor .mdc and
        .cursorrules, Copilot instructions, Windsurf and Cline rules.

        PATHS are files or folders (searched for *.md, *.mdc, .cursorrules, .windsurfrules,
        .clinerules). One memorule per
        rule; the source file and lines become its evidence (file:PATH#Lstart-Lend). Re-importing
        an unchanged file writes nothing; a changed rule becomes a new version of its memorule.
        The --persona/--surface/--specialization options given here (not PRISM_* variables)
        become the applies_to of new rules, with --scope.
        """
        applies = {k: str(rt.options[k]) for k in ("persona", "surface", "specialization")}
        applies = {k: v for k, v in applies.items() if rt.options.get(k)}
        if scope:
            applies["scope"] = scope
        threshold = LENIENT_THRESHOLD if lenient else RULE_THRESHOLD
        files = read_rule_files(list(paths), Path.cwd(), threshold, learned)
        access, me = as_operator(rt.services, rt.ctx)
        importer = RulesImporter(access, me.key, rt.services.store)
        options = ImportOptions(applies, NotesMode(notes), dry_run, retire_missing)
        from prism_memory.cli.progress import progress_for

        progress = progress_for(rt.json, "imported")
        try:
            report = importer.run(rt.ctx, files, options, progress)
        finally:
            progress.close()
        rt.emit(import_dict(report), lambda data: import_text(data, verbose))

    return command


def _applicable(rt: Runtime) -> list[Rule]:
    """The rules export-rules writes, read as the local operator through AccessService."""
    access, me = as_operator(rt.services, rt.ctx)
    return access.applicable_rules(me.key, rt.ctx)


def import_text(data: dict[str, Any], verbose: bool = False) -> str:
    """An import report for people: each file, then what was written, updated, kept and
    skipped — every skipped stretch with its lines and reason, so nothing is left out
    silently (with ``verbose`` the unchanged ones too; otherwise they are counted) — the
    counts, the warnings."""
    lines = []
    for f in data["files"]:
        note = ", written by prism export-rules" if f["exported_by_prism"] else ""
        via = f", imported by {f['imported_from']}" if f.get("imported_from") else ""
        lines.append(
            f"{f['path']}: {f['rules']} rules, {f['descriptive']} descriptive "
            f"({f['format']}{note}{via})"
        )
    quiet = 0
    for item in data["items"]:
        if not verbose and item["action"] == Action.UNCHANGED.value:
            quiet += 1
            continue
        where = f"{item['path']}:{item['lines'][0]}-{item['lines'][1]}" if item["lines"] else ""
        kind = item["memorule_kind"] or item["record"]
        extra = f"  ({item['message']})" if item["message"] else ""
        text = escape_hidden(f"{item['subject']}{extra}")
        action = (
            _VERBS.get(item["action"], item["action"]) if not data["dry_run"] else item["action"]
        )
        lines.append(f"  {action:<9} {kind:<15} {where}  {text}")
    c = data["counts"]
    verb = "dry run, would write" if data["dry_run"] else "written"
    lines.append(
        f"{verb} {c['written']}, updated {c['updated']}, unchanged {c['unchanged']}, "
        f"skipped {c['skipped']}, notes {c['notes']}, missing {c['missing']}, "
        f"retired {c['retired']}"
        + (f" ({quiet} unchanged items not listed; --verbose lists them)" if quiet else "")
    )
    proposed = data.get("check_proposals")
    if proposed and proposed["proposed"]:
        lines.append(
            f"checks proposed for {proposed['proposed']} rules from their text: "
            "review them with `prism proposals`"
        )
    lines.extend(f"warning: {w['code']}: {w['message']}" for w in data["warnings"])
    return "\n".join(lines)


_VERBS: Final = {
    Action.CREATE.value: "written",
    Action.NOTE.value: "noted",
    Action.UPDATE.value: "updated",
}


def export_rules() -> click.Command:
    """``prism export-rules``."""

    @click.command("export-rules")
    @click.option(
        "--format",
        "fmt",
        required=True,
        type=click.Choice([f.value for f in ExportFormat]),
        help="the tool's own format: agents-md, claude-md, gemini-md, copilot "
        "(copilot-instructions.md), cursorrules, windsurfrules, clinerules (one file each); "
        "cursor (prism-*.mdc), claude-rules, copilot-instructions, windsurf-rules, "
        "cline-rules (one file per group, into --out: .cursor/rules, .claude/rules, "
        ".github/instructions, .windsurf/rules, .clinerules)",
    )
    @click.option("--out", default="-", show_default=True, help="folder to write into; - is stdout")
    @click.option(
        "--force", is_flag=True, help="overwrite files that prism export-rules did not write"
    )
    @click.option(
        "--check",
        is_flag=True,
        help="write nothing; exit 1 if the files in --out differ from the export (with a "
        "diff) or hold what the tool would silently skip (front matter it rejects, patterns "
        "that match no file)",
    )
    @common
    def command(rt: Runtime, fmt: str, out: str, force: bool, check: bool) -> None:
        """Write the memorules that apply to the context as files agents load.

        The context is --persona/--surface/--specialization (or PRISM_*): the export holds what
        recall would return for it, all of it. Each rule keeps its memorule id in a comment, so
        editing the file and running import-rules records new versions. Same rules, same bytes.
        A --project given is named in the files' header; --check without --project checks
        the project the checked-in files name.
        """
        if check:
            from prism_memory.cli import rules_check_cmd

            rules_check_cmd.run(
                rt,
                fmt,
                out,
                lambda: render(
                    ExportFormat(fmt), _applicable(rt), rt.ctx, rt.options.get("project")
                ),
            )
            return
        files = render(ExportFormat(fmt), _applicable(rt), rt.ctx, rt.options.get("project"))
        if out == "-":
            if rt.json:
                rt.emit({"ok": True, "format": fmt, "files": [f.__dict__ for f in files]}, str)
                return
            for f in files:
                if len(files) > 1:
                    click.echo(f"==> {f.name} <==")
                click.echo(f.text, nl=False)
            return
        folder = Path(out)
        targets = [(folder / f.name, f) for f in files]
        refused = [
            FieldError(
                "out",
                "not_a_prism_export",
                f"{path} exists and was not written by prism export-rules; --force overwrites it",
                {"path": str(path)},
            )
            for path, _ in targets
            if not force and path.exists() and not _is_export(path)
        ]
        if refused:
            raise InvalidInput(refused)
        folder.mkdir(parents=True, exist_ok=True)
        for path, f in targets:
            _write_atomically(path, f.text)
        written = [
            {"path": str(p), "rules": f.rules, "bytes": len(f.text.encode())} for p, f in targets
        ]
        rt.emit(
            {"ok": True, "format": fmt, "files": written},
            lambda d: (
                "\n".join(f"wrote {x['path']} ({x['rules']} rules)" for x in d["files"])
                or "no memorules apply to this context; nothing written"
            ),
        )

    return command


def export_graph() -> click.Command:
    """``prism export``: the tenant's graph in one of :data:`GRAPH_FORMATS`."""

    @click.command("export")
    @click.option(
        "--format",
        "fmt",
        required=True,
        type=click.Choice(sorted(GRAPH_FORMATS)),
        help="cypher: Cypher statements for Neo4j-compatible databases; "
        "jsonl: every record, lossless, for 'prism import'",
    )
    @click.option("--out", default="-", show_default=True, help="file to write; - is stdout")
    @common
    def command(rt: Runtime, fmt: str, out: str) -> None:
        """Export the whole tenant's TriGraph (every project, every version, the audit chain)."""
        writer = GRAPH_FORMATS[fmt]
        settings, tenant = rt.services.settings, rt.ctx.tenant_id
        label = str(tenant) if settings.tenant == str(tenant) else f"{settings.tenant} ({tenant})"
        items = rt.services.store.dump(tenant)
        if out == "-":
            counts = writer(items, sys.stdout, label)
            sys.stdout.flush()
            click.echo(_graph_text({"counts": counts}), err=True)
            return
        path = Path(out)
        with _atomic(path) as handle:
            counts = writer(items, handle, label)
        rt.emit({"ok": True, "format": fmt, "path": str(path), "counts": counts}, _graph_text)

    return command


def _graph_text(data: dict[str, Any]) -> str:
    counts = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in data["counts"].items())
    where = f" to {data['path']}" if data.get("path") else ""
    return f"exported {counts}{where}"


def _is_export(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return _EXPORT_MARK in handle.read(4096)
    except OSError:
        return False


@contextmanager
def _atomic(path: Path) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path``; replace ``path`` only on success.

    The file gets the mode a plain ``open()`` would give it: an existing file keeps its
    mode, a new one gets 0666 less the umask (``mkstemp`` alone would make it 0600).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.chmod(name, _mode_for(path))
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _write_atomically(path: Path, text: str) -> None:
    with _atomic(path) as handle:
        handle.write(text)
