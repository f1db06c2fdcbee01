"""Which stored record a unit of a re-imported file is: the same text, or an edit of it.

Stored records remember their source: a memorule in its evidence (``file:X#L3-L5``), a
note in its subject's tag. For one file, units and the records from that file pair up:

1. same text (white space at line ends aside) → unchanged, nearest lines first;
2. similar text of the same record type (similarity ≥ 0.6, or ≥ 0.3 at the same first
   line) → an edit: the record gets a new version;
3. the rest: new units are created; records left over are no longer in the file.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final
from uuid import UUID

from prism_memory.domain.records import Kind, Memory, MemoryState, SessionContext, Status
from prism_memory.formats.rules_io.records import (
    Location,
    Unit,
    comparable,
    parse_tag,
    shorten_path,
)
from prism_memory.formats.rules_io.requests import note_location
from prism_memory.trigraph.dump import MemoryDump
from prism_memory.trigraph.port import TriGraphStore

SIMILAR: Final = 0.6
SIMILAR_SAME_LINE: Final = 0.3
PAIR_BUDGET: Final = 40_000  # above this many pairs, compare only units near each other
NEAR_LINES: Final = 20


@dataclass(frozen=True)
class Stored:
    """An active record of the project that came from a rule file."""

    memory: Memory
    state: MemoryState
    location: Location

    @property
    def record(self) -> str:
        return self.memory.kind.value


def stored_by_path(store: TriGraphStore, ctx: SessionContext) -> dict[str, list[Stored]]:
    """The project's active records that came from rule files, by tag path.

    A record's identity is (project, source path): whoever imported it and whatever its
    ``applies_to``, a later import of the same file in the same project finds it.
    """
    out: dict[str, list[Stored]] = {}
    for item in store.dump(ctx.tenant_id):
        if not isinstance(item, MemoryDump) or not item.states:
            continue
        memory, state = item.memory, item.states[-1]
        if memory.project_id != ctx.project_id or memory.status is not Status.ACTIVE:
            continue
        if memory.kind is Kind.MEMORULE:
            where = parse_tag(state.evidence_signal_id)
        else:
            where = note_location(state.subject)
        if where is not None:
            out.setdefault(where.path, []).append(Stored(memory, state, where))
    return out


def stored_for(by_path: dict[str, list[Stored]], path: str) -> list[Stored]:
    """The records that came from ``path`` (as tags spell it)."""
    return list(by_path.get(shorten_path(path), []))


@dataclass(frozen=True)
class Pairing:
    """Units and records paired: unchanged, edited, and what is left on each side."""

    same: list[tuple[int, Stored]]
    edited: list[tuple[int, Stored]]
    new: list[int]
    gone: list[Stored]


def pair(units: list[Unit], indexes: Iterable[int], stored: list[Stored]) -> Pairing:
    """Pair the units at ``indexes`` with records from the same file (see module doc)."""
    todo: list[int] = []
    ordered = sorted(stored, key=lambda s: (s.location.line_start, str(s.memory.id)))
    by_body: dict[str, list[Stored]] = {}
    for s in ordered:
        by_body.setdefault(comparable(s.state.body), []).append(s)
    same: list[tuple[int, Stored]] = []
    taken: set[UUID] = set()
    for i in indexes:
        matches = by_body.get(comparable(units[i].text), [])
        if matches:
            line = units[i].location.line_start
            best = min(matches, key=lambda s: abs(s.location.line_start - line))
            same.append((i, best))
            matches.remove(best)
            taken.add(best.memory.id)
        else:
            todo.append(i)
    left = [s for s in ordered if s.memory.id not in taken]
    edited = _similar(units, todo, left)
    paired = {i for i, _ in edited}
    used = {s.memory.id for _, s in edited}
    return Pairing(
        same,
        edited,
        [i for i in todo if i not in paired],
        [s for s in left if s.memory.id not in used],
    )


def _similar(units: list[Unit], todo: list[int], left: list[Stored]) -> list[tuple[int, Stored]]:
    near_only = len(todo) * len(left) > PAIR_BUDGET
    starts = [s.location.line_start for s in left]  # ``left`` is in line order
    scored: list[tuple[float, int, int, str, Stored]] = []
    for i in todo:
        unit = units[i]
        record = Kind.MEMORULE.value if unit.kind is not None else Kind.NOTE.value
        line = unit.location.line_start
        near = (
            left[bisect_left(starts, line - NEAR_LINES) : bisect_right(starts, line + NEAR_LINES)]
            if near_only
            else left
        )
        for s in near:
            distance = abs(s.location.line_start - line)
            if s.record != record:
                continue
            ratio = SequenceMatcher(None, unit.text, s.state.body, autojunk=False)
            if ratio.real_quick_ratio() < SIMILAR_SAME_LINE:
                continue
            score = ratio.ratio()
            if score >= SIMILAR or (distance == 0 and score >= SIMILAR_SAME_LINE):
                scored.append((-score, distance, i, str(s.memory.id), s))
    scored.sort(key=lambda t: t[:4])
    taken_units: set[int] = set()
    taken_ids: set[UUID] = set()
    out = []
    for _, _, i, _, s in scored:
        if i in taken_units or s.memory.id in taken_ids:
            continue
        taken_units.add(i)
        taken_ids.add(s.memory.id)
        out.append((i, s))
    return sorted(out, key=lambda t: t[0])
