"""Rows of the SQLite engine: the column lists and the converters between rows and records.

Shared by the store's reads (:mod:`.sqlite`), its writes (:mod:`.write`) and dumps and
loads (:mod:`.transfer`), so a row has one shape wherever it is read or written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.adherence.checks import Check, checks_json
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    AUDIT_FIELDS,
    MEMORY_FIELDS,
    STATE_FIELDS,
    AppliesTo,
    AuditEventType,
    Kind,
    MemoruleAudit,
    Memory,
    MemoryState,
    Status,
    iso,
    parse_iso,
    state_from_stored,
    state_values,
)

STATE_COLUMNS: Final = ", ".join(STATE_FIELDS)
MEMORY_COLUMNS: Final = ", ".join(MEMORY_FIELDS)
AUDIT_COLUMNS: Final = ", ".join(AUDIT_FIELDS)
MEMORY_WIDTH: Final = len(MEMORY_FIELDS)
# The same columns qualified by the aliases the joins use (``memory m``, ``memory_state s``).
MEMORY_COLUMNS_M: Final = ", ".join(f"m.{c.strip()}" for c in MEMORY_COLUMNS.split(","))
STATE_COLUMNS_S: Final = ", ".join(f"s.{c}" for c in STATE_FIELDS)

INSERT_MEMORY: Final = (
    "INSERT INTO memory (tenant_id, id, project_id, namespace, kind, source_type, status, "
    "created_at, current_version, pinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_STATE: Final = (
    f"INSERT INTO memory_state (tenant_id, {STATE_COLUMNS}) "
    f"VALUES ({', '.join('?' * (1 + len(STATE_FIELDS)))})"
)
INSERT_AUDIT: Final = (
    f"INSERT INTO memorule_audit ({AUDIT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_INDEX: Final = (
    "INSERT INTO recall_index (tenant_id, project_id, memory_id, active, kind, namespace, "
    "memorule_kind, confidence, scope, a_persona, a_surface, a_specialization, written_at, "
    "model, clock, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
BUMP_CLOCK: Final = (
    "INSERT INTO tenant_clock VALUES (?, 1) ON CONFLICT (tenant_id) "
    "DO UPDATE SET n = n + 1 RETURNING n"
)


def memory(r: tuple[Any, ...]) -> Memory:
    """A ``memory`` row (``MEMORY_COLUMNS``) as a record."""
    return Memory(
        id=UUID(r[0]),
        tenant_id=UUID(r[1]),
        project_id=UUID(r[2]),
        namespace=r[3],
        kind=Kind(r[4]),
        status=Status(r[5]),
        created_at=parse_iso(r[6]),
        current_version=r[7],
        pinned=bool(r[8]),
    )


def state(r: Sequence[Any]) -> MemoryState:
    """A ``memory_state`` row (``STATE_COLUMNS``) as a record: ids and the time from text,
    applies_to and checks from JSON text."""
    v = dict(zip(STATE_FIELDS, r, strict=True))
    for name in ("id", "memory_id", "written_by_session_id"):
        v[name] = UUID(v[name])
    v["written_at"] = parse_iso(v["written_at"])
    v["applies_to"] = json.loads(v["applies_to"]) if v["applies_to"] else None
    v["checks"] = json.loads(v["checks"]) if v["checks"] else None
    return state_from_stored(v)


def audit(r: tuple[Any, ...]) -> MemoruleAudit:
    """A ``memorule_audit`` row (``AUDIT_COLUMNS``) as a record."""
    return MemoruleAudit(
        id=UUID(r[0]),
        tenant_id=UUID(r[1]),
        seq=r[2],
        memorule_id=UUID(r[3]),
        state_id=UUID(r[4]),
        event=AuditEventType(r[5]),
        written_by_session_id=UUID(r[6]),
        written_by_persona=r[7],
        evidence_signal_id=r[8],
        written_at=parse_iso(r[9]),
        reason=r[10],
        prev_hash=r[11],
        hash=r[12],
        content_hash=r[13],
    )


def memory_params(t: str, m: Memory) -> tuple[Any, ...]:
    """A memory's values for ``INSERT_MEMORY`` (tenant ``t`` first)."""
    return (
        t,
        str(m.id),
        str(m.project_id),
        m.namespace,
        m.kind.value,
        m.source_type.value,
        m.status.value,
        iso(m.created_at),
        m.current_version,
        int(m.pinned),
    )


def state_params(t: str, s: MemoryState) -> tuple[Any, ...]:
    """A state's values for ``INSERT_STATE`` (tenant ``t`` first): its JSON values, with
    applies_to and checks as the JSON text the columns hold."""
    values = state_values(s)
    applies = values["applies_to"]
    values["applies_to"] = json.dumps(applies) if applies is not None else None
    values["checks"] = checks_text(s.checks)
    return (t, *values.values())


def checks_text(checks: tuple[Check, ...]) -> str | None:
    """A state's checks as stored: canonical JSON, or NULL for none."""
    return json.dumps(checks_json(checks), sort_keys=True) if checks else None


def index_values(s: MemoryState) -> tuple[Any, ...]:
    """The state's recall-index filter columns: ``memorule_kind`` .. ``written_at``."""
    a = s.applies_to or AppliesTo()
    return (
        str(s.memorule_kind.value) if s.memorule_kind else None,
        s.confidence.value if s.confidence else None,
        a.scope.value if a.scope else None,
        normalise_key(a.persona),
        normalise_key(a.surface),
        normalise_key(a.specialization),
        iso(s.written_at),
    )


def audit_params(e: MemoruleAudit) -> tuple[Any, ...]:
    """An event's values in ``AUDIT_FIELDS`` order (the table's), as stored: ids and times
    as text, enums by value. Derived from the record, so a new field cannot be left out."""
    return tuple(_stored(getattr(e, name)) for name in AUDIT_FIELDS)


def _stored(value: Any) -> Any:
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, Enum):
        return value.value
    return value
