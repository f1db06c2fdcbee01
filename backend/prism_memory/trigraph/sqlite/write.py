"""One write batch on SQLite, inside the store's ``BEGIN IMMEDIATE`` transaction.

The checks (idempotency claim, expected versions, the memories states name) raise in the same
order as the PostgreSQL engine's (:mod:`.write`), so both refuse a bad batch with the
same error. Every state bumps the tenant's clock, which recall caches catch up to.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from uuid import UUID

import numpy as np

from prism_memory.domain import audit as chain
from prism_memory.domain.idempotency import check_same_request
from prism_memory.domain.records import MemoruleAudit, MemoryState, Status, iso
from prism_memory.embeddings.port import Vector
from prism_memory.errors import Conflict, NotFound, StorageError
from prism_memory.trigraph.port import IdempotencyClaim, WriteBatch, WriteOutcome, pin_conflict
from prism_memory.trigraph.sqlite import rows

_CLAIM = "SELECT request_hash, result FROM idempotency WHERE tenant_id = ? AND key = ?"


def claim(conn: sqlite3.Connection, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
    """The claim stored under ``key``, if any."""
    row = conn.execute(_CLAIM, (str(tenant_id), key)).fetchone()
    return IdempotencyClaim(key, row[0], json.loads(row[1])) if row else None


def apply(conn: sqlite3.Connection, batch: WriteBatch) -> WriteOutcome:
    """Apply ``batch`` in the caller's transaction (see the port for the contract)."""
    t = str(batch.tenant_id)
    if batch.idempotency is not None:
        asked = batch.idempotency
        stored = claim(conn, batch.tenant_id, asked.key)
        if stored is not None:
            check_same_request(asked.key, stored.request_hash, asked.request_hash)
            return WriteOutcome([], stored)
    clock = conn.execute(rows.BUMP_CLOCK, (t,)).fetchone()[0]
    for memory_id, expected in batch.expected_versions.items():
        row = conn.execute(
            "SELECT current_version FROM memory WHERE tenant_id = ? AND id = ?",
            (t, str(memory_id)),
        ).fetchone()
        if row is None:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        if row[0] != expected:
            raise Conflict(
                f"memory {memory_id} changed meanwhile (now version {row[0]}); retry",
                id=str(memory_id),
                version=row[0],
            )
    for m in batch.new_memories:
        conn.execute(rows.INSERT_MEMORY, rows.memory_params(t, m))
    for sw in batch.states:
        _insert_state(conn, t, sw.state, sw.vector, clock)
    for memory_id, status in batch.status_changes:
        cur = conn.execute(
            "UPDATE memory SET status = ? WHERE tenant_id = ? AND id = ?",
            (status.value, t, str(memory_id)),
        )
        if cur.rowcount != 1:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        conn.execute(
            "UPDATE recall_index SET active = ?, clock = ? WHERE tenant_id = ? AND memory_id = ?",
            (int(status is Status.ACTIVE), clock, t, str(memory_id)),
        )
    for memory_id, pinned in batch.pin_changes:
        _set_pinned(conn, t, memory_id, pinned)
    audits = _append_audits(conn, batch) if batch.audits else []
    if batch.idempotency is not None:
        asked = batch.idempotency
        conn.execute(
            "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)",
            (t, asked.key, asked.request_hash, json.dumps(asked.result), iso(datetime.now(UTC))),
        )
    return WriteOutcome(audits)


def _set_pinned(conn: sqlite3.Connection, t: str, memory_id: UUID, pinned: bool) -> None:
    row = conn.execute(
        "SELECT pinned FROM memory WHERE tenant_id = ? AND id = ?", (t, str(memory_id))
    ).fetchone()
    if row is None:
        raise NotFound(f"no memory {memory_id}", id=str(memory_id))
    if bool(row[0]) is pinned:
        raise Conflict(pin_conflict(memory_id, pinned), id=str(memory_id), pinned=pinned)
    conn.execute(
        "UPDATE memory SET pinned = ? WHERE tenant_id = ? AND id = ?",
        (int(pinned), t, str(memory_id)),
    )


def _append_audits(conn: sqlite3.Connection, batch: WriteBatch) -> list[MemoruleAudit]:
    t = str(batch.tenant_id)
    row = conn.execute(
        "SELECT seq, hash FROM audit_head WHERE tenant_id = ? AND chain = 'memorule_audit'",
        (t,),
    ).fetchone()
    seq, prev = (row[0], row[1]) if row else (0, chain.GENESIS_HASH)
    audits = []
    for draft in batch.audits:
        seq += 1
        event = chain.link(batch.tenant_id, seq, prev, draft)
        conn.execute(rows.INSERT_AUDIT, rows.audit_params(event))
        audits.append(event)
        prev = event.hash
    conn.execute(
        "INSERT INTO audit_head VALUES (?, 'memorule_audit', ?, ?, ?) "
        "ON CONFLICT (tenant_id, chain) DO UPDATE SET seq = excluded.seq, "
        "hash = excluded.hash, written_at = excluded.written_at",
        (t, seq, prev, iso(audits[-1].written_at)),
    )
    return audits


def _insert_state(
    conn: sqlite3.Connection, t: str, s: MemoryState, vector: Vector | None, clock: int
) -> None:
    mem = conn.execute(
        "SELECT project_id, kind, namespace, status, current_version FROM memory "
        "WHERE tenant_id = ? AND id = ?",
        (t, str(s.memory_id)),
    ).fetchone()
    if mem is None:
        raise NotFound(f"no memory {s.memory_id}", id=str(s.memory_id))
    project_id, kind, namespace, status, current = mem
    if s.version != 1:
        if s.version != current + 1:
            raise Conflict(f"memory {s.memory_id} is at version {current}", version=current)
        conn.execute(
            "UPDATE memory SET current_version = ? WHERE tenant_id = ? AND id = ?",
            (s.version, t, str(s.memory_id)),
        )
    conn.execute(rows.INSERT_STATE, rows.state_params(t, s))
    index = rows.index_values(s)
    if vector is None:
        cur = conn.execute(
            "UPDATE recall_index SET memorule_kind = ?, confidence = ?, scope = ?, "
            "a_persona = ?, a_surface = ?, a_specialization = ?, written_at = ?, clock = ? "
            "WHERE tenant_id = ? AND memory_id = ?",
            (*index, clock, t, str(s.memory_id)),
        )
        if cur.rowcount != 1:
            raise StorageError(f"memory {s.memory_id} has no vector to keep")
        return
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    conn.execute(
        rows.INSERT_INDEX + " ON CONFLICT (tenant_id, memory_id) DO UPDATE SET "
        "memorule_kind = excluded.memorule_kind, "
        "confidence = excluded.confidence, scope = excluded.scope, "
        "a_persona = excluded.a_persona, a_surface = excluded.a_surface, "
        "a_specialization = excluded.a_specialization, written_at = excluded.written_at, "
        "model = excluded.model, clock = excluded.clock, vector = excluded.vector",
        (
            t,
            project_id,
            str(s.memory_id),
            int(status == Status.ACTIVE.value),
            kind,
            namespace,
            *index,
            s.embedding_model,
            clock,
            blob,
        ),
    )
