"""What moves between engines: the records a dump yields and a load takes, and the port part
that does it (``prism dump`` / ``prism import``, :mod:`prism_memory.services.transfer`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from prism_memory.domain.records import MemoruleAudit, Memory, MemoryState
from prism_memory.domain.served import ServedReceipt
from prism_memory.embeddings.port import Vector


@dataclass(frozen=True)
class MemoryDump:
    """One stored memory, whole: the node, every state (version 1 first), the current vector.

    ``vector_model`` names the model that embedded ``vector`` (None with no vector).
    """

    memory: Memory
    states: list[MemoryState]
    vector: Vector | None
    vector_model: str | None


@dataclass(frozen=True)
class IdempotencyRecord:
    """A stored idempotency claim with its tenant and time (what a dump carries)."""

    tenant_id: UUID
    key: str
    request_hash: str
    result: dict[str, Any]
    created_at: datetime


DumpItem = MemoryDump | MemoruleAudit | IdempotencyRecord | ServedReceipt
"""What ``dump`` yields and ``load`` takes: audit events and served receipts are chained rows,
copied verbatim."""


class TransferStore(Protocol):
    """Moving a store's records between engines (``prism dump`` / ``prism import``)."""

    def dump(self, tenant_id: UUID | None = None) -> Iterator[DumpItem]:
        """Everything stored for one tenant (or all), exactly as stored.

        Tenants in id order; per tenant: its memories by id (each with its states and
        current vector), then its audit chain by ``seq``, then its idempotency claims by key,
        then its served receipts by ``seq``.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def load(self, items: Iterable[DumpItem]) -> dict[str, int]:
        """Insert dumped records verbatim (audit rows keep their seq and hashes), all or none.

        A memory must come before the audit events that name it (``dump`` order). Each
        loaded chain's head (``audit_head``) is set from its last entry.

        Returns:
            Counts loaded: memories, states, audit_events, idempotency, served_receipts.

        Raises:
            Conflict: a tenant in ``items`` already has data in this store.
            StorageError: the engine failed, or an item breaks a key (e.g. an audit event
                before its memory).
        """
        ...
