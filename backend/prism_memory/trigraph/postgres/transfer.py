"""Dump and load for the PostgreSQL engine: every row of a store, verbatim, in port order.

A dump reads one REPEATABLE READ snapshot, so it is consistent while writers carry on.
A load runs in the caller's transaction and bumps each tenant's ``tenant_clock`` (taking its row
lock) before it checks that the tenant is new here, so it never interleaves with that tenant's
writes; loaded recall rows carry the new clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Final
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from prism_memory.domain.records import MemoruleAudit, MemoryState, Status
from prism_memory.domain.served import ServedReceipt
from prism_memory.errors import Conflict
from prism_memory.trigraph.dump import DumpItem, IdempotencyRecord, MemoryDump
from prism_memory.trigraph.ledger import AUDIT_CHAIN, SERVED_CHAIN
from prism_memory.trigraph.postgres import ledger, rows, terms

Conn = psycopg.Connection[tuple[Any, ...]]
PAGE: Final = 500
FLUSH_AT: Final = 1000


def dump(
    connect: Callable[[], AbstractContextManager[Conn]], tenant_id: UUID | None
) -> Iterator[DumpItem]:
    """Yield everything stored for ``tenant_id`` (or every tenant), in port order."""
    with connect() as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        if tenant_id is not None:
            tenants = [tenant_id]
        else:
            found = conn.execute("SELECT tenant_id FROM tenant_clock ORDER BY tenant_id")
            tenants = [r[0] for r in found.fetchall()]
        for tenant in tenants:
            yield from _memories(conn, tenant)
            yield from _audits(conn, tenant)
            claims = conn.execute(
                "SELECT key, request_hash, result, created_at FROM idempotency "
                'WHERE tenant_id = %s ORDER BY key COLLATE "C"',
                (tenant,),
            )
            for key, request_hash, result, created_at in claims:
                yield IdempotencyRecord(tenant, key, request_hash, result, rows.utc(created_at))
            yield from _receipts(conn, tenant)


def _memories(conn: Conn, tenant: UUID) -> Iterator[MemoryDump]:
    after = UUID(int=0)  # below every id
    while True:
        page = conn.execute(
            f"SELECT {rows.MEMORY_COLUMNS} FROM memory WHERE tenant_id = %s AND id > %s "
            "ORDER BY id LIMIT %s",
            (tenant, after, PAGE),
        ).fetchall()
        if not page:
            return
        memories = [rows.memory(r) for r in page]
        ids = [m.id for m in memories]
        states: dict[UUID, list[MemoryState]] = {i: [] for i in ids}
        for r in conn.execute(
            f"SELECT {rows.STATE_COLUMNS} FROM memory_state WHERE tenant_id = %s "
            "AND memory_id = ANY(%s) ORDER BY memory_id, version",
            (tenant, ids),
        ):
            state = rows.state(r)
            states[state.memory_id].append(state)
        vectors = {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT memory_id, model, vector FROM recall_index "
                "WHERE tenant_id = %s AND memory_id = ANY(%s)",
                (tenant, ids),
                binary=True,
            )
        }
        for m in memories:
            model, blob = vectors.get(m.id, (None, None))
            vector = rows.vector_from_binary(blob) if blob is not None else None
            yield MemoryDump(m, states[m.id], vector, model)
        if len(page) < PAGE:
            return
        after = ids[-1]


def _audits(conn: Conn, tenant: UUID) -> Iterator[MemoruleAudit]:
    after = 0
    while True:
        page = conn.execute(
            f"SELECT {rows.AUDIT_COLUMNS} FROM memorule_audit WHERE tenant_id = %s "
            "AND seq > %s ORDER BY seq LIMIT %s",
            (tenant, after, PAGE * 4),
        ).fetchall()
        for r in page:
            yield rows.audit(r)
        if len(page) < PAGE * 4:
            return
        after = int(page[-1][2])


def _receipts(conn: Conn, tenant: UUID) -> Iterator[ServedReceipt]:
    after = 0
    while True:
        page = conn.execute(
            f"SELECT {ledger.RECEIPT_COLUMNS} FROM served_receipt WHERE tenant_id = %s "
            "AND seq > %s ORDER BY seq LIMIT %s",
            (tenant, after, PAGE * 4),
        ).fetchall()
        for r in page:
            yield ledger.receipt(r)
        if len(page) < PAGE * 4:
            return
        after = int(page[-1][1])


class _Batches:
    """Rows waiting to be inserted, flushed in foreign-key order (memories first)."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.memories: list[tuple[Any, ...]] = []
        self.states: list[tuple[Any, ...]] = []
        self.index: list[tuple[Any, ...]] = []
        self.terms: list[tuple[Any, ...]] = []
        self.audits: list[tuple[Any, ...]] = []
        self.claims: list[tuple[Any, ...]] = []
        self.receipts: list[tuple[Any, ...]] = []

    def size(self) -> int:
        return (
            len(self.memories)
            + len(self.states)
            + len(self.audits)
            + len(self.claims)
            + len(self.receipts)
        )

    def flush(self) -> None:
        with self.conn.cursor() as cur:
            for statement, params in (
                (rows.INSERT_MEMORY, self.memories),
                (rows.INSERT_STATE, self.states),
                (rows.INSERT_INDEX, self.index),
                (terms.INSERT_TERMS, self.terms),
                (rows.INSERT_AUDIT, self.audits),
                (
                    "INSERT INTO idempotency (tenant_id, key, request_hash, result, created_at) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    self.claims,
                ),
                (ledger.INSERT_RECEIPT, self.receipts),
            ):
                if params:
                    cur.executemany(statement, params)
                    params.clear()


def load(conn: Conn, items: Iterable[DumpItem]) -> dict[str, int]:
    """Insert dumped items verbatim inside the caller's transaction; return the counts."""
    counts = {"memories": 0, "states": 0, "audit_events": 0, "idempotency": 0}
    counts["served_receipts"] = 0
    clocks: dict[UUID, int] = {}
    heads: dict[tuple[UUID, str], tuple[int, str, Any]] = {}
    batches = _Batches(conn)
    for item in items:
        tenant = item.memory.tenant_id if isinstance(item, MemoryDump) else item.tenant_id
        if tenant not in clocks:
            clocks[tenant] = _claim_tenant(conn, tenant)
        if isinstance(item, MemoryDump):
            m = item.memory
            batches.memories.append(rows.memory_params(m))
            batches.states.extend(rows.state_params(tenant, s) for s in item.states)
            if item.vector is not None and item.vector_model is not None:
                current = item.states[-1]
                postings = terms.Postings.of_state(current)
                index = rows.index_filters(current, postings.doc_len)
                active = m.status is Status.ACTIVE
                batches.index.append(
                    (
                        tenant,
                        m.id,
                        m.project_id,
                        active,
                        m.kind.value,
                        m.namespace,
                        *index,
                        item.vector_model,
                        clocks[tenant],
                        item.vector,
                    )
                )
                found = terms.insert_params(tenant, m.id, m.project_id, index[2], active, postings)
                if found is not None:
                    batches.terms.append(found)
            counts["memories"] += 1
            counts["states"] += len(item.states)
        elif isinstance(item, MemoruleAudit):
            batches.audits.append(rows.audit_params(item))
            heads[(tenant, AUDIT_CHAIN)] = (item.seq, item.hash, item.written_at)
            counts["audit_events"] += 1
        elif isinstance(item, ServedReceipt):
            batches.receipts.append(ledger.receipt_params(item))
            heads[(tenant, SERVED_CHAIN)] = (item.seq, item.hash, item.served_at)
            counts["served_receipts"] += 1
        else:
            batches.claims.append(
                (tenant, item.key, item.request_hash, Jsonb(item.result), item.created_at)
            )
            counts["idempotency"] += 1
        if batches.size() >= FLUSH_AT:
            batches.flush()
    batches.flush()
    with conn.cursor() as cur:
        cur.executemany(rows.UPSERT_HEAD, [(t, c, *head) for (t, c), head in heads.items()])
    return counts


def _claim_tenant(conn: Conn, tenant: UUID) -> int:
    """Bump (and lock) the tenant's clock, make sure it has nothing here yet; its clock."""
    bumped = conn.execute(rows.BUMP_CLOCK, (tenant,)).fetchone()
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memory WHERE tenant_id = %(t)s) "
        "OR EXISTS (SELECT 1 FROM memorule_audit WHERE tenant_id = %(t)s) "
        "OR EXISTS (SELECT 1 FROM idempotency WHERE tenant_id = %(t)s) "
        "OR EXISTS (SELECT 1 FROM served_receipt WHERE tenant_id = %(t)s) "
        "OR EXISTS (SELECT 1 FROM audit_head WHERE tenant_id = %(t)s)",
        {"t": tenant},
    ).fetchone()
    if row is not None and row[0]:
        raise Conflict(
            f"tenant {tenant} already has data in this store; load into an empty store "
            "or one without this tenant",
            tenant_id=str(tenant),
        )
    return int(bumped[0]) if bumped else 0
