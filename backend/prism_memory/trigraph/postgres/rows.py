"""Rows of the PostgreSQL engine: column lists, statements, query builders and converters.

Kept apart from :mod:`prism_memory.trigraph.postgres.store` (connections and transactions) so each
module
holds one concept. Every value reaches the server as a parameter; only fixed column lists are
formatted into the SQL text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final
from uuid import UUID

import numpy as np
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import Jsonb

from prism_memory.domain.adherence.checks import checks_json
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
    state_from_stored,
)
from prism_memory.embeddings.port import Vector
from prism_memory.trigraph.port import AuditFilter

MEMORY_NAMES: Final = MEMORY_FIELDS
STATE_NAMES: Final = STATE_FIELDS
AUDIT_NAMES: Final = AUDIT_FIELDS
MEMORY_WIDTH: Final = len(MEMORY_NAMES)
MEMORY_COLUMNS: Final = ", ".join(MEMORY_NAMES)
MEMORY_COLUMNS_M: Final = ", ".join(f"m.{c}" for c in MEMORY_NAMES)
STATE_COLUMNS: Final = ", ".join(STATE_NAMES)
STATE_COLUMNS_S: Final = ", ".join(f"s.{c}" for c in STATE_NAMES)
AUDIT_COLUMNS: Final = ", ".join(AUDIT_NAMES)

# Every write starts here: the row lock serialises the tenant's writers; ``n`` is its clock.
BUMP_CLOCK: Final = (
    "INSERT INTO tenant_clock (tenant_id, n) VALUES (%s, 1) ON CONFLICT (tenant_id) "
    "DO UPDATE SET n = tenant_clock.n + 1 RETURNING n"
)
INSERT_MEMORY: Final = (
    "INSERT INTO memory (tenant_id, id, project_id, namespace, kind, source_type, status, "
    "created_at, current_version, pinned) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_STATE: Final = (
    f"INSERT INTO memory_state (tenant_id, {STATE_COLUMNS}) "
    f"VALUES ({', '.join(['%s'] * (1 + len(STATE_NAMES)))})"
)
INSERT_AUDIT: Final = (
    "INSERT INTO memorule_audit (tenant_id, seq, id, memorule_id, state_id, event, "
    "written_by_session_id, written_by_persona, evidence_signal_id, written_at, reason, "
    "prev_hash, hash, content_hash) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# The store's record of a chain's length, moved in the transaction that extends the chain.
UPSERT_HEAD: Final = (
    "INSERT INTO audit_head (tenant_id, chain, seq, hash, written_at) "
    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, chain) DO UPDATE SET "
    "seq = excluded.seq, hash = excluded.hash, written_at = excluded.written_at"
)
INSERT_INDEX: Final = (
    "INSERT INTO recall_index (tenant_id, memory_id, project_id, active, kind, namespace, "
    "memorule_kind, confidence, scope, a_persona, a_surface, a_specialization, written_at, "
    "doc_len, model, clock, vector) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b::vector)"
)
UPSERT_INDEX: Final = (
    INSERT_INDEX + " ON CONFLICT (tenant_id, memory_id) DO UPDATE SET "
    "memorule_kind = excluded.memorule_kind, confidence = excluded.confidence, "
    "scope = excluded.scope, a_persona = excluded.a_persona, a_surface = excluded.a_surface, "
    "a_specialization = excluded.a_specialization, written_at = excluded.written_at, "
    "doc_len = excluded.doc_len, model = excluded.model, clock = excluded.clock, "
    "vector = excluded.vector"
)


def redact(url: str) -> str:
    """The connection string without its password, for messages."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:  # an unparsable string: show nothing of it
        return "(unparsable connection string)"
    if "password" in params:
        params["password"] = "***"
    return make_conninfo("", **params)


# -- parameters --------------------------------------------------------------------------


def memory_params(m: Memory) -> tuple[Any, ...]:
    return (
        m.tenant_id,
        m.id,
        m.project_id,
        m.namespace,
        m.kind.value,
        m.source_type.value,
        m.status.value,
        m.created_at,
        m.current_version,
        m.pinned,
    )


def state_params(tenant_id: UUID, s: MemoryState) -> tuple[Any, ...]:
    """A state's values for ``INSERT_STATE`` (tenant first): ids and the time as they are,
    enums by value, applies_to and checks as ``jsonb`` (no checks: NULL)."""
    v = {name: getattr(s, name) for name in STATE_NAMES}
    for name in ("memorule_kind", "confidence", "enforcement"):
        v[name] = v[name].value if v[name] is not None else None
    v["applies_to"] = Jsonb(s.applies_to.to_dict()) if s.applies_to is not None else None
    v["checks"] = Jsonb(checks_json(s.checks)) if s.checks else None
    return (tenant_id, *v.values())


def audit_params(e: MemoruleAudit) -> tuple[Any, ...]:
    return (
        e.tenant_id,
        e.seq,
        e.id,
        e.memorule_id,
        e.state_id,
        e.event.value,
        e.written_by_session_id,
        e.written_by_persona,
        e.evidence_signal_id,
        e.written_at,
        e.reason,
        e.prev_hash,
        e.hash,
        e.content_hash,
    )


def index_filters(s: MemoryState, doc_len: int) -> tuple[Any, ...]:
    """The recall_index columns a state sets, from memorule_kind to doc_len (its length in
    index terms, ``postgres_terms.Postings``)."""
    a = s.applies_to or AppliesTo()
    return (
        s.memorule_kind.value if s.memorule_kind else None,
        s.confidence.value if s.confidence else None,
        a.scope.value if a.scope else None,
        normalise_key(a.persona),
        normalise_key(a.surface),
        normalise_key(a.specialization),
        s.written_at,
        doc_len,
    )


# -- queries -----------------------------------------------------------------------------


def audit_query(tenant_id: UUID, flt: AuditFilter) -> tuple[str, list[Any]]:
    """Audit events matching ``flt``, newest first."""
    where = ["tenant_id = %s"]
    args: list[Any] = [tenant_id]
    if flt.memorule_id is not None:
        where.append("memorule_id = %s")
        args.append(flt.memorule_id)
    if flt.session_id is not None:
        where.append("written_by_session_id = %s")
        args.append(flt.session_id)
    if flt.persona is not None:
        where.append("written_by_persona = %s")
        args.append(flt.persona)
    if flt.events:
        where.append("event = ANY(%s)")
        args.append([e.value for e in flt.events])
    if flt.since is not None:
        where.append("written_at >= %s")
        args.append(flt.since.astimezone(UTC))  # naive means local time, as records.iso has it
    if flt.until is not None:
        where.append("written_at < %s")
        args.append(flt.until.astimezone(UTC))
    if flt.before_seq is not None:
        where.append("seq < %s")
        args.append(flt.before_seq)
    args.append(flt.limit)
    query = (
        f"SELECT {AUDIT_COLUMNS} FROM memorule_audit WHERE {' AND '.join(where)} "
        "ORDER BY seq DESC LIMIT %s"
    )
    return query, args


# -- converters --------------------------------------------------------------------------


def utc(ts: datetime) -> datetime:
    return ts.astimezone(UTC)


def memory(r: Sequence[Any]) -> Memory:
    return Memory(
        id=r[0],
        tenant_id=r[1],
        project_id=r[2],
        namespace=r[3],
        kind=Kind(r[4]),
        status=Status(r[5]),
        created_at=utc(r[6]),
        current_version=r[7],
        pinned=bool(r[8]),
    )


def state(r: Sequence[Any]) -> MemoryState:
    """A ``memory_state`` row (``STATE_COLUMNS``) as a record."""
    v = dict(zip(STATE_NAMES, r, strict=True))
    v["written_at"] = utc(v["written_at"])
    return state_from_stored(v)


def audit(r: Sequence[Any]) -> MemoruleAudit:
    return MemoruleAudit(
        id=r[0],
        tenant_id=r[1],
        seq=int(r[2]),
        memorule_id=r[3],
        state_id=r[4],
        event=AuditEventType(r[5]),
        written_by_session_id=r[6],
        written_by_persona=r[7],
        evidence_signal_id=r[8],
        written_at=utc(r[9]),
        reason=r[10],
        prev_hash=r[11],
        hash=r[12],
        content_hash=r[13],
    )


def vector_from_binary(data: bytes) -> Vector:
    """One pgvector value in binary format (dim, unused, big-endian float4s) as float32."""
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)
