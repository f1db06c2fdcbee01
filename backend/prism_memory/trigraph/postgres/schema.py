"""PostgreSQL schema migrations, in order. Each runs once, in a transaction, and records itself.

The tables mirror :mod:`prism_memory.trigraph.sqlite.schema` (the TriGraph's names: ``memory``,
``memory_state``, ``memorule_audit``; ``recall_index`` is derived) with native types: ``uuid``,
``timestamptz`` (microseconds, like the ISO text SQLite keeps), ``jsonb`` and pgvector's
``vector``. Every primary key, unique key, foreign key and index leads with ``tenant_id``, so a
distributed PostgreSQL (Citus) shards every table by tenant and co-locates a tenant's rows
(``docs/postgres.md`` has the DDL).

``tenant_clock`` holds one row per tenant; every write upserts it first, taking its row lock,
which serialises the writes of one tenant (the audit chain stays linear) while other tenants'
writes go on in parallel. Its counter ``n`` is the tenant's change clock: a write stamps the
``recall_index`` rows it touches with the new value (recall ranks in the database and does not
read it; the stamps say when a row last changed).

The ``vector`` column has no fixed dimension: a row keeps the vector of the model named in its
``model`` column, and ``prism reindex`` to a model of another dimension needs no DDL. Recall
ranks in the database (:mod:`~prism_memory.trigraph.postgres.ranking`): an exact scan of the
project's
visible rows, and BM25 from ``recall_term`` (migration 3;
:mod:`~prism_memory.trigraph.postgres.terms`).

A migration step is a SQL statement or, where the data needs Python (tokenising), a function
of the migration's connection; both run in the migration's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import psycopg

from prism_memory.trigraph.postgres.terms import backfill as backfill_terms

Step = str | Callable[[psycopg.Connection[tuple[Any, ...]]], None]

# Serialises concurrent `migrate()` calls across processes (an arbitrary, fixed key).
MIGRATION_LOCK_KEY: Final = 0x7072_6973_6D00  # "prism\0"

SCHEMA_MIGRATIONS_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)"
)

# What recall reads of a row besides its vector (migration 6's covering indexes).
_RECALL_COLUMNS: Final = (
    "doc_len, kind, namespace, memorule_kind, confidence, a_persona, a_surface, a_specialization"
)

MIGRATIONS: Final[list[tuple[int, str, list[Step]]]] = [
    (
        1,
        "trigraph",
        [
            "CREATE EXTENSION IF NOT EXISTS vector",
            """CREATE TABLE tenant_clock (
                tenant_id uuid NOT NULL,
                n bigint NOT NULL,
                PRIMARY KEY (tenant_id)
            )""",
            """CREATE TABLE memory (
                tenant_id uuid NOT NULL,
                id uuid NOT NULL,
                project_id uuid NOT NULL,
                namespace text NOT NULL,
                kind text NOT NULL CHECK (kind IN ('note', 'memorule')),
                source_type text NOT NULL CHECK (source_type IN ('memory', 'memorule')),
                status text NOT NULL CHECK (status IN ('active', 'retired')),
                created_at timestamptz NOT NULL,
                current_version integer NOT NULL,
                PRIMARY KEY (tenant_id, id)
            )""",
            """CREATE TABLE memory_state (
                tenant_id uuid NOT NULL,
                id uuid NOT NULL,
                memory_id uuid NOT NULL,
                version integer NOT NULL,
                memorule_kind text,
                subject text,
                body text NOT NULL,
                applies_to jsonb,
                evidence_signal_id text,
                confidence text,
                written_by_session_id uuid NOT NULL,
                written_by_persona text,
                written_at timestamptz NOT NULL,
                embedding_model text NOT NULL,
                reason text,
                PRIMARY KEY (tenant_id, id),
                UNIQUE (tenant_id, memory_id, version),
                FOREIGN KEY (tenant_id, memory_id) REFERENCES memory (tenant_id, id)
            )""",
            """CREATE TABLE memorule_audit (
                tenant_id uuid NOT NULL,
                seq bigint NOT NULL,
                id uuid NOT NULL,
                memorule_id uuid NOT NULL,
                state_id uuid NOT NULL,
                event text NOT NULL,
                written_by_session_id uuid NOT NULL,
                written_by_persona text,
                evidence_signal_id text,
                written_at timestamptz NOT NULL,
                reason text,
                prev_hash text NOT NULL,
                hash text NOT NULL,
                PRIMARY KEY (tenant_id, seq),
                UNIQUE (tenant_id, id),
                FOREIGN KEY (tenant_id, memorule_id) REFERENCES memory (tenant_id, id)
            )""",
            "CREATE INDEX memorule_audit_by_memorule "
            "ON memorule_audit (tenant_id, memorule_id, seq)",
            "CREATE INDEX memorule_audit_by_session "
            "ON memorule_audit (tenant_id, written_by_session_id, seq)",
            "CREATE INDEX memorule_audit_by_persona "
            "ON memorule_audit (tenant_id, written_by_persona, seq)",
            """CREATE TABLE recall_index (
                tenant_id uuid NOT NULL,
                memory_id uuid NOT NULL,
                project_id uuid NOT NULL,
                active boolean NOT NULL,
                kind text NOT NULL,
                namespace text NOT NULL,
                memorule_kind text,
                confidence text,
                scope text,
                a_persona text,
                a_surface text,
                a_specialization text,
                written_at timestamptz NOT NULL,
                model text NOT NULL,
                clock bigint NOT NULL,
                vector vector NOT NULL,
                PRIMARY KEY (tenant_id, memory_id),
                FOREIGN KEY (tenant_id, memory_id) REFERENCES memory (tenant_id, id)
            )""",
            "CREATE INDEX recall_index_by_clock ON recall_index (tenant_id, clock)",
            "CREATE INDEX recall_index_by_project "
            "ON recall_index (tenant_id, project_id) WHERE active",
            "CREATE INDEX recall_index_by_scope "
            "ON recall_index (tenant_id, scope) WHERE active AND scope IN ('global', 'org')",
            """CREATE TABLE idempotency (
                tenant_id uuid NOT NULL,
                key text NOT NULL,
                request_hash text NOT NULL,
                result jsonb NOT NULL,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (tenant_id, key)
            )""",
        ],
    ),
    (
        2,
        "api_key",
        [
            # HTTP API keys: only a SHA-256 of the secret is kept; ``key_id`` is public.
            # ``projects`` lists project UUIDs (NULL: every project). A key is looked up by
            # its hash before its tenant is known, so on Citus this is a reference table.
            """CREATE TABLE api_key (
                tenant_id uuid NOT NULL,
                key_id text NOT NULL,
                secret_hash text NOT NULL,
                prefix text NOT NULL,
                role text NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
                projects jsonb,
                persona text,
                label text,
                created_at timestamptz NOT NULL,
                revoked_at timestamptz,
                PRIMARY KEY (tenant_id, key_id)
            )""",
            "CREATE UNIQUE INDEX api_key_by_hash ON api_key (secret_hash)",
            "CREATE UNIQUE INDEX api_key_by_id ON api_key (key_id)",
        ],
    ),
    (
        3,
        "recall_ranking",
        [
            # BM25 in SQL: each document's length, and one posting per (memory, term) with
            # the columns recall's two visibility branches filter on (postgres_terms).
            "ALTER TABLE recall_index ADD COLUMN doc_len integer",
            """CREATE TABLE recall_term (
                tenant_id uuid NOT NULL,
                memory_id uuid NOT NULL,
                term text NOT NULL,
                tf integer NOT NULL,
                doc_len integer NOT NULL,
                project_id uuid NOT NULL,
                shared boolean NOT NULL,
                active boolean NOT NULL,
                PRIMARY KEY (tenant_id, memory_id, term),
                FOREIGN KEY (tenant_id, memory_id) REFERENCES recall_index (tenant_id, memory_id)
            )""",
            "CREATE INDEX recall_term_by_project ON recall_term (tenant_id, project_id, term) "
            "INCLUDE (memory_id, tf, doc_len) WHERE active",
            "CREATE INDEX recall_term_by_shared ON recall_term (tenant_id, term) "
            "INCLUDE (project_id, memory_id, tf, doc_len) WHERE active AND shared",
            backfill_terms,
            "ALTER TABLE recall_index ALTER COLUMN doc_len SET NOT NULL",
        ],
    ),
    (
        4,
        "audit_content_head_served",
        [
            # Issue 14: see prism_memory.trigraph.sqlite.schema, migration 4.
            "ALTER TABLE memorule_audit ADD COLUMN content_hash text",
            "CREATE INDEX memorule_audit_by_state ON memorule_audit (tenant_id, state_id)",
            """CREATE TABLE audit_head (
                tenant_id uuid NOT NULL,
                chain text NOT NULL CHECK (chain IN ('memorule_audit', 'served_receipt')),
                seq bigint NOT NULL,
                hash text NOT NULL,
                written_at timestamptz NOT NULL,
                PRIMARY KEY (tenant_id, chain)
            )""",
            "INSERT INTO audit_head SELECT DISTINCT ON (tenant_id) tenant_id, 'memorule_audit', "
            "seq, hash, written_at FROM memorule_audit ORDER BY tenant_id, seq DESC",
            """CREATE TABLE served_receipt (
                tenant_id uuid NOT NULL,
                seq bigint NOT NULL,
                call_id uuid NOT NULL,
                served_at timestamptz NOT NULL,
                tool text NOT NULL,
                session_id uuid NOT NULL,
                persona text,
                project_id uuid NOT NULL,
                memorule_id uuid NOT NULL,
                state_id uuid NOT NULL,
                version integer NOT NULL,
                rank integer NOT NULL,
                query_sha256 text NOT NULL,
                key_id text,
                prev_hash text NOT NULL,
                hash text NOT NULL,
                PRIMARY KEY (tenant_id, seq)
            )""",
            "CREATE INDEX served_receipt_by_session ON served_receipt (tenant_id, session_id, seq)",
            "CREATE INDEX served_receipt_by_memorule "
            "ON served_receipt (tenant_id, memorule_id, seq)",
        ],
    ),
    (
        5,
        "proposed_status",
        # The review queue (issue 20): a memory may be 'proposed' (never recalled).
        [
            "ALTER TABLE memory DROP CONSTRAINT memory_status_check",
            "ALTER TABLE memory ADD CONSTRAINT memory_status_check "
            "CHECK (status IN ('active', 'retired', 'proposed'))",
        ],
    ),
    (
        6,
        "recall_preselect_index",
        # Large projects (issue 13; postgres_ranking, "Large projects"): the two visibility
        # indexes carry every column recall's filters, BM25 statistics and applicability
        # read, so those come from index-only scans without the rows' vectors. The HNSW
        # index that pre-selects a large project's nearest rows is not made here: it costs
        # every write (VECTOR_INDEX_DDL below), so an operator opts in with
        # ``prism migrate --vector-index``.
        [
            "DROP INDEX recall_index_by_project",
            f"CREATE INDEX recall_index_by_project ON recall_index (tenant_id, project_id) "
            f"INCLUDE (memory_id, scope, {_RECALL_COLUMNS}) WHERE active",
            "DROP INDEX recall_index_by_scope",
            f"CREATE INDEX recall_index_by_scope ON recall_index (tenant_id, scope) "
            f"INCLUDE (project_id, memory_id, {_RECALL_COLUMNS}) "
            "WHERE active AND scope IN ('global', 'org')",
        ],
    ),
    (
        7,
        "memorule_checks",
        [
            # Issue 28 (DESIGN §12): a memorule version's checks (NULL: none) and what the
            # PreToolUse guard does on a hit; both content, hashed in the state format 2
            # (domain.audit) when present. Earlier states keep NULL / 'remind'.
            "ALTER TABLE memory_state ADD COLUMN checks jsonb",
            "ALTER TABLE memory_state ADD COLUMN enforcement text NOT NULL DEFAULT 'remind' "
            "CHECK (enforcement IN ('remind', 'ask', 'deny'))",
            # memorules_with_checks reads only the few states that carry checks.
            "CREATE INDEX memory_state_with_checks ON memory_state (tenant_id, memory_id, version) "
            "WHERE checks IS NOT NULL",
        ],
    ),
    (
        8,
        "api_key_slugs",
        [
            # Issue 29: see prism_memory.trigraph.sqlite.schema, migration 7 (NULL: a key made
            # before slugs were stored).
            "ALTER TABLE api_key ADD COLUMN slugs jsonb",
        ],
    ),
    (
        9,
        "hook_failure",
        [
            # Issue 29: see prism_memory.trigraph.sqlite.schema, migration 8. No tenant (a
            # count per hook): on Citus a reference table, like api_key.
            """CREATE TABLE hook_failure (
                hook text PRIMARY KEY,
                failures bigint NOT NULL,
                last_failed_at timestamptz NOT NULL
            )""",
        ],
    ),
    (
        10,
        "memory_pinned",
        [
            # Issue 31: see prism_memory.trigraph.sqlite.schema, migration 9 (an operator's
            # pin; existing memories: not pinned).
            "ALTER TABLE memory ADD COLUMN pinned boolean NOT NULL DEFAULT false",
        ],
    ),
    (
        11,
        "recall_index_notes_in_order",
        [
            # See prism_memory.trigraph.sqlite.schema, migration 11: the project's notes
            # per namespace in writing order, for recall's neighbour smoothing. Not partial
            # to live rows: postgres/note_places.py tests liveness from the included column,
            # so the planner cannot take the project index (partial to live rows) instead,
            # as it did on a table without statistics (30 ms, not 1, at 2,000 notes).
            "CREATE INDEX recall_index_notes_in_order "
            "ON recall_index (tenant_id, project_id, kind, namespace, memory_id) INCLUDE (active)",
        ],
    ),
]

# The HNSW index on the 384-d vectors (pgvector's inner product) through which recall
# pre-selects a large project's nearest rows (postgres_ranking, "Large projects"). The
# vector column has no fixed dimension, so the index is on its cast to vector(384), partial
# to the live rows of that dimension. Opt-in: it makes every write update a graph (a
# memorule write 3.8 ms instead of 1.2 ms at 10k rows, 16.6 instead of 3.2 at 100k), which
# only pays where projects reach tens of thousands of memories. Built CONCURRENTLY (writes
# go on meanwhile), so outside a transaction: ``prism migrate --vector-index``.
VECTOR_INDEX: Final = "recall_index_by_vector_384"
VECTOR_INDEX_DDL: Final = (
    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {VECTOR_INDEX} ON recall_index "
    "USING hnsw ((vector::vector(384)) vector_ip_ops) "
    "WHERE active AND vector_dims(vector) = 384"
)

# The tables in dependency order (referenced first): what Citus distributes by tenant_id.
TENANT_TABLES: Final = (
    "tenant_clock",
    "memory",
    "memory_state",
    "memorule_audit",
    "recall_index",
    "recall_term",
    "idempotency",
    "audit_head",
    "served_receipt",
)
