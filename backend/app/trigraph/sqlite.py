"""The embedded TriGraph engine: one SQLite file, WAL, safe across processes.

Writes run in ``BEGIN IMMEDIATE`` transactions, so the per-tenant audit chain is extended
by one writer at a time and a memory never exists without its state and audit event.
Each thread gets its own connection; other processes may use the same file at once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import numpy as np

from app.domain import audit as chain
from app.domain.ranking import Candidates, normalise_key
from app.domain.records import (
    AUDIT_FIELDS,
    MEMORY_FIELDS,
    AppliesTo,
    AuditEventType,
    Confidence,
    Kind,
    MemoruleAudit,
    MemoruleKind,
    Memory,
    MemoryState,
    Status,
    iso,
    parse_iso,
)
from app.embeddings.port import Vector
from app.errors import Conflict, IdempotencyConflict, NotFound, StorageError
from app.trigraph import sqlite_recall
from app.trigraph.listing_sql import list_query
from app.trigraph.port import (
    AuditFilter,
    CandidateFilter,
    DumpItem,
    IdempotencyClaim,
    ListFilter,
    NearMatch,
    RankedPage,
    RecallRequest,
    WriteBatch,
    WriteOutcome,
)
from app.trigraph.recall_registry import CacheRegistry
from app.trigraph.recall_snapshot import near_in_snapshot, rank_snapshot
from app.trigraph.sqlite_schema import MIGRATIONS

T = TypeVar("T")
BUSY_TIMEOUT_S = 30.0
LOCK_RETRY_S = 120.0
_STATE_COLUMNS = (
    "id, memory_id, version, memorule_kind, subject, body, applies_to, evidence_signal_id, "
    "confidence, written_by_session_id, written_by_persona, written_at, embedding_model, reason"
)
_MEMORY_COLUMNS = ", ".join(MEMORY_FIELDS)
_AUDIT_COLUMNS = ", ".join(AUDIT_FIELDS)


class SQLiteStore:
    """The TriGraph on one SQLite file.

    Args:
        path: the database file; its folder is created if missing.
        synchronous: ``NORMAL`` (default; survives process crashes) or ``FULL`` (also power
            loss, slower).
        cache_mb: how many megabytes of recall candidates the process keeps in memory
            (``PRISM_RECALL_CACHE_MB``), least recently used projects dropped first.
        segments: start a project's cache from its stored recall segment and store new
            ones (default); False builds every cache row by row and stores none.
    """

    def __init__(
        self,
        path: Path,
        synchronous: str = "NORMAL",
        cache_mb: int = 512,
        segments: bool = True,
    ) -> None:
        self.path = Path(path)
        self._synchronous = synchronous
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._guard = threading.Lock()
        self._write_lock = threading.Lock()
        self.caches = CacheRegistry(cache_mb * 1024 * 1024)
        self.segments = segments

    # -- connections -------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA page_size = 8192")  # before WAL and the first table
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_size_limit = 67108864")
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self._local.conn = conn
            with self._guard:
                # Worker pools (uvicorn's, anyio's) retire idle threads: close what they
                # left behind, or every retired thread leaks a connection and its files.
                kept = [(threading.current_thread(), conn)]
                for thread, old in self._all:
                    if thread.is_alive():
                        kept.append((thread, old))
                    else:
                        old.close()
                self._all = kept
        return conn

    def close(self) -> None:
        with self._guard:
            for _, conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in BEGIN IMMEDIATE, retrying while another process holds the lock.

        Threads of this process queue on a lock first: SQLite's busy handler backs off with
        sleeps, which made tail latency under 16 concurrent writers three times worse.
        """
        with self._write_lock:
            return self._transaction_locked(work)

    def _transaction_locked(self, work: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn()
        deadline = time.monotonic() + LOCK_RETRY_S
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _is_busy(exc) and time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                raise StorageError(f"could not start a write on {self.path}: {exc}") from exc
            try:
                result = work(conn)
                conn.execute("COMMIT")
                return result
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- schema ------------------------------------------------------------------------

    def migrate(self) -> int:
        def run(conn: sqlite3.Connection) -> int:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            for version, name, statements in MIGRATIONS:
                if version in done:
                    continue
                for statement in statements:
                    if callable(statement):
                        statement(conn)
                    else:
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                    (version, name, iso(datetime.now(UTC))),
                )
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
            return int(row[0] or 0)

        return self._transaction(run)

    # -- writes ------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        return self._transaction(lambda conn: self._apply(conn, batch))

    def _apply(self, conn: sqlite3.Connection, batch: WriteBatch) -> WriteOutcome:
        t = str(batch.tenant_id)
        if batch.idempotency is not None:
            claim = batch.idempotency
            row = conn.execute(
                "SELECT request_hash, result FROM idempotency WHERE tenant_id = ? AND key = ?",
                (t, claim.key),
            ).fetchone()
            if row is not None:
                if row[0] != claim.request_hash:
                    raise IdempotencyConflict(
                        f"idempotency key '{claim.key}' was used for a different request",
                        key=claim.key,
                    )
                return WriteOutcome([], IdempotencyClaim(claim.key, row[0], json.loads(row[1])))
        clock = conn.execute(
            "INSERT INTO tenant_clock VALUES (?, 1) ON CONFLICT (tenant_id) "
            "DO UPDATE SET n = n + 1 RETURNING n",
            (t,),
        ).fetchone()[0]
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
            conn.execute(
                "INSERT INTO memory VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    t,
                    str(m.id),
                    str(m.project_id),
                    m.namespace,
                    m.kind.value,
                    m.source_type.value,
                    m.status.value,
                    iso(m.created_at),
                    m.current_version,
                ),
            )
        for sw in batch.states:
            self._insert_state(conn, t, sw.state, sw.vector, clock)
        for memory_id, status in batch.status_changes:
            cur = conn.execute(
                "UPDATE memory SET status = ? WHERE tenant_id = ? AND id = ?",
                (status.value, t, str(memory_id)),
            )
            if cur.rowcount != 1:
                raise NotFound(f"no memory {memory_id}", id=str(memory_id))
            conn.execute(
                "UPDATE recall_index SET active = ?, clock = ? "
                "WHERE tenant_id = ? AND memory_id = ?",
                (int(status is Status.ACTIVE), clock, t, str(memory_id)),
            )
        audits = []
        if batch.audits:
            row = conn.execute(
                "SELECT seq, hash FROM audit_head WHERE tenant_id = ? AND chain = 'memorule_audit'",
                (t,),
            ).fetchone()
            seq, prev = (row[0], row[1]) if row else (0, chain.GENESIS_HASH)
            for draft in batch.audits:
                seq += 1
                event = chain.link(batch.tenant_id, seq, prev, draft)
                conn.execute(
                    f"INSERT INTO memorule_audit ({_AUDIT_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _audit_params(event),
                )
                audits.append(event)
                prev = event.hash
            conn.execute(
                "INSERT INTO audit_head VALUES (?, 'memorule_audit', ?, ?, ?) "
                "ON CONFLICT (tenant_id, chain) DO UPDATE SET seq = excluded.seq, "
                "hash = excluded.hash, written_at = excluded.written_at",
                (t, seq, prev, iso(audits[-1].written_at)),
            )
        if batch.idempotency is not None:
            claim = batch.idempotency
            conn.execute(
                "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)",
                (
                    t,
                    claim.key,
                    claim.request_hash,
                    json.dumps(claim.result),
                    iso(datetime.now(UTC)),
                ),
            )
        return WriteOutcome(audits)

    def _insert_state(
        self, conn: sqlite3.Connection, t: str, s: MemoryState, vector: Vector | None, clock: int
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
        a = s.applies_to or AppliesTo()
        conn.execute(
            f"INSERT INTO memory_state (tenant_id, {_STATE_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                t,
                str(s.id),
                str(s.memory_id),
                s.version,
                s.memorule_kind.value if s.memorule_kind else None,
                s.subject,
                s.body,
                json.dumps(a.to_dict()) if s.applies_to else None,
                s.evidence_signal_id,
                s.confidence.value if s.confidence else None,
                str(s.written_by_session_id),
                s.written_by_persona,
                iso(s.written_at),
                s.embedding_model,
                s.reason,
            ),
        )
        index = (
            str(s.memorule_kind.value) if s.memorule_kind else None,
            s.confidence.value if s.confidence else None,
            a.scope.value if a.scope else None,
            normalise_key(a.persona),
            normalise_key(a.surface),
            normalise_key(a.specialization),
            iso(s.written_at),
        )
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
            "INSERT INTO recall_index (tenant_id, project_id, memory_id, active, kind, namespace, "
            "memorule_kind, confidence, scope, a_persona, a_surface, a_specialization, "
            "written_at, model, clock, vector) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, memory_id) DO UPDATE SET "
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

    # -- reads -------------------------------------------------------------------------

    def idempotent_result(self, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
        row = (
            self._conn()
            .execute(
                "SELECT request_hash, result FROM idempotency WHERE tenant_id = ? AND key = ?",
                (str(tenant_id), key),
            )
            .fetchone()
        )
        return IdempotencyClaim(key, row[0], json.loads(row[1])) if row else None

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        return self.get_many(tenant_id, [memory_id]).get(memory_id)

    def get_many(
        self, tenant_id: UUID, memory_ids: list[UUID]
    ) -> dict[UUID, tuple[Memory, MemoryState]]:
        if not memory_ids:
            return {}
        marks = ",".join("?" * len(memory_ids))
        cols = ", ".join(f"m.{c.strip()}" for c in _MEMORY_COLUMNS.split(","))
        scols = ", ".join(f"s.{c.strip()}" for c in _STATE_COLUMNS.split(","))
        rows = (
            self._conn()
            .execute(
                f"SELECT {cols}, {scols} FROM memory m JOIN memory_state s "
                "ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version "
                f"WHERE m.tenant_id = ? AND m.id IN ({marks})",
                (str(tenant_id), *(str(i) for i in memory_ids)),
            )
            .fetchall()
        )
        out = {}
        for row in rows:
            memory = _memory(row[:8])
            out[memory.id] = (memory, _state(row[8:]))
        return out

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        rows = (
            self._conn()
            .execute(
                f"SELECT {_STATE_COLUMNS} FROM memory_state WHERE tenant_id = ? AND memory_id = ? "
                "ORDER BY version",
                (str(tenant_id), str(memory_id)),
            )
            .fetchall()
        )
        return [_state(r) for r in rows]

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Vector | None:
        row = (
            self._conn()
            .execute(
                "SELECT vector FROM recall_index WHERE tenant_id = ? AND memory_id = ?",
                (str(tenant_id), str(memory_id)),
            )
            .fetchone()
        )
        return np.frombuffer(row[0], dtype=np.float32).copy() if row else None

    def recall(self, tenant_id: UUID, request: RecallRequest) -> RankedPage:
        cands = self.candidates(tenant_id, request.filter, request.model)
        return rank_snapshot(cands, request)

    def near_duplicates(
        self,
        tenant_id: UUID,
        flt: CandidateFilter,
        vector: Vector,
        model: str,
        threshold: float,
        limit: int,
    ) -> list[NearMatch]:
        cands = self.candidates(tenant_id, flt, model)
        return near_in_snapshot(cands, vector, threshold, limit)

    def candidates(self, tenant_id: UUID, flt: CandidateFilter, model: str) -> Candidates:
        """The project's cached candidates, brought up to the tenant's clock
        (:func:`app.trigraph.sqlite_recall.candidates`)."""
        return sqlite_recall.candidates(self, tenant_id, flt, model)

    def list_memories(self, tenant_id: UUID, flt: ListFilter) -> list[tuple[Memory, MemoryState]]:
        cols = ", ".join(f"m.{c.strip()}" for c in _MEMORY_COLUMNS.split(","))
        scols = ", ".join(f"s.{c.strip()}" for c in _STATE_COLUMNS.split(","))
        query, args = list_query(tenant_id, flt, f"{cols}, {scols}", "?", str)
        rows = self._conn().execute(query, args).fetchall()
        return [(_memory(row[:8]), _state(row[8:])) for row in rows]

    def audit_events(self, tenant_id: UUID, flt: AuditFilter) -> list[MemoruleAudit]:
        where: list[str] = ["tenant_id = ?"]
        args: list[Any] = [str(tenant_id)]
        if flt.memorule_id is not None:
            where.append("memorule_id = ?")
            args.append(str(flt.memorule_id))
        if flt.session_id is not None:
            where.append("written_by_session_id = ?")
            args.append(str(flt.session_id))
        if flt.persona is not None:
            where.append("written_by_persona = ?")
            args.append(flt.persona)
        if flt.events:
            where.append(f"event IN ({','.join('?' * len(flt.events))})")
            args.extend(e.value for e in flt.events)
        if flt.since is not None:
            where.append("written_at >= ?")
            args.append(iso(flt.since))
        if flt.until is not None:
            where.append("written_at < ?")
            args.append(iso(flt.until))
        if flt.before_seq is not None:
            where.append("seq < ?")
            args.append(flt.before_seq)
        rows = (
            self._conn()
            .execute(
                f"SELECT {_AUDIT_COLUMNS} FROM memorule_audit WHERE {' AND '.join(where)} "
                "ORDER BY seq DESC LIMIT ?",
                (*args, flt.limit),
            )
            .fetchall()
        )
        return [_audit(r) for r in rows]

    def audit_chain(self, tenant_id: UUID) -> Iterator[MemoruleAudit]:
        cur = self._conn().execute(
            f"SELECT {_AUDIT_COLUMNS} FROM memorule_audit WHERE tenant_id = ? ORDER BY seq",
            (str(tenant_id),),
        )
        for row in cur:
            yield _audit(row)

    def tenants(self) -> list[UUID]:
        rows = (
            self._conn()
            .execute("SELECT tenant_id FROM memory UNION SELECT tenant_id FROM memorule_audit")
            .fetchall()
        )
        return sorted(UUID(r[0]) for r in rows)

    def stats(self, tenant_id: UUID) -> dict[str, int]:
        conn, t = self._conn(), str(tenant_id)

        def count(sql: str) -> int:
            return int(conn.execute(sql, (t,)).fetchone()[0])

        return {
            "memories": count("SELECT count(*) FROM memory WHERE tenant_id = ?"),
            "states": count("SELECT count(*) FROM memory_state WHERE tenant_id = ?"),
            "audit_events": count("SELECT count(*) FROM memorule_audit WHERE tenant_id = ?"),
        }

    def stale_vectors(self, model: str, limit: int) -> list[tuple[UUID, UUID, str]]:
        rows = (
            self._conn()
            .execute(
                "SELECT r.tenant_id, r.memory_id, s.subject, s.body FROM recall_index r "
                "JOIN memory m ON m.tenant_id = r.tenant_id AND m.id = r.memory_id "
                "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version WHERE r.model != ? LIMIT ?",
                (model, limit),
            )
            .fetchall()
        )
        return [(UUID(r[0]), UUID(r[1]), f"{r[2]}\n{r[3]}" if r[2] else r[3]) for r in rows]

    def set_vectors(self, tenant_id: UUID, vectors: list[tuple[UUID, Vector]], model: str) -> None:
        def run(conn: sqlite3.Connection) -> None:
            t = str(tenant_id)
            clock = conn.execute(
                "INSERT INTO tenant_clock VALUES (?, 1) ON CONFLICT (tenant_id) "
                "DO UPDATE SET n = n + 1 RETURNING n",
                (t,),
            ).fetchone()[0]
            conn.executemany(
                "UPDATE recall_index SET model = ?, vector = ?, clock = ? "
                "WHERE tenant_id = ? AND memory_id = ?",
                [
                    (model, np.ascontiguousarray(v, dtype=np.float32).tobytes(), clock, t, str(mid))
                    for mid, v in vectors
                ],
            )

        self._transaction(run)

    # -- moving data (app.trigraph.sqlite_transfer) -------------------------------------

    def dump(self, tenant_id: UUID | None = None) -> Iterator[DumpItem]:
        from app.trigraph import sqlite_transfer  # it imports this module's row converters

        return sqlite_transfer.dump(self.path, tenant_id)

    def load(self, items: Iterable[DumpItem]) -> dict[str, int]:
        from app.trigraph import sqlite_transfer

        return self._transaction(lambda conn: sqlite_transfer.load(conn, items))


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _memory(r: tuple[Any, ...]) -> Memory:
    return Memory(
        id=UUID(r[0]),
        tenant_id=UUID(r[1]),
        project_id=UUID(r[2]),
        namespace=r[3],
        kind=Kind(r[4]),
        status=Status(r[5]),
        created_at=parse_iso(r[6]),
        current_version=r[7],
    )


def _state(r: tuple[Any, ...]) -> MemoryState:
    return MemoryState(
        id=UUID(r[0]),
        memory_id=UUID(r[1]),
        version=r[2],
        memorule_kind=MemoruleKind(r[3]) if r[3] else None,
        subject=r[4],
        body=r[5],
        applies_to=AppliesTo.from_dict(json.loads(r[6])) if r[6] else None,
        evidence_signal_id=r[7],
        confidence=Confidence(r[8]) if r[8] else None,
        written_by_session_id=UUID(r[9]),
        written_by_persona=r[10],
        written_at=parse_iso(r[11]),
        embedding_model=r[12],
        reason=r[13],
    )


def _audit_params(e: MemoruleAudit) -> tuple[Any, ...]:
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


def _audit(r: tuple[Any, ...]) -> MemoruleAudit:
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
