"""The connection pool of one PostgreSQL database, shared by everything stored in it.

The TriGraph store (:mod:`prism_memory.trigraph.postgres.store`), its key store (:mod:`.keys`)
and
its ledger (:mod:`.ledger`) all borrow connections from one :class:`PostgresPool`
(``psycopg_pool``, sync psycopg 3, opened on first use, autocommit).
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg_pool import ConnectionPool

from prism_memory.errors import StorageError
from prism_memory.trigraph.postgres.rows import redact

Conn = psycopg.Connection[tuple[Any, ...]]


class VectorDumper(Dumper):
    """numpy float vectors as pgvector's binary wire format: dim, 0, big-endian float4s.

    The dumper leaves the type unknown (oid 0); queries cast the parameter with
    ``%b::vector`` and the server decodes it with pgvector's receive function.
    """

    format = Format.BINARY
    oid = 0

    def dump(self, obj: Any) -> Buffer:
        data = np.ascontiguousarray(obj, dtype=">f4").reshape(-1)
        return struct.pack(">HH", data.shape[0], 0) + data.tobytes()


def _configure(conn: Conn) -> None:
    conn.adapters.register_dumper(np.ndarray, VectorDumper)


class PostgresPool:
    """Pooled connections to one database.

    Args:
        url: a libpq URL or DSN.
        min_size: connections the pool keeps open.
        max_size: the most connections the pool opens (threads beyond it wait).
        timeout: seconds to wait for a pool connection (and for the first connection).
    """

    def __init__(self, url: str, *, min_size: int, max_size: int, timeout: float) -> None:
        self.url = url
        self._min_size = min_size
        self._max_size = max_size
        self._timeout = timeout
        self._pool: ConnectionPool[Conn] | None = None
        self._guard = threading.Lock()

    def _open_pool(self) -> ConnectionPool[Conn]:
        with self._guard:
            if self._pool is None:
                try:  # one direct connection first: its error says why (auth, db, host)
                    psycopg.connect(self.url, connect_timeout=int(self._timeout)).close()
                except psycopg.Error as exc:
                    raise StorageError(
                        f"cannot connect to PostgreSQL at {redact(self.url)}: {exc}"
                    ) from exc
                pool: ConnectionPool[Conn] = ConnectionPool(
                    self.url,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    kwargs={"autocommit": True},
                    configure=_configure,
                    timeout=self._timeout,
                    name="prism",
                    open=False,
                )
                pool.open()
                self._pool = pool
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """A pooled autocommit connection; database failures become ``StorageError``."""
        pool = self._open_pool()
        try:
            with pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StorageError(f"PostgreSQL failed: {exc}") from exc

    def close(self) -> None:
        """Close the pool (a later connection opens a new one)."""
        with self._guard:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
