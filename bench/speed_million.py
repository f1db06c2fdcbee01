"""1M memories over 100 projects of one tenant (10k each), recall in one project: Prism only.

One engine per process (``--engine sqlite|postgres``), so RSS is that engine's alone::

    python bench/speed_million.py --engine sqlite --json-out /tmp/m-sqlite.json
    python bench/speed_million.py --engine postgres   # starts a throwaway PostgreSQL

- load: every memorule through ``BulkService.remember_many`` (what a bulk import does:
  validation, records, near-duplicate scan against the project, audit event, one
  transaction per chunk), 1,000 requests per call. Vectors are synthetic random unit
  vectors labelled with the real model's id, so embedding costs ~0 and recall scores
  them exactly as real ones (embedding 1M texts with MiniLM would take ~7 hours here).
- recall in one project (10k candidates of 1M): warm ``no_embed`` (precomputed query vector)
  and ``with_embed`` (MiniLM embeds the query in the call), alternating.
- cold first recall: a new process on the same store (OS page cache warm), its RSS after.
- RSS of the loading process, disk (SQLite file after a WAL checkpoint; PostgreSQL
  ``pg_database_size``) and the PostgreSQL server's memory (PSS summed over its processes).

The peers' local stores cannot hold this here in reasonable time: see the 100k figures of
``speed.py`` (LangGraph InMemoryStore recall ~5 s at 100k; mem0's local Qdrant loads
~60 points/s, i.e. ~4.6 hours for 1M).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--projects", type=int, default=100)
    p.add_argument("--per-project", type=int, default=10_000)
    p.add_argument(
        "--service-projects",
        type=int,
        default=1,
        help="how many projects (the last ones) load through remember_many; the others "
        "through the storage port (remember_many's O(project) near-duplicate scan per item "
        "makes 1M through it ~45 min on this loaded machine)",
    )
    p.add_argument("--repeats", type=int, default=100, help="warm recalls without embedding")
    p.add_argument("--embed-repeats", type=int, default=30, help="warm recalls with embedding")
    p.add_argument("--cold", type=int, default=3, help="first recalls of new processes")
    p.add_argument("--db", type=Path, help="SQLite: the store's file (default: a temp dir)")
    p.add_argument("--database-url", help="PostgreSQL: an existing, empty database")
    p.add_argument("--json-out", type=Path)
    p.add_argument("--probe", help=argparse.SUPPRESS)  # internal: one cold recall, as JSON
    return p.parse_args(argv)


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return round(int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def settings(engine: str, location: str) -> Any:
    from prism_memory.settings import load_settings

    if engine == "sqlite":
        return load_settings(db=Path(location), database_url="", embedder="minilm")
    return load_settings(database_url=location, embedder="minilm")


def request(p: int, i: int) -> dict[str, Any]:
    n = p * 1_000_000 + i
    return {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": f"rule {p}-{i}",
        "body": fx.text_of(n),
        "applies_to": {"scope": "project"},
    }


def probe(engine: str, location: str, project: str) -> dict[str, Any]:
    """A new process's first recall (no query embedding) and its RSS afterwards."""
    from lib.prism_system import build, context

    from prism_memory.domain.contract.recall import validate_recall
    from prism_memory.embeddings.minilm import MiniLMEmbedder

    synth = common.SyntheticEmbedder(MiniLMEmbedder.model_id)
    rss_before = rss_mb()
    svc = build(settings(engine, location), synth)
    ctx = context(project)
    req = {"query": "how do we deploy?", "top_k": 10, "source_type": "memorule"}
    started = time.perf_counter()
    svc.memory.recalls.recall(ctx, validate_recall(req))
    first = time.perf_counter() - started
    started = time.perf_counter()
    svc.memory.recalls.recall(ctx, validate_recall(req))
    second = time.perf_counter() - started
    svc.close()
    return {"first_s": first, "second_s": second, "rss_before_mb": rss_before, "rss_mb": rss_mb()}


def cold_recall(engine: str, location: str, project: str) -> dict[str, Any]:
    """``probe`` in a new process (so nothing is cached, and its RSS is a server's own)."""
    cmd = [sys.executable, __file__, "--engine", engine, "--probe", project]
    cmd += ["--db" if engine == "sqlite" else "--database-url", location]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def postgres_server_mb(server: Any) -> float | None:
    """PSS of the throwaway server's processes, summed (shared buffers counted once)."""
    if server is None:
        return None
    pid = int((server.data_dir / "postmaster.pid").read_text().split()[0])
    pids = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    pids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    total_kb = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return round(total_kb / 1024, 1)


def disk_bytes(engine: str, location: str) -> int:
    if engine == "sqlite":
        import sqlite3

        with sqlite3.connect(location) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        path = Path(location)
        return sum(common.dir_size(f) for f in path.parent.glob(path.name + "*"))
    import psycopg

    with psycopg.connect(location) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def load_project(svc: Any, p: int, per_project: int, service_path: bool) -> None:
    """Project ``p``'s memorules: through ``remember_many``, or the storage port."""
    from lib.prism_system import context

    from prism_memory.domain.contract.remember import validate_remember_many

    ctx = context(f"million-{p}")
    for lo in range(0, per_project, 1000):
        hi = min(lo + 1000, per_project)
        if service_path:
            svc.memory.bulk.remember_many(
                ctx, validate_remember_many([request(p, i) for i in range(lo, hi)])
            )
        else:
            texts = [fx.text_of(p * 1_000_000 + i) for i in range(lo, hi)]
            fx.prism_load(svc, ctx, lo, texts, svc.memory.deps.embedder.embed(texts))


def load(svc: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Every project, with progress; the last ``--service-projects`` through the service."""
    total = args.projects * args.per_project
    first_service = args.projects - args.service_projects
    started = time.perf_counter()
    fixture_s = service_s = 0.0
    for p in range(args.projects):
        t = time.perf_counter()
        load_project(svc, p, args.per_project, p >= first_service)
        took = time.perf_counter() - t
        if p >= first_service:
            service_s += took
        else:
            fixture_s += took
        done = (p + 1) * args.per_project
        elapsed = time.perf_counter() - started
        path = "remember_many" if p >= first_service else "storage port"
        common.progress(
            f"million/{args.engine}: {done}/{total} in {elapsed:.0f} s "
            f"({done / elapsed:.0f}/s; project {p}: {args.per_project / took:.0f}/s, {path}; "
            f"ETA {(total - done) * elapsed / done:.0f} s, RSS {rss_mb()} MB, "
            f"load {os.getloadavg()[0]:.1f})"
        )
    seconds = time.perf_counter() - started
    fixture_n = first_service * args.per_project
    service_n = args.service_projects * args.per_project
    return {
        "load_s": round(seconds, 1),
        "load_per_s": round(total / seconds, 1),
        "storage_port": {
            "items": fixture_n,
            "seconds": round(fixture_s, 1),
            "per_s": round(fixture_n / fixture_s, 1) if fixture_s else None,
        },
        "remember_many": {
            "items": service_n,
            "seconds": round(service_s, 1),
            "per_s": round(service_n / service_s, 1) if service_s else None,
        },
    }


def measure(args: argparse.Namespace, location: str, server: Any) -> dict[str, Any]:
    from lib.peers import SwitchEmbedder
    from lib.prism_system import build, context

    from prism_memory.domain.contract.recall import validate_recall

    real = common.make_embedder("minilm")
    real.embed(["warm up the model"])
    synth = common.SyntheticEmbedder(real.model_id, real.dim)
    switch = SwitchEmbedder(synth)
    svc = build(settings(args.engine, location), switch)
    out: dict[str, Any] = {
        "engine": args.engine,
        "memories": args.projects * args.per_project,
        "projects": args.projects,
        "per_project": args.per_project,
        "loader": (
            f"{args.projects - args.service_projects} projects through the storage port "
            "(complete memorules in batches of 1,000), the last "
            f"{args.service_projects} through BulkService.remember_many (1,000 per call)"
        ),
        "loadavg_start": os.getloadavg(),
    }
    out.update(load(svc, args))
    out["rss_after_load_mb"] = rss_mb()
    project = f"million-{args.projects // 2}"
    out["recall_project"] = project
    common.progress(f"million/{args.engine}: cold recalls in new processes")
    colds = [cold_recall(args.engine, location, project) for _ in range(args.cold)]
    out["cold_first_recall"] = common.summary_ms([c["first_s"] for c in colds])
    out["cold_second_recall"] = common.summary_ms([c["second_s"] for c in colds])
    out["cold_process_rss_mb"] = sorted(c["rss_mb"] for c in colds)[len(colds) // 2]
    ctx = context(project)
    queries = fx_queries()
    req = {"top_k": 10, "source_type": "memorule"}
    svc.memory.recalls.recall(
        ctx, validate_recall({**req, "query": queries[0]})
    )  # warm: this project's cache loads
    no_embed, with_embed = [], []
    for i in range(max(args.repeats, args.embed_repeats)):
        if i < args.repeats:
            switch.inner = synth
            t = time.perf_counter()
            svc.memory.recalls.recall(
                ctx, validate_recall({**req, "query": queries[i % len(queries)]})
            )
            no_embed.append(time.perf_counter() - t)
        if i < args.embed_repeats:
            switch.inner = real
            t = time.perf_counter()
            svc.memory.recalls.recall(
                ctx, validate_recall({**req, "query": queries[(i + 1) % len(queries)]})
            )
            with_embed.append(time.perf_counter() - t)
    out["recall_no_embed"] = common.summary_ms(no_embed)
    out["recall_with_embed"] = common.summary_ms(with_embed)
    out["candidates"] = svc.memory.recalls.recall(
        ctx, validate_recall({**req, "query": ""})
    ).candidates
    out["rss_end_mb"] = rss_mb()
    out["peak_rss_mb"] = common.peak_rss_mb()
    out["postgres_server_pss_mb"] = postgres_server_mb(server)
    svc.close()
    size = disk_bytes(args.engine, location)
    out["disk_mb"] = round(size / 2**20, 1)
    out["disk_bytes_per_1k"] = round(size * 1000 / out["memories"])
    out["loadavg_end"] = os.getloadavg()
    return out


def fx_queries() -> list[str]:
    from lib.speed_fixtures import task_texts

    return task_texts()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.probe:
        location = str(args.db) if args.engine == "sqlite" else str(args.database_url)
        print(json.dumps(probe(args.engine, location, args.probe)))
        return 0
    common.install_offline_guard()
    server = None
    work = None  # a temp dir for the SQLite store when --db names none (deleted at the end)
    if args.engine == "sqlite":
        if args.db is None:
            work = Path(tempfile.mkdtemp(prefix="bench-million-"))
        location = str(args.db or work / "prism.db")
    elif args.database_url:
        location = args.database_url
    else:
        from engines import throwaway_postgres

        server = throwaway_postgres()
        server.start()
        location = str(server.create_database("bench_million"))
        common.progress(f"PostgreSQL up in {server.startup_seconds:.2f} s ({server.data_dir})")
    try:
        result = measure(args, location, server)
    finally:
        if server is not None:
            server.stop()
        if work is not None:
            shutil.rmtree(work)
    common.save_report(result, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
