"""Migration 5 (the 'proposed' status) upgrades a store that already holds memories."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from prism_memory.bootstrap import build_services
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.settings import load_settings
from prism_memory.trigraph.sqlite.schema import MIGRATIONS


def test_an_older_sqlite_store_keeps_its_memories_and_accepts_proposals(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    ctx_raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "We use uv",
        "body": "This project uses uv, not pip.",
        "applies_to": {"scope": "project"},
    }
    from prism_memory.bootstrap import context_from

    ctx = context_from(services.settings)
    written = services.memory.writes.remember(ctx, validate_remember(ctx_raw))
    services.close()
    # put the file back to the schema before migration 5, rows and all
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE memory")
    conn.execute(MIGRATIONS[0][2][0])  # migration 1's memory table: status active|retired
    conn.execute(
        "INSERT INTO memory VALUES (?, ?, ?, 'default', 'memorule', 'memorule', 'active', "
        "'2026-12-01T00:00:00.000000Z', 1)",
        (str(ctx.tenant_id), str(written.id), str(ctx.project_id)),
    )
    # migration 9 (memory.pinned) adds its column to the table rebuilt here: run it again
    conn.execute("DELETE FROM schema_migrations WHERE version IN (5, 9)")
    conn.commit()
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE memory SET status = 'proposed'")
    conn.close()

    again = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        assert again.store.migrate() == MIGRATIONS[-1][0]  # 5 and later ones
        memory, state = again.memory.reads.get(ctx, written.id)
        assert (memory.status.value, state.subject) == ("active", "We use uv")
        assert again.memorules.verify_chain(ctx).ok
    finally:
        again.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE memory SET status = 'proposed'")
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


@pytest.mark.postgres
def test_an_older_postgres_store_keeps_its_memories_and_accepts_proposals(pg_url: str) -> None:
    from prism_memory.bootstrap import context_from
    from tests.conftest import raw_sql

    settings = load_settings(database_url=pg_url, embedder="fake")
    services = build_services(settings)
    ctx = context_from(services.settings)
    written = services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "convention",
                "subject": "We use uv",
                "body": "This project uses uv, not pip.",
                "applies_to": {"scope": "project"},
            }
        ),
    )
    # back to the schema before migration 5
    raw_sql(services, "ALTER TABLE memory DROP CONSTRAINT memory_status_check")
    raw_sql(
        services,
        "ALTER TABLE memory ADD CONSTRAINT memory_status_check "
        "CHECK (status IN ('active', 'retired'))",
    )
    raw_sql(services, "DELETE FROM schema_migrations WHERE version = 5")
    services.close()

    again = build_services(settings)
    try:
        from prism_memory.trigraph.postgres import schema as postgres_schema

        assert again.store.migrate() == postgres_schema.MIGRATIONS[-1][0]  # 5 and later ones
        memory, _ = again.memory.reads.get(ctx, written.id)
        assert memory.status.value == "active"
        raw_sql(again, "UPDATE memory SET status = 'proposed'")
        raw_sql(again, "UPDATE memory SET status = 'active'")
    finally:
        again.close()
