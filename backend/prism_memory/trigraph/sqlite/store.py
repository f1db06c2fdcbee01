"""The embedded TriGraph engine: one SQLite file, WAL, safe across processes.

Writes run in ``BEGIN IMMEDIATE`` transactions (:mod:`.write`), so the per-tenant
audit chain is extended by one writer at a time and a memory never exists without its state
and audit event. Each thread gets its own connection (:mod:`.conn`); other processes
may use the same file at once. The key store and the ledger share the file
(:meth:`SQLiteStore.key_store`, :meth:`SQLiteStore.ledger`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.neighbours import NotePlace
from prism_memory.domain.ranking import Candidates
from prism_memory.domain.records import Kind, MemoruleAudit, Memory, MemoryState, iso
from prism_memory.embeddings.port import Vector
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.trigraph.dump import DumpItem
from prism_memory.trigraph.hook_failures import HookFailureCounts
from prism_memory.trigraph.keys import ApiKeyStore
from prism_memory.trigraph.ledger import AuditLedger
from prism_memory.trigraph.listing_sql import list_query
from prism_memory.trigraph.port import (
    AuditFilter,
    CandidateFilter,
    IdempotencyClaim,
    ListFilter,
    NearMatch,
    RankedPage,
    RecallRequest,
    WriteBatch,
    WriteOutcome,
)
from prism_memory.trigraph.sqlite import checked_rules, rows
from prism_memory.trigraph.sqlite import near_duplicates as sqlite_near
from prism_memory.trigraph.sqlite import note_places as sqlite_note_places
from prism_memory.trigraph.sqlite import recall as sqlite_recall
from prism_memory.trigraph.sqlite import write as sqlite_write
from prism_memory.trigraph.sqlite.conn import SQLiteFile
from prism_memory.trigraph.sqlite.recall_registry import CacheRegistry
from prism_memory.trigraph.sqlite.recall_snapshot import rank_snapshot
from prism_memory.trigraph.sqlite.schema import MIGRATIONS

_KINDS: dict[str, Kind] = {k.value: k for k in Kind}  # a row's kind without Enum()


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
        self.file = SQLiteFile(self.path, synchronous)
        self.caches = CacheRegistry(cache_mb * 1024 * 1024)
        self.segments = segments

    def close(self) -> None:
        self.file.close()

    # -- what else lives in the file -------------------------------------------------

    def hook_failures(self) -> HookFailureCounts:
        """The hooks' failures counted in this file (``hook_failure``)."""
        from prism_memory.trigraph.sqlite.hook_failures import SQLiteHookFailures

        return SQLiteHookFailures(self.file)

    def key_store(self) -> ApiKeyStore:
        """The API keys in this file (``api_key``), on the store's connections."""
        from prism_memory.trigraph.sqlite.keys import SQLiteKeyStore  # the brief path needs no keys

        return SQLiteKeyStore(self.file)

    def ledger(self) -> AuditLedger:
        """The audit ledger of this file (heads, served receipts), on its connections."""
        from prism_memory.trigraph.sqlite.ledger import SQLiteLedger

        return SQLiteLedger(self.file)

    # -- schema ------------------------------------------------------------------------

    def migrate(self, progress: Callable[[int, int], None] | None = None) -> int:
        def run(conn: sqlite3.Connection) -> int:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            pending = [m for m in MIGRATIONS if m[0] not in done]
            for applied, (version, name, statements) in enumerate(pending):
                if progress is not None:
                    progress(applied, len(pending))
                for statement in statements:
                    if callable(statement):
                        statement(conn)
                    else:
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                    (version, name, iso(datetime.now(UTC))),
                )
            if pending and progress is not None:
                progress(len(pending), len(pending))
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
            return int(row[0] or 0)

        return self.file.transaction(run)

    # -- writes ------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        return self.file.transaction(lambda conn: sqlite_write.apply(conn, batch))

    # -- reads -------------------------------------------------------------------------

    def idempotent_result(self, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
        return sqlite_write.claim(self.file.connection(), tenant_id, key)

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        return self.get_many(tenant_id, [memory_id]).get(memory_id)

    def get_many(
        self, tenant_id: UUID, memory_ids: list[UUID]
    ) -> dict[UUID, tuple[Memory, MemoryState]]:
        found = self._current(
            f"{rows.MEMORY_COLUMNS_M}, {rows.STATE_COLUMNS_S}", tenant_id, map(str, memory_ids)
        )
        width = rows.MEMORY_WIDTH
        out = {}
        for row in found:
            memory = rows.memory(row[:width])
            out[memory.id] = (memory, rows.state(row[width:]))
        return out

    def subjects(
        self, tenant_id: UUID, memory_ids: list[str]
    ) -> dict[str, tuple[Kind, str | None]]:
        found = self._current("m.id, m.kind, s.subject", tenant_id, memory_ids)
        return {i: (_KINDS[kind], subject) for i, kind, subject in found}

    def _current(self, columns: str, tenant_id: UUID, memory_ids: Iterable[str]) -> list[Any]:
        """``columns`` of memories (``m``) and their current states (``s``), by id."""
        ids = list(memory_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return (
            self.file.connection()
            .execute(
                f"SELECT {columns} FROM memory m JOIN memory_state s "
                "ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version "
                f"WHERE m.tenant_id = ? AND m.id IN ({marks})",
                (str(tenant_id), *ids),
            )
            .fetchall()
        )

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        found = (
            self.file.connection()
            .execute(
                f"SELECT {rows.STATE_COLUMNS} FROM memory_state "
                "WHERE tenant_id = ? AND memory_id = ? ORDER BY version",
                (str(tenant_id), str(memory_id)),
            )
            .fetchall()
        )
        return [rows.state(r) for r in found]

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Vector | None:
        row = (
            self.file.connection()
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

    def note_places(
        self, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
    ) -> dict[str, NotePlace]:
        if not memory_ids:
            return {}
        return sqlite_note_places.note_places(
            self.file.connection(), tenant_id, project_id, memory_ids, reach
        )

    def near_duplicates(
        self,
        tenant_id: UUID,
        flt: CandidateFilter,
        vector: Vector,
        model: str,
        threshold: float,
        limit: int,
    ) -> list[NearMatch]:
        """Read from ``recall_index`` alone: a write neither loads the project's recall
        cache nor stores a segment (:mod:`prism_memory.trigraph.sqlite.near_duplicates`)."""
        return sqlite_near.near_duplicates(
            self.file.connection(), tenant_id, flt, vector, model, threshold, limit
        )

    def candidates(self, tenant_id: UUID, flt: CandidateFilter, model: str) -> Candidates:
        """The project's cached candidates, brought up to the tenant's clock
        (:func:`prism_memory.trigraph.sqlite.recall.candidates`)."""
        return sqlite_recall.candidates(
            self.file, self.caches, self.segments, tenant_id, flt, model
        )

    def memorules_with_checks(self, tenant_id: UUID, project_id: UUID) -> list[CheckedRule]:
        return checked_rules.memorules_with_checks(self.file.connection(), tenant_id, project_id)

    def list_memories(self, tenant_id: UUID, flt: ListFilter) -> list[tuple[Memory, MemoryState]]:
        columns = f"{rows.MEMORY_COLUMNS_M}, {rows.STATE_COLUMNS_S}"
        query, args = list_query(tenant_id, flt, columns, "?", str)
        found = self.file.connection().execute(query, args).fetchall()
        width = rows.MEMORY_WIDTH
        return [(rows.memory(r[:width]), rows.state(r[width:])) for r in found]

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
        found = (
            self.file.connection()
            .execute(
                f"SELECT {rows.AUDIT_COLUMNS} FROM memorule_audit WHERE {' AND '.join(where)} "
                "ORDER BY seq DESC LIMIT ?",
                (*args, flt.limit),
            )
            .fetchall()
        )
        return [rows.audit(r) for r in found]

    def audit_chain(self, tenant_id: UUID) -> Iterator[MemoruleAudit]:
        cur = self.file.connection().execute(
            f"SELECT {rows.AUDIT_COLUMNS} FROM memorule_audit WHERE tenant_id = ? ORDER BY seq",
            (str(tenant_id),),
        )
        for row in cur:
            yield rows.audit(row)

    def tenants(self) -> list[UUID]:
        found = (
            self.file.connection()
            .execute("SELECT tenant_id FROM memory UNION SELECT tenant_id FROM memorule_audit")
            .fetchall()
        )
        return sorted(UUID(r[0]) for r in found)

    def vector_index(self, build: bool | None = None) -> bool | None:
        """SQLite has no approximate vector index: recall ranks its cache in memory."""
        if build is not None:
            raise InvalidInput(
                [
                    FieldError(
                        "vector_index",
                        "not_supported",
                        "the vector index is a PostgreSQL option (--database-url); SQLite "
                        "ranks in memory and needs none",
                    )
                ]
            )
        return None

    def stats(self, tenant_id: UUID) -> dict[str, int]:
        conn, t = self.file.connection(), str(tenant_id)

        def count(sql: str) -> int:
            return int(conn.execute(sql, (t,)).fetchone()[0])

        return {
            "memories": count("SELECT count(*) FROM memory WHERE tenant_id = ?"),
            "states": count("SELECT count(*) FROM memory_state WHERE tenant_id = ?"),
            "audit_events": count("SELECT count(*) FROM memorule_audit WHERE tenant_id = ?"),
        }

    def stale_vectors(self, model: str, limit: int) -> list[tuple[UUID, UUID, str]]:
        found = (
            self.file.connection()
            .execute(
                "SELECT r.tenant_id, r.memory_id, s.subject, s.body FROM recall_index r "
                "JOIN memory m ON m.tenant_id = r.tenant_id AND m.id = r.memory_id "
                "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version WHERE r.model != ? LIMIT ?",
                (model, limit),
            )
            .fetchall()
        )
        return [(UUID(r[0]), UUID(r[1]), f"{r[2]}\n{r[3]}" if r[2] else r[3]) for r in found]

    def set_vectors(self, tenant_id: UUID, vectors: list[tuple[UUID, Vector]], model: str) -> None:
        def run(conn: sqlite3.Connection) -> None:
            t = str(tenant_id)
            clock = conn.execute(rows.BUMP_CLOCK, (t,)).fetchone()[0]
            conn.executemany(
                "UPDATE recall_index SET model = ?, vector = ?, clock = ? "
                "WHERE tenant_id = ? AND memory_id = ?",
                [
                    (model, np.ascontiguousarray(v, dtype=np.float32).tobytes(), clock, t, str(mid))
                    for mid, v in vectors
                ],
            )

        self.file.transaction(run)

    # -- moving data (prism_memory.trigraph.sqlite.transfer) -------------------------------------

    def dump(self, tenant_id: UUID | None = None) -> Iterator[DumpItem]:
        from prism_memory.trigraph.sqlite import (
            transfer as sqlite_transfer,  # loaded by the commands that move data
        )

        return sqlite_transfer.dump(self.path, tenant_id)

    def load(self, items: Iterable[DumpItem]) -> dict[str, int]:
        from prism_memory.trigraph.sqlite import transfer as sqlite_transfer

        return self.file.transaction(lambda conn: sqlite_transfer.load(conn, items))
