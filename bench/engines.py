"""Recall latency of Prism's two engines, SQLite and PostgreSQL, side by side in one run.

Not a test. From the repository root (starts a throwaway PostgreSQL 18 + pgvector unless
``--database-url`` names one; each size gets a fresh database)::

    python bench/engines.py --sizes 10000,100000 --json-out bench/results/engines.json

What is measured, per engine, store size N and layout (``one-project``: the N memories in the
recalling project, so all N are candidates; ``100-projects``: N spread over 100 projects, so
about N/100 are):

- ``recall``: ``semantic_recall`` (top 10, memorules) through the service with a warm
  per-process candidate cache: the engine's freshness check, the ranking over every candidate
  and the fetch of the 10 results. The query vector is precomputed (random unit vectors; the
  stored vectors are random unit vectors too), so query embedding is excluded.
- ``first_recall``: the first recall of a fresh process (the cache loads the candidates).
- ``recall_after_write``: a recall right after a write to the same project (the cache folds
  in the changed row).
- ``write``: one memorule write through the service (embedding excluded the same way).

Engines alternate query by query, so load on the machine hits both alike. Loading uses the
storage port in batches of 1,000 complete memorules (memory, state, audit event, vector).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx
import numpy as np

MODEL = "all-MiniLM-L6-v2-int8-onnx"  # stored vectors are labelled as the real model's
PROJECTS = {"one-project": 1, "100-projects": 100}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000", help="store sizes, comma-separated")
    p.add_argument("--layouts", default="one-project,100-projects", help="comma-separated")
    p.add_argument("--engines", default="sqlite,postgres", help="comma-separated")
    p.add_argument("--repeats", type=int, default=200, help="warm recalls per engine")
    p.add_argument("--writes", type=int, default=30, help="writes (and recalls after them)")
    p.add_argument("--cold", type=int, default=3, help="first recalls of a fresh process")
    p.add_argument("--database-url", help="an existing server (its database must be empty)")
    p.add_argument("--json-out", type=Path, help="write the results here too")
    return p.parse_args(argv)


throwaway_postgres = common.throwaway_postgres


class Engine:
    """One engine's store of N memories, with the services and contexts that use it."""

    def __init__(self, name: str, settings: Any, table: fx.VectorTable, projects: int) -> None:
        from prism_memory.bootstrap import build_services
        from prism_memory.domain.records import SessionContext

        self.name, self.settings, self.table = name, settings, table
        self.svc = build_services(settings)
        self.svc.embedder = self.svc.memory.deps.embedder = self.svc.memorules.embedder = table
        tenant = common_uuid("tenant", "bench")
        self.contexts = [
            SessionContext(tenant, common_uuid("project", f"p{i}"), common_uuid("s", "bench"))
            for i in range(projects)
        ]

    def load(self, n: int, matrix: np.ndarray) -> float:
        started = time.perf_counter()
        per = n // len(self.contexts)
        for k, ctx in enumerate(self.contexts):
            lo = k * per
            texts = [fx.text_of(i) for i in range(lo, lo + per)]
            fx.prism_load(self.svc, ctx, lo, texts, matrix[lo : lo + per])
        return time.perf_counter() - started

    def recall(self, query: str) -> int:
        from prism_memory.domain.contract.recall import validate_recall

        req = {"query": query, "top_k": 10, "source_type": "memorule"}
        return len(self.svc.memory.recalls.recall(self.contexts[0], validate_recall(req)).matches)

    def write(self, i: int) -> None:
        from prism_memory.domain.contract.remember import validate_remember

        text = f"written during the bench {i}: always check the deploy checklist"
        self.svc.memory.writes.remember(
            self.contexts[0],
            validate_remember(
                {
                    "kind": "memorule",
                    "memorule_kind": "convention",
                    "subject": f"bench write {i}",
                    "body": text,
                    "applies_to": {"scope": "project"},
                }
            ),
        )

    def fresh(self) -> Any:
        """New services on the same store: a process that has not cached anything yet."""
        from prism_memory.bootstrap import build_services

        svc = build_services(self.settings, migrate=False)
        svc.embedder = svc.memory.deps.embedder = svc.memorules.embedder = self.table
        return svc

    def close(self) -> None:
        self.svc.close()


def common_uuid(kind: str, name: str) -> Any:
    from prism_memory.domain.ids import uuid_for

    return uuid_for(kind, name)


def run_size(n: int, layout: str, args: argparse.Namespace, pg_url: Any) -> list[dict[str, Any]]:
    from prism_memory.domain.contract.recall import validate_recall
    from prism_memory.settings import load_settings

    table = fx.VectorTable(MODEL)
    matrix = common.synthetic_matrix(n, seed=n)
    queries = [f"bench query {i}" for i in range(args.repeats)]
    table.register(queries, common.synthetic_matrix(len(queries), seed=n + 1))
    workdir = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    engines: list[Engine] = []
    loads: dict[str, float] = {}
    for name in args.engines.split(","):
        if name == "sqlite":
            settings = load_settings(db=workdir / "prism.db", database_url="", embedder="fake")
        else:
            settings = load_settings(database_url=pg_url(f"{layout}_{n}"), embedder="fake")
        engine = Engine(name, settings, table, PROJECTS[layout])
        common.progress(f"{name}: loading {n} memories ({layout})")
        loads[name] = engine.load(n, matrix)
        engines.append(engine)
    times: dict[str, dict[str, list[float]]] = {e.name: {} for e in engines}

    def record(engine: Engine, key: str, seconds: float) -> None:
        times[engine.name].setdefault(key, []).append(seconds)

    req = {"query": queries[0], "top_k": 10, "source_type": "memorule"}
    for engine in engines:  # first recalls of fresh processes, before anything is warm
        for _ in range(args.cold):
            svc = engine.fresh()
            started = time.perf_counter()
            svc.memory.recalls.recall(engine.contexts[0], validate_recall(req))
            record(engine, "first_recall", time.perf_counter() - started)
            svc.close()
    for engine in engines:
        engine.recall(queries[0])  # warm
    for i, query in enumerate(queries):
        for engine in engines if i % 2 == 0 else engines[::-1]:
            started = time.perf_counter()
            engine.recall(query)
            record(engine, "recall", time.perf_counter() - started)
    for i in range(args.writes):
        for engine in engines if i % 2 == 0 else engines[::-1]:
            started = time.perf_counter()
            engine.write(i)
            record(engine, "write", time.perf_counter() - started)
            started = time.perf_counter()
            engine.recall(queries[i % len(queries)])
            record(engine, "recall_after_write", time.perf_counter() - started)
    out = []
    for engine in engines:
        req = {"query": queries[0], "top_k": 10, "source_type": "memorule"}
        candidates = engine.svc.memory.recalls.recall(
            engine.contexts[0], validate_recall(req)
        ).candidates
        out.append(
            {
                "engine": engine.name,
                "size": n,
                "layout": layout,
                "candidates": candidates,
                "load_s": round(loads[engine.name], 2),
                **{k: common.summary_ms(v) for k, v in times[engine.name].items()},
            }
        )
        engine.close()
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = None
    if "postgres" in args.engines and not args.database_url:
        server = throwaway_postgres()
        server.start()
        common.progress(f"PostgreSQL up in {server.startup_seconds:.2f}s")

    def pg_url(label: str) -> str:
        if args.database_url:
            return str(args.database_url)
        assert server is not None
        return str(server.create_database(f"bench_{label.replace('-', '_')}"))

    results: list[dict[str, Any]] = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            for layout in args.layouts.split(","):
                results.extend(run_size(n, layout, args, pg_url))
                common.progress(json.dumps(results[-2:]))
    finally:
        if server is not None:
            server.stop()
    report = {
        "bench": "engines",
        "machine": common.machine_info(),
        "vectors": "random unit vectors (384-d), query embedding excluded",
        "postgres_startup_s": round(server.startup_seconds, 2) if server else None,
        "results": results,
    }
    common.save_report(report, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
