"""API keys on the embedded engine: the ``api_key`` table (migrations 2, 7) of a SQLite file.

It shares the TriGraph store's :class:`~prism_memory.trigraph.sqlite.conn.SQLiteFile`: its
per-thread
connections and its ``BEGIN IMMEDIATE`` transactions, so keys live in the same file as the
memories they guard and need no set-up of their own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from prism_memory.domain.access import ApiKey, KeySlugs, Role
from prism_memory.domain.records import iso, parse_iso
from prism_memory.errors import Conflict, StorageError
from prism_memory.trigraph.sqlite.conn import SQLiteFile
from prism_memory.trigraph.sqlite.schema import MIGRATIONS

T = TypeVar("T")
_COLUMNS = (
    "key_id, tenant_id, role, projects, persona, prefix, label, created_at, revoked_at, slugs"
)


class SQLiteKeyStore:
    """The :class:`~prism_memory.trigraph.port.ApiKeyStore` of one SQLite file.

    Args:
        file: the database file (and connections) the keys share with the TriGraph store.
    """

    def __init__(self, file: SQLiteFile) -> None:
        self.file = file

    def ready(self) -> bool:
        try:
            row = (
                self.file.connection()
                .execute("SELECT max(version) FROM schema_migrations")
                .fetchone()
            )
        except sqlite3.Error:
            return False
        return bool(row and row[0] == MIGRATIONS[-1][0])

    def add_key(self, key: ApiKey, secret_hash: str) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT INTO api_key (secret_hash, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    secret_hash,
                    key.key_id,
                    str(key.tenant_id),
                    key.role.value,
                    json.dumps([str(p) for p in key.projects]) if key.projects else None,
                    key.persona,
                    key.prefix,
                    key.label,
                    iso(key.created_at),
                    iso(key.revoked_at) if key.revoked_at else None,
                    json.dumps(key.slugs.to_dict()) if key.slugs is not None else None,
                ),
            )

        try:
            self._write(run)
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"API key {key.key_id} already exists") from exc

    def key_by_hash(self, secret_hash: str) -> ApiKey | None:
        rows = self._read(f"SELECT {_COLUMNS} FROM api_key WHERE secret_hash = ?", (secret_hash,))
        return _key(rows[0]) if rows else None

    def keys(self, tenant_id: UUID | None = None) -> list[ApiKey]:
        if tenant_id is None:
            rows = self._read(f"SELECT {_COLUMNS} FROM api_key ORDER BY created_at, key_id", ())
        else:
            rows = self._read(
                f"SELECT {_COLUMNS} FROM api_key WHERE tenant_id = ? ORDER BY created_at, key_id",
                (str(tenant_id),),
            )
        return [_key(r) for r in rows]

    def revoke_key(self, key_id: str, when: datetime) -> ApiKey | None:
        def run(conn: sqlite3.Connection) -> ApiKey | None:
            conn.execute(
                "UPDATE api_key SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (iso(when), key_id),
            )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM api_key WHERE key_id = ?", (key_id,)
            ).fetchone()
            return _key(row) if row else None

        return self._write(run)

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self.file.connection().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(
                "the API-key store is unavailable (is the database migrated?)"
            ) from exc

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return self.file.transaction(work)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise StorageError(
                "the API-key store is unavailable (is the database migrated?)"
            ) from exc


def _key(r: tuple[Any, ...]) -> ApiKey:
    return ApiKey(
        key_id=r[0],
        tenant_id=UUID(r[1]),
        role=Role(r[2]),
        projects=tuple(UUID(p) for p in json.loads(r[3])) if r[3] else (),
        persona=r[4],
        prefix=r[5],
        label=r[6],
        created_at=parse_iso(r[7]),
        revoked_at=parse_iso(r[8]) if r[8] else None,
        slugs=KeySlugs.from_dict(json.loads(r[9])) if r[9] is not None else None,
    )
