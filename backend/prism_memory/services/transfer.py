"""Moving a store between engines: JSON Lines out, JSON Lines in, nothing lost.

The file (``prism export --format jsonl`` for one tenant, ``prism dump`` for every tenant)::

    {"type": "header", "format": "prism-memory-dump", "version": 3, "exported_at": ...}
    {"type": "memory", "tenant_id", "id", ..., "states": [...], "vector": {...} | null}
    {"type": "audit", "tenant_id", "seq", "id", ..., "prev_hash", "hash"}
    {"type": "idempotency", "tenant_id", "key", "request_hash", "result", "created_at"}
    {"type": "served", "tenant_id", "seq", "call_id", ..., "prev_hash", "hash"}
    {"type": "end", "counts": {"memories", "states", "audit_events", "idempotency",
                               "served_receipts"}}

One memory per line with every version and its current vector (float32, little-endian,
base64: bit-exact). Audit events and served receipts are the stored rows, copied verbatim,
never re-chained; an import checks each tenant's two chains as it reads and refuses a broken
one, and the target store records each chain's head from its last entry. Version 1 files
(before content hashes and receipts) and 2 (states before ``checks`` and ``enforcement``)
still import; a state's checks are judged again as they are read. Keys are sorted and
times are ISO-8601 UTC with microseconds, so the same store always exports the same bytes,
whatever the engine. An import runs in ONE transaction into an empty store (or one without
the file's tenants): a truncated, edited or clashing file writes nothing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO
from uuid import UUID

import numpy as np

from prism_memory.domain import audit as chain
from prism_memory.domain.records import MemoruleAudit, iso, utcnow
from prism_memory.domain.served import ServedReceipt
from prism_memory.formats.transfer_format import COUNTS, FORMAT, VERSION, Reader, state_json
from prism_memory.trigraph.dump import DumpItem, MemoryDump
from prism_memory.trigraph.port import TriGraphStore


@dataclass
class TransferReport:
    """What an export wrote or an import loaded, and each imported tenant's chain."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    tenants: list[UUID] = field(default_factory=list)
    chains: dict[UUID, chain.ChainReport] = field(default_factory=dict)

    def line_counts(self) -> dict[str, int]:
        """The counts, with ``statements``: the lines written (records, header and end)."""
        return {**self.counts, "statements": sum(self.counts.values()) - self.counts["states"] + 2}


def write_jsonl(items: Iterable[DumpItem], out: TextIO) -> TransferReport:
    """Write dumped items as JSON Lines, between a header and an end record.

    Args:
        items: what :meth:`TriGraphStore.dump` yields.
        out: a text stream.

    Returns:
        The counts written and the tenants seen.
    """
    report = TransferReport()
    header = {"type": "header", "format": FORMAT, "version": VERSION, "exported_at": iso(utcnow())}
    out.write(_line(header))
    for item in items:
        tenant = item.memory.tenant_id if isinstance(item, MemoryDump) else item.tenant_id
        if not report.tenants or report.tenants[-1] != tenant:
            report.tenants.append(tenant)
        if isinstance(item, MemoryDump):
            report.counts["memories"] += 1
            report.counts["states"] += len(item.states)
        elif isinstance(item, MemoruleAudit):
            report.counts["audit_events"] += 1
        elif isinstance(item, ServedReceipt):
            report.counts["served_receipts"] += 1
        else:
            report.counts["idempotency"] += 1
        out.write(_line(encode(item)))
    out.write(_line({"type": "end", "counts": report.counts}))
    return report


def export_store(
    store: TriGraphStore,
    out: TextIO,
    tenant_id: UUID | None,
    progress: Callable[[Iterable[DumpItem]], Iterable[DumpItem]] | None = None,
) -> TransferReport:
    """Export one tenant (or every tenant) of ``store`` as JSON Lines to ``out``;
    ``progress`` wraps the items (to count them as they pass)."""
    items: Iterable[DumpItem] = store.dump(tenant_id)
    return write_jsonl(progress(items) if progress is not None else items, out)


def import_store(store: TriGraphStore, lines: Iterable[str]) -> TransferReport:
    """Load a JSON Lines export into ``store``, all of it or nothing.

    Raises:
        InvalidInput: the file is not a complete, well-formed export, or a tenant's audit
            chain in it is broken (field ``line N``); nothing is written.
        Conflict: a tenant in the file already has data in ``store``.
        StorageError: the engine failed.
    """
    reader = Reader()
    counts = store.load(reader.items(lines))
    report = TransferReport(counts=counts, tenants=list(reader.chains))
    report.chains = {t: c.report() for t, c in reader.chains.items()}
    return report


# -- encoding ----------------------------------------------------------------------------


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def encode(item: DumpItem) -> dict[str, Any]:
    """One dumped item as the JSON object of its line."""
    if isinstance(item, MemoryDump):
        m = item.memory
        vector = None
        if item.vector is not None:
            data = np.ascontiguousarray(item.vector, dtype="<f4").tobytes()
            vector = {
                "model": item.vector_model,
                "dim": int(item.vector.shape[0]),
                "f32le": base64.b64encode(data).decode("ascii"),
            }
        return {
            "type": "memory",
            "tenant_id": str(m.tenant_id),
            "id": str(m.id),
            "project_id": str(m.project_id),
            "namespace": m.namespace,
            "kind": m.kind.value,
            "status": m.status.value,
            "created_at": iso(m.created_at),
            "current_version": m.current_version,
            "pinned": m.pinned,
            "states": [state_json(s) for s in item.states],
            "vector": vector,
        }
    if isinstance(item, MemoruleAudit):
        return {"type": "audit", "tenant_id": str(item.tenant_id), **item.to_dict()}
    if isinstance(item, ServedReceipt):
        return {"type": "served", "tenant_id": str(item.tenant_id), **item.to_dict()}
    return {
        "type": "idempotency",
        "tenant_id": str(item.tenant_id),
        "key": item.key,
        "request_hash": item.request_hash,
        "result": item.result,
        "created_at": iso(item.created_at),
    }
