"""Reading a Prism JSON Lines export (the format :mod:`prism_memory.services.transfer` writes).

:class:`Reader` turns lines into dump items for :meth:`TriGraphStore.load`, checking as it
goes: the header, every record's fields (unknown or missing ones are refused, never
dropped), each tenant's audit hash chain link by link, that no id comes twice (a memory, a
state, an audit event, an idempotency key of one tenant), and the end record's counts. The
first flaw raises ``InvalidInput`` naming its line and record, which rolls the whole load
back. Nothing is allocated from a number the file states: a memory's ``current_version`` must
equal the number of states it carries, and whole numbers are bounded (:data:`WHOLE_MAX`), so
memory grows only with what the file holds.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any, Final, NoReturn
from uuid import UUID

import numpy as np

from prism_memory.domain import audit as chain
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.records import (
    AUDIT_FIELDS,
    MEMORY_FIELDS,
    STATE_FIELDS,
    AppliesTo,
    AuditEventType,
    Confidence,
    Enforcement,
    Kind,
    MemoruleAudit,
    MemoruleKind,
    Memory,
    MemoryState,
    Status,
    parse_iso,
    state_values,
)
from prism_memory.domain.served import HASH_AT, ID_AT, RECEIPT_FIELDS, ServedReceipt, receipt_hash
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.trigraph.dump import DumpItem, IdempotencyRecord, MemoryDump

FORMAT: Final = "prism-memory-dump"
VERSION: Final = 4
# version 1: before migration 4 (no content hashes, no receipts); 2: states without checks
# and enforcement (before issue 28), read as no checks and 'remind'; 3: memories without
# their operator's pin (before issue 31's pins), read as not pinned.
READS: Final = (1, 2, 3, 4)
COUNTS: Final = ("memories", "states", "audit_events", "idempotency", "served_receipts")
WHOLE_MAX: Final = 2**31 - 1  # versions, ranks: what both engines' integer columns hold


class ChainCheck:
    """One tenant's chains, verified link by link as their entries stream past."""

    def __init__(self) -> None:
        self.audit = chain.ChainCheck(content=False)
        self.served = chain.ChainCheck(
            hasher=receipt_hash,
            content=False,
            hash_at=HASH_AT,
            id_at=ID_AT,
            seq_at=1,
            noun="receipt",
        )

    def feed(self, item: MemoruleAudit | ServedReceipt) -> str | None:
        """The problem with the next event or receipt, or None (then it becomes the head)."""
        if isinstance(item, ServedReceipt):
            check, row = self.served, item.row()
        else:
            check, row = self.audit, chain.record_row(item)
        if check.feed(row):
            return None
        assert check.failure is not None
        return check.failure[2]

    def report(self) -> chain.ChainReport:
        served = chain.ChainReport(True, self.served.count, self.served.prev)
        return chain.ChainReport(True, self.audit.count, self.audit.prev, served=served)


class Reader:
    """Parses and checks an export line by line; raises ``InvalidInput`` at the first flaw."""

    def __init__(self) -> None:
        self.chains: dict[UUID, ChainCheck] = {}
        self.counts = dict.fromkeys(COUNTS, 0)
        self.version = VERSION
        self.seen: dict[tuple[str, UUID, object], int] = {}  # (what, tenant, id) -> line

    def items(self, lines: Iterable[str]) -> Iterator[DumpItem]:
        number, ended, started = 0, False, False
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            if ended:
                _fail(number, "trailing_data", "there is data after the end record")
            try:
                data = json.loads(text)
                if not isinstance(data, dict):
                    raise ValueError("a line must be a JSON object")
                kind = data.pop("type", None)
                if not started:
                    self.version = _check_header(kind, data)
                    started = True
                    continue
                if kind == "end":
                    ended = True
                    self._check_end(data)
                    continue
                item = self._decode(kind, data)
            except (ValueError, KeyError, TypeError) as exc:
                _fail(number, "invalid_record", f"{type(exc).__name__}: {exc}")
            tenant = item.memory.tenant_id if isinstance(item, MemoryDump) else item.tenant_id
            self._once(number, tenant, item)
            check = self.chains.setdefault(tenant, ChainCheck())
            if isinstance(item, MemoruleAudit | ServedReceipt) and (problem := check.feed(item)):
                _fail(number, "broken_chain", f"tenant {tenant}: {problem}")
            yield item
        if not ended:
            _fail(number + 1, "truncated", "the file ends without its end record (truncated?)")

    def _once(self, number: int, tenant: UUID, item: DumpItem) -> None:
        """Refuse an id this file already used (the store would refuse it mid-load)."""
        if isinstance(item, MemoryDump):
            ids: list[tuple[str, object]] = [("memory", item.memory.id)]
            ids += [("state", s.id) for s in item.states]
        elif isinstance(item, MemoruleAudit):
            ids = [("audit event", item.id)]
        elif isinstance(item, ServedReceipt):
            ids = []  # numbered by its chain: a repeated seq already breaks it
        else:
            ids = [("idempotency key", item.key)]
        for what, key in ids:
            first = self.seen.setdefault((what, tenant, key), number)
            if first != number:
                _fail(
                    number,
                    "duplicate_id",
                    f"{what} {key} of tenant {tenant} is already on line {first}",
                )

    def _decode(self, kind: Any, data: dict[str, Any]) -> DumpItem:
        if kind == "memory":
            if self.version < 4:  # before pins: none is pinned, and the field is unknown
                if "pinned" in data:
                    raise ValueError(f"'pinned' is not a field of version {self.version}")
                data["pinned"] = False
            item = _memory(data)
            self.counts["memories"] += 1
            self.counts["states"] += len(item.states)
            return item
        if kind == "audit":
            self.counts["audit_events"] += 1
            if self.version == 1 and "content_hash" not in data:
                data["content_hash"] = None
            return _audit(data)
        if kind == "served" and self.version >= 2:
            self.counts["served_receipts"] += 1
            return _receipt(data)
        if kind == "idempotency":
            self.counts["idempotency"] += 1
            return _claim(data)
        raise ValueError(f"unknown record type {kind!r}")

    def _check_end(self, data: dict[str, Any]) -> None:
        expected = dict(self.counts)
        if self.version == 1:
            expected.pop("served_receipts")
        if data.get("counts") != expected:
            raise ValueError(f"end record counts {data.get('counts')} != records {self.counts}")


def _check_header(kind: Any, data: dict[str, Any]) -> int:
    if kind != "header" or data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file (the first line must be its header)")
    version = data.get("version")
    if version not in READS:
        raise ValueError(f"format version {version} is not one of {list(READS)}")
    return int(version)


def _fail(line: int, code: str, message: str) -> NoReturn:
    raise InvalidInput([FieldError(f"line {line}", code, message)])


def _text(d: dict[str, Any], key: str) -> str:
    value = d[key]
    if not isinstance(value, str):
        raise TypeError(f"'{key}' must be a string")
    return value


def _maybe(d: dict[str, Any], key: str) -> str | None:
    return None if d[key] is None else _text(d, key)


def _exact(data: dict[str, Any], keys: set[str]) -> None:
    if set(data) != keys:
        missing, unknown = sorted(keys - set(data)), sorted(set(data) - keys)
        raise ValueError(f"fields missing {missing}, unknown {unknown}")


_MEMORY_KEYS: Final = {*MEMORY_FIELDS, "states", "vector"}
# A dump nests each memory's states under it: a state's keys are its fields but memory_id.
_STATE_KEYS: Final = {name for name in STATE_FIELDS if name != "memory_id"} - {
    "checks",
    "enforcement",
}
_GUARD_KEYS: Final = {"checks", "enforcement"}  # format 3 (issue 28)
_AUDIT_KEYS: Final = set(AUDIT_FIELDS)


def state_json(s: MemoryState) -> dict[str, Any]:
    """A state as a dump writes it: every field but memory_id (its memory holds it), in
    ``STATE_FIELDS`` order."""
    values = state_values(s)
    del values["memory_id"]
    return values


def _memory(d: dict[str, Any]) -> MemoryDump:
    _exact(d, _MEMORY_KEYS)
    try:
        return _memory_of(d)
    except (ValueError, TypeError) as exc:  # name the record in every refusal
        named = f"memory {d.get('id')}"
        if str(exc).startswith(named):
            raise
        raise type(exc)(f"{named}: {exc}") from None


def _memory_of(d: dict[str, Any]) -> MemoryDump:
    memory = Memory(
        id=UUID(d["id"]),
        tenant_id=UUID(d["tenant_id"]),
        project_id=UUID(d["project_id"]),
        namespace=_text(d, "namespace"),
        kind=Kind(d["kind"]),
        status=Status(d["status"]),
        created_at=parse_iso(d["created_at"]),
        current_version=_whole(d, "current_version", 1),
        pinned=_flag(d, "pinned"),
    )
    if not isinstance(d["states"], list):
        raise TypeError(f"memory {memory.id}: 'states' must be a list")
    if memory.current_version != len(d["states"]):
        raise ValueError(
            f"memory {memory.id}: current_version {memory.current_version} but "
            f"{len(d['states'])} states (it must name the last of versions 1..n)"
        )
    states = [_state_of(memory.id, s) for s in d["states"]]
    if any(s.version != n for n, s in enumerate(states, start=1)):
        raise ValueError(f"memory {memory.id} must have versions 1..{memory.current_version}")
    vector, model = None, None
    if d["vector"] is not None:
        v = d["vector"]
        _exact(v, {"model", "dim", "f32le"})
        vector = np.frombuffer(base64.b64decode(v["f32le"], validate=True), dtype="<f4")
        vector = vector.astype(np.float32)
        if vector.shape[0] != v["dim"] or not isinstance(v["model"], str):
            raise ValueError(f"memory {memory.id}: vector is not {v['dim']} floats of a model")
        model = v["model"]
    return MemoryDump(memory, states, vector, model)


def _state_of(memory_id: UUID, d: dict[str, Any]) -> MemoryState:
    _exact(d, _STATE_KEYS | _GUARD_KEYS if _GUARD_KEYS & set(d) else _STATE_KEYS)
    applies = d["applies_to"]
    try:  # judged again: a dump is input like any other
        checks = parse_checks(d.get("checks"))
    except InvalidInput as exc:
        raise ValueError("; ".join(e.message for e in exc.errors)) from None
    return MemoryState(
        id=UUID(d["id"]),
        memory_id=memory_id,
        version=_whole(d, "version", 1),
        body=_text(d, "body"),
        subject=_maybe(d, "subject"),
        written_by_session_id=UUID(d["written_by_session_id"]),
        written_by_persona=_maybe(d, "written_by_persona"),
        written_at=parse_iso(d["written_at"]),
        embedding_model=_text(d, "embedding_model"),
        memorule_kind=MemoruleKind(d["memorule_kind"]) if d["memorule_kind"] else None,
        applies_to=AppliesTo.from_dict(applies) if applies is not None else None,
        evidence_signal_id=_maybe(d, "evidence_signal_id"),
        confidence=Confidence(d["confidence"]) if d["confidence"] else None,
        reason=_maybe(d, "reason"),
        checks=checks,
        enforcement=Enforcement(d.get("enforcement") or Enforcement.REMIND),
    )


def _audit(d: dict[str, Any]) -> MemoruleAudit:
    _exact(d, _AUDIT_KEYS)
    return MemoruleAudit(
        id=UUID(d["id"]),
        tenant_id=UUID(d["tenant_id"]),
        seq=_whole(d, "seq", 1, 2**62),
        memorule_id=UUID(d["memorule_id"]),
        state_id=UUID(d["state_id"]),
        event=AuditEventType(d["event"]),
        written_by_session_id=UUID(d["written_by_session_id"]),
        written_by_persona=_maybe(d, "written_by_persona"),
        evidence_signal_id=_maybe(d, "evidence_signal_id"),
        written_at=parse_iso(d["written_at"]),
        reason=_maybe(d, "reason"),
        prev_hash=_text(d, "prev_hash"),
        hash=_text(d, "hash"),
        content_hash=_maybe(d, "content_hash"),
    )


_RECEIPT_KEYS: Final = set(RECEIPT_FIELDS)


def _receipt(d: dict[str, Any]) -> ServedReceipt:
    _exact(d, _RECEIPT_KEYS)
    _whole(d, "seq", 1, 2**62)
    _whole(d, "version", 1)
    _whole(d, "rank", 1)
    return ServedReceipt(
        tenant_id=UUID(d["tenant_id"]),
        seq=d["seq"],
        call_id=UUID(d["call_id"]),
        served_at=parse_iso(_text(d, "served_at")),
        tool=_text(d, "tool"),
        session_id=UUID(d["session_id"]),
        persona=_maybe(d, "persona"),
        project_id=UUID(d["project_id"]),
        memorule_id=UUID(d["memorule_id"]),
        state_id=UUID(d["state_id"]),
        version=d["version"],
        rank=d["rank"],
        query_sha256=_text(d, "query_sha256"),
        key_id=_maybe(d, "key_id"),
        prev_hash=_text(d, "prev_hash"),
        hash=_text(d, "hash"),
    )


def _flag(d: dict[str, Any], key: str) -> bool:
    value = d[key]
    if not isinstance(value, bool):
        raise TypeError(f"'{key}' must be true or false")
    return value


def _whole(d: dict[str, Any], key: str, low: int, high: int = WHOLE_MAX) -> int:
    """A whole number from ``low`` to ``high`` (a JSON integer, not a boolean or a float)."""
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"'{key}' must be a whole number")
    if not low <= value <= high:
        raise ValueError(f"'{key}' must be from {low} to {high}")
    return value


def _claim(d: dict[str, Any]) -> IdempotencyRecord:
    _exact(d, {"tenant_id", "key", "request_hash", "result", "created_at"})
    if not isinstance(d["result"], dict):
        raise ValueError("an idempotency result must be an object")
    return IdempotencyRecord(
        UUID(d["tenant_id"]),
        _text(d, "key"),
        _text(d, "request_hash"),
        d["result"],
        parse_iso(d["created_at"]),
    )
