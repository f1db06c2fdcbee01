"""SQLite schema migrations, in order. Each runs once, in a transaction, and records itself.

Table names are the TriGraph's: ``memory`` (:Memory), ``memory_state`` (:MemoryState, whose
``memory_id`` column is the HAS_STATE edge), ``memorule_audit`` (:MemoruleAudit). ``recall_index``
is derived: one narrow row per memory with its current vector and filter columns, stamped with
the tenant's change clock (``tenant_clock``) so recall caches fold in only what changed.
``recall_segment`` / ``recall_segment_part`` are derived too: each (tenant, project, model)'s
recall cache saved in bulk-loadable parts (``prism_memory.trigraph.sqlite.recall_segment``), rebuilt
lazily;
dropping them loses nothing. Every key leads with ``tenant_id``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Final

Step = str | Callable[[sqlite3.Connection], None]
_OLD_STATUS_CHECK: Final = "CHECK (status IN ('active', 'retired'))"
_NEW_STATUS_CHECK: Final = "CHECK (status IN ('active', 'retired', 'proposed'))"


def allow_proposed_status(conn: sqlite3.Connection) -> None:
    """Loosen ``memory.status``'s CHECK to admit 'proposed' (no stored row changes).

    Rewrites the table's definition in ``sqlite_master`` and bumps ``schema_version`` so every
    other connection reloads the schema; runs inside the migration's transaction.
    """
    version = int(conn.execute("PRAGMA schema_version").fetchone()[0])
    conn.execute("PRAGMA writable_schema = ON")
    try:
        changed = conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) "
            "WHERE type = 'table' AND name = 'memory' AND instr(sql, ?) > 0",
            (_OLD_STATUS_CHECK, _NEW_STATUS_CHECK, _OLD_STATUS_CHECK),
        ).rowcount
        if changed:
            conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")


MIGRATIONS: Final[list[tuple[int, str, list[Step]]]] = [
    (
        1,
        "trigraph",
        [
            """CREATE TABLE memory (
                tenant_id TEXT NOT NULL,
                id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                namespace TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('note', 'memorule')),
                source_type TEXT NOT NULL CHECK (source_type IN ('memory', 'memorule')),
                status TEXT NOT NULL CHECK (status IN ('active', 'retired')),
                created_at TEXT NOT NULL,
                current_version INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, id)
            ) WITHOUT ROWID""",
            """CREATE TABLE memory_state (
                tenant_id TEXT NOT NULL,
                id TEXT NOT NULL,
                memory_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                memorule_kind TEXT,
                subject TEXT,
                body TEXT NOT NULL,
                applies_to TEXT,
                evidence_signal_id TEXT,
                confidence TEXT,
                written_by_session_id TEXT NOT NULL,
                written_by_persona TEXT,
                written_at TEXT NOT NULL,
                embedding_model TEXT NOT NULL,
                reason TEXT,
                PRIMARY KEY (tenant_id, id),
                UNIQUE (tenant_id, memory_id, version),
                FOREIGN KEY (tenant_id, memory_id) REFERENCES memory (tenant_id, id)
            )""",
            """CREATE TABLE memorule_audit (
                tenant_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                id TEXT NOT NULL,
                memorule_id TEXT NOT NULL,
                state_id TEXT NOT NULL,
                event TEXT NOT NULL,
                written_by_session_id TEXT NOT NULL,
                written_by_persona TEXT,
                evidence_signal_id TEXT,
                written_at TEXT NOT NULL,
                reason TEXT,
                prev_hash TEXT NOT NULL,
                hash TEXT NOT NULL,
                PRIMARY KEY (tenant_id, seq),
                UNIQUE (tenant_id, id),
                FOREIGN KEY (tenant_id, memorule_id) REFERENCES memory (tenant_id, id)
            ) WITHOUT ROWID""",
            "CREATE INDEX memorule_audit_by_memorule "
            "ON memorule_audit (tenant_id, memorule_id, seq)",
            "CREATE INDEX memorule_audit_by_session "
            "ON memorule_audit (tenant_id, written_by_session_id, seq)",
            "CREATE INDEX memorule_audit_by_persona "
            "ON memorule_audit (tenant_id, written_by_persona, seq)",
            """CREATE TABLE recall_index (
                tenant_id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                memory_id TEXT NOT NULL,
                active INTEGER NOT NULL,
                kind TEXT NOT NULL,
                namespace TEXT NOT NULL,
                memorule_kind TEXT,
                confidence TEXT,
                scope TEXT,
                a_persona TEXT,
                a_surface TEXT,
                a_specialization TEXT,
                written_at TEXT NOT NULL,
                model TEXT NOT NULL,
                clock INTEGER NOT NULL,
                vector BLOB NOT NULL,
                UNIQUE (tenant_id, memory_id)
            )""",
            "CREATE INDEX recall_index_by_clock ON recall_index (tenant_id, clock)",
            """CREATE TABLE tenant_clock (
                tenant_id TEXT PRIMARY KEY,
                n INTEGER NOT NULL
            ) WITHOUT ROWID""",
            "CREATE INDEX recall_index_by_project ON recall_index (tenant_id, project_id, active)",
            "CREATE INDEX recall_index_by_scope ON recall_index (tenant_id, scope, active)",
            """CREATE TABLE idempotency (
                tenant_id TEXT NOT NULL,
                key TEXT NOT NULL,
                request_hash TEXT NOT NULL,
                result TEXT NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (tenant_id, key)
            ) WITHOUT ROWID""",
        ],
    ),
    (
        2,
        "api_key",
        [
            # HTTP API keys: only a SHA-256 of the secret is kept; ``key_id`` is public.
            # ``projects`` is a JSON list of project UUIDs (NULL: every project).
            """CREATE TABLE api_key (
                tenant_id TEXT NOT NULL,
                key_id TEXT NOT NULL,
                secret_hash TEXT NOT NULL,
                prefix TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
                projects TEXT,
                persona TEXT,
                label TEXT,
                created_at TEXT NOT NULL,
                revoked_at TEXT,
                PRIMARY KEY (tenant_id, key_id)
            ) WITHOUT ROWID""",
            "CREATE UNIQUE INDEX api_key_by_hash ON api_key (secret_hash)",
            "CREATE UNIQUE INDEX api_key_by_id ON api_key (key_id)",
        ],
    ),
    (
        3,
        "recall_segment",
        [
            # One row per saved segment: the tenant clock it reflects and its JSON head.
            """CREATE TABLE recall_segment (
                tenant_id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                model TEXT NOT NULL,
                clock INTEGER NOT NULL,
                rows INTEGER NOT NULL,
                head TEXT NOT NULL,
                built_at TEXT NOT NULL,
                PRIMARY KEY (tenant_id, project_id, model)
            ) WITHOUT ROWID""",
            # Its parts: raw arrays, vectors in chunks of 1,024 rows.
            """CREATE TABLE recall_segment_part (
                tenant_id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                model TEXT NOT NULL,
                name TEXT NOT NULL,
                chunk INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (tenant_id, project_id, model, name, chunk)
            )""",
            # The changes since a segment, read by clock, are told apart by project and
            # scope without reading the rows (their vectors) of other projects.
            "DROP INDEX recall_index_by_clock",
            "CREATE INDEX recall_index_by_clock "
            "ON recall_index (tenant_id, clock, project_id, scope, memory_id)",
        ],
    ),
    (
        4,
        "audit_content_head_served",
        [
            # Issue 14. Events from now on commit to their state's content; events written
            # before keep NULL ("legacy") and verify as before.
            "ALTER TABLE memorule_audit ADD COLUMN content_hash TEXT",
            "CREATE INDEX memorule_audit_by_state ON memorule_audit (tenant_id, state_id)",
            # The store's own record of each chain's length, kept in the transaction that
            # extends the chain: a deleted tail no longer verifies as a shorter chain.
            """CREATE TABLE audit_head (
                tenant_id TEXT NOT NULL,
                chain TEXT NOT NULL CHECK (chain IN ('memorule_audit', 'served_receipt')),
                seq INTEGER NOT NULL,
                hash TEXT NOT NULL,
                written_at TEXT NOT NULL,
                PRIMARY KEY (tenant_id, chain)
            ) WITHOUT ROWID""",
            "INSERT INTO audit_head SELECT a.tenant_id, 'memorule_audit', a.seq, a.hash, "
            "a.written_at FROM memorule_audit a WHERE a.seq = "
            "(SELECT max(b.seq) FROM memorule_audit b WHERE b.tenant_id = a.tenant_id)",
            # Served receipts: one per memorule version a recall or brief returned, chained.
            """CREATE TABLE served_receipt (
                tenant_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                call_id TEXT NOT NULL,
                served_at TEXT NOT NULL,
                tool TEXT NOT NULL,
                session_id TEXT NOT NULL,
                persona TEXT,
                project_id TEXT NOT NULL,
                memorule_id TEXT NOT NULL,
                state_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                rank INTEGER NOT NULL,
                query_sha256 TEXT NOT NULL,
                key_id TEXT,
                prev_hash TEXT NOT NULL,
                hash TEXT NOT NULL,
                PRIMARY KEY (tenant_id, seq)
            ) WITHOUT ROWID""",
            "CREATE INDEX served_receipt_by_session ON served_receipt (tenant_id, session_id, seq)",
            "CREATE INDEX served_receipt_by_memorule "
            "ON served_receipt (tenant_id, memorule_id, seq)",
        ],
    ),
    (
        5,
        "proposed_status",
        # The review queue (issue 20): a memory may be 'proposed'. SQLite cannot ALTER a CHECK
        # constraint and rebuilding `memory` would break the foreign keys of its children, so
        # the CHECK is loosened in place, as SQLite documents for changes that leave the stored
        # rows valid (lang_altertable.html, "Making Other Kinds Of Table Schema Changes").
        [allow_proposed_status],
    ),
    (
        6,
        "memorule_checks",
        [
            # Issue 28 (DESIGN §12): a memorule version's checks (canonical JSON; NULL: none)
            # and what the PreToolUse guard does on a hit. Both are content: a state with
            # either hashes in the state format 2 (domain.audit); states before keep NULL and
            # 'remind' and hash as before.
            "ALTER TABLE memory_state ADD COLUMN checks TEXT",
            "ALTER TABLE memory_state ADD COLUMN enforcement TEXT NOT NULL DEFAULT 'remind' "
            "CHECK (enforcement IN ('remind', 'ask', 'deny'))",
            # The guard reads the current versions with checks of a project without touching
            # the others (memorules_with_checks): few states carry checks.
            "CREATE INDEX memory_state_with_checks ON memory_state (tenant_id, memory_id, version) "
            "WHERE checks IS NOT NULL",
        ],
    ),
    (
        7,
        "api_key_slugs",
        [
            # Issue 29: the slugs a key's creator typed for its tenant and projects (JSON
            # {"tenant": slug|null, "projects": {uuid: slug}}), which the UUIDs cannot give
            # back. Keys made before keep NULL: listed by UUID, and said so.
            "ALTER TABLE api_key ADD COLUMN slugs TEXT",
        ],
    ),
    (
        8,
        "hook_failure",
        [
            # Issue 29: each client hook's failures (prism_memory.trigraph.hook_failures),
            # counted by the failing hook process, read by /metrics. No tenant: a count per hook.
            """CREATE TABLE hook_failure (
                hook TEXT NOT NULL PRIMARY KEY,
                failures INTEGER NOT NULL,
                last_failed_at TEXT NOT NULL
            ) WITHOUT ROWID""",
        ],
    ),
    (
        9,
        "memory_pinned",
        [
            # Issue 31: an operator's pin (the brief's must-include tier). A flag on the
            # memory, not a version: pinning is an act on the rule, like retiring it, and
            # recorded by a 'pinned'/'unpinned' audit event. Existing memories: not pinned.
            "ALTER TABLE memory ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0 "
            "CHECK (pinned IN (0, 1))",
        ],
    ),
    (
        # 10, not 9: the pinned flag (issue 31) is 9. Pending versions are applied by
        # number, so the order of arrival does not matter.
        10,
        "recall_index_by_kind",
        [
            # A memorule write's near-duplicate check reads its project's active rules of
            # one kind straight from recall_index (sqlite/near_duplicates.py). The project
            # index gains the kind, so the other kinds' rows (and their vectors) are not
            # read; every query on (tenant, project, active) uses its prefix as before.
            "DROP INDEX recall_index_by_project",
            "CREATE INDEX recall_index_by_kind "
            "ON recall_index (tenant_id, project_id, active, memorule_kind)",
        ],
    ),
    (
        11,
        "recall_index_notes_in_order",
        [
            # Recall's neighbour smoothing numbers a project's live notes per namespace in
            # writing order (trigraph/note_places_sql.py): read from this index alone, in
            # its order, without the rows (their vectors) or a sort.
            "CREATE INDEX recall_index_notes_in_order "
            "ON recall_index (tenant_id, project_id, kind, active, namespace, memory_id)",
        ],
    ),
]
