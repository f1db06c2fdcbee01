"""``memorules_with_checks`` as the PreToolUse guard pays it: a fresh process per read.

Builds a SQLite store (fake embedder: nothing here embeds) with ``--rules`` memorules that
carry checks, ``--plain`` memorules without and ``--notes`` notes in one project, plus the same
again in a second project, then times, ``--runs`` times each and interleaved:

- ``read``: a fresh ``python`` that imports only the engine's light module
  (``prism_memory.trigraph.sqlite.checked_rules``), opens the file, lists the rules with
  checks and keeps those that apply to a context (``domain.adherence.rules.applicable``);
- ``python_only``: an interpreter that does nothing (the floor).

Reports p50/p99 wall time per case, the child's CPU time (user + system: less sensitive to
other work on the machine than wall time), the median in-process time of the read itself, and
the 1-minute load average before and after. Not part of the test suite.

    python bench/checked_rules_read.py --rules 1000 --runs 30
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND))

READ = """
import sqlite3, sys, time, uuid
t0 = time.perf_counter()
from prism_memory.trigraph.sqlite.checked_rules import memorules_with_checks
from prism_memory.domain.adherence.rules import applicable
from prism_memory.domain.records import SessionContext
conn = sqlite3.connect(sys.argv[1])
t1 = time.perf_counter()
tenant, project = uuid.UUID(sys.argv[2]), uuid.UUID(sys.argv[3])
rules = memorules_with_checks(conn, tenant, project)
ctx = SessionContext(tenant, project, uuid.uuid4(), persona="donna", surface="python")
kept = applicable(rules, ctx)
t2 = time.perf_counter()
print(len(rules), len(kept), round((t2 - t1) * 1000, 3))
"""

CHECKS = [
    [{"forbid_command": r"\bnpm (install|i)\b"}],
    [{"forbid_edit": "src/generated/**"}, {"forbid_command": r"git push .*--force"}],
    [{"require_before": {"command": r"make test", "before": r"git commit"}}],
    [{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}],
]


def build(path: Path, rules: int, plain: int, notes: int) -> tuple[str, str]:
    from prism_memory.bootstrap import build_services
    from prism_memory.domain.contract.remember import validate_remember_many
    from prism_memory.domain.ids import new_id, uuid_for
    from prism_memory.domain.records import SessionContext
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=path, embedder="fake", database_url=""))
    try:
        for project in ("api", "web"):
            ctx = SessionContext(uuid_for("tenant", "acme"), uuid_for("project", project), new_id())
            surfaces = ("python", "go", None)
            raws = []
            for i in range(rules + plain):
                applies = {"surface": surfaces[i % 3]} if surfaces[i % 3] else {"scope": "project"}
                raw = {
                    "kind": "memorule",
                    "memorule_kind": "convention",
                    "subject": f"Rule {i} of {project}",
                    "body": f"Rule {i} of {project}: what the agent is told to do here.",
                    "applies_to": applies,
                }
                if i < rules:
                    raw["checks"] = CHECKS[i % len(CHECKS)]
                raws.append(raw)
            raws += [{"body": f"Note {i} of {project}."} for i in range(notes)]
            services.memory.bulk.remember_many(ctx, validate_remember_many(raws))
        return str(uuid_for("tenant", "acme")), str(uuid_for("project", "api"))
    finally:
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--plain", type=int, default=1000)
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "prism.db"
        tenant, project = build(db, args.rules, args.plain, args.notes)
        env = {**os.environ, "PYTHONPATH": str(BACKEND)}
        cases: dict[str, list[float]] = {"read": [], "python_only": []}
        cpu: dict[str, list[float]] = {"read": [], "python_only": []}
        inner: list[float] = []
        found = ""
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for case, times in cases.items():
                cmd = [sys.executable, "-c", READ if case == "read" else "pass"]
                if case == "read":
                    cmd += [str(db), tenant, project]
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                times.append((time.perf_counter() - start) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                spent = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
                cpu[case].append(spent * 1000)
                if case == "read":
                    listed, kept, ms = done.stdout.split()
                    inner.append(float(ms))
                    found = f"{listed} listed, {kept} apply"
        report = {
            "rules_with_checks_per_project": args.rules,
            "plain_rules_per_project": args.plain,
            "notes_per_project": args.notes,
            "projects": 2,
            "runs": args.runs,
            "result": found,
            "read_in_process_ms_p50": round(statistics.median(inner), 2),
            "load_1min_before": round(load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2),
        }
        for case, times in cases.items():
            ordered = sorted(times)
            report[f"{case}_ms_p50"] = round(statistics.median(ordered), 1)
            report[f"{case}_cpu_ms_p50"] = round(statistics.median(cpu[case]), 1)
            report[f"{case}_ms_p99"] = round(
                ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1
            )
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
