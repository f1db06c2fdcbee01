"""Shared fixtures: real engines on temp files, the fake embedder unless a test asks for the model.

``engine`` is the parametrised storage engine; the contract suites run once per engine.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.bootstrap import Services, build_services
from app.domain.ids import new_id, uuid_for
from app.domain.records import SessionContext
from app.settings import Settings, load_settings
from tests.pgtest import TestPostgres

ContextFactory = Callable[..., SessionContext]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "prism.db"


PG_STARTED = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def pg_server(pytestconfig: pytest.Config) -> Iterator[TestPostgres]:
    """The session's PostgreSQL (throwaway, or ``$PRISM_TEST_DATABASE_URL``).

    Where it cannot start the PostgreSQL tests are skipped, except in CI (``CI=true``),
    where nothing may be skipped on PostgreSQL: they fail.
    """
    try:
        server = TestPostgres.start()
        pytestconfig.stash[PG_STARTED] = server.describe()
    except Exception as exc:
        message = f"PostgreSQL is unavailable: {type(exc).__name__}: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    # A SIGTERM (a `timeout`, a cancelled job) becomes an interrupt, so pytest still tears
    # the server down instead of leaving it running.
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_DFL and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield server
    finally:
        server.close()
        if signal.getsignal(signal.SIGTERM) is _interrupt:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
def pg_url(pg_server: TestPostgres) -> Iterator[str]:
    """A URL into a fresh, empty schema of the session's PostgreSQL."""
    schema, url = pg_server.fresh_schema()
    try:
        yield url
    finally:
        pg_server.drop_schema(schema)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine_settings(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Settings]:
    """Settings for a fresh, empty store on each engine."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        yield load_settings(database_url=url, embedder="fake")
    else:  # an empty URL overrides a PRISM_DATABASE_URL the developer may have set
        yield load_settings(db=db_path, embedder="fake", database_url="")


@pytest.fixture
def services(engine_settings: Settings) -> Iterator[Services]:
    svc = build_services(engine_settings)
    try:
        yield svc
    finally:
        svc.close()


@pytest.fixture
def make_ctx() -> ContextFactory:
    """Build a session context from slugs: ``make_ctx(tenant="a", project="p", persona=...)``."""

    def build(
        tenant: str = "acme",
        project: str = "api",
        persona: str | None = None,
        surface: str | None = None,
        specialization: str | None = None,
        session_id: UUID | None = None,
    ) -> SessionContext:
        return SessionContext(
            tenant_id=uuid_for("tenant", tenant),
            project_id=uuid_for("project", project),
            session_id=session_id or new_id(),
            persona=persona,
            surface=surface,
            specialization=specialization,
        )

    return build


@pytest.fixture
def ctx(make_ctx: ContextFactory) -> SessionContext:
    return make_ctx(persona="donna")


def raw_sql(services: Services, sql: str, params: tuple[object, ...] = ()) -> None:
    """Run SQL behind the services' back (tamper tests), on whichever engine they use.

    Write ``?`` placeholders; they become ``%s`` on PostgreSQL.
    """
    url = services.settings.database_url
    if url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.replace("?", "%s").encode(), params)  # type: ignore[call-overload]
        return
    import sqlite3

    conn = sqlite3.connect(services.settings.db_path())
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say which PostgreSQL the session used and how long it took to start."""
    if PG_STARTED in config.stash:
        terminalreporter.write_line(config.stash[PG_STARTED])
