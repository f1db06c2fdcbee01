"""The audit ledger on the embedded engine (migration 4's ``audit_head`` and ``served_receipt``).

It shares the TriGraph store's :class:`~prism_memory.trigraph.sqlite.conn.SQLiteFile`: its
per-thread
connections and ``BEGIN IMMEDIATE`` transactions. Verification reads run in one read
transaction (one WAL snapshot), so a chain and its recorded head always agree while writers
carry on. Rows come back as the text SQLite stores (ids, ISO times), exactly what the hash
functions read: nothing is rebuilt.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar
from uuid import UUID

from prism_memory.domain.audit import GENESIS_HASH, HASHED_STATE_FIELDS, Head
from prism_memory.domain.records import iso, parse_iso
from prism_memory.domain.served import RECEIPT_FIELDS, ServedDraft, ServedReceipt, chain_receipts
from prism_memory.errors import StorageError
from prism_memory.trigraph.ledger import AUDIT_CHAIN, SERVED_CHAIN, EventTally, ServedFilter
from prism_memory.trigraph.sqlite.conn import SQLiteFile

T = TypeVar("T")
_EVENTS: Final = (
    "SELECT a.id, a.tenant_id, a.seq, a.memorule_id, a.state_id, a.event, "
    "a.written_by_session_id, a.written_by_persona, a.evidence_signal_id, a.written_at, "
    "a.reason, a.content_hash, a.prev_hash, a.hash, "
    f"{', '.join(f's.{name}' for name in HASHED_STATE_FIELDS)}, "
    "m.project_id "
    "FROM memorule_audit a LEFT JOIN memory_state s "
    "ON s.tenant_id = a.tenant_id AND s.id = a.state_id "
    "LEFT JOIN memory m ON m.tenant_id = a.tenant_id AND m.id = a.memorule_id "
    "WHERE a.tenant_id = ? ORDER BY a.seq"
)
_LIVE: Final = (
    "SELECT m.id, m.kind, m.project_id, m.status, m.current_version, r.memory_id, "
    "r.project_id, r.active, r.kind, r.memorule_kind, r.confidence, r.scope, r.a_persona, "
    "r.a_surface, r.a_specialization, m.pinned FROM memory m LEFT JOIN recall_index r "
    "ON r.tenant_id = m.tenant_id AND r.memory_id = m.id WHERE m.tenant_id = ? ORDER BY m.id"
)
_UNRECORDED: Final = (
    "SELECT s.id, s.memory_id, s.version FROM memory_state s JOIN memory m "
    "ON m.tenant_id = s.tenant_id AND m.id = s.memory_id "
    "WHERE s.tenant_id = ? AND m.kind = 'memorule' AND NOT EXISTS "
    "(SELECT 1 FROM memorule_audit a WHERE a.tenant_id = s.tenant_id AND a.state_id = s.id) "
    "ORDER BY s.written_at LIMIT ?"
)
RECEIPT_COLUMNS: Final = ", ".join(RECEIPT_FIELDS)
INSERT_RECEIPT: Final = (
    f"INSERT INTO served_receipt ({RECEIPT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
UPSERT_HEAD: Final = (
    "INSERT INTO audit_head VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, chain) DO UPDATE "
    "SET seq = excluded.seq, hash = excluded.hash, written_at = excluded.written_at"
)


class _Snapshot:
    def __init__(self, conn: sqlite3.Connection, tenant: str) -> None:
        self.conn = conn
        self.tenant = tenant

    def head(self, chain: str) -> Head | None:
        return read_head(self.conn, self.tenant, chain)

    def events(self) -> Iterator[Sequence[Any]]:
        return iter(self.conn.execute(_EVENTS, (self.tenant,)))

    def unrecorded_states(self, limit: int) -> list[tuple[str, str, int]]:
        return [tuple(r) for r in self.conn.execute(_UNRECORDED, (self.tenant, limit))]

    def live(self) -> Iterator[Sequence[Any]]:
        return iter(self.conn.execute(_LIVE, (self.tenant,)))

    def receipts(self) -> Iterator[Sequence[Any]]:
        return iter(
            self.conn.execute(
                f"SELECT {RECEIPT_COLUMNS} FROM served_receipt WHERE tenant_id = ? ORDER BY seq",
                (self.tenant,),
            )
        )

    def last_event_seq(self, memorule_id: str) -> int | None:
        row = self.conn.execute(
            "SELECT max(seq) FROM memorule_audit WHERE tenant_id = ? AND memorule_id = ?",
            (self.tenant, memorule_id),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else None


def read_head(conn: sqlite3.Connection, tenant: str, chain: str) -> Head | None:
    row = conn.execute(
        "SELECT seq, hash, written_at FROM audit_head WHERE tenant_id = ? AND chain = ?",
        (tenant, chain),
    ).fetchone()
    return Head(int(row[0]), row[1], row[2]) if row else None


def receipt(r: Sequence[Any]) -> ServedReceipt:
    """A stored receipt row as a record."""
    return ServedReceipt(
        UUID(r[0]),
        int(r[1]),
        UUID(r[2]),
        parse_iso(r[3]),
        r[4],
        UUID(r[5]),
        r[6],
        UUID(r[7]),
        UUID(r[8]),
        UUID(r[9]),
        int(r[10]),
        int(r[11]),
        r[12],
        r[13],
        r[14],
        r[15],
    )


class SQLiteLedger:
    """The :class:`~prism_memory.trigraph.ledger.AuditLedger` of one SQLite file.

    Args:
        file: the database file (and connections) the ledger shares with the TriGraph store.
    """

    def __init__(self, file: SQLiteFile) -> None:
        self.file = file

    def read(self, tenant_id: UUID, work: Callable[[Any], T]) -> T:
        conn = self.file.connection()
        conn.execute("BEGIN")  # one snapshot: the heads and the rows agree
        try:
            return work(_Snapshot(conn, str(tenant_id)))
        finally:
            conn.execute("COMMIT")

    def head(self, tenant_id: UUID, chain: str) -> Head | None:
        return read_head(self.file.connection(), str(tenant_id), chain)

    def append_served(self, tenant_id: UUID, drafts: Sequence[ServedDraft]) -> int:
        t = str(tenant_id)

        def run(conn: sqlite3.Connection) -> int:
            head = read_head(conn, t, SERVED_CHAIN)
            seq, prev = (head.seq, head.hash) if head else (0, GENESIS_HASH)
            chained = chain_receipts(tenant_id, seq, prev, drafts)
            conn.executemany(INSERT_RECEIPT, [r.row() for r in chained])
            last = chained[-1]
            conn.execute(UPSERT_HEAD, (t, SERVED_CHAIN, last.seq, last.hash, iso(last.served_at)))
            return last.seq

        return self.file.transaction(run) if drafts else 0

    def served(self, tenant_id: UUID, flt: ServedFilter) -> list[ServedReceipt]:
        where: list[str] = ["tenant_id = ?"]
        args: list[Any] = [str(tenant_id)]
        for column, value in (
            ("session_id = ?", flt.session_id),
            ("memorule_id = ?", flt.memorule_id),
            ("key_id = ?", flt.key_id),
        ):
            if value is not None:
                where.append(column)
                args.append(str(value))
        if flt.since is not None:
            where.append("served_at >= ?")
            args.append(iso(flt.since))
        if flt.until is not None:
            where.append("served_at < ?")
            args.append(iso(flt.until))
        if flt.after_seq is not None:
            where.append("seq > ?")
            args.append(flt.after_seq)
        rows = (
            self.file.connection()
            .execute(
                f"SELECT {RECEIPT_COLUMNS} FROM served_receipt WHERE {' AND '.join(where)} "
                "ORDER BY seq LIMIT ?",
                (*args, flt.limit),
            )
            .fetchall()
        )
        return [receipt(r) for r in rows]

    def tally(self, events: Sequence[str], since: dict[str, int]) -> EventTally:
        marks = ", ".join("?" for _ in events)
        count = (
            "SELECT event, count(*) FROM memorule_audit WHERE tenant_id = ? AND seq > ? "
            f"AND seq <= ? AND event IN ({marks}) GROUP BY event"
        )
        counts: dict[str, int] = {}
        try:
            conn = self.file.connection()
            conn.execute("BEGIN")  # the heads and the counted rows agree
            try:
                heads = {
                    str(t): int(seq)
                    for t, seq in conn.execute(
                        "SELECT tenant_id, seq FROM audit_head WHERE chain = ?", (AUDIT_CHAIN,)
                    )
                }
                for tenant, head in heads.items():
                    if head <= since.get(tenant, 0):
                        continue  # nothing appended (or a cut chain: verify reports that)
                    for event, n in conn.execute(
                        count, (tenant, since.get(tenant, 0), head, *events)
                    ):
                        counts[str(event)] = counts.get(str(event), 0) + int(n)
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot count audit events: {exc}") from exc
        return EventTally(counts, heads)
