"""``prism brief`` latency as a session-start hook pays it: a fresh CLI process per brief.

Builds a SQLite store of N real rules (``shared/bench/rules/rules.jsonl``, embedded with the
real model), then runs the real ``prism`` CLI as a subprocess, ``--runs`` times per case:

- ``brief``: ``prism brief`` with no task (what the SessionStart hook runs; no model load);
- ``hook``: ``prism brief --hook claude-code`` fed SessionStart hook input on stdin;
- ``task``: ``prism brief --task TEXT`` (loads the embedding model in every process);
- ``python_only`` and ``deps_only``: the floor, an interpreter that does nothing, and one
  that only imports click, numpy, pydantic, sqlite3 and uuid.

The cases run interleaved (one of each per round), so all see the same load.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lib.common import (
    BACKEND,
    load_jsonl,
    machine_info,
    progress,
    save_report,
    shared_bench_dir,
    summary_ms,
)
from lib.rules_data import is_rule, rule_to_request

PERSONA = "donna"
SURFACE = "python"
TASK = "add a database migration for the audit table and test it"


def build_store(db: Path, n: int) -> int:
    """Write the first ``n`` rules of the benchmark into ``db`` with the real model."""
    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.domain.contract.remember import validate_remember_many
    from prism_memory.settings import load_settings

    rules = [r for r in load_jsonl(shared_bench_dir() / "rules" / "rules.jsonl") if is_rule(r)]
    requests = [q for q in (rule_to_request(r, subjects="plain") for r in rules[:n]) if q]
    services = build_services(load_settings(db=db, embedder="minilm"))
    try:
        ctx = context_from(services.settings)
        services.memory.bulk.remember_many(ctx, validate_remember_many(requests))
    finally:
        services.close()
    return len(requests)


@dataclass
class Case:
    """One command timed: its arguments after the interpreter, its stdin, its samples."""

    argv: list[str]
    stdin: str | None = None
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    sizes: set[int] = field(default_factory=set)

    def run(self, env: dict[str, str]) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, *self.argv],
            input=self.stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        self.wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if proc.returncode != 0:
            raise SystemExit(f"{self.argv} failed: {proc.returncode} {proc.stderr[-500:]}")
        self.sizes.add(len(proc.stdout))

    def summary(self) -> dict[str, Any]:
        wall, cpu = self.wall[1:], self.cpu[1:]  # the first run warms caches; not counted
        cpu_ms = summary_ms(cpu)
        return {
            **summary_ms(wall),
            "min_ms": round(min(wall) * 1000, 3),
            "cpu_p50_ms": cpu_ms["p50_ms"],
            "cpu_p99_ms": cpu_ms["p99_ms"],
            "stdout_chars": sorted(self.sizes),
        }


def environment(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_DB=str(db),
        PRISM_PERSONA=PERSONA,
        PRISM_SURFACE=SURFACE,
        PRISM_HOOK_STATE_DIR=str(db.parent / "state"),
        PYTHONPATH=str(BACKEND),
        HF_HUB_OFFLINE="1",
    )
    return env


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
            "brief": Case(["-m", "prism_memory", "brief"]),
            "hook": Case(["-m", "prism_memory", "brief", "--hook", "claude-code"], hook_input),
            "task": Case(["-m", "prism_memory", "brief", "--task", TASK]),
            # The floor: an interpreter, and one that imports what the brief cannot do without.
            "python_only": Case(["-c", "pass"]),
            "deps_only": Case(["-c", "import click, numpy, pydantic, sqlite3, uuid"]),
        }
        env = environment(db)
        progress(f"{opts.runs + 1} rounds of {', '.join(cases)}, interleaved")
        # Interleaved, so every case sees the same load on a shared machine.
        for _ in range(opts.runs + 1):
            for case in cases.values():
                case.run(env)
        results = {name: case.summary() for name, case in cases.items()}
    report = {
        "rules": written,
        "runs": opts.runs,
        "context": {"persona": PERSONA, "surface": SURFACE},
        "cases": results,
        "loadavg_1m_before": round(load_before[0], 2),
        "loadavg_1m_after": round(os.getloadavg()[0], 2),
        "machine": machine_info(),
    }
    save_report(report, opts.out)


if __name__ == "__main__":
    main()
