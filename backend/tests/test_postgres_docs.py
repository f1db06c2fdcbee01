"""docs/postgres.md tells the truth: its schema is the migrations', its privilege recipe runs
the service without the right to rewrite history, and its Citus DDL follows Citus's rules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import errors as pgerrors
from psycopg import sql

from prism_memory.bootstrap import build_auth, build_services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import SessionContext
from prism_memory.settings import load_settings
from prism_memory.trigraph.postgres.schema import MIGRATIONS, SCHEMA_MIGRATIONS_DDL
from prism_memory.trigraph.postgres.store import PostgresStore
from tests.pgtest import TestPostgres, with_search_path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "postgres.md"


def block(name: str) -> str:
    """The ```sql block of the docs whose first line is ``-- prism: <name>``."""
    found = re.search(rf"```sql\n-- prism: {name}\n(.*?)```", DOCS.read_text(), re.S)
    assert found, f"docs/postgres.md has no '-- prism: {name}' block"
    return found.group(1)


def statements(text: str) -> list[str]:
    """SQL statements with comments dropped and whitespace normalised."""
    lines = [re.sub(r"--.*$", "", line) for line in text.splitlines()]
    return [" ".join(s.split()) for s in "\n".join(lines).split(";") if s.strip()]


def catalog(conn: psycopg.Connection[Any], schema: str) -> list[tuple[Any, ...]]:
    """Columns, constraints and indexes of ``schema``, with the schema's name left out."""
    columns = conn.execute(
        "SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default "
        "FROM information_schema.columns WHERE table_schema = %s ORDER BY 1, 2",
        (schema,),
    ).fetchall()
    constraints = conn.execute(
        "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) "
        "FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE n.nspname = %s ORDER BY 1, 2",
        (schema,),
    ).fetchall()
    indexes = conn.execute(
        "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1, 2",
        (schema,),
    ).fetchall()
    rows = [*columns, *constraints, *indexes]
    return [tuple(str(v).replace(f"{schema}.", "") for v in row) for row in rows]


def test_the_schema_in_the_docs_is_exactly_what_the_migrations_run() -> None:
    sql_steps = (s for _, _, steps in MIGRATIONS for s in steps if isinstance(s, str))
    expected = [SCHEMA_MIGRATIONS_DDL, *sql_steps]
    assert statements(block("schema")) == [" ".join(s.split()) for s in expected]


@pytest.mark.postgres
def test_the_schema_in_the_docs_applies_and_equals_a_migrated_schema(
    pg_server: TestPostgres,
) -> None:
    (from_docs, docs_url), (migrated, migrated_url) = (pg_server.fresh_schema() for _ in "ab")
    try:
        with psycopg.connect(docs_url, autocommit=True) as conn:
            conn.execute(block("schema").encode())
        store = PostgresStore(migrated_url)
        store.migrate()
        store.close()
        with psycopg.connect(pg_server.url) as conn:
            assert catalog(conn, from_docs) == catalog(conn, migrated)
            assert len(catalog(conn, migrated)) > 90
    finally:
        pg_server.drop_schema(from_docs)
        pg_server.drop_schema(migrated)


@pytest.mark.postgres
def test_the_privilege_recipe_runs_the_service_but_cannot_rewrite_history(
    pg_server: TestPostgres,
) -> None:
    if pg_server.server is None:
        pytest.skip("creates roles: needs the throwaway server's superuser")
    admin_url = pg_server.server.create_database("prism_docs_roles")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(block("setup").encode())

    def as_role(role: str) -> str:
        return with_search_path(admin_url.replace("prism@", f"{role}@"), "prism")

    owner = PostgresStore(as_role("prism_owner"))
    assert owner.migrate() == MIGRATIONS[-1][0]
    owner.close()
    with psycopg.connect(as_role("prism_owner"), autocommit=True) as conn:
        conn.execute(block("grants").encode())

    services = build_services(load_settings(database_url=as_role("prism_app"), embedder="fake"))
    try:
        ctx = SessionContext(new_id(), new_id(), new_id(), persona="donna")
        written = services.memory.writes.remember(
            ctx,
            validate_remember(
                {
                    "kind": "memorule",
                    "memorule_kind": "convention",
                    "subject": "Least privilege",
                    "body": "The service role may append but never rewrite history.",
                    "applies_to": {"scope": "global"},
                    "idempotency_key": "k1",
                }
            ),
        )
        services.memory.lifecycle.update(
            ctx, written.id, {"body": "Appends only, for the service role."}
        )
        services.memory.lifecycle.retire(ctx, written.id, "done")
        services.memory.lifecycle.restore(ctx, written.id, "back")
        assert services.memory.recalls.recall(ctx, validate_recall({"query": "privilege"})).matches
        assert services.memorules.verify_chain(ctx).ok
        auth = build_auth(services)
        issued = auth.create_key(str(ctx.tenant_id), "reader", label="docs")
        assert auth.authenticate(issued.secret).key_id == issued.key.key_id
        assert auth.revoke_key(issued.key.key_id).revoked
    finally:
        services.close()
    with psycopg.connect(as_role("prism_app"), autocommit=True) as conn:
        for statement in (
            "UPDATE memorule_audit SET reason = 'rewritten'",
            "DELETE FROM memorule_audit",
            "UPDATE memory_state SET body = 'rewritten'",
            "DELETE FROM memory",
            "DELETE FROM served_receipt",
            "UPDATE memorule_audit SET content_hash = NULL",
        ):
            with pytest.raises(pgerrors.InsufficientPrivilege):
                conn.execute(statement)


# Stand-ins for Citus's two functions that check what Citus would refuse.
CITUS_STUBS = """
CREATE TABLE {s}.placed (rel regclass PRIMARY KEY, how text NOT NULL, col smallint);
CREATE FUNCTION {s}.create_distributed_table(
    table_name regclass, distribution_column text, colocate_with text DEFAULT 'default'
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    dist smallint;
    r record;
    i int;
BEGIN
    SELECT attnum INTO dist FROM pg_attribute
    WHERE attrelid = table_name AND attname = distribution_column AND NOT attisdropped;
    IF dist IS NULL THEN
        RAISE EXCEPTION '% has no column %', table_name, distribution_column;
    END IF;
    FOR r IN SELECT indexrelid::regclass AS idx, indkey::smallint[] AS cols FROM pg_index
             WHERE indrelid = table_name AND indisunique LOOP
        IF NOT dist = ANY (r.cols) THEN
            RAISE EXCEPTION 'unique index % does not include %', r.idx, distribution_column;
        END IF;
    END LOOP;
    FOR r IN SELECT conname, confrelid::regclass AS ref, conkey, confkey FROM pg_constraint
             WHERE conrelid = table_name AND contype = 'f' LOOP
        IF NOT EXISTS (SELECT 1 FROM {s}.placed WHERE rel = r.ref) THEN
            RAISE EXCEPTION 'foreign key % points at %, not distributed yet', r.conname, r.ref;
        END IF;
        IF (SELECT how FROM {s}.placed WHERE rel = r.ref) = 'distributed' THEN
            i := array_position(r.conkey, dist);
            IF i IS NULL OR r.confkey[i] <> (SELECT col FROM {s}.placed WHERE rel = r.ref) THEN
                RAISE EXCEPTION 'foreign key % does not pair the distribution columns', r.conname;
            END IF;
        END IF;
    END LOOP;
    IF colocate_with <> 'default' AND NOT EXISTS (
        SELECT 1 FROM {s}.placed WHERE rel = colocate_with::regclass AND how = 'distributed'
    ) THEN
        RAISE EXCEPTION '% is colocated with %, not distributed yet', table_name, colocate_with;
    END IF;
    INSERT INTO {s}.placed VALUES (table_name, 'distributed', dist);
END $$;
CREATE FUNCTION {s}.create_reference_table(table_name regclass)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_constraint c LEFT JOIN {s}.placed p ON p.rel = c.confrelid
               WHERE c.conrelid = table_name AND c.contype = 'f'
               AND p.how IS DISTINCT FROM 'reference') THEN
        RAISE EXCEPTION 'reference table % points at a non-reference table', table_name;
    END IF;
    INSERT INTO {s}.placed VALUES (table_name, 'reference', NULL);
END $$;
"""


@pytest.mark.postgres
def test_the_citus_ddl_distributes_every_table_by_tenant_within_citus_rules(
    pg_server: TestPostgres, pg_url: str
) -> None:
    PostgresStore(pg_url).migrate()
    stub, _ = pg_server.fresh_schema()
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            row = conn.execute("SELECT current_schema()").fetchone()
            assert row is not None
            schema = row[0]
            conn.execute(CITUS_STUBS.format(s=sql.Identifier(stub).as_string(conn)).encode())
            conn.execute(
                sql.SQL("SET search_path = {}, {}, public").format(
                    sql.Identifier(schema), sql.Identifier(stub)
                )
            )
            conn.execute(block("citus").encode())
            placed = dict(
                conn.execute(
                    sql.SQL("SELECT rel::text, how FROM {}.placed").format(sql.Identifier(stub))
                ).fetchall()
            )
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
                )
            }
        assert set(placed) == tables
        assert {t for t, how in placed.items() if how == "reference"} == {
            "schema_migrations",
            "api_key",
            "hook_failure",
        }
    finally:
        pg_server.drop_schema(stub)
