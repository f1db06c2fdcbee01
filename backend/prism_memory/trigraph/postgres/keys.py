"""API keys on the server engine: the ``api_key`` table (migrations 2, 8) of a PostgresStore.

It borrows the store's pooled connections, so keys live in the same database as the memories
they guard. The PostgreSQL twin of :mod:`prism_memory.trigraph.sqlite.keys`, with the same
behaviour.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from psycopg import errors as pgerrors
from psycopg.types.json import Jsonb

from prism_memory.domain.access import ApiKey, KeySlugs, Role
from prism_memory.errors import Conflict, StorageError
from prism_memory.trigraph.postgres.conn import PostgresPool
from prism_memory.trigraph.postgres.schema import MIGRATIONS

_COLUMNS = (
    "key_id, tenant_id, role, projects, persona, prefix, label, created_at, revoked_at, slugs"
)
_ORDER = 'ORDER BY created_at, key_id COLLATE "C"'


class PostgresKeyStore:
    """The :class:`~prism_memory.trigraph.port.ApiKeyStore` of one PostgreSQL database.

    Args:
        pool: the connection pool the keys share with the TriGraph store.
    """

    def __init__(self, pool: PostgresPool) -> None:
        self.pool = pool

    def ready(self) -> bool:
        try:
            with self.pool.connection() as conn:
                row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        except StorageError:
            return False
        return bool(row and row[0] == MIGRATIONS[-1][0])

    def add_key(self, key: ApiKey, secret_hash: str) -> None:
        projects = Jsonb([str(p) for p in key.projects]) if key.projects else None
        try:
            with self.pool.connection() as conn:
                try:
                    conn.execute(
                        f"INSERT INTO api_key (secret_hash, {_COLUMNS}) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (
                            secret_hash,
                            key.key_id,
                            key.tenant_id,
                            key.role.value,
                            projects,
                            key.persona,
                            key.prefix,
                            key.label,
                            key.created_at,
                            key.revoked_at,
                            Jsonb(key.slugs.to_dict()) if key.slugs is not None else None,
                        ),
                    )
                except pgerrors.UniqueViolation as exc:
                    raise Conflict(f"API key {key.key_id} already exists") from exc
        except StorageError as exc:
            raise _unavailable() from exc

    def key_by_hash(self, secret_hash: str) -> ApiKey | None:
        found = self._read(f"SELECT {_COLUMNS} FROM api_key WHERE secret_hash = %s", (secret_hash,))
        return _key(found[0]) if found else None

    def keys(self, tenant_id: UUID | None = None) -> list[ApiKey]:
        if tenant_id is None:
            found = self._read(f"SELECT {_COLUMNS} FROM api_key {_ORDER}", ())
        else:
            found = self._read(
                f"SELECT {_COLUMNS} FROM api_key WHERE tenant_id = %s {_ORDER}", (tenant_id,)
            )
        return [_key(r) for r in found]

    def revoke_key(self, key_id: str, when: datetime) -> ApiKey | None:
        try:
            with self.pool.connection() as conn, conn.transaction():
                conn.execute(
                    "UPDATE api_key SET revoked_at = %s WHERE key_id = %s AND revoked_at IS NULL",
                    (when, key_id),
                )
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM api_key WHERE key_id = %s", (key_id,)
                ).fetchone()
        except StorageError as exc:
            raise _unavailable() from exc
        return _key(row) if row else None

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            with self.pool.connection() as conn:
                return conn.execute(sql, args).fetchall()
        except StorageError as exc:
            raise _unavailable() from exc


def _unavailable() -> StorageError:
    return StorageError("the API-key store is unavailable (is the database migrated?)")


def _key(r: tuple[Any, ...]) -> ApiKey:
    return ApiKey(
        key_id=r[0],
        tenant_id=r[1],
        role=Role(r[2]),
        projects=tuple(UUID(p) for p in r[3]) if r[3] else (),
        persona=r[4],
        prefix=r[5],
        label=r[6],
        created_at=r[7].astimezone(UTC),
        revoked_at=r[8].astimezone(UTC) if r[8] else None,
        slugs=KeySlugs.from_dict(r[9]) if r[9] is not None else None,
    )
