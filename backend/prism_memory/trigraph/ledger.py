"""The audit ledger port: what verification and served receipts need from an engine.

Kept apart from :class:`~prism_memory.trigraph.port.TriGraphStore` (writes, recall, listings): an
engine hands out its ledger as it hands out its key store
(:meth:`prism_memory.trigraph.port.EngineParts.ledger`).
Adapters: :mod:`prism_memory.trigraph.sqlite.ledger`, :mod:`prism_memory.trigraph.postgres.ledger`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar
from uuid import UUID

from prism_memory.domain.audit import Head
from prism_memory.domain.served import ServedDraft, ServedReceipt

T = TypeVar("T")
AUDIT_CHAIN: Final = "memorule_audit"
SERVED_CHAIN: Final = "served_receipt"


@dataclass(frozen=True)
class ServedFilter:
    """Served-receipt listing filters; oldest first, ``after_seq`` is the page cursor.

    ``key_id`` set: only receipts of calls made with that API key.
    """

    session_id: UUID | None = None
    memorule_id: UUID | None = None
    since: datetime | None = None
    until: datetime | None = None
    key_id: str | None = None
    after_seq: int | None = None
    limit: int = 100


@dataclass(frozen=True)
class EventTally:
    """Events of some types appended to the tenants' memorule chains since earlier heads.

    Attributes:
        counts: events of each asked type after the given heads (types with none absent).
        heads: each tenant's memorule chain head (its recorded ``seq``) now, by tenant id.
    """

    counts: dict[str, int]
    heads: dict[str, int]


class LedgerSnapshot(Protocol):
    """One consistent read of a tenant's chains (heads and rows agree)."""

    def head(self, chain: str) -> Head | None:
        """The store's recorded head of ``chain`` (AUDIT_CHAIN or SERVED_CHAIN), if any."""
        ...

    def events(self) -> Iterator[Sequence[Any]]:
        """The audit chain oldest first, each event with its state, as text rows
        (:data:`prism_memory.domain.audit.EventRow`)."""
        ...

    def unrecorded_states(self, limit: int) -> list[tuple[str, str, int]]:
        """Memorule states no audit event names: (state id, memorule id, version)."""
        ...

    def live(self) -> Iterator[Sequence[Any]]:
        """Every memory of the tenant with its recall row, as text rows
        (:data:`prism_memory.domain.audit_live.LIVE_WIDTH` values)."""
        ...

    def receipts(self) -> Iterator[Sequence[Any]]:
        """The served-receipt chain oldest first, as text rows
        (:data:`prism_memory.domain.served.RECEIPT_FIELDS`)."""
        ...

    def last_event_seq(self, memorule_id: str) -> int | None:
        """The number of the newest audit event of a memorule."""
        ...


class AuditLedger(Protocol):
    """Reads for verification, and the served-receipt chain."""

    def read(self, tenant_id: UUID, work: Callable[[LedgerSnapshot], T]) -> T:
        """Run ``work`` on one consistent snapshot of the tenant's chains.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def head(self, tenant_id: UUID, chain: str) -> Head | None:
        """The recorded head of one chain."""
        ...

    def append_served(self, tenant_id: UUID, drafts: Sequence[ServedDraft]) -> int:
        """Chain receipts onto the tenant's served chain in one transaction.

        Returns:
            The number of the last receipt written.

        Raises:
            StorageError: the engine failed.
        """
        ...

    def served(self, tenant_id: UUID, flt: ServedFilter) -> list[ServedReceipt]:
        """Receipts matching ``flt``, oldest first (at most ``flt.limit``)."""
        ...

    def tally(self, events: Sequence[str], since: dict[str, int]) -> EventTally:
        """Count, over every tenant, the memorule events of the types ``events`` with a
        ``seq`` after ``since[tenant]`` (0 when absent) up to the tenant's recorded head: a
        reader that keeps the heads reads only what was appended since (``/metrics``).

        Raises:
            StorageError: the engine failed.
        """
        ...
