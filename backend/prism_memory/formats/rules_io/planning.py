"""Planning an import: what each unit of each file becomes, before anything is written.

Two passes over the files. First, units carrying ``<!-- prism:id=... v=N -->`` claim the
memorule they name (an exported rule maps back to it, whatever its evidence says). Then the
other units pair with the records that earlier imports of the same file wrote (see
:mod:`.matching`): same text → unchanged, similar text → a new version, no partner → a new
record; records left over are no longer in their file.

For a changed rule the new version takes the new text, subject and evidence; its kind changes
only when the text's guessed kind changed or a heading names the kind, so a kind corrected by
hand in Prism survives re-imports. ``applies_to`` changes only through an exported file's
``prism:applies_to`` comment: the importer's options apply to new rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from prism_memory.domain import validation
from prism_memory.domain.contract.bounds import EVIDENCE_MAX
from prism_memory.domain.records import Kind, MemoruleKind, MemoryState, SessionContext, Status
from prism_memory.errors import InvalidInput
from prism_memory.formats.rules_io.kinds import guess_kind
from prism_memory.formats.rules_io.matching import Stored, pair, stored_for
from prism_memory.formats.rules_io.records import (
    Action,
    FileWarning,
    Item,
    NotesMode,
    ParsedFile,
    Unit,
    comparable,
    front_of,
)
from prism_memory.formats.rules_io.requests import (
    idempotency_key,
    memorule_request,
    note_request,
    note_subject,
    subject_for,
    update_key,
)
from prism_memory.trigraph.port import TriGraphStore


@dataclass(frozen=True)
class Step:
    """One planned action; ``request`` holds the service call's arguments when it writes."""

    item: Item
    request: dict[str, Any] | None = None
    stored: Stored | None = None


@dataclass
class Planner:
    """Plans the import of a set of files for one context.

    Args:
        store: the TriGraph (read only).
        ctx: the importer's context.
        applies_to: ``applies_to`` keys for new rules.
        notes: what to do with descriptive text.
        retire_missing: plan to retire records no longer in their file.
        by_path: records earlier imports wrote, by tag path (:func:`.stored_by_path`).
    """

    store: TriGraphStore
    ctx: SessionContext
    applies_to: dict[str, str]
    notes: NotesMode
    retire_missing: bool
    by_path: dict[str, list[Stored]]
    warnings: list[FileWarning] = field(default_factory=list)
    _claimed: set[UUID] = field(default_factory=set)

    def plan(self, files: list[ParsedFile]) -> list[Step]:
        """Every file's steps, in file order, then unit order; missing records last."""
        marked = [
            {i: self._marked(u) for i, u in enumerate(f.units) if u.marker is not None}
            for f in files
        ]
        steps: list[Step] = []
        for parsed, claims in zip(files, marked, strict=True):
            steps.extend(self._file(parsed, {i: s for i, s in claims.items() if s is not None}))
        return steps

    def _file(self, parsed: ParsedFile, claimed: dict[int, Step]) -> list[Step]:
        stored = [
            s for s in stored_for(self.by_path, parsed.path) if s.memory.id not in self._claimed
        ]
        plain = [i for i in range(len(parsed.units)) if i not in claimed]
        paired = pair(parsed.units, plain, stored)
        steps = dict(claimed)
        for i, s in paired.same:
            unit = parsed.units[i]
            if front_changed(unit, s.state):
                steps[i] = self._update(unit, s, {"evidence_signal_id": unit.evidence()})
            else:
                steps[i] = Step(item_for(Action.UNCHANGED, unit, s))
        for i, s in paired.edited:
            steps[i] = self._update(parsed.units[i], s, changes(parsed.units[i], s.state, False))
        for i in paired.new:
            steps[i] = self._create(parsed.units[i])
        return [steps[i] for i in sorted(steps)] + [self._gone(s) for s in paired.gone]

    def _marked(self, unit: Unit) -> Step | None:
        """The step for a unit that names its memorule, or None to treat it as unmarked."""
        assert unit.marker is not None
        memory_id = unit.marker.memory_id
        found = self.store.get(self.ctx.tenant_id, memory_id)
        if found is None or found[0].kind is not Kind.MEMORULE:
            return None  # exported from another store: import it as a new rule
        memory, state = found
        current = Stored(memory, state, unit.location)
        if memory_id in self._claimed:
            return Step(item_for(Action.SKIP, unit, current, "the same prism:id appears twice"))
        self._claimed.add(memory_id)
        if memory.status is Status.RETIRED:
            why = f"memorule {memory_id} is retired; `prism restore` it to edit it here"
            return Step(item_for(Action.SKIP, unit, current, why))
        wanted = changes(unit, state, exported=True)
        if not wanted and front_changed(unit, state):
            wanted = {"evidence_signal_id": unit.evidence()}
        if not wanted:
            return Step(item_for(Action.UNCHANGED, unit, current))
        if unit.marker.version != state.version:
            why = (
                f"exported at version {unit.marker.version}, now version {state.version}: "
                "export again before editing"
            )
            where = unit.location
            self.warnings.append(FileWarning("stale_export", where.path, where.line_start, why))
            return Step(item_for(Action.SKIP, unit, current, why))
        return self._update(unit, current, wanted)

    def _create(self, unit: Unit) -> Step:
        if unit.kind is None and self.notes is NotesMode.SKIP:
            why = "descriptive text, not a rule (--notes keep keeps it)"
            return Step(item_for(Action.SKIP, unit, None, why))
        if unit.kind is None:
            request, action = note_request(unit), Action.NOTE
        else:
            request, action = memorule_request(unit, self.applies_to), Action.CREATE
        try:
            validation.validate_remember(request)
        except InvalidInput as exc:
            why = "; ".join(f"{e.field}: {e.message}" for e in exc.errors)
            return Step(item_for(Action.SKIP, unit, None, f"not a valid {request['kind']}: {why}"))
        request["idempotency_key"] = idempotency_key(self.ctx, "create", request)
        return Step(item_for(action, unit), request)

    def _update(self, unit: Unit, stored: Stored, wanted: dict[str, Any]) -> Step:
        tag = unit.location.tag()
        evidence = evidence_for(unit, stored.state) if stored.memory.kind is Kind.MEMORULE else None
        payload = {"changes": wanted, "evidence_signal_id": evidence}
        request = {
            "changes": wanted,
            "reason": f"re-imported from {tag}: the rule changed in the file",
            "evidence_signal_id": evidence,
            "idempotency_key": update_key(
                self.ctx, stored.memory.id, stored.state.version, payload
            ),
        }
        what = ", ".join(sorted(wanted)).replace("evidence_signal_id", "front matter")
        item = item_for(Action.UPDATE, unit, stored, what)
        return Step(item, request, stored)

    def _gone(self, stored: Stored) -> Step:
        loc, state = stored.location, stored.state
        item = Item(
            action=Action.RETIRE if self.retire_missing else Action.MISSING,
            path=loc.path,
            line_start=loc.line_start,
            line_end=loc.line_end,
            record=stored.record,
            subject=state.subject or "",
            memorule_kind=state.memorule_kind.value if state.memorule_kind else None,
            id=stored.memory.id,
            version=state.version,
            message=None if self.retire_missing else "no longer in the file (--retire-missing)",
        )
        if not self.retire_missing:
            return Step(item, None, stored)
        reason = f"no longer in {loc.path} (rule-file import)"
        key = update_key(self.ctx, stored.memory.id, state.version, {"retire": reason})
        return Step(item, {"reason": reason, "idempotency_key": key}, stored)


def item_for(
    action: Action, unit: Unit, stored: Stored | None = None, message: str | None = None
) -> Item:
    """The report line for a unit (and the record it maps to, if any)."""
    record = stored.record if stored else (Kind.MEMORULE if unit.kind else Kind.NOTE).value
    kind = stored.state.memorule_kind if stored else unit.kind
    return Item(
        action=action,
        path=unit.location.path,
        line_start=unit.location.line_start,
        line_end=unit.location.line_end,
        record=record,
        subject=subject_for(unit),
        memorule_kind=kind.value if kind else None,
        id=stored.memory.id if stored else None,
        version=stored.state.version if stored else None,
        message=message,
    )


def changes(unit: Unit, state: MemoryState, exported: bool) -> dict[str, Any]:
    """What the file says differently from the stored state (see the module doc)."""
    wanted: dict[str, Any] = {}
    if comparable(unit.text) != comparable(state.body):
        wanted["body"] = unit.text
        subject = note_subject(unit) if state.memorule_kind is None else subject_for(unit)
        if subject != state.subject:
            wanted["subject"] = subject
    if state.memorule_kind is None:
        return wanted
    kind = _new_kind(unit, state, body_changed="body" in wanted)
    if kind is not None and kind is not state.memorule_kind:
        wanted["memorule_kind"] = kind.value
    current = state.applies_to.to_dict() if state.applies_to else {}
    if exported and unit.applies_to_stated and unit.applies_to != current:
        wanted["applies_to"] = unit.applies_to
    return wanted


def evidence_for(unit: Unit, state: MemoryState) -> str:
    """The evidence of a new version: the unit's tag with its file's kept front matter; when
    the file cannot say what it was (a file of a tool that reads no front matter, or of
    another tool), the stored rule's kept front matter goes on with the new tag, so an
    AGENTS.md edit does not erase what the rule's ``.mdc`` said."""
    stored = front_of(state.evidence_signal_id)
    if stored is None or (unit.front is not None and unit.front.tool == stored.tool):
        return unit.evidence()
    carried = unit.location.tag() + stored.suffix()
    return carried if len(carried) <= EVIDENCE_MAX else unit.evidence()


def front_changed(unit: Unit, state: MemoryState) -> bool:
    """Whether the unit's file keeps other front matter than the stored rule's evidence
    (then a new version records it there); never for a file of a tool that reads no front
    matter, or of another tool than the one the stored front matter is from: it says
    nothing about it."""
    if unit.front is None or state.memorule_kind is None:
        return False
    stored = front_of(state.evidence_signal_id)
    if stored is not None and stored.tool != unit.front.tool:
        return False  # another tool's file cannot say what this one's front matter was
    return (stored.values if stored else {}) != unit.front.values


def _new_kind(unit: Unit, state: MemoryState, body_changed: bool) -> MemoruleKind | None:
    if unit.kind_from_heading:
        return unit.kind
    if not body_changed or unit.kind is None:
        return None
    heading = unit.context[-1] if unit.context else None
    return unit.kind if guess_kind(state.body, heading) is not unit.kind else None
