"""SQLite recall from a cold process: a large project's first recall, many projects under a
small cache budget, and the first-ever segment build — this code against another commit's,
side by side in one run.

Not a test. From the repository root::

    git archive <commit> backend | tar -x -C /tmp/prism-before   # the code to compare with
    python bench/cold_start.py \
        --before /tmp/prism-before/backend --json-out bench/results/cold_start.json

What is measured (MiniLM-like vectors labelled with the real model's id, as in
``many_projects.py``; query vectors precomputed, so no embedding is timed; each variant
works on its own copy of the same stores, so neither reads the other's segments):

- ``build``: one new process per variant over a store whose ``size``-memory project has no
  segment yet: its first recall (builds the cache from ``recall_index`` and stores the
  segment) — the first recall ever of a project.
- ``cold``: ``--runs`` new processes per variant, variants alternating: RSS before, first
  recall (time and CPU: it loads the stored segment), RSS after, then ``--warm`` warm recalls.
- ``restore``: 1/8 more rows added to the project by another process, then a new process's
  first recall (loads the segment and folds them in; an eighth of the rows then held is
  more than that, so no segment is stored anew).
- ``many``: ``--projects`` × ``--per-project`` memorules of one tenant; per variant one
  process with three systems taking turns query by query: ``rotating-8`` (in cache),
  ``spread`` (a random project each time, default budget) and ``spread, small`` (the same
  with ``PRISM_RECALL_CACHE_MB=--small-cache-mb``: almost every recall is a miss). An
  untimed pass over every project first. The variants run in alternating blocks.

Medians and p99 in ms; the load average is recorded at start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lib.common as common
import many_projects as mp
import numpy as np

HERE = Path(__file__).resolve().parent


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=100_000, help="memories of the large project")
    p.add_argument("--runs", type=int, default=5, help="new processes per variant (cold)")
    p.add_argument("--warm", type=int, default=20, help="warm recalls per cold process")
    p.add_argument("--projects", type=int, default=200)
    p.add_argument("--per-project", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=200, help="timed recalls per system (many)")
    p.add_argument("--blocks", type=int, default=2, help="alternating blocks per variant")
    p.add_argument("--small-cache-mb", type=int, default=64)
    p.add_argument("--steps", default="build,cold,restore,many")
    p.add_argument("--before", type=Path, help="another checkout's backend/ to compare with")
    p.add_argument("--vectors", choices=("minilm-like", "random"), default="minilm-like")
    p.add_argument("--work", type=Path, default=common.CACHE / "cold_start")
    p.add_argument("--json-out", type=Path)
    p.add_argument("--md-out", type=Path)
    # internal: one new process's part of the run
    p.add_argument("--probe", choices=("build", "cold", "many"), help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    return p.parse_args(argv)


# --- inside a probe process (PRISM_BACKEND: the variant's code) ---------------------------


def probe_first(args: argparse.Namespace) -> dict[str, Any]:
    """First recall of ``big`` in this new process, then warm recalls."""
    table, queries = mp.query_table(args.model, np.load(args.queries))
    rss_before = mp.rss_mb()
    svc = mp.services("sqlite", args.db, table)
    started, cpu = time.perf_counter(), time.process_time()
    mp.recall(svc, "big", queries[0])
    first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
    rss_first = mp.rss_mb()
    warm = []
    for i in range(args.warm):
        started = time.perf_counter()
        mp.recall(svc, "big", queries[1 + i % (len(queries) - 1)])
        warm.append(time.perf_counter() - started)
    out = {
        "first_s": first,
        "first_cpu_s": first_cpu,
        "warm_s": warm,
        "rss_before_mb": rss_before,
        "rss_after_first_mb": rss_first,
        "rss_end_mb": mp.rss_mb(),
        "cache_mb": round(svc.store.caches.nbytes() / 2**20, 1),
        "app": _app_path(),
    }
    svc.close()
    return out


def probe_many(args: argparse.Namespace) -> dict[str, Any]:
    """The three systems taking turns, query by query, over the many-projects store."""
    table, queries = mp.query_table(args.model, np.load(args.queries))
    names = [f"p{i}" for i in range(args.projects)]
    systems = {
        "rotating-8": ("rot", mp.services("sqlite", args.db, table)),
        "spread": ("spread", mp.services("sqlite", args.db, table)),
        "spread, small": (
            "spread",
            mp.services("sqlite", args.db, table, args.small_cache_mb),
        ),
    }
    rng = random.Random(args.seed)
    rotation = names[:8]
    warm = names[:]
    rng.shuffle(warm)
    for kind, svc in systems.values():  # untimed: each system's steady state
        for p in rotation if kind == "rot" else warm:
            mp.recall(svc, p, queries[0])
    times: dict[str, list[float]] = {name: [] for name in systems}
    cpu: dict[str, list[float]] = {name: [] for name in systems}
    order = list(systems.items())
    for i in range(args.rounds):
        spread_project, query = rng.choice(names), queries[i % len(queries)]
        for name, (kind, svc) in order if i % 2 == 0 else order[::-1]:
            p = rotation[i % len(rotation)] if kind == "rot" else spread_project
            started, used = time.perf_counter(), time.process_time()
            mp.recall(svc, p, query)
            times[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - used)
    out: dict[str, Any] = {"times": times, "cpu": cpu, "cache_mb": {}}
    for name, (_, svc) in systems.items():
        out["cache_mb"][name] = round(svc.store.caches.nbytes() / 2**20, 1)
        svc.close()
    return out


def _app_path() -> str:
    import prism_memory

    return str(Path(prism_memory.__file__).parent)


# --- the driver ---------------------------------------------------------------------------


def run_probe(backend: Path, kind: str, db: Path, args: argparse.Namespace, **extra: Any) -> Any:
    cmd = [
        sys.executable,
        __file__,
        "--probe",
        kind,
        "--db",
        str(db),
        "--model",
        args.model,
    ]
    cmd += ["--queries", str(args.queries), "--warm", str(args.warm)]
    cmd += [
        "--projects",
        str(args.projects),
        "--rounds",
        str(extra.get("rounds", args.rounds)),
    ]
    cmd += [
        "--small-cache-mb",
        str(args.small_cache_mb),
        "--seed",
        str(extra.get("seed", 0)),
    ]
    env = {**os.environ, "PRISM_BACKEND": str(backend)}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"probe {kind} ({backend}) failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def build_store(path: Path, projects: dict[str, int], moments: Any, model: str) -> Path:
    """A store with ``projects`` (name -> memories), loaded through the storage port (no
    recall, so no segment); kept in ``--work`` and reused by later runs."""
    if path.exists():
        return path
    table, _ = mp.query_table(model, np.zeros((len(mp.QUERIES), 384), dtype=np.float32))
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    svc = mp.services("sqlite", str(tmp), table)
    common.progress(f"building {path.name}: {sum(projects.values())} memories")
    for i, (name, n) in enumerate(projects.items()):
        mp.load(svc, name, n, moments, seed=500 + i)
    svc.close()
    tmp.rename(path)
    return path


def copy_store(src: Path, dst: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    return dst


def summary(samples: list[float]) -> dict[str, float]:
    return common.summary_ms(samples)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.probe:
        probe = {"build": probe_first, "cold": probe_first, "many": probe_many}[args.probe]
        print(json.dumps(probe(args)))
        return 0
    variants = {"after": common.BACKEND}
    if args.before is not None:
        variants = {"before": args.before.resolve(), **variants}
    steps = set(args.steps.split(","))
    args.work.mkdir(parents=True, exist_ok=True)
    moments, args.model = None, "all-MiniLM-L6-v2-int8-onnx"
    if args.vectors == "minilm-like":
        from lib.speed_fixtures import rule_texts

        real = common.make_embedder("minilm")
        args.model, moments = real.model_id, common.minilm_moments(real, rule_texts(2000))
    args.queries = args.work / "queries.npy"
    np.save(args.queries, mp.vectors(len(mp.QUERIES), moments, seed=99))
    result: dict[str, Any] = {
        "bench": "cold_start",
        "settings": {k: str(v) for k, v in vars(args).items()},
        "variants": {k: str(v) for k, v in variants.items()},
        "machine": common.machine_info(),
        "loadavg_start": os.getloadavg(),
    }
    order = list(variants)
    if steps & {"build", "cold", "restore"}:
        big = build_store(
            args.work / f"big-{args.size}-{args.vectors}.db",
            {"big": args.size},
            moments,
            args.model,
        )
        dbs = {v: copy_store(big, args.work / f"run-{v}-big.db") for v in variants}
        if "build" in steps or "cold" in steps:
            result["build"] = {}
            for v in order:  # the first recall ever: builds and stores the segment
                common.progress(f"build/{v}: first recall ever of the {args.size} project")
                result["build"][v] = run_probe(variants[v], "build", dbs[v], args)
        if "cold" in steps:
            probes: dict[str, list[Any]] = {v: [] for v in variants}
            for r in range(args.runs):
                common.progress(f"cold: round {r + 1}/{args.runs}")
                for v in order if r % 2 == 0 else order[::-1]:
                    probes[v].append(run_probe(variants[v], "cold", dbs[v], args))
            result["cold"] = {
                v: {
                    "first_recall": summary([p["first_s"] for p in ps]),
                    "first_recall_s": [round(p["first_s"], 3) for p in ps],
                    "first_recall_cpu": summary([p["first_cpu_s"] for p in ps]),
                    "warm_recall": summary([s for p in ps for s in p["warm_s"]]),
                    "rss_before_mb": median([p["rss_before_mb"] for p in ps]),
                    "rss_after_first_mb": median([p["rss_after_first_mb"] for p in ps]),
                    "cache_mb": median([p["cache_mb"] for p in ps]),
                }
                for v, ps in probes.items()
            }
        if "restore" in steps:
            table, _ = mp.query_table(args.model, np.load(args.queries))
            result["restore"] = {}
            for v in order:
                svc = mp.services("sqlite", str(dbs[v]), table)  # "another process": no recall
                mp.load(svc, "big", args.size // 8 + 1, moments, seed=900)
                svc.close()
                common.progress(f"restore/{v}: recall after {args.size // 8 + 1} new rows")
                result["restore"][v] = run_probe(variants[v], "build", dbs[v], args)
    if "many" in steps:
        projects = {f"p{i}": args.per_project for i in range(args.projects)}
        name = f"many-{args.projects}x{args.per_project}-{args.vectors}.db"
        store = build_store(args.work / name, projects, moments, args.model)
        dbs = {v: copy_store(store, args.work / f"run-{v}-many.db") for v in variants}
        result["many_build_s"] = {}
        for v in order:  # a first recall per project: stores the segments
            common.progress(f"many/{v}: first recall in each project")
            cmd = [
                sys.executable,
                "-c",
                _FIRST_EACH,
                str(dbs[v]),
                args.model,
                str(args.queries),
            ]
            cmd += [str(args.projects)]
            env = {
                **os.environ,
                "PRISM_BACKEND": str(variants[v]),
                "PYTHONPATH": str(HERE),
            }
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            wall, used = out.stdout.split()[-2:]
            result["many_build_s"][v] = {"wall": float(wall), "cpu": float(used)}
        times: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
        cpu: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
        cache_mb: dict[str, dict[str, float]] = {v: {} for v in variants}
        per_block = max(1, args.rounds // args.blocks)
        for b in range(args.blocks):
            for v in order if b % 2 == 0 else order[::-1]:
                common.progress(f"many/{v}: block {b + 1}/{args.blocks}")
                got = run_probe(variants[v], "many", dbs[v], args, rounds=per_block, seed=b)
                for system, samples in got["times"].items():
                    times[v].setdefault(system, []).extend(samples)
                    cpu[v].setdefault(system, []).extend(got["cpu"][system])
                cache_mb[v] = got["cache_mb"]
        result["many"] = {
            v: {
                s: {**summary(t), "cpu": summary(cpu[v][s]), "cache_mb": cache_mb[v][s]}
                for s, t in ts.items()
            }
            for v, ts in times.items()
        }
    common.save_report(result, args.json_out)
    md = "\n".join(report(result)) + "\n"
    print(md, file=sys.stderr)
    if args.md_out:
        args.md_out.write_text(md)
    return 0


_FIRST_EACH = """
import sys, time
import numpy as np
import many_projects as mp
db, model, queries, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
table, qs = mp.query_table(model, np.load(queries))
svc = mp.services("sqlite", db, table)
started, used = time.perf_counter(), time.process_time()
for i in range(n):
    mp.recall(svc, f"p{i}", qs[0])
print(round(time.perf_counter() - started, 2), round(time.process_time() - used, 2))
svc.close()
"""


def _s(probe: dict[str, Any]) -> str:
    return f"{probe['first_s']:.2f} (CPU {probe['first_cpu_s']:.2f})"


def _ms(s: dict[str, Any], key: str = "p50_ms") -> str:
    return f"{s[key]:,.1f}"


def report(r: dict[str, Any]) -> list[str]:
    """The run as markdown tables, variants side by side."""
    vs = list(r["variants"])
    load = f"{r['loadavg_start'][0]:.1f} at start, {r['loadavg_end'][0]:.1f} at end"
    lines = [
        "# SQLite recall from a cold process (`bench/cold_start.py`)",
        "",
        (
            f"Variants: {', '.join(f'{k} = `{v}`' for k, v in r['variants'].items())}. "
            f"Load average {load}."
        ),
        "",
    ]
    head = "| | " + " | ".join(vs) + " |"
    sep = "|---|" + "---|" * len(vs)
    rows: list[str] = []
    if "build" in r:
        rows.append(
            "| first recall ever (builds + stores the segment), s (CPU) | "
            + " | ".join(_s(r["build"][v]) for v in vs)
            + " |"
        )
    if "cold" in r:
        c = r["cold"]
        rows += [
            "| new process, first recall p50 ms (runs) | "
            + " | ".join(f"{_ms(c[v]['first_recall'])} ({c[v]['first_recall_s']})" for v in vs)
            + " |",
            "| … its CPU p50 ms | " + " | ".join(_ms(c[v]["first_recall_cpu"]) for v in vs) + " |",
            "| … RSS before → after, MB | "
            + " | ".join(
                f"{c[v]['rss_before_mb']:.0f} → {c[v]['rss_after_first_mb']:.0f}" for v in vs
            )
            + " |",
            "| … cache MB counted | " + " | ".join(f"{c[v]['cache_mb']:.0f}" for v in vs) + " |",
            "| warm recall p50 / p99 ms | "
            + " | ".join(
                f"{_ms(c[v]['warm_recall'])} / {_ms(c[v]['warm_recall'], 'p99_ms')}" for v in vs
            )
            + " |",
        ]
    if "restore" in r:
        rows.append(
            "| first recall after 1/8 more rows from another process (folds them in), s (CPU) | "
            + " | ".join(_s(r["restore"][v]) for v in vs)
            + " |"
        )
    if rows:
        size = r["settings"]["size"]
        lines += [f"One project of {int(size):,} memories:", "", head, sep, *rows, ""]
    if "many" in r:
        m = r["many"]
        st = r["settings"]
        lines += [
            (
                f"{st['projects']} projects × {st['per_project']} memorules; recall p50 / p99 ms, "
                f"CPU p50 ms, cache MB held; small = {st['small_cache_mb']} MB budget:"
            ),
            "",
            head,
            sep,
        ]
        for system in m[vs[0]]:
            lines.append(
                f"| {system} | "
                + " | ".join(
                    f"{_ms(m[v][system])} / {_ms(m[v][system], 'p99_ms')}, "
                    f"CPU {_ms(m[v][system]['cpu'])} ({m[v][system]['cache_mb']:.0f})"
                    for v in vs
                )
                + " |"
            )
        lines.append(
            "| first recall in each project (builds, stores segments), s (CPU) | "
            + " | ".join(
                f"{r['many_build_s'][v]['wall']:.1f} (CPU {r['many_build_s'][v]['cpu']:.1f})"
                for v in vs
            )
            + " |"
        )
    return lines


if __name__ == "__main__":
    sys.exit(main())
