"""The audit ledger on PostgreSQL (migration 4's ``audit_head`` and ``served_receipt``).

Verification reads one REPEATABLE READ snapshot through server-side cursors, so the chain
and its recorded head agree while writers carry on, and 100k events stream without being
held in memory. The SQL returns ids, times and hashes as the text the hash functions read
(``::text``, ISO times formatted in the query): nothing is rebuilt in Python.

Served receipts are appended under the row lock of the tenant's ``served_receipt`` head,
never the tenant's write clock: writing receipts does not invalidate any recall cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC
from typing import Any, Final, TypeVar
from uuid import UUID

import psycopg

from prism_memory.domain.audit import GENESIS_HASH, HASHED_STATE_FIELDS, Head
from prism_memory.domain.records import utcnow
from prism_memory.domain.served import RECEIPT_FIELDS, ServedDraft, ServedReceipt, chain_receipts
from prism_memory.errors import StorageError
from prism_memory.trigraph.ledger import AUDIT_CHAIN, SERVED_CHAIN, EventTally, ServedFilter
from prism_memory.trigraph.postgres.conn import PostgresPool
from prism_memory.trigraph.postgres.rows import utc

Conn = psycopg.Connection[tuple[Any, ...]]

T = TypeVar("T")
ITERSIZE: Final = 5000


def _iso_sql(column: str) -> str:
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"


# The hashed state fields as the text ``domain.audit`` verifies (uuid, jsonb and time as text).
_STATE_AS_TEXT: Final = {
    "memory_id": "s.memory_id::text",
    "id": "s.id::text",
    "applies_to": "s.applies_to::text",
    "written_by_session_id": "s.written_by_session_id::text",
    "written_at": _iso_sql("s.written_at"),
    "checks": "s.checks::text",
}
_EVENTS: Final = (
    "SELECT a.id::text, a.tenant_id::text, a.seq, a.memorule_id::text, a.state_id::text, "
    "a.event, a.written_by_session_id::text, a.written_by_persona, a.evidence_signal_id, "
    f"{_iso_sql('a.written_at')}, a.reason, a.content_hash, a.prev_hash, a.hash, "
    f"{', '.join(_STATE_AS_TEXT.get(name, f's.{name}') for name in HASHED_STATE_FIELDS)}, "
    "m.project_id::text "
    "FROM memorule_audit a LEFT JOIN memory_state s "
    "ON s.tenant_id = a.tenant_id AND s.id = a.state_id "
    "LEFT JOIN memory m ON m.tenant_id = a.tenant_id AND m.id = a.memorule_id "
    "WHERE a.tenant_id = %s ORDER BY a.seq"
)
_LIVE: Final = (
    "SELECT m.id::text, m.kind, m.project_id::text, m.status, m.current_version, "
    "r.memory_id::text, r.project_id::text, r.active, r.kind, r.memorule_kind, r.confidence, "
    "r.scope, r.a_persona, r.a_surface, r.a_specialization, m.pinned FROM memory m "
    "LEFT JOIN recall_index r ON r.tenant_id = m.tenant_id AND r.memory_id = m.id "
    "WHERE m.tenant_id = %s ORDER BY m.id"
)
_UNRECORDED: Final = (
    "SELECT s.id::text, s.memory_id::text, s.version FROM memory_state s JOIN memory m "
    "ON m.tenant_id = s.tenant_id AND m.id = s.memory_id "
    "WHERE s.tenant_id = %s AND m.kind = 'memorule' AND NOT EXISTS "
    "(SELECT 1 FROM memorule_audit a WHERE a.tenant_id = s.tenant_id AND a.state_id = s.id) "
    "ORDER BY s.written_at LIMIT %s"
)
_RECEIPT_TEXT: Final = (
    "tenant_id::text, seq, call_id::text, "
    f"{_iso_sql('served_at')}, tool, session_id::text, persona, project_id::text, "
    "memorule_id::text, state_id::text, version, rank, query_sha256, key_id, prev_hash, hash"
)
RECEIPT_COLUMNS: Final = ", ".join(RECEIPT_FIELDS)
INSERT_RECEIPT: Final = (
    f"INSERT INTO served_receipt ({RECEIPT_COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
# Takes the head row's lock (creating it at genesis first) and returns the head as it was.
_LOCK_HEAD: Final = (
    "INSERT INTO audit_head (tenant_id, chain, seq, hash, written_at) "
    "VALUES (%s, %s, 0, %s, %s) ON CONFLICT (tenant_id, chain) "
    "DO UPDATE SET seq = audit_head.seq RETURNING seq, hash"
)
_SET_HEAD: Final = (
    "UPDATE audit_head SET seq = %s, hash = %s, written_at = %s WHERE tenant_id = %s AND chain = %s"
)


def _head(conn: Conn, tenant: UUID, chain: str) -> Head | None:
    row = conn.execute(
        f"SELECT seq, hash, {_iso_sql('written_at')} FROM audit_head "
        "WHERE tenant_id = %s AND chain = %s",
        (tenant, chain),
    ).fetchone()
    return Head(int(row[0]), row[1], row[2]) if row else None


class _Snapshot:
    def __init__(self, conn: Conn, tenant: UUID) -> None:
        self.conn = conn
        self.tenant = tenant

    def head(self, chain: str) -> Head | None:
        return _head(self.conn, self.tenant, chain)

    def _stream(self, name: str, query: str) -> Iterator[Sequence[Any]]:
        with self.conn.cursor(name=name) as cur:
            cur.itersize = ITERSIZE
            cur.execute(query, (self.tenant,))
            yield from cur

    def events(self) -> Iterator[Sequence[Any]]:
        return self._stream("prism_verify_events", _EVENTS)

    def unrecorded_states(self, limit: int) -> list[tuple[str, str, int]]:
        found = self.conn.execute(_UNRECORDED, (self.tenant, limit)).fetchall()
        return [(r[0], r[1], int(r[2])) for r in found]

    def live(self) -> Iterator[Sequence[Any]]:
        return self._stream("prism_verify_live", _LIVE)

    def receipts(self) -> Iterator[Sequence[Any]]:
        return self._stream(
            "prism_verify_receipts",
            f"SELECT {_RECEIPT_TEXT} FROM served_receipt WHERE tenant_id = %s ORDER BY seq",
        )

    def last_event_seq(self, memorule_id: str) -> int | None:
        row = self.conn.execute(
            "SELECT max(seq) FROM memorule_audit WHERE tenant_id = %s AND memorule_id = %s",
            (self.tenant, UUID(memorule_id)),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else None


def receipt(r: Sequence[Any]) -> ServedReceipt:
    """A receipt row (native types) as a record."""
    return ServedReceipt(
        r[0],
        int(r[1]),
        r[2],
        utc(r[3]),
        r[4],
        r[5],
        r[6],
        r[7],
        r[8],
        r[9],
        int(r[10]),
        int(r[11]),
        r[12],
        r[13],
        r[14],
        r[15],
    )


def receipt_params(r: ServedReceipt) -> tuple[Any, ...]:
    return (
        r.tenant_id,
        r.seq,
        r.call_id,
        r.served_at,
        r.tool,
        r.session_id,
        r.persona,
        r.project_id,
        r.memorule_id,
        r.state_id,
        r.version,
        r.rank,
        r.query_sha256,
        r.key_id,
        r.prev_hash,
        r.hash,
    )


class PostgresLedger:
    """The :class:`~prism_memory.trigraph.ledger.AuditLedger` of a PostgreSQL database.

    Args:
        pool: the connection pool the ledger shares with the TriGraph store.
    """

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool

    def read(self, tenant_id: UUID, work: Callable[[Any], T]) -> T:
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            # Plan the cursors for every row, not a fast first page: a fresh import (no
            # statistics yet) otherwise got a nested loop that scanned memory_state per event
            # (minutes at 100k; the whole-result plan is a hash join, about a second).
            conn.execute("SET LOCAL cursor_tuple_fraction = 1.0")
            return work(_Snapshot(conn, tenant_id))

    def head(self, tenant_id: UUID, chain: str) -> Head | None:
        with self.pool.connection() as conn:
            return _head(conn, tenant_id, chain)

    def append_served(self, tenant_id: UUID, drafts: Sequence[ServedDraft]) -> int:
        if not drafts:
            return 0
        with self.pool.connection() as conn, conn.transaction():
            row = conn.execute(
                _LOCK_HEAD, (tenant_id, SERVED_CHAIN, GENESIS_HASH, utcnow())
            ).fetchone()
            seq, prev = (int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)
            chained = chain_receipts(tenant_id, seq, prev, drafts)
            with conn.cursor() as cur:
                cur.executemany(INSERT_RECEIPT, [receipt_params(r) for r in chained])
            last = chained[-1]
            conn.execute(_SET_HEAD, (last.seq, last.hash, last.served_at, tenant_id, SERVED_CHAIN))
            return last.seq

    def served(self, tenant_id: UUID, flt: ServedFilter) -> list[ServedReceipt]:
        where: list[str] = ["tenant_id = %s"]
        args: list[Any] = [tenant_id]
        for column, value in (
            ("session_id = %s", flt.session_id),
            ("memorule_id = %s", flt.memorule_id),
            ("key_id = %s", flt.key_id),
        ):
            if value is not None:
                where.append(column)
                args.append(value)
        if flt.since is not None:
            where.append("served_at >= %s")
            args.append(flt.since.astimezone(UTC))
        if flt.until is not None:
            where.append("served_at < %s")
            args.append(flt.until.astimezone(UTC))
        if flt.after_seq is not None:
            where.append("seq > %s")
            args.append(flt.after_seq)
        with self.pool.connection() as conn:
            found = conn.execute(
                f"SELECT {RECEIPT_COLUMNS} FROM served_receipt WHERE {' AND '.join(where)} "
                "ORDER BY seq LIMIT %s",
                (*args, flt.limit),
            ).fetchall()
        return [receipt(r) for r in found]

    def tally(self, events: Sequence[str], since: dict[str, int]) -> EventTally:
        counts: dict[str, int] = {}
        try:
            with self.pool.connection() as conn, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                heads = {
                    str(t): int(seq)
                    for t, seq in conn.execute(
                        "SELECT tenant_id, seq FROM audit_head WHERE chain = %s", (AUDIT_CHAIN,)
                    ).fetchall()
                }
                for tenant, head in heads.items():
                    if head <= since.get(tenant, 0):
                        continue  # nothing appended (or a cut chain: verify reports that)
                    rows = conn.execute(
                        "SELECT event, count(*) FROM memorule_audit WHERE tenant_id = %s "
                        "AND seq > %s AND seq <= %s AND event = ANY(%s) GROUP BY event",
                        (UUID(tenant), since.get(tenant, 0), head, list(events)),
                    ).fetchall()
                    for event, n in rows:
                        counts[str(event)] = counts.get(str(event), 0) + int(n)
        except psycopg.Error as exc:
            raise StorageError(f"cannot count audit events: {exc}") from exc
        return EventTally(counts, heads)
