"""What the live rows must say, given the audit chain: status, version, pin, project, recall
row.

The chain commits to every memorule event (its type, the state it names and that state's
content, project included). What decides whether a rule is live, which version is served,
whether it is pinned and who receives it also sits in rows no event hashes:
``memory.status``, ``memory.current_version``, ``memory.pinned`` and the ``recall_index``
row's filter columns. A direct edit of any of them must be detected, so :class:`LiveCheck`
folds the verified events of each memorule into the values those rows must hold, and
compares:

- ``status``: ``created``/``approved``/``restored`` make a rule active, ``proposed`` a
  proposal, ``retired``/``rejected``/``merged`` retire it, and so does a ``superseded``
  event naming a version that is not newer than the last (a rule retired by a correction)
  and an ``approved`` check proposal (its state's signal names the rule its checks went to:
  :func:`~prism_memory.domain.adherence.propose.signal_target`);
  other events (``evidence``, ``promoted``, a new version, events this module does not know)
  leave it as it was;
- ``current_version``: the highest version an event names;
- ``pinned``: the last ``pinned``/``unpinned`` event (none: not pinned); a note is never
  pinned;
- ``project_id``: bound by the content hash (``prism-state/2``); the recall row must agree;
- the recall row (where one exists: a memory without a vector is not recalled at all):
  ``active`` from the status, ``kind``, and ``memorule_kind``, ``confidence``, ``scope``,
  ``a_persona``/``a_surface``/``a_specialization`` as the current state's own values say
  (keys normalised as they are indexed). A note's recall row holds none of a rule's columns.

Pure: rows in, the first problem out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from prism_memory.domain.adherence.propose import signal_target
from prism_memory.domain.audit import EVENT_WIDTH, STATE_WIDTH
from prism_memory.domain.ranking import normalise_key

_ACTIVE: Final = frozenset({"created", "approved", "restored"})
_RETIRED: Final = frozenset({"retired", "rejected", "merged"})
# One live row (what the engines select, as text; ``active`` as 0/1 or a boolean): memory
# id, kind, project_id, status, current_version; then the recall row, or Nones: memory id,
# project_id, active, kind, memorule_kind, confidence, scope, a_persona, a_surface,
# a_specialization; then memory.pinned (0/1 or a boolean).
LIVE_WIDTH: Final = 16
_INDEX_COLUMNS: Final = (
    "memorule_kind",
    "confidence",
    "scope",
    "a_persona",
    "a_surface",
    "a_specialization",
)


@dataclass
class _Rule:
    status: str
    version: int = 0
    index: tuple[Any, ...] = ()
    last_seq: int = 0
    pinned: bool = False


def index_of(state: Sequence[Any]) -> tuple[Any, ...]:
    """A state's recall filter columns (``memorule_kind`` .. ``a_specialization``) from its
    text row (as in :data:`prism_memory.domain.audit.EventRow`)."""
    applies = state[6]
    if isinstance(applies, str):
        applies = json.loads(applies)
    applies = applies or {}
    return (
        state[3],
        state[8],
        applies.get("scope"),
        normalise_key(applies.get("persona")),
        normalise_key(applies.get("surface")),
        normalise_key(applies.get("specialization")),
    )


def _pinned(row: Sequence[Any]) -> bool:
    return bool(int(row[15]))


@dataclass
class LiveCheck:
    """The values each memorule's live rows must hold, folded from its verified events."""

    rules: dict[str, _Rule] = field(default_factory=dict)

    def feed(self, row: Sequence[Any]) -> None:
        """One verified event row, oldest first."""
        memorule, event, seq = str(row[3]), str(row[5]), int(row[2])
        state = row[EVENT_WIDTH : EVENT_WIDTH + STATE_WIDTH]
        version = int(state[2]) if len(state) == STATE_WIDTH and state[0] is not None else None
        rule = self.rules.get(memorule)
        if rule is None:
            rule = self.rules[memorule] = _Rule("proposed" if event == "proposed" else "active")
        if event == "approved" and version is not None and signal_target(state[7]) is not None:
            rule.status = "retired"  # a check proposal: its checks went to the rule it names
        elif event in _ACTIVE:
            rule.status = "active"
        elif event == "proposed":
            rule.status = "proposed"
        elif event in _RETIRED:
            rule.status = "retired"
        elif event == "superseded" and version is not None and version <= rule.version:
            rule.status = "retired"  # a correction retires the rule it names, unchanged
        elif event in ("pinned", "unpinned"):
            rule.pinned = event == "pinned"
        if version is not None and version > rule.version:
            rule.version, rule.index = version, index_of(state)
        rule.last_seq = seq

    def problem(self, live: Sequence[Sequence[Any]]) -> tuple[int | None, str, str] | None:
        """The first live row that disagrees with the chain: (seq of the memorule's last
        event, memory id, what is wrong); None when every row agrees.

        Args:
            live: every memory of the tenant (:data:`LIVE_WIDTH` values each).
        """
        seen: set[str] = set()
        for row in live:
            memory_id, kind = str(row[0]), str(row[1])
            found = self._note(row) if kind != "memorule" else self._rule(row)
            seen.add(memory_id)
            if found is not None:
                rule = self.rules.get(memory_id)
                return (rule.last_seq if rule else None, memory_id, found)
        for memory_id, rule in self.rules.items():
            if memory_id not in seen:
                return (
                    rule.last_seq,
                    memory_id,
                    f"memorule {memory_id} has audit events but no memory row of that kind "
                    "(memory was deleted or its kind edited)",
                )
        return None

    def _rule(self, row: Sequence[Any]) -> str | None:
        memory_id, project, status, version = str(row[0]), str(row[2]), str(row[3]), int(row[4])
        rule = self.rules.get(memory_id)
        if rule is None:
            return (
                f"memorule {memory_id} has no audit event "
                "(it was written behind the service's back)"
            )
        if status != rule.status:
            return (
                f"memory.status of memorule {memory_id} is '{status}', its audit events leave "
                f"it '{rule.status}' (memory was edited)"
            )
        if version != rule.version:
            return (
                f"memory.current_version of memorule {memory_id} is {version}, its audit events "
                f"name version {rule.version} last (memory was edited)"
            )
        if _pinned(row) != rule.pinned:
            return (
                f"memory.pinned of memorule {memory_id} is {_pinned(row)}, its audit events "
                f"leave it {rule.pinned} (memory was edited)"
            )
        return self._index(row, project, status == "active", "memorule", rule.index)

    def _note(self, row: Sequence[Any]) -> str | None:
        if _pinned(row):
            return f"memory.pinned of note {row[0]} is True: only a memorule is pinned (edited)"
        return self._index(row, str(row[2]), str(row[3]) == "active", str(row[1]), (None,) * 6)

    @staticmethod
    def _index(
        row: Sequence[Any], project: str, active: bool, kind: str, index: tuple[Any, ...]
    ) -> str | None:
        if row[5] is None:
            return None  # no recall row: the memory is not recalled at all
        memory_id = str(row[0])
        wrong = []
        if str(row[6]) != project:
            wrong.append("project_id")
        if bool(int(row[7])) != active:
            wrong.append("active")
        if str(row[8]) != kind:
            wrong.append("kind")
        wrong += [
            c
            for c, have, want in zip(_INDEX_COLUMNS, row[9:15], index, strict=True)
            if have != want
        ]
        if not wrong:
            return None
        return (
            f"the recall_index row of {kind} {memory_id} disagrees with its memory and current "
            f"state in {', '.join(wrong)} (recall_index was edited)"
        )
