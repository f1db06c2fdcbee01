"""Recall across many projects and restarts: Prism on SQLite, Prism on PostgreSQL and plain
pgvector on the same PostgreSQL data, side by side in one run.

Not a test. From the repository root (starts a throwaway PostgreSQL 18 + pgvector)::

    python bench/many_projects.py --json-out /tmp/many.json
    python bench/many_projects.py --quick        # 50 projects x 500, cold at 10k only

What is measured (one tenant; vectors MiniLM-like: drawn from real MiniLM embeddings' mean
and covariance, labelled with the real model's id; query vectors precomputed, so no
embedding is timed; every store is loaded through the storage port in batches of one
project, 2,000 complete memorules per transaction):

- ``recall``: top 10 memorules through ``RecallService.recall``, for each system on its own
  services (a new process's state: nothing cached when the run starts), in one loop where
  the systems take turns query by query, same project sequence for all:
  ``rotating-8`` (8 projects in turn: every recall after the first round hits the process's
  cache), ``spread-200`` (uniformly random over all projects), on SQLite also
  ``spread-200-small`` (``PRISM_RECALL_CACHE_MB`` too small for all projects), and plain
  pgvector on spread-200: ``WHERE tenant_id … AND project_id … ORDER BY vector <=> $1
  LIMIT 10`` then the 10 records (memory + current state). One untimed pass over every
  project first, in random order, so the caches are in their steady state.
- ``write``: one memorule through ``WriteService.remember`` (validation, near-duplicate
  probe, transaction) into a project this process never touched (``cold``), and again into
  one it just wrote to (``warm``).
- ``cold``: one project of 10k and of 100k memories in its own store: the loading process's
  first recall (on SQLite that builds and stores the project's recall segment), then new
  processes' first and second recall and their RSS; ``cycle``: a new process recalling once
  in every project of the many-projects store, its RSS after.

Medians and p99 in ms; the machine's load average is recorded at start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx
import numpy as np

TOP_K = 10


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="50 projects x 500, cold at 10k")
    p.add_argument("--projects", type=int, default=200)
    p.add_argument("--per-project", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=200, help="timed recalls per system")
    p.add_argument("--writes", type=int, default=20, help="timed writes per engine and kind")
    p.add_argument("--cold-sizes", default="10000,100000")
    p.add_argument("--cold", type=int, default=3, help="new processes per engine and size")
    p.add_argument("--small-cache-mb", type=int, default=64)
    p.add_argument("--engines", default="sqlite,postgres")
    p.add_argument("--vectors", choices=("minilm-like", "random"), default="minilm-like")
    p.add_argument("--json-out", type=Path)
    # internal: a new process's recalls (probe)
    p.add_argument("--probe", help=argparse.SUPPRESS)
    p.add_argument("--probe-engine", help=argparse.SUPPRESS)
    p.add_argument("--location", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--cycle", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.projects, args.per_project, args.rounds = 50, 500, 60
        args.writes, args.cold_sizes, args.cold = 8, "10000", 2
    return args


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return round(int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def settings(engine: str, location: str, cache_mb: int | None = None) -> Any:
    from prism_memory.settings import load_settings

    extra = {} if cache_mb is None else {"recall_cache_mb": cache_mb}
    if engine == "sqlite":
        return load_settings(db=Path(location), database_url="", embedder="fake", **extra)
    return load_settings(database_url=location, embedder="fake", **extra)


def services(engine: str, location: str, table: Any, cache_mb: int | None = None) -> Any:
    from lib.prism_system import build

    return build(settings(engine, location, cache_mb), table)


def project(name: str) -> Any:
    from lib.prism_system import context

    return context(name)


QUERIES = [f"how do we handle case {i} here?" for i in range(64)]


def query_table(model: str, matrix: np.ndarray) -> tuple[Any, list[str]]:
    """An 'embedder' serving precomputed vectors for :data:`QUERIES` (no embedding)."""
    table = fx.VectorTable(model)
    table.register(QUERIES, matrix)
    return table, QUERIES


def vectors(n: int, moments: Any, seed: int) -> np.ndarray:
    if moments is None:
        return common.synthetic_matrix(n, seed=seed)
    return common.minilm_like_matrix(n, moments, seed=seed)


def load(svc: Any, name: str, n: int, moments: Any, seed: int) -> None:
    ctx = project(name)
    for lo in range(0, n, 2000):
        hi = min(n, lo + 2000)
        texts = [fx.text_of(seed * 1_000_000 + i) for i in range(lo, hi)]
        fx.prism_load(svc, ctx, lo, texts, vectors(hi - lo, moments, seed * 1000 + lo))


def recall(svc: Any, name: str, query: str) -> int:
    from prism_memory.domain.contract.recall import validate_recall

    req = {"query": query, "top_k": TOP_K, "source_type": "memorule"}
    return len(svc.memory.recalls.recall(project(name), validate_recall(req)).matches)


def ask(system: Any, name: str, query: str) -> None:
    """One recall on Prism's services or on plain pgvector."""
    if isinstance(system, PlainPgvector):
        system.recall(name, query)
    else:
        recall(system, name, query)


def write(svc: Any, name: str, i: int) -> None:
    from prism_memory.domain.contract.remember import validate_remember

    svc.memory.writes.remember(
        project(name),
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "convention",
                "subject": f"bench write {i}",
                "body": f"written during the many-projects bench {i}: check the deploy checklist",
                "applies_to": {"scope": "project"},
            }
        ),
    )


class PlainPgvector:
    """The same PostgreSQL data queried as a plain pgvector application would."""

    def __init__(self, url: str, table: Any) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.table = table

    def recall(self, name: str, query: str) -> int:
        ctx = project(name)
        vec = "[" + ",".join(f"{x:.7g}" for x in self.table.embed([query])[0]) + "]"
        ids = [
            r[0]
            for r in self.conn.execute(
                "SELECT memory_id FROM recall_index WHERE tenant_id = %s AND project_id = %s "
                "AND active AND kind = 'memorule' ORDER BY vector <=> %s::vector LIMIT %s",
                (ctx.tenant_id, ctx.project_id, vec, TOP_K),
            )
        ]
        rows = self.conn.execute(
            "SELECT m.*, s.* FROM memory m JOIN memory_state s ON s.tenant_id = m.tenant_id "
            "AND s.memory_id = m.id AND s.version = m.current_version "
            "WHERE m.tenant_id = %s AND m.id = ANY(%s)",
            (ctx.tenant_id, ids),
        ).fetchall()
        return len(rows)

    def close(self) -> None:
        self.conn.close()


def probe(args: argparse.Namespace) -> dict[str, Any]:
    """A new process: first and second recall in one project, then optionally one recall
    in each of ``--cycle`` projects; RSS along the way."""
    table, queries = query_table(args.model, np.load(args.queries))
    rss_before = rss_mb()
    svc = services(args.probe_engine, args.location, table)
    started, cpu = time.perf_counter(), time.process_time()
    recall(svc, args.probe, queries[0])
    first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
    started = time.perf_counter()
    recall(svc, args.probe, queries[1])
    second = time.perf_counter() - started
    out = {
        "first_s": first,
        "first_cpu_s": first_cpu,
        "second_s": second,
        "rss_before_mb": rss_before,
        "rss_mb": rss_mb(),
    }
    if args.cycle:
        started = time.perf_counter()
        for p in range(args.cycle):
            recall(svc, f"p{p}", queries[p % len(queries)])
        out["cycle_s"] = time.perf_counter() - started
        out["cycle_rss_mb"] = rss_mb()
    svc.close()
    return out


def new_process(data: Data, engine: str, location: str, name: str, cycle: int = 0) -> Any:
    cmd = [sys.executable, __file__, "--probe-engine", engine, "--location", location]
    cmd += ["--probe", name, "--model", data.model, "--queries", str(data.queries)]
    cmd += ["--cycle", str(cycle)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@dataclass(frozen=True)
class Data:
    """How the run's vectors are made: the model id they carry, the distribution they are
    drawn from (None: random unit vectors) and the query vectors' file (for new processes)."""

    model: str
    moments: Any
    queries: Path

    def table(self) -> tuple[Any, list[str]]:
        return query_table(self.model, np.load(self.queries))


def many(args: argparse.Namespace, where: dict[str, str], data: Data) -> Any:
    """The many-projects store on every engine: recall loop, writes, a cycling process."""
    table, queries = data.table()
    moments = data.moments
    names = [f"p{i}" for i in range(args.projects)]
    loading: dict[str, Any] = {}
    for engine, location in where.items():
        svc = services(engine, location, table)
        common.progress(f"many/{engine}: loading {args.projects} x {args.per_project}")
        started = time.perf_counter()
        for i, name in enumerate(names):
            load(svc, name, args.per_project, moments, seed=i + 1)
        loading[engine] = {"load_s": round(time.perf_counter() - started, 1)}
        started = time.perf_counter()  # a first recall per project (SQLite: stores segments)
        for name in names:
            recall(svc, name, queries[0])
        loading[engine]["first_recall_each_project_s"] = round(time.perf_counter() - started, 1)
        svc.close()
    systems: dict[str, Any] = {}
    spread = f"spread-{args.projects}"
    for engine, location in where.items():
        systems[f"{engine} rotating-8"] = ("rot", services(engine, location, table))
        systems[f"{engine} {spread}"] = ("spread", services(engine, location, table))
        if engine == "sqlite":
            small = services(engine, location, table, args.small_cache_mb)
            systems[f"sqlite {spread}, {args.small_cache_mb} MB cache"] = ("spread", small)
        if engine == "postgres":
            systems[f"plain pgvector {spread}"] = ("spread", PlainPgvector(location, table))
    rng = random.Random(13)
    rotation = names[:8]
    warm = names[:]
    rng.shuffle(warm)
    for kind, svc in systems.values():  # untimed: each system's steady state
        for p in rotation if kind == "rot" else warm:
            ask(svc, p, queries[0])
    times: dict[str, list[float]] = {name: [] for name in systems}
    order = list(systems.items())
    for i in range(args.rounds):
        spread_project, query = rng.choice(names), queries[i % len(queries)]
        for name, (kind, svc) in order if i % 2 == 0 else order[::-1]:
            p = rotation[i % len(rotation)] if kind == "rot" else spread_project
            started = time.perf_counter()
            ask(svc, p, query)
            times[name].append(time.perf_counter() - started)
    out: dict[str, Any] = {"loading": loading, "recall": {}}
    for name, samples in times.items():
        out["recall"][name] = common.summary_ms(samples)
        caches = getattr(getattr(systems[name][1], "store", None), "caches", None)
        if caches is not None:
            out["recall"][name]["cache_mb"] = round(caches.nbytes() / 2**20, 1)
    out["rss_mb_all_systems_in_this_process"] = rss_mb()
    for _, svc in systems.values():
        svc.close()
    out["write"] = writes(args, where, table, names)
    common.progress("many: a new process recalling once in every project")
    out["cycle_process"] = {
        engine: new_process(data, engine, location, names[0], cycle=args.projects)
        for engine, location in where.items()
    }
    return out


def writes(args: argparse.Namespace, where: dict[str, str], table: Any, names: list[str]) -> Any:
    """Writes into projects never touched by this process, then into one just written."""
    fresh = {engine: services(engine, location, table) for engine, location in where.items()}
    times: dict[str, dict[str, list[float]]] = {e: {"cold": [], "warm": []} for e in fresh}
    cold = names[-args.writes :]
    for i in range(args.writes):
        for engine, svc in list(fresh.items())[:: 1 if i % 2 == 0 else -1]:
            started = time.perf_counter()
            write(svc, cold[i], i)
            times[engine]["cold"].append(time.perf_counter() - started)
            started = time.perf_counter()
            write(svc, cold[i], 10_000 + i)
            times[engine]["warm"].append(time.perf_counter() - started)
    for svc in fresh.values():
        svc.close()
    return {e: {k: common.summary_ms(v) for k, v in t.items()} for e, t in times.items()}


def cold_starts(args: argparse.Namespace, make: Any, data: Data) -> Any:
    """Per engine and size: one project of that size in its own store; new processes."""
    table, queries = data.table()
    out: dict[str, Any] = {}
    for size in (int(s) for s in args.cold_sizes.split(",") if s):
        for engine in args.engines.split(","):
            location = make(engine, f"cold_{size}")
            svc = services(engine, location, table)
            common.progress(f"cold/{engine}: loading {size}")
            load(svc, "big", size, data.moments, seed=500)
            started = time.perf_counter()
            recall(svc, "big", queries[0])
            built = time.perf_counter() - started
            svc.close()
            probes = [new_process(data, engine, location, "big") for _ in range(args.cold)]
            out[f"{engine} {size}"] = {
                "loading_process_first_recall_ms": round(built * 1000, 1),
                "first_recall": common.summary_ms([p["first_s"] for p in probes]),
                "first_recall_cpu": common.summary_ms([p["first_cpu_s"] for p in probes]),
                "second_recall": common.summary_ms([p["second_s"] for p in probes]),
                "rss_before_mb": sorted(p["rss_before_mb"] for p in probes)[len(probes) // 2],
                "rss_after_mb": sorted(p["rss_mb"] for p in probes)[len(probes) // 2],
            }
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args)))
        return 0
    common.install_offline_guard()
    engines = [e for e in args.engines.split(",") if e]
    work = Path(tempfile.mkdtemp(prefix="bench-many-"))
    server = None
    if "postgres" in engines:
        from engines import throwaway_postgres

        server = throwaway_postgres()
        server.start()
        common.progress(f"PostgreSQL up in {server.startup_seconds:.2f} s")

    def make(engine: str, label: str) -> str:
        if engine == "sqlite":
            return str(work / f"{label}.db")
        assert server is not None
        return str(server.create_database(f"bench_{label}"))

    moments, model = None, "all-MiniLM-L6-v2-int8-onnx"
    if args.vectors == "minilm-like":
        from lib.speed_fixtures import rule_texts

        real = common.make_embedder("minilm")
        model, moments = real.model_id, common.minilm_moments(real, rule_texts(2000))
    data = Data(model, moments, work / "queries.npy")
    np.save(data.queries, vectors(len(QUERIES), moments, seed=99))
    result: dict[str, Any] = {
        "bench": "many_projects",
        "settings": {k: str(v) for k, v in vars(args).items()},
        "vectors": args.vectors,
        "machine": common.machine_info(),
        "loadavg_start": os.getloadavg(),
    }
    try:
        where = {engine: make(engine, "many") for engine in engines}
        result["many"] = many(args, where, data)
        result["cold"] = cold_starts(args, make, data)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    common.save_report(result, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
