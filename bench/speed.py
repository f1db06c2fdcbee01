"""Speed and scale, Prism and the peers side by side in one process, alternating.

Figures (medians and p99 over repeats; every system measured in the same rounds):

- recall latency at each size (one project/user/namespace holding N memories, synthetic
  vectors; see ``lib/speed_fixtures.py``), ``no_embed``: the query vector costs ~0 (a
  precomputed synthetic vector), so the figure is the store + ranking + result fetch;
  ``with_embed``: the query is embedded by the real model inside the call.
- write latency of one memorule (real model, embedding included) on the store at that size.
- bulk import rate with the real model into an empty store (real rule texts).
- RSS growth per system after loading the fixture, the process peak (ru_maxrss), on-disk
  bytes per 1k memories, MCP cold start (``prism mcp`` over stdio) when it exists.

    python bench/speed.py --sizes 1000,10000,100000 --json-out bench/results/speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx
from lib.peers import SwitchEmbedder, make_peer

GROUP = "scale"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000,100000", help="store sizes, comma-separated")
    p.add_argument("--systems", default="prism,mem0,langgraph-memory,langgraph-sqlite")
    p.add_argument("--repeats", type=int, default=100, help="recalls per system per size")
    p.add_argument("--embed-repeats", type=int, default=30, help="recalls with embedding")
    p.add_argument("--write-repeats", type=int, default=30, help="single writes per size")
    p.add_argument("--bulk", type=int, default=1000, help="items for the bulk import rate")
    p.add_argument("--max-size", default="", help='per-system cap, e.g. "mem0=10000"')
    p.add_argument("--mcp-repeats", type=int, default=3, help="MCP cold starts (0: skip)")
    p.add_argument(
        "--budget-s",
        type=float,
        default=60.0,
        help="per system and phase: a slow system stops after this many seconds (>= 5 samples)",
    )
    p.add_argument(
        "--vectors",
        choices=("minilm-like", "random"),
        default="minilm-like",
        help="store vectors: drawn from a Gaussian fitted to MiniLM embeddings of 2,000 "
        "shipped rules (queries: the dev tasks really embedded), or random unit vectors",
    )
    p.add_argument("--json-out", type=Path, default=None, help="write the results here")
    return p.parse_args(argv)


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return round(int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


class Subject:
    """One system under test with its embedder switch and fixture loader."""

    def __init__(self, name: str, real: Any, table: fx.VectorTable) -> None:
        self.name = name
        self.switch = SwitchEmbedder(table)
        self.table = table
        self.real = real
        self.size = 0
        self.workdir = Path(tempfile.mkdtemp(prefix=f"bench-speed-{name}-"))
        if name == "prism":
            from lib.prism_system import build, context, settings_for

            self.db = self.workdir / "prism.db"
            self.svc = build(settings_for(self.db, "minilm"), self.switch)
            self.ctx = context(GROUP, surface="python")
            self.peer = None
        else:
            self.peer = make_peer(name, self.switch)

    def load(self, start: int, texts: list[str], matrix: Any) -> None:
        if self.name == "prism":
            fx.prism_load(self.svc, self.ctx, start, texts, matrix)
        elif self.name == "mem0":
            fx.mem0_load(self.peer, GROUP, start, texts, matrix)
        else:
            fx.langgraph_load(self.peer, self.table, GROUP, start, texts, matrix)
        self.size = start + len(texts)

    def recall(self, query: str) -> int:
        from prism_memory.domain.contract.recall import validate_recall

        if self.peer is None:
            req = {"query": query, "top_k": 10, "source_type": "memorule"}
            return len(self.svc.memory.recalls.recall(self.ctx, validate_recall(req)).matches)
        return len(self.peer.search(GROUP, query, 10))

    def write_one(self, text: str) -> None:
        from prism_memory.domain.contract.remember import validate_remember

        if self.peer is None:
            req = {
                "kind": "memorule",
                "memorule_kind": "behavioral_rule",
                "subject": text.splitlines()[0][:80].ljust(4, "."),
                "body": text,
                "applies_to": {"scope": "project"},
            }
            self.svc.memory.writes.remember(self.ctx, validate_remember(req))
        else:
            self.peer.add_one(GROUP, f"w{time.perf_counter_ns()}", text, {})

    def disk_bytes(self) -> int | None:
        """Bytes on disk now (Prism: after a WAL checkpoint, so the file holds everything)."""
        if self.peer is None:
            import sqlite3

            with sqlite3.connect(self.db) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return common.dir_size(self.workdir)
        path = self.peer.size_path()
        if path is None or self.name == "langgraph-memory":
            return None
        return common.dir_size(path)

    def close(self) -> None:
        if self.peer is None:
            self.svc.close()
        else:
            self.peer.close()


def alternate(
    subjects: list[Subject], work: Any, repeats: int, budget_s: float
) -> dict[str, list[float]]:
    """``work(subject, i)`` timed ``repeats`` times per subject, round-robin.

    A subject that has spent ``budget_s`` (and has 5 samples) sits out the later rounds.
    """
    times: dict[str, list[float]] = {s.name: [] for s in subjects}
    for i in range(repeats):
        order = subjects if i % 2 == 0 else subjects[::-1]
        for s in order:
            if len(times[s.name]) >= 5 and sum(times[s.name]) > budget_s:
                continue
            started = time.perf_counter()
            work(s, i)
            times[s.name].append(time.perf_counter() - started)
    return times


def bulk_import(names: list[str], texts: list[str], real: Any) -> dict[str, Any]:
    """Items/s into an empty store, real model, each system's bulk path (and Prism's loop)."""
    from lib.prism_system import build, context, settings_for

    from prism_memory.domain.contract.remember import validate_remember, validate_remember_many

    out: dict[str, Any] = {}
    # Every path runs on a warm model: the first batch of a new shape is slow in onnxruntime
    # (32 items took 15 s where the next path took 5 s), and it would fall on Prism, first.
    real.embed([f"warm-up text {i}: the model sees a full batch once" for i in range(32)])
    # The cached pair isolates the write path (validation, records, near-duplicate scan,
    # transactions): the same texts again, every vector a cache hit.
    cached = common.CachedEmbedder(real, Path(tempfile.mkdtemp(prefix="bench-vec-")) / "v.db")
    runs = [
        ("prism", "remember_many", cached),
        ("prism", "remember", real),
        ("prism", "remember_many (vectors cached)", cached),
        ("prism", "remember (vectors cached)", cached),
    ] + [(n, "add", real) for n in names if n != "prism"]
    for name, path, embedder in runs:
        work = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
        reqs = [
            {
                "kind": "memorule",
                "memorule_kind": "behavioral_rule",
                "subject": t.splitlines()[0][:80].ljust(4, "."),
                "body": t,
                "applies_to": {"scope": "project"},
            }
            for t in texts
        ]
        started = time.perf_counter()
        if name == "prism":
            svc = build(settings_for(work / "p.db", "minilm"), embedder)
            ctx = context("bulk")
            if path.startswith("remember_many"):
                for part in common.chunks(reqs, 256):
                    svc.memory.bulk.remember_many(ctx, validate_remember_many(part))
            else:
                for req in reqs:
                    svc.memory.writes.remember(ctx, validate_remember(req))
            svc.close()
        else:
            peer = make_peer(name, embedder)
            peer.add("bulk", [(f"b{i}", t, {}) for i, t in enumerate(texts)])
            peer.close()
        seconds = time.perf_counter() - started
        label = f"{name}.{path}" if name == "prism" else name
        out[label] = {"items": len(texts), "seconds": round(seconds, 2)}
        out[label]["per_s"] = round(len(texts) / seconds, 1)
        common.progress(f"bulk {label}: {out[label]['per_s']}/s")
    return out


def _rpc(proc: Any, msg_id: int, method: str, params: dict[str, Any]) -> Any:
    """One JSON-RPC request over the process's stdio; its reply."""
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("prism mcp closed stdout")
        reply = json.loads(line)
        if reply.get("id") == msg_id:
            return reply


def mcp_cold_start(repeats: int) -> dict[str, Any]:
    """``python -m prism_memory mcp`` over stdio: spawn -> initialize -> tools/list -> first
    recall."""
    env = {**os.environ, "PYTHONPATH": str(common.BACKEND), "PRISM_EMBEDDER": "minilm"}
    probe = subprocess.run(
        [sys.executable, "-m", "prism_memory", "mcp", "--help"],
        env=env,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return {"skipped": "prism mcp is not available: " + probe.stderr.strip()[-200:]}
    rows = []
    for _ in range(repeats):
        db = Path(tempfile.mkdtemp(prefix="bench-mcp-")) / "p.db"
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "prism_memory", "mcp", "--db", str(db)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin and proc.stdout

        info = {"protocolVersion": "2025-06-18", "capabilities": {}}
        info["clientInfo"] = {"name": "bench", "version": "0"}
        _rpc(proc, 1, "initialize", info)
        t_init = time.perf_counter() - started
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        proc.stdin.flush()
        _rpc(proc, 2, "tools/list", {})
        t_tools = time.perf_counter() - started
        args = {"name": "semantic_recall", "arguments": {"query": "how do we deploy?"}}
        reply = _rpc(proc, 3, "tools/call", args)
        t_recall = time.perf_counter() - started
        proc.stdin.close()
        proc.wait(timeout=30)
        rows.append(
            {
                "initialize_s": t_init,
                "tools_list_s": t_tools,
                "first_recall_s": t_recall,
                "recall_error": bool(reply.get("result", {}).get("isError") or "error" in reply),
            }
        )
    keys = ("initialize_s", "tools_list_s", "first_recall_s")
    return {
        "repeats": repeats,
        **{k: round(sorted(r[k] for r in rows)[len(rows) // 2], 3) for k in keys},
        "any_recall_error": any(r["recall_error"] for r in rows),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    common.install_offline_guard()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    caps = dict(c.split("=") for c in args.max_size.split(",") if c)
    names = [n for n in args.systems.split(",") if n]
    real = common.make_embedder("minilm")
    real.embed(["warm up the model"])
    table = fx.VectorTable(real.model_id)
    queries = fx.task_texts()
    moments = None
    if args.vectors == "minilm-like":
        moments = common.minilm_moments(real, fx.rule_texts(2000))
        table.register(queries, real.embed(queries))  # the no-embed phase's query vectors
    result: dict[str, Any] = {"settings": vars(args) | {"json_out": str(args.json_out)}}
    base_rss = rss_mb()
    subjects = [Subject(n, real, table) for n in names]
    result["sizes"] = {}
    for size in sizes:
        active = [s for s in subjects if size <= int(caps.get(s.name, 10**9))]
        common.progress(f"size {size}: loading {[s.name for s in active]}")
        start = max(s.size for s in active) if active else 0
        if moments is not None:
            matrix = common.minilm_like_matrix(size, moments, seed=size)
        else:
            matrix = common.synthetic_matrix(size, seed=size)
        texts = [fx.text_of(i) for i in range(size)]
        row: dict[str, Any] = {}
        for s in active:
            before, started = rss_mb(), time.perf_counter()
            s.load(s.size, texts[s.size :], matrix[s.size :])
            row[s.name] = {
                "fixture_load_s": round(time.perf_counter() - started, 2),
                "rss_growth_mb": round(rss_mb() - before, 1),
            }
            common.progress(f"  {s.name}: {s.size} loaded, {row[s.name]}")
        del start

        def recall(s: Subject, i: int) -> None:
            s.recall(queries[i % len(queries)])

        for s in active:  # warm-up: first query builds caches, loads indexes
            s.switch.inner = table
            recall(s, 0)
        timings = alternate(active, recall, args.repeats, args.budget_s)
        for s in active:
            s.switch.inner = real
        embed_t = alternate(active, recall, args.embed_repeats, args.budget_s)
        write_texts = fx.rule_texts(args.write_repeats * (len(active) + 1) + 500)[500:]

        after: dict[str, list[float]] = {s.name: [] for s in active}
        write_seconds: dict[str, list[float]] = {s.name: [] for s in active}

        def write(s: Subject, i: int, texts: list[str] = write_texts, act: list = active) -> None:
            s.write_one(texts[(i * len(act) + act.index(s)) % len(texts)])

        def write_then_recall(
            s: Subject, i: int, log: dict = after, wlog: dict = write_seconds
        ) -> None:
            started = time.perf_counter()
            write(s, i)
            done = time.perf_counter()
            s.switch.inner = table
            recall(s, i)  # the first recall after a write (caches must catch up)
            log[s.name].append(time.perf_counter() - done)
            s.switch.inner = real
            wlog[s.name].append(done - started)

        alternate(active, write_then_recall, args.write_repeats, args.budget_s)
        write_t = write_seconds
        for s in active:
            s.switch.inner = table
            disk = s.disk_bytes()
            row[s.name].update(
                {
                    "recall_no_embed": common.summary_ms(timings[s.name]),
                    "recall_with_embed": common.summary_ms(embed_t[s.name]),
                    "write_one": common.summary_ms(write_t[s.name]),
                    "recall_after_write": common.summary_ms(after[s.name]),
                    "disk_bytes_per_1k": round(disk * 1000 / s.size) if disk else None,
                }
            )
        if "prism" in row:
            p50 = row["prism"]["recall_no_embed"]["p50_ms"]
            for r in row.values():
                r["ratio_to_prism_no_embed_p50"] = round(r["recall_no_embed"]["p50_ms"] / p50, 2)
        result["sizes"][str(size)] = row
        common.progress(f"size {size}: {json.dumps(common.jsonable(row))[:400]}")
    for s in subjects:
        s.close()
    result["rss_start_mb"] = base_rss
    result["peak_rss_mb"] = common.peak_rss_mb()
    result["bulk_import"] = bulk_import(names, fx.rule_texts(args.bulk), real) if args.bulk else {}
    result["mcp_cold_start"] = mcp_cold_start(args.mcp_repeats) if args.mcp_repeats else {}
    result["network_attempts"] = list(common.ATTEMPTS)
    common.save_report(result, args.json_out)
    return result


if __name__ == "__main__":
    main()
