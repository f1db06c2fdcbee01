"""The API-key store port: where HTTP API keys live, on the same engine as the TriGraph.

An engine hands out its key store (:meth:`prism_memory.trigraph.port.EngineParts.key_store`).
Adapters: :mod:`prism_memory.trigraph.sqlite.keys`, :mod:`prism_memory.trigraph.postgres.keys`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol
from uuid import UUID

from prism_memory.domain.access import ApiKey


class ApiKeyStore(Protocol):
    """Where HTTP API keys live, on the same engine as the TriGraph.

    Secrets are never stored, only their SHA-256 (:func:`prism_memory.domain.access.hash_secret`).
    """

    def ready(self) -> bool:
        """True when the engine answers and its schema is fully migrated (keys included).

        Never raises: an unreachable or unmigrated engine is simply not ready.
        """
        ...

    def add_key(self, key: ApiKey, secret_hash: str) -> None:
        """Store a new key.

        Raises:
            Conflict: the key id or the secret hash is already stored.
            StorageError: the engine failed (e.g. it is not migrated).
        """
        ...

    def key_by_hash(self, secret_hash: str) -> ApiKey | None:
        """The key whose secret hashes to ``secret_hash`` (revoked ones too), by index.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def keys(self, tenant_id: UUID | None = None) -> list[ApiKey]:
        """Every key (of one tenant, or of all), oldest first, revoked ones included.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def revoke_key(self, key_id: str, when: datetime) -> ApiKey | None:
        """Mark a key revoked at ``when`` (a key already revoked keeps its first time).

        Returns:
            The key as stored afterwards, or None when no key has that id.

        Raises:
            StorageError: the engine failed.
        """
        ...
