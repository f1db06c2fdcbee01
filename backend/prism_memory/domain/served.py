"""Served receipts: which memorule versions a recall or a brief handed to which session.

One receipt per memorule version served by one call, in its own per-tenant hash chain (apart
from the write chain of :mod:`prism_memory.domain.audit`), so "which rules, in which versions, had
this session been given before time T" has an answer that a deleted or edited receipt
cannot quietly change. The query itself is not kept, only its SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.records import iso

RECEIPT_FORMAT: Final = "prism-served/1"
TOOLS: Final = ("semantic_recall", "memorule_brief")
# A stored receipt as text, in this order (the engines select it so):
# tenant_id, seq, call_id, served_at (ISO), tool, session_id, persona, project_id,
# memorule_id, state_id, version, rank, query_sha256, key_id, prev_hash, hash.
RECEIPT_FIELDS: Final = (
    "tenant_id",
    "seq",
    "call_id",
    "served_at",
    "tool",
    "session_id",
    "persona",
    "project_id",
    "memorule_id",
    "state_id",
    "version",
    "rank",
    "query_sha256",
    "key_id",
    "prev_hash",
    "hash",
)
HASH_AT: Final = 15
ID_AT: Final = 2


def query_sha256(query: str) -> str:
    """The SHA-256 of a query's UTF-8 text (the text itself is not kept)."""
    return hashlib.sha256(query.encode()).hexdigest()


def receipt_hash(prev_hash: str, row: Sequence[Any]) -> str:
    """The hash of one receipt row (the first 14 values) after ``prev_hash``."""
    payload = [RECEIPT_FORMAT, *row[:14]]
    payload[2] = int(payload[2])
    payload[11] = int(payload[11])
    payload[12] = int(payload[12])
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{prev_hash}\n{text}".encode()).hexdigest()


@dataclass(frozen=True)
class ServedDraft:
    """One memorule version served by one call, before the store chains it."""

    call_id: UUID
    served_at: datetime
    tool: str
    session_id: UUID
    persona: str | None
    project_id: UUID
    memorule_id: UUID
    state_id: UUID
    version: int
    rank: int
    query_sha256: str
    key_id: str | None = None


@dataclass(frozen=True)
class ServedReceipt:
    """A chained receipt, as stored."""

    tenant_id: UUID
    seq: int
    call_id: UUID
    served_at: datetime
    tool: str
    session_id: UUID
    persona: str | None
    project_id: UUID
    memorule_id: UUID
    state_id: UUID
    version: int
    rank: int
    query_sha256: str
    key_id: str | None
    prev_hash: str
    hash: str

    def row(self) -> tuple[Any, ...]:
        """The receipt as the text row :func:`receipt_hash` reads."""
        return (
            str(self.tenant_id),
            self.seq,
            str(self.call_id),
            iso(self.served_at),
            self.tool,
            str(self.session_id),
            self.persona,
            str(self.project_id),
            str(self.memorule_id),
            str(self.state_id),
            self.version,
            self.rank,
            self.query_sha256,
            self.key_id,
            self.prev_hash,
            self.hash,
        )

    def to_dict(self) -> dict[str, Any]:
        out = dict(zip(RECEIPT_FIELDS, self.row(), strict=True))
        out.pop("tenant_id")
        return out


def chain_receipts(
    tenant_id: UUID, seq: int, prev_hash: str, drafts: Sequence[ServedDraft]
) -> list[ServedReceipt]:
    """Chain ``drafts`` after entry ``seq`` whose hash is ``prev_hash``."""
    out = []
    for d in drafts:
        seq += 1
        row = (
            str(tenant_id),
            seq,
            str(d.call_id),
            iso(d.served_at),
            d.tool,
            str(d.session_id),
            d.persona,
            str(d.project_id),
            str(d.memorule_id),
            str(d.state_id),
            d.version,
            d.rank,
            d.query_sha256,
            d.key_id,
        )
        digest = receipt_hash(prev_hash, row)
        out.append(
            ServedReceipt(
                tenant_id,
                seq,
                d.call_id,
                d.served_at,
                d.tool,
                d.session_id,
                d.persona,
                d.project_id,
                d.memorule_id,
                d.state_id,
                d.version,
                d.rank,
                d.query_sha256,
                d.key_id,
                prev_hash,
                digest,
            )
        )
        prev_hash = digest
    return out
