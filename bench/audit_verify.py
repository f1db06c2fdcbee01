"""How long `prism audit verify` takes at N events, and what served receipts cost recall.

    python bench/audit_verify.py --events 100000            # SQLite
    python bench/audit_verify.py --events 100000 --pg URL   # PostgreSQL
    python bench/audit_verify.py --recall 10000             # recall p50, receipts on/off
    python bench/audit_verify.py --recall 10000 --pg URL    # the same on PostgreSQL

Rows are written straight through the store port in batches of 1,000 (memorule + state +
audit event with its content hash), with random 384-d vectors; no model is loaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from prism_memory.bootstrap import build_services
from prism_memory.domain import audit as chain
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import (
    AppliesTo,
    AuditDraft,
    AuditEventType,
    Confidence,
    Kind,
    MemoruleKind,
    Memory,
    MemoryState,
    Scope,
    SessionContext,
    Status,
    utcnow,
)
from prism_memory.settings import load_settings
from prism_memory.trigraph.port import StateWrite, WriteBatch


def fill(services, ctx: SessionContext, n: int, batch: int = 1000) -> None:
    rng = np.random.default_rng(7)
    model = services.embedder.model_id
    for start in range(0, n, batch):
        wb = WriteBatch(tenant_id=ctx.tenant_id)
        for i in range(start, min(n, start + batch)):
            now = utcnow()
            m = Memory(
                new_id(),
                ctx.tenant_id,
                ctx.project_id,
                "default",
                Kind.MEMORULE,
                Status.ACTIVE,
                now,
            )
            s = MemoryState(
                new_id(),
                m.id,
                1,
                f"Rule body number {i} for the agents to follow.",
                f"Rule {i}",
                ctx.session_id,
                "donna",
                now,
                model,
                MemoruleKind.CONVENTION,
                AppliesTo(surface="python", scope=Scope.PROJECT),
                None,
                Confidence.INFERRED,
            )
            v = rng.standard_normal(384).astype(np.float32)
            v /= np.linalg.norm(v)
            wb.new_memories.append(m)
            wb.states.append(StateWrite(s, v))
            wb.audits.append(
                AuditDraft(
                    new_id(),
                    m.id,
                    s.id,
                    AuditEventType.CREATED,
                    ctx.session_id,
                    "donna",
                    None,
                    now,
                    content_hash=chain.content_hash(s),
                )
            )
        services.store.write(wb)


def main() -> None:
    from prism_memory.domain.contract.recall import validate_recall

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=0)
    ap.add_argument("--recall", type=int, default=0)
    ap.add_argument("--pg")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    ctx = SessionContext(
        uuid_for("tenant", "bench"),
        uuid_for("project", "bench"),
        new_id(),
        persona="donna",
        surface="python",
    )
    if args.events:
        settings = (
            load_settings(database_url=args.pg, embedder="fake")
            if args.pg
            else load_settings(db=tmp / "v.db", embedder="fake", database_url="")
        )
        services = build_services(settings)
        t = time.perf_counter()
        fill(services, ctx, args.events)
        print(f"filled {args.events} events in {time.perf_counter() - t:.1f}s")
        for _ in range(args.runs):
            t = time.perf_counter()
            report = services.memorules.verify_chain(ctx)
            new = time.perf_counter() - t
            t = time.perf_counter()
            old = chain.verify(services.store.audit_chain(ctx.tenant_id))
            rec = time.perf_counter() - t
            assert report.ok and old.ok and report.content_checked == args.events
            print(
                f"verify (rows, content + head + receipts): {new:.2f}s   "
                f"records-only chain (the old way, no content): {rec:.2f}s   "
                f"load {os.getloadavg()[0]:.2f}"
            )
        services.close()
    if args.recall:
        settings = (
            load_settings(database_url=args.pg, embedder="fake")
            if args.pg
            else load_settings(db=tmp / "r.db", embedder="fake", database_url="")
        )
        on = build_services(settings)
        fill(on, ctx, args.recall)
        off = build_services(settings.model_copy(update={"served_receipts": False}))
        queries = [f"rule body number {i}" for i in range(50)]
        for s in (on, off):  # warm both caches
            s.memory.recalls.recall(ctx, validate_recall({"query": "warm", "top_k": 10}))
        times: dict[str, list[float]] = {"on": [], "off": []}
        for r in range(args.runs * 200):
            for name, s in (("on", on), ("off", off)):
                q = {"query": queries[r % 50], "top_k": 10, "source_type": "memorule"}
                t = time.perf_counter()
                s.memory.recalls.recall(ctx, validate_recall(q))
                times[name].append(time.perf_counter() - t)
        p50 = {k: statistics.median(v) * 1000 for k, v in times.items()}
        print(
            f"recall p50 at {args.recall} memories: receipts on {p50['on']:.2f} ms, "
            f"off {p50['off']:.2f} ms ({(p50['on'] / p50['off'] - 1) * 100:+.1f}%), "
            f"load {os.getloadavg()[0]:.2f}"
        )
        on.close()
        off.close()
        served = on.ledger  # closed: everything queued was written
        print("receipts written:", served.ledger.head(ctx.tenant_id, "served_receipt"))


if __name__ == "__main__":
    main()
