"""Writing served receipts off the request path, in batches, never lost on a clean shutdown.

A recall hands its receipts to :meth:`ReceiptWriter.submit` (a list append under a lock) and
returns; one background thread writes whatever is pending every ``interval_s`` (or sooner,
once ``batch`` receipts wait) in one transaction per tenant. :meth:`close` (called by
``Services.close``, which every front door runs on exit, ``prism serve`` after its graceful
shutdown) writes the rest. What a crash can lose: the receipts of the last ``interval_s``
(0.2 s by default) that were not yet written, never a receipt already written, and never
a gap in the chain (a batch is one transaction).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from uuid import UUID

from prism_memory.domain.served import ServedDraft
from prism_memory.errors import StorageError
from prism_memory.trigraph.ledger import AuditLedger

logger = logging.getLogger("prism.receipts")


class ReceiptWriter:
    """Batches served receipts and writes them from one background thread.

    Args:
        ledger: where receipts are chained.
        interval_s: the longest a receipt waits before it is written.
        batch: this many pending receipts wake the writer at once.
    """

    def __init__(self, ledger: AuditLedger, interval_s: float = 0.2, batch: int = 512) -> None:
        self.ledger = ledger
        self.interval_s = interval_s
        self.batch = batch
        self._pending: list[tuple[UUID, ServedDraft]] = []
        self.failed_writes = 0  # background writes that failed (their receipts were kept)
        self._wake = threading.Condition()
        self._write = threading.Lock()  # one writer at a time keeps each chain in call order
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, tenant_id: UUID, drafts: Sequence[ServedDraft]) -> None:
        """Queue one call's receipts (returns at once)."""
        if not drafts:
            return
        with self._wake:
            if self._closed:  # after close: write synchronously rather than lose them
                self._pending.extend((tenant_id, d) for d in drafts)
                closed = True
            else:
                closed = False
                self._pending.extend((tenant_id, d) for d in drafts)
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="prism-receipts", daemon=True
                    )
                    self._thread.start()
                if len(self._pending) >= self.batch:
                    self._wake.notify()
        if closed:
            self.flush()

    def pending(self) -> int:
        with self._wake:
            return len(self._pending)

    def flush(self) -> None:
        """Write everything queued so far, now, in the caller's thread.

        Raises:
            StorageError: the engine failed; the receipts stay queued for the next try.
        """
        with self._write:
            with self._wake:
                taken, self._pending = self._pending, []
            try:
                self._store(taken)
            except BaseException:
                with self._wake:
                    self._pending[:0] = taken  # keep them, in order, for the next try
                raise

    def _store(self, taken: list[tuple[UUID, ServedDraft]]) -> None:
        by_tenant: dict[UUID, list[ServedDraft]] = {}
        for tenant_id, draft in taken:
            by_tenant.setdefault(tenant_id, []).append(draft)
        done: list[UUID] = []
        try:
            for tenant_id, drafts in by_tenant.items():
                self.ledger.append_served(tenant_id, drafts)
                done.append(tenant_id)
        except BaseException:
            # Tenants already written are not queued again (that would chain them twice).
            with self._wake:
                self._pending[:0] = [(t, d) for t, d in taken if t not in done]
            taken.clear()
            raise

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._closed and len(self._pending) < self.batch:
                    self._wake.wait(self.interval_s)
                if self._closed:
                    return
            try:
                self.flush()
            except StorageError:
                self.failed_writes += 1
                logger.exception("writing served receipts failed; %d kept to retry", self.pending())
                with self._wake:
                    self._wake.wait(self.interval_s)

    def close(self) -> None:
        """Stop the background thread and write what is pending (a clean shutdown).

        Raises:
            StorageError: the last write failed (the receipts it held are lost; logged).
        """
        with self._wake:
            self._closed = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        try:
            self.flush()
        except StorageError:
            logger.exception("served receipts lost at shutdown: %d", self.pending())
            raise
