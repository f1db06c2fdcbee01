"""One write batch on PostgreSQL, in the caller's transaction, in few round trips.

The batch runs in pipeline mode: the statements whose results the checks need (the tenant's
clock bump, which takes its row lock; the idempotency claim; the chain head; the memories the
batch names) go out together with BEGIN and are read after one flush, then every insert and
update is queued and sent with the COMMIT: two round trips, however busy the machine, which
keeps the tenant's lock held as briefly as the network allows. The checks raise in the same
order as the SQLite engine's, so both engines refuse a bad batch with the same error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.errors import UniqueViolation
from psycopg.types.json import Jsonb

from prism_memory.domain import audit as chain
from prism_memory.domain.idempotency import check_same_request
from prism_memory.domain.records import MemoruleAudit, MemoryState, Status
from prism_memory.embeddings.port import Vector
from prism_memory.errors import Conflict, NotFound, StorageError
from prism_memory.trigraph.port import IdempotencyClaim, WriteBatch, WriteOutcome, pin_conflict
from prism_memory.trigraph.postgres import rows, terms

Conn = psycopg.Connection[tuple[Any, ...]]

_CLAIM = "SELECT request_hash, result FROM idempotency WHERE tenant_id = %s AND key = %s"
_HEAD = "SELECT seq, hash FROM audit_head WHERE tenant_id = %s AND chain = 'memorule_audit'"
_MEMORIES = (
    "SELECT m.id, m.project_id, m.kind, m.namespace, m.status, m.current_version, "
    "r.memory_id IS NOT NULL, m.pinned FROM memory m LEFT JOIN recall_index r "
    "ON r.tenant_id = m.tenant_id AND r.memory_id = m.id "
    "WHERE m.tenant_id = %s AND m.id = ANY(%s)"
)
_KEEP_VECTOR = (
    "UPDATE recall_index SET memorule_kind = %s, confidence = %s, scope = %s, a_persona = %s, "
    "a_surface = %s, a_specialization = %s, written_at = %s, doc_len = %s, clock = %s "
    "WHERE tenant_id = %s AND memory_id = %s"
)
_SET_VERSION = "UPDATE memory SET current_version = %s WHERE tenant_id = %s AND id = %s"
_SET_STATUS = "UPDATE memory SET status = %s WHERE tenant_id = %s AND id = %s"
_SET_PINNED = "UPDATE memory SET pinned = %s WHERE tenant_id = %s AND id = %s"
_SET_ACTIVE = (
    "UPDATE recall_index SET active = %s, clock = %s WHERE tenant_id = %s AND memory_id = %s"
)
_CLAIM_KEY = "idempotency_pkey"
_INSERT_CLAIM = (
    "INSERT INTO idempotency (tenant_id, key, request_hash, result, created_at) "
    "VALUES (%s, %s, %s, %s, %s)"
)


def claim(conn: Conn, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
    """The claim stored under ``key``, if any."""
    row = conn.execute(_CLAIM, (tenant_id, key)).fetchone()
    return IdempotencyClaim(key, row[0], row[1]) if row else None


def replay_of(asked: IdempotencyClaim, stored: IdempotencyClaim) -> IdempotencyClaim:
    """The stored claim, if ``asked`` is the same request.

    Raises:
        IdempotencyConflict: the key was used for a different request.
    """
    check_same_request(asked.key, stored.request_hash, asked.request_hash)
    return stored


def write(conn: Conn, batch: WriteBatch) -> WriteOutcome:
    """Apply ``batch`` in one transaction, in two round trips (see the port for the contract).

    BEGIN, the clock bump and the reads go out together and are read after one flush; the
    inserts and COMMIT follow with one sync. A replay or a refused batch ends in ROLLBACK.
    """
    try:
        with conn.pipeline():
            conn.execute("BEGIN")
            try:
                outcome = apply(conn, batch)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            # A replay changes nothing, not even the tenant's clock.
            conn.execute("ROLLBACK" if outcome.replay is not None else "COMMIT")
    except psycopg.Error as exc:
        conn.rollback()  # the server skipped our COMMIT; leave no aborted transaction behind
        asked = batch.idempotency
        constraint = getattr(exc.diag, "constraint_name", None)
        if asked is None or not isinstance(exc, UniqueViolation) or constraint != _CLAIM_KEY:
            raise
        # A claim committed by a writer the tenant lock did not order before ours
        # (e.g. a concurrent load): answer as a replay, as a sequential retry would.
        stored = claim(conn, batch.tenant_id, asked.key)
        if stored is None:
            raise
        return WriteOutcome([], replay_of(asked, stored))
    return outcome


class _Queue:
    """The batch's inserts and updates, sent in an order that keeps every dependency.

    Memories go first (everything else refers to them), audit events and the claim last; the
    statements of one group keep their order. A run of one statement with several parameter
    sets goes as one ``executemany`` (a bulk write), a single one as a plain ``execute``
    (inside a pipeline, ``executemany`` costs a sync of its own).
    """

    ORDER = ("memory", "version", "state", "index", "terms", "status", "audit", "head", "claim")

    def __init__(self) -> None:
        self.groups: dict[str, list[tuple[str, tuple[Any, ...]]]] = {g: [] for g in self.ORDER}

    def add(self, group: str, statement: str, params: tuple[Any, ...]) -> None:
        self.groups[group].append((statement, params))

    def send(self, conn: Conn) -> None:
        for group in self.ORDER:
            for statement, run in _runs(self.groups[group]):
                if len(run) == 1:
                    conn.execute(statement, run[0])
                else:
                    with conn.cursor() as cur:
                        cur.executemany(statement, run)


def _runs(
    items: list[tuple[str, tuple[Any, ...]]],
) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """Consecutive items with the same statement, as (statement, parameter sets)."""
    for statement, group in itertools.groupby(items, key=lambda item: item[0]):
        yield statement, [params for _, params in group]


def apply(conn: Conn, batch: WriteBatch) -> WriteOutcome:
    """Queue ``batch``'s statements inside the caller's transaction and pipeline.

    The reads the checks need go out first and are read after one flush; every check then
    runs before anything is written, and the writes are queued for the caller's COMMIT.
    """
    t = batch.tenant_id
    new = {m.id: m for m in batch.new_memories}
    named = list(
        dict.fromkeys(
            [
                *batch.expected_versions,
                *(sw.state.memory_id for sw in batch.states if sw.state.memory_id not in new),
                *(memory_id for memory_id, _ in batch.status_changes),
                *(memory_id for memory_id, _ in batch.pin_changes),
            ]
        )
    )
    clock_cur = conn.execute(rows.BUMP_CLOCK, (t,))
    claim_cur = conn.execute(_CLAIM, (t, batch.idempotency.key)) if batch.idempotency else None
    head_cur = conn.execute(_HEAD, (t,)) if batch.audits else None
    mem_cur = conn.execute(_MEMORIES, (t, named)) if named else None
    bumped = clock_cur.fetchone()  # one flush for all of the above
    clock = int(bumped[0]) if bumped else 0
    if batch.idempotency is not None and claim_cur is not None:
        row = claim_cur.fetchone()
        if row is not None:
            stored = IdempotencyClaim(batch.idempotency.key, row[0], row[1])
            return WriteOutcome([], replay_of(batch.idempotency, stored))
    # id -> [project_id, kind, namespace, status, current_version, has_index_row, pinned]
    known: dict[UUID, list[Any]] = {r[0]: list(r[1:]) for r in mem_cur or ()}
    _check_expected(batch, known)
    queue = _Queue()
    for m in batch.new_memories:
        queue.add("memory", rows.INSERT_MEMORY, rows.memory_params(m))
        known[m.id] = [m.project_id, m.kind.value, m.namespace, m.status.value]
        known[m.id] += [m.current_version, False, m.pinned]
    for sw in batch.states:
        _state(queue, t, sw.state, sw.vector, clock, known.get(sw.state.memory_id))
    for memory_id, status in batch.status_changes:
        if memory_id not in known:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        queue.add("status", _SET_STATUS, (status.value, t, memory_id))
        queue.add("status", _SET_ACTIVE, (status is Status.ACTIVE, clock, t, memory_id))
        queue.add("status", terms.SET_TERMS_ACTIVE, (status is Status.ACTIVE, t, memory_id))
    for memory_id, pinned in batch.pin_changes:
        found = known.get(memory_id)
        if found is None:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        if bool(found[6]) is pinned:
            raise Conflict(pin_conflict(memory_id, pinned), id=str(memory_id), pinned=pinned)
        queue.add("status", _SET_PINNED, (pinned, t, memory_id))
    audits = _chain(batch, head_cur.fetchone() if head_cur is not None else None)
    for event in audits:
        queue.add("audit", rows.INSERT_AUDIT, rows.audit_params(event))
    if audits:
        last = audits[-1]
        head = (t, "memorule_audit", last.seq, last.hash, last.written_at)
        queue.add("head", rows.UPSERT_HEAD, head)
    if batch.idempotency is not None:
        c = batch.idempotency
        claim_row = (t, c.key, c.request_hash, Jsonb(c.result), datetime.now(UTC))
        queue.add("claim", _INSERT_CLAIM, claim_row)
    queue.send(conn)
    return WriteOutcome(audits)


def _check_expected(batch: WriteBatch, known: dict[UUID, list[Any]]) -> None:
    for memory_id, expected in batch.expected_versions.items():
        found = known.get(memory_id)
        if found is None:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        if found[4] != expected:
            raise Conflict(
                f"memory {memory_id} changed meanwhile (now version {found[4]}); retry",
                id=str(memory_id),
                version=found[4],
            )


def _state(
    queue: _Queue,
    t: UUID,
    s: MemoryState,
    vector: Vector | None,
    clock: int,
    mem: list[Any] | None,
) -> None:
    """Queue a state and point the recall row and its postings at it (``mem`` is updated
    in place). The postings are rewritten whole: text, scope and status may all change."""
    if mem is None:
        raise NotFound(f"no memory {s.memory_id}", id=str(s.memory_id))
    project_id, kind, namespace, status, current, has_index = mem[:6]
    if s.version != 1:
        if s.version != current + 1:
            raise Conflict(f"memory {s.memory_id} is at version {current}", version=current)
        queue.add("version", _SET_VERSION, (s.version, t, s.memory_id))
        mem[4] = s.version
    queue.add("state", rows.INSERT_STATE, rows.state_params(t, s))
    postings = terms.Postings.of_state(s)
    index = rows.index_filters(s, postings.doc_len)
    active = status == Status.ACTIVE.value
    if vector is None:
        if not has_index:
            raise StorageError(f"memory {s.memory_id} has no vector to keep")
        queue.add("index", _KEEP_VECTOR, (*index, clock, t, s.memory_id))
    else:
        params = (t, s.memory_id, project_id, active, kind, namespace, *index, s.embedding_model)
        queue.add("index", rows.UPSERT_INDEX, (*params, clock, vector))
    if has_index:
        queue.add("terms", terms.DELETE_TERMS, (t, s.memory_id))
    scope = index[2]
    inserted = terms.insert_params(t, s.memory_id, project_id, scope, active, postings)
    if inserted is not None:
        queue.add("terms", terms.INSERT_TERMS, inserted)
    mem[5] = True


def _chain(batch: WriteBatch, head: tuple[Any, ...] | None) -> list[MemoruleAudit]:
    """Link the batch's drafts after the tenant's current head."""
    seq, prev = (int(head[0]), str(head[1])) if head else (0, chain.GENESIS_HASH)
    audits = []
    for draft in batch.audits:
        seq += 1
        event = chain.link(batch.tenant_id, seq, prev, draft)
        audits.append(event)
        prev = event.hash
    return audits
