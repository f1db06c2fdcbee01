"""The PostgreSQL the test session uses, and a fresh schema per test.

One server per session: the throwaway PostgreSQL 18 + pgvector from :mod:`tests.pgserver`
(~2 s to start), or the server ``$PRISM_TEST_DATABASE_URL`` names (its database must have the
``vector`` extension or let the test user create it). Each test gets its own schema (a few
milliseconds; a ``CREATE DATABASE`` costs ~0.4 s) through a URL whose ``search_path`` names it
first, then ``public`` where the extension's types live.
"""

from __future__ import annotations

import itertools
import os
import uuid

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tests.pgserver import ThrowawayPostgres

URL_ENV = "PRISM_TEST_DATABASE_URL"
DATABASE = "prism_test"


def with_search_path(url: str, schema: str) -> str:
    """``url`` with ``schema`` (then public) first on the search path, other options kept."""
    options = conninfo_to_dict(url).get("options") or ""
    path = f"-c search_path={schema},public"
    return make_conninfo(url, options=f"{options} {path}".strip())


class TestPostgres:
    """A session's PostgreSQL: hands out empty schemas and URLs pointing into them."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, url: str, server: ThrowawayPostgres | None) -> None:
        self.url = url
        self.server = server
        self._names = (f"t{os.getpid()}_{uuid.uuid4().hex[:6]}_{i}" for i in itertools.count())

    @classmethod
    def start(cls) -> TestPostgres:
        """Use ``$PRISM_TEST_DATABASE_URL``, or start a throwaway server."""
        given = os.environ.get(URL_ENV)
        if given:
            with psycopg.connect(given, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            return cls(given, None)
        server = ThrowawayPostgres()
        server.start()
        try:
            return cls(server.create_database(DATABASE), server)
        except BaseException:
            server.stop()
            raise

    def describe(self) -> str:
        """One line for the test report: which server, and its start-up time."""
        if self.server is None:
            return f"PostgreSQL: ${URL_ENV} (an existing server)"
        return (
            f"PostgreSQL: throwaway 18 + pgvector, up in {self.server.startup_seconds:.2f}s "
            f"(initdb {self.server.initdb_seconds:.2f}s, start {self.server.start_seconds:.2f}s)"
            f" as {self.server.os_user} in {self.server.base_dir}"
        )

    def fresh_schema(self) -> tuple[str, str]:
        """A new empty schema: its name and a URL that works in it."""
        name = next(self._names)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        return name, with_search_path(self.url, name)

    def drop_schema(self, name: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
