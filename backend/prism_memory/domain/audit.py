"""The per-tenant audit hash chain (the Watson hook's tamper evidence).

Each event's hash covers its own fields and the previous event's hash, so editing,
deleting or reordering any stored event breaks every link after it. Since migration 4 an
event also carries the ``content_hash`` of the state it names (a canonical encoding of what
an agent is served: kind, subject, body, applies_to, evidence, confidence, the writer and the
version), inside its hash: editing a rule's text in ``memory_state`` no longer matches the
event that recorded it. Events written before the migration ("legacy") have no content
hash and keep their original hash format, so they verify as before. The content hash also
covers the memorule's project (``prism-state/2``): moving a rule to another project in
``memory`` no longer matches either; a state with ``checks`` or an ``enforcement`` other than
``remind`` (DESIGN §12) hashes in ``prism-state/3``, which adds both beside the project. A
stored content hash of the first format (``prism-state/1``: no project, no checks) still
verifies; the stored value says which format it is, since no state hashes alike under two.

Verification works on row tuples of text (the engines select them so), not on rebuilt
records: the same functions hash an event when it is written and when it is checked.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.records import AuditDraft, MemoruleAudit, MemoryState, iso, state_values

GENESIS_HASH: Final = "0" * 64
HEAD_FORM: Final = re.compile(r"([0-9]{1,19}):([0-9a-fA-F]{64})")  # what Head.parse reads
STATE_FORMAT: Final = "prism-state/1"
STATE_FORMAT_PROJECT: Final = "prism-state/2"  # + the memorule's project
GUARDED_STATE_FORMAT: Final = "prism-state/3"  # + the project, checks and enforcement
EVENT_FORMAT: Final = "prism-audit/2"

# The state fields a content hash covers, in the hash's own order. A format (stored hashes
# verify byte for byte), so stated here and never derived from ``records.STATE_FIELDS``;
# the state's other fields are not hashed (``UNHASHED_STATE_FIELDS``), and
# ``test_state_fields`` asserts that the two cover ``STATE_FIELDS`` exactly.
HASHED_STATE_FIELDS: Final = (
    "memory_id",
    "id",
    "version",
    "memorule_kind",
    "subject",
    "body",
    "applies_to",
    "evidence_signal_id",
    "confidence",
    "written_by_session_id",
    "written_by_persona",
    "written_at",
    "checks",
    "enforcement",
)
UNHASHED_STATE_FIELDS: Final = ("embedding_model", "reason")

# One event as text, in this order (what the engines select for verification):
# id, tenant_id, seq, memorule_id, state_id, event, written_by_session_id,
# written_by_persona, evidence_signal_id, written_at (ISO), reason, content_hash,
# prev_hash, hash; then the state it names, ``HASHED_STATE_FIELDS`` (None when the state
# is missing; applies_to a dict or JSON text, written_at ISO, checks a list, JSON text or
# None); then the memorule's project (memory.project_id, None when missing).
EVENT_WIDTH: Final = 14
STATE_WIDTH: Final = len(HASHED_STATE_FIELDS)  # checks and enforcement included
EventRow = Sequence[Any]


# One encoder for every hash (json.dumps with options builds a new one per call: a quarter
# of verify's time at 100k events).
_CANONICAL: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _dumps(value: Any) -> str:
    return _CANONICAL.encode(value)


@functools.lru_cache(maxsize=4096)
def _applies(text: str) -> Any:
    """A stored applies_to JSON text, parsed (a store holds few distinct ones; read-only)."""
    return json.loads(text)


def content_hash_of(values: Sequence[Any], project_id: str | None = None) -> str:
    """The content hash of a state given as text: memory_id, id, version, memorule_kind,
    subject, body, applies_to (a dict, JSON text or None), evidence_signal_id, confidence,
    written_by_session_id, written_by_persona, written_at (ISO), and optionally checks (a
    list, JSON text or None) and enforcement (None is ``remind``); with ``project_id`` (its
    memorule's project, as text).

    No checks and ``remind``: format 1 without a project (as before either existed, byte for
    byte: old chains verify unchanged), format 2 with one. Else format 3 covers the project,
    the checks and the enforcement, so editing any of them is detected."""
    applies = values[6]
    if isinstance(applies, str):
        applies = _applies(applies)
    checks = values[12] if len(values) > 12 else None
    enforcement = (values[13] if len(values) > 13 else None) or "remind"
    if isinstance(checks, str):
        checks = _checks(checks)
    if checks or enforcement != "remind":
        head = [GUARDED_STATE_FORMAT, project_id]
        tail = [checks, enforcement]
    else:
        head = [STATE_FORMAT] if project_id is None else [STATE_FORMAT_PROJECT, project_id]
        tail = []
    payload = [*head, *values[:6], applies, *values[7:12], *tail]
    payload[len(head) + 2] = int(payload[len(head) + 2])
    return hashlib.sha256(_dumps(payload).encode()).hexdigest()


def _checks(text: str) -> Any:
    """Stored checks JSON text, parsed; text that is no JSON (edited by hand) stays text, so
    it hashes differently instead of failing the verification."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def content_hash(s: MemoryState, project_id: UUID | None = None) -> str:
    """The content hash of a state: what an agent is served, who wrote it when, and (given)
    the project its memorule belongs to."""
    values = state_values(s)
    values["checks"] = values["checks"] or None  # no checks hash as null (format 1 and 2)
    return content_hash_of(
        tuple(values[name] for name in HASHED_STATE_FIELDS),
        None if project_id is None else str(project_id),
    )


def event_hash(prev_hash: str, row: EventRow) -> str:
    """The hash of one event (``row`` as in :data:`EventRow`, the first 12 values used).

    An event without a content hash (written before migration 4) keeps the original format.
    """
    seq = int(row[2])
    if row[11] is None:
        payload: Any = {
            "id": row[0],
            "tenant_id": row[1],
            "seq": seq,
            "memorule_id": row[3],
            "state_id": row[4],
            "event": row[5],
            "written_by_session_id": row[6],
            "written_by_persona": row[7],
            "evidence_signal_id": row[8],
            "written_at": row[9],
            "reason": row[10],
        }
    else:
        payload = [EVENT_FORMAT, row[0], row[1], seq, *row[3:12]]
    return hashlib.sha256(f"{prev_hash}\n{_dumps(payload)}".encode()).hexdigest()


def _draft_row(tenant_id: UUID, seq: int, draft: AuditDraft) -> tuple[Any, ...]:
    return (
        str(draft.id),
        str(tenant_id),
        seq,
        str(draft.memorule_id),
        str(draft.state_id),
        draft.event.value,
        str(draft.written_by_session_id),
        draft.written_by_persona,
        draft.evidence_signal_id,
        iso(draft.written_at),
        draft.reason,
        draft.content_hash,
    )


def chain_hash(prev_hash: str, tenant_id: UUID, seq: int, draft: AuditDraft) -> str:
    """The hash of one event given the one before it."""
    return event_hash(prev_hash, _draft_row(tenant_id, seq, draft))


def record_row(e: MemoruleAudit) -> tuple[Any, ...]:
    """A stored event as the text row :func:`event_hash` reads."""
    return (
        str(e.id),
        str(e.tenant_id),
        e.seq,
        str(e.memorule_id),
        str(e.state_id),
        e.event.value,
        str(e.written_by_session_id),
        e.written_by_persona,
        e.evidence_signal_id,
        iso(e.written_at),
        e.reason,
        e.content_hash,
        e.prev_hash,
        e.hash,
    )


def link(tenant_id: UUID, seq: int, prev_hash: str, draft: AuditDraft) -> MemoruleAudit:
    """Chain a draft after ``prev_hash`` as event number ``seq``."""
    return MemoruleAudit(
        id=draft.id,
        tenant_id=tenant_id,
        seq=seq,
        memorule_id=draft.memorule_id,
        state_id=draft.state_id,
        event=draft.event,
        written_by_session_id=draft.written_by_session_id,
        written_by_persona=draft.written_by_persona,
        evidence_signal_id=draft.evidence_signal_id,
        written_at=draft.written_at,
        reason=draft.reason,
        prev_hash=prev_hash,
        hash=chain_hash(prev_hash, tenant_id, seq, draft),
        content_hash=draft.content_hash,
    )


@dataclass(frozen=True)
class Head:
    """A chain's head: how many entries it has and the hash of the last (GENESIS if none)."""

    seq: int
    hash: str
    at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash, "at": self.at}

    @classmethod
    def parse(cls, text: str) -> Head:
        """``SEQ:HASH`` as printed by ``prism audit head``.

        Raises:
            ValueError: not a whole number, a colon and 64 hex digits.
        """
        found = HEAD_FORM.fullmatch(text.strip())
        if found is None or int(found[1]) > 2**62:  # ASCII digits only: "²".isdigit() is True
            raise ValueError("a head is SEQ:HASH, e.g. 1042:3f9a... (64 hex digits)")
        return cls(int(found[1]), found[2].lower())


@dataclass(frozen=True)
class ChainReport:
    """The outcome of recomputing a chain (the audit chain, or served receipts in ``served``).

    ``legacy_events`` have no content hash (written before migration 4); ``content_checked``
    events had their state's content recomputed and matched. ``recorded_head`` is the store's
    own record of the chain's length; ``given_head`` the one the caller asked to check.
    """

    ok: bool
    events: int
    head: str
    broken_at_seq: int | None = None
    broken_event_id: str | None = None
    problem: str | None = None
    legacy_events: int = 0
    content_checked: int = 0
    recorded_head: Head | None = None
    given_head: Head | None = None
    served: ChainReport | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.ok,
            "events": self.events,
            "head": self.head,
            "broken_at_seq": self.broken_at_seq,
            "broken_event_id": self.broken_event_id,
            "problem": self.problem,
            "legacy_events": self.legacy_events,
            "content_checked": self.content_checked,
            "recorded_head": self.recorded_head.to_dict() if self.recorded_head else None,
            "given_head": self.given_head.to_dict() if self.given_head else None,
        }
        if self.served is not None:
            out["served"] = self.served.to_dict()
        return out


@dataclass
class ChainCheck:
    """A chain verified row by row as its rows stream past, oldest first.

    Args:
        hasher: recomputes an entry's hash from the previous hash and its row.
        content: the audit chain (events carry content hashes checked against their state).
        given: a head the chain must extend (``prism audit verify --head``).
    """

    hasher: Any = event_hash
    content: bool = True
    given: Head | None = None
    hash_at: int = 13
    id_at: int = 0
    seq_at: int = 2
    noun: str = "event"
    count: int = 0
    prev: str = GENESIS_HASH
    legacy: int = 0
    checked: int = 0
    failure: tuple[int, str | None, str] | None = None
    _seen_content: bool = field(default=False, repr=False)

    def feed(self, row: EventRow) -> bool:
        """Check the next row; False (and ``failure`` set) at the first problem."""
        self.count += 1
        seq, stored = int(row[self.seq_at]), row[self.hash_at]
        problem = None
        if seq != self.count:
            problem = (
                f"expected {self.noun} number {self.count}, found {seq} "
                f"({'an' if self.noun[0] in 'aeiou' else 'a'} {self.noun} is missing)"
            )
        elif row[self.hash_at - 1] != self.prev:
            problem = f"prev_hash does not match the hash of the {self.noun} before it"
        elif self.hasher(self.prev, row) != stored:
            problem = f"the {self.noun}'s fields do not match its hash (it was edited)"
        elif self.content:
            problem = self._content(row)
        given = self.given
        if problem is None and given is not None and seq == given.seq and stored != given.hash:
            problem = f"the chain does not extend the given head: {self.noun} {seq} differs"
        if problem is not None:
            self.failure = (seq, None if row[self.id_at] is None else str(row[self.id_at]), problem)
            return False
        self.prev = stored
        return True

    def _content(self, row: EventRow) -> str | None:
        if row[11] is None:
            if self._seen_content:
                return "the event has no content hash, yet an earlier one has (it was rewritten)"
            self.legacy += 1
            return None
        self._seen_content = True
        state = row[EVENT_WIDTH : EVENT_WIDTH + STATE_WIDTH]
        if not state or state[0] is None:
            return f"its state {row[4]} is missing from memory_state (it was deleted)"
        project = row[EVENT_WIDTH + STATE_WIDTH] if len(row) > EVENT_WIDTH + STATE_WIDTH else None
        with_project = project is not None and content_hash_of(state, str(project)) == row[11]
        if not with_project and content_hash_of(state) != row[11]:
            return (
                f"the content of its state {row[4]} (version {state[2]}) or its memorule's "
                "project no longer matches the event's content hash (memory_state was edited, "
                "or memory.project_id)"
            )
        self.checked += 1
        return None

    def finish(self, recorded: Head | None) -> ChainReport:
        """The report, once every row was fed, checked against the store's recorded head."""
        if self.failure is None:
            self.failure = self._tail(recorded)
        if self.failure is not None:
            seq, entry_id, problem = self.failure
            return ChainReport(
                False,
                self.count,
                self.prev,
                seq,
                entry_id,
                problem,
                self.legacy,
                self.checked,
                recorded,
                self.given,
            )
        return ChainReport(
            True, self.count, self.prev, None, None, None, self.legacy, self.checked, recorded,
            self.given,
        )  # fmt: skip

    def _tail(self, recorded: Head | None) -> tuple[int, str | None, str] | None:
        n = self.count
        if self.given is not None and self.given.seq > n:
            return (
                n + 1,
                None,
                f"the chain has {n} {self.noun}s; the given head is at {self.given.seq}",
            )
        if recorded is None:
            if n:
                return (n, None, "the store keeps no head for this chain (it was deleted)")
            return None
        if recorded.seq > n:
            return (
                n + 1,
                None,
                f"the store's head records {recorded.seq} {self.noun}s, the chain has {n}: "
                "the newest were deleted",
            )
        if recorded.seq < n:
            return (
                recorded.seq + 1,
                None,
                f"the chain has {n} {self.noun}s, the store's head records {recorded.seq}: "
                f"{self.noun}s were added behind the store's back",
            )
        if recorded.hash != self.prev:
            return (n, None, f"the store's head hash does not match the last {self.noun}")
        return None


def verify(events: Iterable[MemoruleAudit], recorded: Head | None = None) -> ChainReport:
    """Recompute a chain of records in ``seq`` order (links and hashes; no content check).

    With ``recorded`` None the chain's length is not checked against a head.
    """
    check = ChainCheck(content=False)
    for event in events:
        if not check.feed(record_row(event)):
            break
    if recorded is None and check.failure is None:
        return ChainReport(True, check.count, check.prev)
    return check.finish(recorded)
