"""Shared fixtures: real engines on temp files, the fake embedder unless a test asks for the model.

``engine`` is the parametrised storage engine; the contract suites run once per engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.bootstrap import Services, build_services
from app.domain.ids import new_id, uuid_for
from app.domain.records import SessionContext
from app.settings import Settings, load_settings

ContextFactory = Callable[..., SessionContext]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "prism.db"


@pytest.fixture(params=["sqlite"])
def engine_settings(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Settings]:
    """Settings for a fresh, empty store on each engine."""
    yield load_settings(db=db_path, embedder="fake")


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
