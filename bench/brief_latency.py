"""``prism brief`` latency as a session-start hook pays it: a fresh CLI process per brief.

Builds a SQLite store of N real rules (``shared/bench/rules/rules.jsonl``, embedded with the
real model), then runs the real ``prism`` CLI as a subprocess, ``--runs`` times per case:

- ``brief``: ``prism brief`` with no task (what the SessionStart hook runs; no model load);
- ``hook``: ``prism brief --hook claude-code`` fed SessionStart hook input on stdin;
- ``task``: ``prism brief --task TEXT`` (loads the embedding model in every process).

Reports p50/p99/mean wall time per case, the child's CPU time (user + system; less
sensitive to other work than wall time), and the 1-minute load average before and after
(other work on the machine inflates every wall figure). Not part of the test suite.

    python bench/brief_latency.py --rules 1000 --runs 30
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    BACKEND,
    load_jsonl,
    machine_info,
    progress,
    shared_bench_dir,
    summary_ms,
)
from rules_data import is_rule, rule_to_request

PERSONA = "donna"
SURFACE = "python"
TASK = "add a database migration for the audit table and test it"


def build_store(db: Path, n: int) -> int:
    """Write the first ``n`` rules of the benchmark into ``db`` with the real model."""
    from app.bootstrap import build_services, context_from
    from app.settings import load_settings

    rules = [r for r in load_jsonl(shared_bench_dir() / "rules" / "rules.jsonl") if is_rule(r)]
    requests = [q for q in (rule_to_request(r) for r in rules[:n]) if q is not None]
    services = build_services(load_settings(db=db, embedder="minilm"))
    try:
        ctx = context_from(services.settings)
        services.memory.remember_many(ctx, requests)
    finally:
        services.close()
    return len(requests)


def run_case(db: Path, args: list[str], stdin: str | None, runs: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_DB=str(db),
        PRISM_PERSONA=PERSONA,
        PRISM_SURFACE=SURFACE,
        PRISM_HOOK_STATE_DIR=str(db.parent / "state"),
        PYTHONPATH=str(BACKEND),
        HF_HUB_OFFLINE="1",
    )
    command = [sys.executable, "-m", "app", *args]
    times = []
    cpu = []
    sizes = set()
    for _ in range(runs + 1):  # the first run warms the page cache; not counted
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            command, input=stdin, capture_output=True, text=True, env=env, check=False
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if proc.returncode != 0 or not proc.stdout.strip():
            raise SystemExit(f"{' '.join(args)} failed: {proc.returncode} {proc.stderr[-500:]}")
        sizes.add(len(proc.stdout))
        times.append(elapsed)
    cpu_ms = summary_ms(cpu[1:])
    return {
        **summary_ms(times[1:]),
        "min_ms": round(min(times[1:]) * 1000, 3),
        "cpu_p50_ms": cpu_ms["p50_ms"],
        "cpu_p99_ms": cpu_ms["p99_ms"],
        "stdout_chars": sorted(sizes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=1000, help="rules in the store")
    parser.add_argument("--runs", type=int, default=30, help="timed processes per case")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    opts = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="prism-brief-bench-") as tmp:
        db = Path(tmp) / "prism.db"
        progress(f"writing {opts.rules} rules with the real model")
        written = build_store(db, opts.rules)
        hook_input = json.dumps(
            {
                "session_id": "0b7c7f0e-8a55-4b7e-9d7c-3f1f1d2e9a10",
                "transcript_path": str(Path(tmp) / "t.jsonl"),
                "cwd": tmp,
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        cases = {
            "brief": (["brief"], None),
            "hook": (["brief", "--hook", "claude-code"], hook_input),
            "task": (["brief", "--task", TASK], None),
        }
        results = {}
        for name, (args, stdin) in cases.items():
            progress(f"{name}: {opts.runs} runs of prism {' '.join(args)}")
            results[name] = run_case(db, args, stdin, opts.runs)
    report = {
        "rules": written,
        "runs": opts.runs,
        "context": {"persona": PERSONA, "surface": SURFACE},
        "cases": results,
        "loadavg_1m_before": round(load_before[0], 2),
        "loadavg_1m_after": round(os.getloadavg()[0], 2),
        "machine": machine_info(),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if opts.out:
        opts.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
