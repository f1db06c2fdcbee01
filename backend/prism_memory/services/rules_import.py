"""Import rule files as memorules (and notes): plan first, then write through AccessService.

Re-importing an unchanged file writes nothing; a changed rule becomes a new version of its
memorule (``AccessService.update``: a ``superseded`` audit event); a rule exported by Prism
maps back to its memorule by the ``prism:id`` comment. Every write goes through the same
validated path as ``prism_remember``; a unit that fails validation is skipped and reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from uuid import UUID

from prism_memory.domain import validation
from prism_memory.domain.access import ApiKey
from prism_memory.domain.contract.remember import MemoruleCreate
from prism_memory.domain.records import MemoruleWrite, SessionContext, Status
from prism_memory.errors import FieldError, InvalidInput, PrismError
from prism_memory.formats.rules_io.formats import parse_rule_file
from prism_memory.formats.rules_io.imports import MAX_DEPTH, follows_imports, resolve
from prism_memory.formats.rules_io.kinds import RULE_THRESHOLD
from prism_memory.formats.rules_io.matching import stored_by_path
from prism_memory.formats.rules_io.planning import Planner, Step
from prism_memory.formats.rules_io.reading import display_path, expand_paths, read_rule_file
from prism_memory.formats.rules_io.records import (
    Action,
    FileWarning,
    ImportReport,
    Item,
    NotesMode,
    ParsedFile,
    bounded,
)
from prism_memory.services.access_service import AccessService
from prism_memory.trigraph.port import TriGraphStore

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ImportOptions:
    """How to import.

    Attributes:
        applies_to: ``applies_to`` keys for new rules (persona, surface, specialization,
            scope); they override what a file's front matter says.
        notes: keep descriptive text as notes, or skip it.
        dry_run: plan and report; write nothing.
        retire_missing: retire records whose rule is no longer in its file.
    """

    applies_to: dict[str, str] = field(default_factory=dict)
    notes: NotesMode = NotesMode.SKIP
    dry_run: bool = False
    retire_missing: bool = False


def read_rule_files(
    paths: Sequence[Path], cwd: Path, threshold: float = RULE_THRESHOLD, learned: bool = False
) -> list[ParsedFile]:
    """Read and split every file (folders are searched); refuse all if any is unsafe.

    A CLAUDE.md's ``@path`` imports are followed as Claude Code follows them (see
    :mod:`.imports`): relative to the importing file, at most five hops deep, a cycle
    refused with a warning; each imported file is read as safely as the others, appears
    once however often it is named, and its rules carry its own path and lines.

    Args:
        paths: files or folders.
        cwd: paths inside it are shown (and tagged) relative to it.
        threshold: the :func:`~prism_memory.formats.rules_io.kinds.rule_likeness` from
            which a piece of a file is kept as a rule (the default is the importer's).
        learned: let the learned model (:mod:`~prism_memory.formats.rules_io.learned`)
            decide what is a rule.

    Raises:
        InvalidInput: every missing, binary, non-UTF-8 or oversize file at once.
    """
    reader = _Reader(cwd, threshold, learned)
    for path in expand_paths(paths):
        reader.read(path, None, ())
    if reader.errors:
        raise InvalidInput(reader.errors)
    return reader.parsed


@dataclass
class _Reader:
    cwd: Path
    threshold: float
    learned: bool
    parsed: list[ParsedFile] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)

    def read(self, path: Path, via: ParsedFile | None, chain: tuple[Path, ...]) -> None:
        resolved = path.resolve()
        if resolved in self.seen:
            return
        self.seen.add(resolved)
        shown = display_path(path, self.cwd)
        try:
            parsed = parse_rule_file(read_rule_file(path, shown), self.threshold, self.learned)
        except InvalidInput as exc:
            self.errors.extend(exc.errors)
            return
        parsed = replace(parsed, imported_from=via.path if via else None)
        self.parsed.append(parsed)
        if via is None and not follows_imports(path):
            return
        for target, line in parsed.imports:
            self._follow(parsed, path, target, line, (*chain, resolved))

    def _follow(
        self, parsed: ParsedFile, path: Path, target: str, line: int, chain: tuple[Path, ...]
    ) -> None:
        child = resolve(target, path)
        where = f"{parsed.path}:{line}: @{target}"
        if child.resolve() in chain:
            parsed.warnings.append(
                FileWarning(
                    "import_cycle",
                    parsed.path,
                    line,
                    f"{where} imports a file that imports it; not followed again",
                )
            )
        elif len(chain) > MAX_DEPTH:  # the child would be hop len(chain)
            parsed.warnings.append(
                FileWarning(
                    "import_too_deep",
                    parsed.path,
                    line,
                    f"{where} is more than {MAX_DEPTH} imports deep; not followed",
                )
            )
        elif not child.is_file():
            parsed.warnings.append(
                FileWarning(
                    "import_not_found",
                    parsed.path,
                    line,
                    f"{where}: no such file; nothing imported",
                )
            )
        else:
            self.read(child, parsed, chain)


class RulesImporter:
    """Reads rule files and writes what they say through :class:`AccessService`, as ``key``.

    Args:
        access: the guarded operations every write goes through.
        key: who imports (the CLI: the local operator key); it must be a writer of the
            context's project, and a persona-bound key may only write its own persona's rules.
        store: the TriGraph, read to find what earlier imports wrote.
    """

    def __init__(self, access: AccessService, key: ApiKey, store: TriGraphStore) -> None:
        self.access = access
        self.key = key
        self.store = store

    def run(
        self,
        ctx: SessionContext,
        files: list[ParsedFile],
        options: ImportOptions,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Plan the import of ``files`` and, unless it is a dry run, write it.

        Raises:
            InvalidInput: ``options.applies_to`` is not a valid ``applies_to``.
        """
        probe = _probe(options.applies_to)
        # Before anything is read: a key that cannot write these rules learns nothing.
        self.access.check_remember(self.key, ctx, probe)
        planner = Planner(
            self.store,
            ctx,
            options.applies_to,
            options.notes,
            options.retire_missing,
            stored_by_path(self.store, ctx),
        )
        steps = planner.plan(files)
        report = ImportReport(dry_run=options.dry_run)
        for parsed in files:
            report.warnings.extend(bounded(parsed.warnings))
            report.files.append(_summary(parsed))
        report.warnings.extend(planner.warnings)
        writes = [s for s in steps if s.request is not None]
        done = 0
        for step in steps:
            if options.dry_run or step.request is None:
                report.items.append(step.item)
                continue
            report.items.append(self._apply(ctx, step, report))
            done += 1
            if progress is not None:
                progress(done, len(writes))
        if not options.dry_run:
            self._propose_checks(ctx, report)
        return report

    def _propose_checks(self, ctx: SessionContext, report: ImportReport) -> None:
        """Check proposals for the rules this import wrote whose text yields checks: they
        wait in the review queue like those of ``prism checks propose``."""
        written = [
            item.id
            for item in report.items
            if item.record == "memorule"
            and item.action in (Action.CREATE, Action.UPDATE)
            and item.id is not None
        ]
        if not written:
            return
        try:
            found = self.access.propose_checks(self.key, ctx, written)
        except PrismError as exc:  # the rules are written; say why no checks were proposed
            report.warnings.append(
                FileWarning("checks_not_proposed", "", None, exc.message, exc.to_payload())
            )
            return
        if found.proposals:
            report.check_proposals = found.to_dict()

    # -- writing -----------------------------------------------------------------------

    def _apply(self, ctx: SessionContext, step: Step, report: ImportReport) -> Item:
        item, request = step.item, step.request
        assert request is not None
        try:
            if item.action in (Action.CREATE, Action.NOTE):
                write = validation.validate_remember(request)
                result = self.access.remember(self.key, ctx, write)
                if result.replayed:
                    return self._replayed(ctx, item, result.id)
            elif item.action is Action.UPDATE:
                assert step.stored is not None
                result = self.access.update(self.key, ctx, step.stored.memory.id, **request)
            else:
                assert step.stored is not None
                result = self.access.retire(self.key, ctx, step.stored.memory.id, **request)
        except PrismError as exc:
            report.warnings.append(
                FileWarning(
                    "not_written",
                    item.path,
                    item.line_start,
                    f"{item.path}:{item.line_start}: {exc.message}",
                    {"error": exc.to_payload()["error"]},
                )
            )
            return _replace(item, action=Action.SKIP, message=exc.message)
        return _replace(item, id=result.id, version=result.version)

    def _replayed(self, ctx: SessionContext, item: Item, memory_id: UUID) -> Item:
        memory, state = self.access.get(self.key, ctx, memory_id)
        if memory.status is Status.RETIRED:
            why = f"matches retired {memory.kind.value} {memory.id}; `prism restore` it"
            return _replace(item, action=Action.SKIP, id=memory.id, message=why)
        why = "already imported (same rule, same place)"
        return _replace(
            item, action=Action.UNCHANGED, id=memory.id, version=state.version, message=why
        )


def _probe(applies_to: dict[str, str]) -> MemoruleWrite | None:
    """A rule written where the options say: what the key must be allowed to write (None:
    the options name no place, the role alone decides)."""
    if not applies_to:
        return None
    probe = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "probe",
        "body": "probe of the import options",
        "applies_to": applies_to,
    }
    return MemoruleCreate.parse(probe).to_write()


def _summary(parsed: ParsedFile) -> dict[str, Any]:
    rules = sum(1 for u in parsed.units if u.kind is not None)
    return {
        "path": parsed.path,
        "format": parsed.format.value,
        "rules": rules,
        "descriptive": len(parsed.units) - rules,
        "exported_by_prism": parsed.exported,
        "imported_from": parsed.imported_from,
    }


def _replace(item: Item, **changes: Any) -> Item:
    return Item(**{**item.__dict__, **changes})
