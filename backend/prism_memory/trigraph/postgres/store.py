"""The server TriGraph engine: PostgreSQL with pgvector, behind the same port as SQLite.

Connections come from a ``psycopg_pool`` pool (:mod:`~prism_memory.trigraph.postgres.conn`), opened
on
first use, which the key store and the ledger share; reads run in autocommit. A write
(:mod:`~prism_memory.trigraph.postgres.write`) is one pipelined transaction that first bumps the
tenant's ``tenant_clock`` row: its row lock serialises the writes of ONE tenant (the audit
chain is extended by one writer at a time, as SQLite's ``BEGIN IMMEDIATE`` does for the whole
file) while other tenants' writes proceed in parallel. Under READ COMMITTED every statement
after the lock sees what the previous holder committed, so idempotency claims and
expected versions are checked against the latest state.

Recall and the near-duplicate probe rank in the database, one statement each
(:mod:`~prism_memory.trigraph.postgres.ranking`): the process keeps no per-project state, so any
number
of replicas serve any project and a write by any of them is seen by the next recall. Vectors
travel in pgvector's binary format both ways (``%b::vector`` in, binary rows out), never as
text. Rows are built and read in :mod:`~prism_memory.trigraph.postgres.rows`; BM25 postings are
kept in
:mod:`~prism_memory.trigraph.postgres.terms`; dumps and loads live in
:mod:`~prism_memory.trigraph.postgres.transfer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from uuid import UUID

from psycopg import errors as pgerrors

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.neighbours import NotePlace
from prism_memory.domain.records import Kind, MemoruleAudit, Memory, MemoryState
from prism_memory.embeddings.port import Vector
from prism_memory.errors import StorageError
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
from prism_memory.trigraph.postgres import checked_rules, rows
from prism_memory.trigraph.postgres import note_places as postgres_note_places
from prism_memory.trigraph.postgres import preselect as postgres_preselect
from prism_memory.trigraph.postgres import ranking as postgres_ranking
from prism_memory.trigraph.postgres import transfer as postgres_transfer
from prism_memory.trigraph.postgres import write as postgres_write
from prism_memory.trigraph.postgres.conn import Conn, PostgresPool
from prism_memory.trigraph.postgres.schema import (
    MIGRATION_LOCK_KEY,
    MIGRATIONS,
    SCHEMA_MIGRATIONS_DDL,
    VECTOR_INDEX,
    VECTOR_INDEX_DDL,
)

CHAIN_PAGE = 2000
NO_INDEX = 2**62  # index_above when the database has no vector index: never pre-select
VECTOR_INDEX_TTL_S = 30.0


_KINDS: dict[str, Kind] = {k.value: k for k in Kind}  # a row's kind without Enum()


class PostgresStore:
    """The TriGraph on a PostgreSQL database with the ``vector`` extension.

    Args:
        url: a libpq URL or DSN (``postgresql://user:pass@host/db``). A ``search_path`` in
            ``options`` selects the schema the tables live in.
        min_size: connections the pool keeps open.
        max_size: the most connections the pool opens (threads beyond it wait).
        timeout: seconds to wait for a pool connection (and for the first connection).
        index_above: from this many candidates on, recall pre-selects them through the HNSW
            index (:data:`~prism_memory.trigraph.postgres.preselect.INDEX_ABOVE`; 0: always), where
            the
            database has it (``prism migrate --vector-index``; without it every candidate
            is scored).
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        index_above: int = postgres_preselect.INDEX_ABOVE,
    ) -> None:
        self.url = url
        self.pool = PostgresPool(url, min_size=min_size, max_size=max_size, timeout=timeout)
        self.index_above = index_above
        # Projects whose last recall counted index_above candidates or more (a hint for
        # choosing the statement: postgres_ranking.recall).
        self._large: set[tuple[UUID, UUID]] = set()
        # Whether the database has a valid HNSW index, and when that was last looked up
        # (another process may build or drop it: looked up again after VECTOR_INDEX_TTL_S).
        self._vector_index: tuple[bool, float] | None = None

    def __repr__(self) -> str:
        return f"PostgresStore({rows.redact(self.url)!r})"

    def close(self) -> None:
        self.pool.close()

    # -- what else lives in the database ---------------------------------------------

    def hook_failures(self) -> HookFailureCounts:
        """The hooks' failures counted in this database (``hook_failure``)."""
        from prism_memory.trigraph.postgres.hook_failures import PostgresHookFailures

        return PostgresHookFailures(self.pool)

    def key_store(self) -> ApiKeyStore:
        """The API keys in this database (``api_key``), on the store's pool."""
        from prism_memory.trigraph.postgres.keys import PostgresKeyStore

        return PostgresKeyStore(self.pool)

    def ledger(self) -> AuditLedger:
        """The audit ledger of this database (heads, served receipts), on its pool."""
        from prism_memory.trigraph.postgres.ledger import PostgresLedger

        return PostgresLedger(self.pool)

    # -- schema ------------------------------------------------------------------------

    def migrate(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Apply pending migrations (one process at a time); a no-op once up to date.

        An up-to-date schema needs no privilege beyond reading ``schema_migrations``, so a
        runtime role limited to DML can start the service (docs/postgres.md, "Privileges").
        """
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
            if exists is None or exists[0] is None:
                self._run_ddl(conn, 0, "schema_migrations", SCHEMA_MIGRATIONS_DDL)
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            pending = [m for m in MIGRATIONS if m[0] not in done]
            for applied, (version, name, statements) in enumerate(pending):
                if progress is not None:
                    progress(applied, len(pending))
                for step in statements:
                    if isinstance(step, str):
                        self._run_ddl(conn, version, name, step)
                    else:
                        step(conn)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (%s, %s, %s)",
                    (version, name, datetime.now(UTC)),
                )
            if pending and progress is not None:
                progress(len(pending), len(pending))
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
            return int(row[0] or 0) if row else 0

    @staticmethod
    def _run_ddl(conn: Conn, version: int, name: str, statement: str) -> None:
        try:
            conn.execute(statement)
        except pgerrors.InsufficientPrivilege as exc:
            if "EXTENSION" in statement:
                hint = "ask an administrator to run 'CREATE EXTENSION vector' in this database"
            else:
                hint = "run 'prism migrate' as the schema's owner, then start Prism as before"
            raise StorageError(
                f"migration {version} ({name}) needs a privilege this role lacks ({exc}): "
                f"{hint}; see docs/postgres.md"
            ) from exc

    # -- writes ------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        with self.pool.connection() as conn:
            return postgres_write.write(conn, batch)

    # -- reads -------------------------------------------------------------------------

    def idempotent_result(self, tenant_id: UUID, key: str) -> IdempotencyClaim | None:
        with self.pool.connection() as conn:
            return postgres_write.claim(conn, tenant_id, key)

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        return self.get_many(tenant_id, [memory_id]).get(memory_id)

    def get_many(
        self, tenant_id: UUID, memory_ids: list[UUID]
    ) -> dict[UUID, tuple[Memory, MemoryState]]:
        if not memory_ids:
            return {}
        with self.pool.connection() as conn:
            found = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS_M}, {rows.STATE_COLUMNS_S} FROM memory m "
                "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version WHERE m.tenant_id = %s AND m.id = ANY(%s)",
                (tenant_id, list(memory_ids)),
                binary=True,
            ).fetchall()
        out = {}
        for row in found:
            memory = rows.memory(row[: rows.MEMORY_WIDTH])
            out[memory.id] = (memory, rows.state(row[rows.MEMORY_WIDTH :]))
        return out

    def subjects(
        self, tenant_id: UUID, memory_ids: list[str]
    ) -> dict[str, tuple[Kind, str | None]]:
        if not memory_ids:
            return {}
        with self.pool.connection() as conn:
            found = conn.execute(
                "SELECT m.id, m.kind, s.subject FROM memory m JOIN memory_state s "
                "ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version WHERE m.tenant_id = %s AND m.id = ANY(%s)",
                (tenant_id, [UUID(i) for i in memory_ids]),
                binary=True,
            ).fetchall()
        return {str(i): (_KINDS[kind], subject) for i, kind, subject in found}

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        with self.pool.connection() as conn:
            found = conn.execute(
                f"SELECT {rows.STATE_COLUMNS} FROM memory_state "
                "WHERE tenant_id = %s AND memory_id = %s ORDER BY version",
                (tenant_id, memory_id),
            ).fetchall()
        return [rows.state(r) for r in found]

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Vector | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT vector FROM recall_index WHERE tenant_id = %s AND memory_id = %s",
                (tenant_id, memory_id),
                binary=True,
            ).fetchone()
        return rows.vector_from_binary(row[0]) if row else None

    def recall(self, tenant_id: UUID, request: RecallRequest) -> RankedPage:
        with self.pool.connection() as conn:
            above = self.index_above if self._has_vector_index(conn) else NO_INDEX
            return postgres_ranking.recall(conn, tenant_id, request, above, self._large)

    def _has_vector_index(self, conn: Conn) -> bool:
        known = self._vector_index
        now = time.monotonic()
        if known is not None and now - known[1] < VECTOR_INDEX_TTL_S:
            return known[0]
        row = conn.execute(
            "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
            (VECTOR_INDEX,),
        ).fetchone()
        present = bool(row and row[0])
        self._vector_index = (present, now)
        return present

    def vector_index(self, build: bool | None = None) -> bool:
        """Whether the database has the HNSW index large projects' recalls pre-select through
        (``postgres_schema.VECTOR_INDEX_DDL``); ``build`` True builds it (concurrently:
        writes go on meanwhile; minutes for 100k memories), False drops it."""
        with self.pool.connection() as conn:
            if build is True:
                invalid = conn.execute(
                    "SELECT NOT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
                    (VECTOR_INDEX,),
                ).fetchone()
                if invalid and invalid[0]:  # a build that was interrupted: start again
                    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {VECTOR_INDEX}")
                conn.execute(VECTOR_INDEX_DDL)
            elif build is False:
                conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {VECTOR_INDEX}")
            self._vector_index = None
            return self._has_vector_index(conn)

    def note_places(
        self, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
    ) -> dict[str, NotePlace]:
        if not memory_ids:
            return {}
        with self.pool.connection() as conn:
            return postgres_note_places.note_places(conn, tenant_id, project_id, memory_ids, reach)

    def near_duplicates(
        self,
        tenant_id: UUID,
        flt: CandidateFilter,
        vector: Vector,
        model: str,
        threshold: float,
        limit: int,
    ) -> list[NearMatch]:
        with self.pool.connection() as conn:
            return postgres_ranking.near_duplicates(
                conn, tenant_id, flt, vector, model, threshold, limit
            )

    def memorules_with_checks(self, tenant_id: UUID, project_id: UUID) -> list[CheckedRule]:
        with self.pool.connection() as conn:
            return checked_rules.memorules_with_checks(conn, tenant_id, project_id)

    def list_memories(self, tenant_id: UUID, flt: ListFilter) -> list[tuple[Memory, MemoryState]]:
        columns = f"{rows.MEMORY_COLUMNS_M}, {rows.STATE_COLUMNS_S}"
        query, args = list_query(tenant_id, flt, columns, "%s", lambda u: u)
        with self.pool.connection() as conn:
            found = conn.execute(query, args, binary=True).fetchall()
        width = rows.MEMORY_WIDTH
        return [(rows.memory(r[:width]), rows.state(r[width:])) for r in found]

    def audit_events(self, tenant_id: UUID, flt: AuditFilter) -> list[MemoruleAudit]:
        query, args = rows.audit_query(tenant_id, flt)
        with self.pool.connection() as conn:
            found = conn.execute(query, args).fetchall()
        return [rows.audit(r) for r in found]

    def audit_chain(self, tenant_id: UUID) -> Iterator[MemoruleAudit]:
        after = 0
        while True:  # keyset pages: no connection is held between pages
            with self.pool.connection() as conn:
                page = conn.execute(
                    f"SELECT {rows.AUDIT_COLUMNS} FROM memorule_audit "
                    "WHERE tenant_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                    (tenant_id, after, CHAIN_PAGE),
                ).fetchall()
            for row in page:
                yield rows.audit(row)
            if len(page) < CHAIN_PAGE:
                return
            after = int(page[-1][2])

    def tenants(self) -> list[UUID]:
        with self.pool.connection() as conn:
            found = conn.execute(
                "SELECT h.tenant_id FROM tenant_clock h "
                "WHERE EXISTS (SELECT 1 FROM memory m WHERE m.tenant_id = h.tenant_id) "
                "OR EXISTS (SELECT 1 FROM memorule_audit a WHERE a.tenant_id = h.tenant_id)"
            ).fetchall()
        return sorted(r[0] for r in found)

    def stats(self, tenant_id: UUID) -> dict[str, int]:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM memory WHERE tenant_id = %(t)s), "
                "(SELECT count(*) FROM memory_state WHERE tenant_id = %(t)s), "
                "(SELECT count(*) FROM memorule_audit WHERE tenant_id = %(t)s)",
                {"t": tenant_id},
            ).fetchone()
        assert row is not None
        return {"memories": int(row[0]), "states": int(row[1]), "audit_events": int(row[2])}

    def stale_vectors(self, model: str, limit: int) -> list[tuple[UUID, UUID, str]]:
        with self.pool.connection() as conn:
            found = conn.execute(
                "SELECT r.tenant_id, r.memory_id, s.subject, s.body FROM recall_index r "
                "JOIN memory m ON m.tenant_id = r.tenant_id AND m.id = r.memory_id "
                "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
                "AND s.version = m.current_version WHERE r.model != %s LIMIT %s",
                (model, limit),
            ).fetchall()
        return [(r[0], r[1], f"{r[2]}\n{r[3]}" if r[2] else r[3]) for r in found]

    def set_vectors(self, tenant_id: UUID, vectors: list[tuple[UUID, Vector]], model: str) -> None:
        with self.pool.connection() as conn, conn.pipeline(), conn.transaction():
            bumped = conn.execute(rows.BUMP_CLOCK, (tenant_id,)).fetchone()
            clock = int(bumped[0]) if bumped else 0
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE recall_index SET model = %s, vector = %b::vector, clock = %s "
                    "WHERE tenant_id = %s AND memory_id = %s",
                    [(model, v, clock, tenant_id, mid) for mid, v in vectors],
                )

    # -- moving data -------------------------------------------------------------------

    def dump(self, tenant_id: UUID | None = None) -> Iterator[DumpItem]:
        return postgres_transfer.dump(self.pool.connection, tenant_id)

    def load(self, items: Iterable[DumpItem]) -> dict[str, int]:
        with self.pool.connection() as conn, conn.transaction():
            return postgres_transfer.load(conn, items)
