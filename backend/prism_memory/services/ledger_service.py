"""The audit ledger: verifying both chains, their heads, and served receipts.

``verify`` recomputes the tenant's audit chain from row tuples in one snapshot: every link,
every event's hash, every content hash against the state in ``memory_state`` (and its
memorule's project), the chain's length against the store's recorded head (and, optionally,
a head the operator kept elsewhere), every memorule state against the events that should
record it, every memory's status, current version and recall row against what its events say
(:mod:`prism_memory.domain.audit_live`); then the served-receipt chain the same way (and,
optionally, against a served head kept elsewhere). ``record`` turns a recall's or a brief's memorule
matches into receipts for the :class:`ReceiptWriter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final
from uuid import UUID

from prism_memory.domain.audit import ChainCheck, ChainReport, Head
from prism_memory.domain.audit_live import LiveCheck
from prism_memory.domain.contract.audit import AuditQuery, ChainHead, ServedQuery
from prism_memory.domain.contract.base import checked
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import Kind, RecallMatch, SessionContext, utcnow
from prism_memory.domain.served import (
    HASH_AT,
    ID_AT,
    ServedDraft,
    ServedReceipt,
    query_sha256,
    receipt_hash,
)
from prism_memory.services.receipt_writer import ReceiptWriter
from prism_memory.trigraph.ledger import (
    AUDIT_CHAIN,
    SERVED_CHAIN,
    AuditLedger,
    LedgerSnapshot,
    ServedFilter,
)
from prism_memory.trigraph.port import AuditFilter

SERVED_PAGE_MAX: Final = 500


def parse_head(text: str, field: str = "head") -> Head:
    """A head given as ``SEQ:HASH`` (``prism audit verify --head``), judged as
    :class:`~prism_memory.domain.contract.audit.VerifyQuery` judges ``?head=`` (an empty one too).

    Raises:
        InvalidInput: not of that form.
    """
    head: Head = checked(ChainHead(), text, field)
    return head


def audit_filter(query: AuditQuery) -> AuditFilter:
    """The store's filter for an audit query (every door's: HTTP, MCP, CLI)."""
    return AuditFilter(
        memorule_id=query.memorule,
        session_id=query.session,
        persona=query.persona,
        events=query.event,
        since=query.since,
        until=query.until,
        before_seq=query.before,
        limit=query.limit,
    )


def served_filter(query: ServedQuery) -> ServedFilter:
    """The store's filter for a served-receipts query (every door's)."""
    return ServedFilter(
        session_id=query.session_id,
        memorule_id=query.memorule,
        since=query.since,
        until=query.until,
        after_seq=query.after,
        limit=query.limit,
    )


@dataclass(frozen=True)
class ServedPage:
    """Served receipts, oldest first; ``next_cursor`` (an ``after`` value) fetches more."""

    receipts: list[ServedReceipt]
    next_cursor: int | None


@dataclass(frozen=True)
class ChainHeads:
    """A tenant's recorded chain heads (sequence 0 and a zero hash before any entry)."""

    tenant_id: UUID
    audit: Head
    served: Head


class LedgerService:
    """Verification, heads and served receipts of the tenant in a context.

    Args:
        ledger: the engine's ledger.
        writer: where receipts go (None: served receipts are off).
    """

    def __init__(self, ledger: AuditLedger, writer: ReceiptWriter | None) -> None:
        self.ledger = ledger
        self.writer = writer

    def record(
        self, ctx: SessionContext, tool: str, query: str, matches: Sequence[RecallMatch]
    ) -> None:
        """Receipts for the memorules among ``matches`` (rank = position in the answer, from 1).

        Queued, not written: see :class:`ReceiptWriter` for when they reach the store.
        """
        if self.writer is None:
            return
        now, call, digest = utcnow(), new_id(), query_sha256(query)
        drafts = [
            ServedDraft(
                call_id=call,
                served_at=now,
                tool=tool,
                session_id=ctx.session_id,
                persona=ctx.persona,
                project_id=ctx.project_id,
                memorule_id=m.memory.id,
                state_id=m.state.id,
                version=m.state.version,
                rank=rank,
                query_sha256=digest,
                key_id=ctx.key_id,
            )
            for rank, m in enumerate(matches, start=1)
            if m.memory.kind is Kind.MEMORULE
        ]
        self.writer.submit(ctx.tenant_id, drafts)

    def flush(self) -> None:
        """Write every queued receipt now (reads after this see them)."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def served(self, ctx: SessionContext, flt: ServedFilter) -> ServedPage:
        """Receipts of the tenant matching ``flt``, oldest first, one page (at most 500).

        Receipts this process still holds are written first, so a recall is visible at once.
        """
        self.flush()
        limit = max(1, min(flt.limit, SERVED_PAGE_MAX))
        found = self.ledger.served(ctx.tenant_id, replace(flt, limit=limit + 1))
        page = found[:limit]
        return ServedPage(page, page[-1].seq if len(found) > limit and page else None)

    def head(self, ctx: SessionContext) -> ChainHeads:
        """The recorded heads of the tenant's audit chain and served-receipt chain."""
        self.flush()
        audit, served = (
            self.ledger.head(ctx.tenant_id, chain) or Head(0, "0" * 64)
            for chain in (AUDIT_CHAIN, SERVED_CHAIN)
        )
        return ChainHeads(ctx.tenant_id, audit, served)

    def verify(
        self, tenant_id: UUID, given: Head | None = None, served_given: Head | None = None
    ) -> ChainReport:
        """Recompute the tenant's audit chain and served receipts; report the first flaw.

        Args:
            tenant_id: whose chains.
            given: an audit head kept elsewhere (``SEQ:HASH``): the chain must extend it.
            served_given: a served-receipt head kept elsewhere: that chain must extend it.
        """
        self.flush()
        return self.ledger.read(tenant_id, lambda snap: _verify(snap, given, served_given))


def _verify(snap: LedgerSnapshot, given: Head | None, served_given: Head | None) -> ChainReport:
    check, live = ChainCheck(given=given), LiveCheck()
    for row in snap.events():
        if not check.feed(row):
            break
        live.feed(row)
    report = check.finish(snap.head(AUDIT_CHAIN))
    if report.ok:
        unrecorded = snap.unrecorded_states(1)
        if unrecorded:
            state_id, memorule_id, version = unrecorded[0]
            report = replace(
                report,
                ok=False,
                broken_at_seq=snap.last_event_seq(memorule_id),
                problem=(
                    f"memorule {memorule_id} has a state {state_id} (version {version}) that no "
                    "audit event records (it was written behind the service's back)"
                ),
            )
    if report.ok:
        found = live.problem(list(snap.live()))
        if found is not None:
            seq, _, problem = found
            report = replace(
                report, ok=False, broken_at_seq=seq, broken_event_id=None, problem=problem
            )
    receipts = ChainCheck(
        hasher=receipt_hash,
        content=False,
        given=served_given,
        hash_at=HASH_AT,
        id_at=ID_AT,
        seq_at=1,
        noun="receipt",
    )
    for row in snap.receipts():
        if not receipts.feed(row):
            break
    served = receipts.finish(snap.head(SERVED_CHAIN))
    if served.ok:
        return replace(report, served=served)
    return replace(
        report,
        ok=False,
        problem=report.problem or f"served receipts: {served.problem}",
        served=served,
    )
