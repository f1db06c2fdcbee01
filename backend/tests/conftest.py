"""Shared fixtures: real engines on temp files, the fake embedder unless a test asks for the model.

``engine`` is the parametrised storage engine; the contract suites run once per engine.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_services
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import SessionContext
from prism_memory.settings import Settings, load_settings
from tests.pgserver import ThrowawayPostgres
from tests.pgtest import TestPostgres

ContextFactory = Callable[..., SessionContext]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "prism.db"


PG_STARTED = pytest.StashKey[str]()
PG_SHARE = pytest.StashKey[Path]()
SHARE_KEY = "prism_pg_share"  # in each xdist worker's workerinput: the shared directory


# -- one PostgreSQL for the whole run, also when pytest-xdist runs the tests in workers ---------
# The controller makes a directory for the run and hands its path to every worker. The first
# worker that needs PostgreSQL starts it, under a lock in that directory, and writes its URL
# there (or why it could not start); the others read it. The server outlives that worker
# (it runs in its own session); the controller stops it when the run ends, and .ci/run kills
# what a killed run left in its TMPDIR. Without workers the session fixture starts and
# stops the server itself, as before.


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    config.stash[PG_SHARE] = Path(tempfile.mkdtemp(prefix="prism-pgshare-"))
    # SIGTERM (a `timeout`, a cancelled job) becomes an interrupt: pytest still unconfigures.
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(pytest-xdist, controller) Tell each worker where the run's PostgreSQL is described."""
    node.workerinput[SHARE_KEY] = str(node.config.stash[PG_SHARE])


def pytest_unconfigure(config: pytest.Config) -> None:
    """(controller) Stop the PostgreSQL a worker started for the run; remove the directory."""
    share = config.stash.get(PG_SHARE, None)
    if share is None:
        return
    try:
        state = _shared_state(share)
        if state is not None and "server" in state:
            ThrowawayPostgres.taken_over(state["server"]).stop()
    finally:
        shutil.rmtree(share, ignore_errors=True)


def _shared_state(share: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads((share / "state.json").read_text())
    except FileNotFoundError:
        return None
    return state


@contextlib.contextmanager
def _locked(share: Path) -> Iterator[None]:
    with (share / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _shared_postgres(share: Path) -> TestPostgres:
    """(worker) The run's PostgreSQL: started here if no worker has started it yet."""
    with _locked(share):
        state = _shared_state(share)
        if state is None:
            try:
                started = TestPostgres.start()
            except Exception as exc:
                state = {"error": f"{type(exc).__name__}: {exc}"}
            else:
                state = {"url": started.url, "describe": started.describe()}
                if started.server is not None:
                    state["server"] = started.server.hand_over()
            (share / "state.json").write_text(json.dumps(state))
    if "error" in state:
        raise RuntimeError(state["error"])
    server = state.get("server")
    return TestPostgres(
        state["url"], ThrowawayPostgres.taken_over(server, own=False) if server else None
    )


def _start_postgres(config: pytest.Config) -> tuple[TestPostgres, bool]:
    """The session's PostgreSQL, and whether this process must stop it."""
    share = getattr(config, "workerinput", {}).get(SHARE_KEY)
    if share is None:
        server = TestPostgres.start()
        config.stash[PG_STARTED] = server.describe()
        return server, True
    return _shared_postgres(Path(share)), False


@pytest.fixture(scope="session")
def pg_server(pytestconfig: pytest.Config) -> Iterator[TestPostgres]:
    """The session's PostgreSQL (throwaway, or ``$PRISM_TEST_DATABASE_URL``).

    Where it cannot start the PostgreSQL tests are skipped, except in CI (``CI=true``),
    where nothing may be skipped on PostgreSQL: they fail.
    """
    try:
        server, owned = _start_postgres(pytestconfig)
    except Exception as exc:
        message = f"PostgreSQL is unavailable: {type(exc).__name__}: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    if not owned:
        yield server
        return
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
    share = config.stash.get(PG_SHARE, None)
    state = _shared_state(share) if share is not None else None
    if state is not None:
        line = state.get("describe") or f"PostgreSQL unavailable: {state.get('error')}"
        terminalreporter.write_line(f"{line} (one server for every xdist worker)")
    elif PG_STARTED in config.stash:
        terminalreporter.write_line(config.stash[PG_STARTED])
