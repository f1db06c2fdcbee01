"""Dump and load for the SQLite engine: every row of a store, verbatim, in port order.

A dump reads through its own connection inside one read transaction (a WAL snapshot), so it
is consistent while writers carry on and never disturbs the store's per-thread connections.
A load runs inside the store's ``BEGIN IMMEDIATE`` transaction: all of it or none.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final
from uuid import UUID

import numpy as np

from prism_memory.domain.records import MemoruleAudit, MemoryState, Status, iso, parse_iso
from prism_memory.domain.served import ServedReceipt
from prism_memory.errors import Conflict
from prism_memory.trigraph.dump import DumpItem, IdempotencyRecord, MemoryDump
from prism_memory.trigraph.ledger import AUDIT_CHAIN, SERVED_CHAIN
from prism_memory.trigraph.sqlite import rows
from prism_memory.trigraph.sqlite import segments as sqlite_segments
from prism_memory.trigraph.sqlite.ledger import (
    INSERT_RECEIPT,
    RECEIPT_COLUMNS,
    UPSERT_HEAD,
    receipt,
)

PAGE: Final = 500


def dump(path: Path, tenant_id: UUID | None) -> Iterator[DumpItem]:
    """Yield everything stored in the file at ``path`` for one tenant (or all), in port order."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")  # one snapshot for the whole dump
        if tenant_id is not None:
            tenants = [str(tenant_id)]
        else:
            tenants = [
                r[0]
                for r in conn.execute(
                    "SELECT tenant_id FROM memory UNION SELECT tenant_id FROM memorule_audit "
                    "UNION SELECT tenant_id FROM idempotency "
                    "UNION SELECT tenant_id FROM served_receipt ORDER BY 1"
                )
            ]
        for t in tenants:
            yield from _memories(conn, t)
            for row in conn.execute(
                f"SELECT {rows.AUDIT_COLUMNS} FROM memorule_audit WHERE tenant_id = ? ORDER BY seq",
                (t,),
            ):
                yield rows.audit(row)
            for key, request_hash, result, created_at in conn.execute(
                "SELECT key, request_hash, result, created_at FROM idempotency "
                "WHERE tenant_id = ? ORDER BY key",
                (t,),
            ):
                yield IdempotencyRecord(
                    UUID(t), key, request_hash, json.loads(result), parse_iso(created_at)
                )
            for row in conn.execute(
                f"SELECT {RECEIPT_COLUMNS} FROM served_receipt WHERE tenant_id = ? ORDER BY seq",
                (t,),
            ):
                yield receipt(row)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _memories(conn: sqlite3.Connection, t: str) -> Iterator[MemoryDump]:
    after = ""
    while True:
        page = conn.execute(
            f"SELECT {rows.MEMORY_COLUMNS} FROM memory WHERE tenant_id = ? AND id > ? "
            "ORDER BY id LIMIT ?",
            (t, after, PAGE),
        ).fetchall()
        if not page:
            return
        ids = [r[0] for r in page]
        marks = ",".join("?" * len(ids))
        states: dict[str, list[MemoryState]] = {i: [] for i in ids}
        for r in conn.execute(
            f"SELECT {rows.STATE_COLUMNS} FROM memory_state WHERE tenant_id = ? "
            f"AND memory_id IN ({marks}) ORDER BY memory_id, version",
            (t, *ids),
        ):
            state = rows.state(r)
            states[str(state.memory_id)].append(state)
        vectors = {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT memory_id, model, vector FROM recall_index "
                f"WHERE tenant_id = ? AND memory_id IN ({marks})",
                (t, *ids),
            )
        }
        for r in page:
            model, blob = vectors.get(r[0], (None, None))
            vector = np.frombuffer(blob, dtype=np.float32).copy() if blob is not None else None
            yield MemoryDump(rows.memory(r), states[r[0]], vector, model)
        if len(page) < PAGE:
            return
        after = ids[-1]


def load(conn: sqlite3.Connection, items: Iterable[DumpItem]) -> dict[str, int]:
    """Insert dumped items verbatim inside the caller's write transaction; return the counts."""
    counts = {"memories": 0, "states": 0, "audit_events": 0, "idempotency": 0}
    counts["served_receipts"] = 0
    clocks: dict[UUID, int] = {}
    heads: dict[tuple[str, str], tuple[int, str, str]] = {}
    for item in items:
        tenant = item.memory.tenant_id if isinstance(item, MemoryDump) else item.tenant_id
        if tenant not in clocks:
            clocks[tenant] = _claim_tenant(conn, str(tenant))
        t = str(tenant)
        if isinstance(item, MemoryDump):
            _load_memory(conn, item, clocks[tenant])
            counts["memories"] += 1
            counts["states"] += len(item.states)
        elif isinstance(item, MemoruleAudit):
            conn.execute(rows.INSERT_AUDIT, rows.audit_params(item))
            heads[(t, AUDIT_CHAIN)] = (item.seq, item.hash, iso(item.written_at))
            counts["audit_events"] += 1
        elif isinstance(item, ServedReceipt):
            conn.execute(INSERT_RECEIPT, item.row())
            heads[(t, SERVED_CHAIN)] = (item.seq, item.hash, iso(item.served_at))
            counts["served_receipts"] += 1
        else:
            conn.execute(
                "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)",
                (t, item.key, item.request_hash, json.dumps(item.result), iso(item.created_at)),
            )
            counts["idempotency"] += 1
    for (t, name), (seq, digest, at) in heads.items():
        conn.execute(UPSERT_HEAD, (t, name, seq, digest, at))
    return counts


def _load_memory(conn: sqlite3.Connection, item: MemoryDump, clock: int) -> None:
    m = item.memory
    t = str(m.tenant_id)
    conn.execute(rows.INSERT_MEMORY, rows.memory_params(t, m))
    conn.executemany(rows.INSERT_STATE, [rows.state_params(t, s) for s in item.states])
    if item.vector is None or item.vector_model is None:
        return
    conn.execute(
        rows.INSERT_INDEX,
        (
            t,
            str(m.project_id),
            str(m.id),
            int(m.status is Status.ACTIVE),
            m.kind.value,
            m.namespace,
            *rows.index_values(item.states[-1]),
            item.vector_model,
            clock,
            np.ascontiguousarray(item.vector, dtype=np.float32).tobytes(),
        ),
    )


def _claim_tenant(conn: sqlite3.Connection, t: str) -> int:
    """Bump the tenant's clock and make sure it has nothing here yet; return its clock."""
    clock = int(
        conn.execute(
            rows.BUMP_CLOCK,
            (t,),
        ).fetchone()[0]
    )
    taken = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memory WHERE tenant_id = ?1) "
        "OR EXISTS (SELECT 1 FROM memorule_audit WHERE tenant_id = ?1) "
        "OR EXISTS (SELECT 1 FROM idempotency WHERE tenant_id = ?1) "
        "OR EXISTS (SELECT 1 FROM served_receipt WHERE tenant_id = ?1) "
        "OR EXISTS (SELECT 1 FROM audit_head WHERE tenant_id = ?1)",
        (t,),
    ).fetchone()[0]
    if taken:
        raise Conflict(
            f"tenant {t} already has data in this store; load into an empty store "
            "or one without this tenant",
            tenant_id=t,
        )
    sqlite_segments.forget_tenant(conn, t)  # derived: rebuilt from the loaded rows
    return clock
