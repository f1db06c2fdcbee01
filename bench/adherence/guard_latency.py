"""Latency of the PreToolUse guard as Claude Code pays it: one real process per tool use.

Builds a SQLite store of ``--rules`` memorules in one project (``--checked`` of them carry
checks of every kind, a few with ``ask``/``deny``; the rest none) and a real-format Claude
Code transcript of ``--actions`` earlier tool uses, then runs the installed hook command
(``PYTHON -m prism_memory guard claude-code --db ...``, exactly as
``prism hooks install claude-code --guard`` writes it) ``--runs`` times with the hook input
on stdin, interleaving four kinds of tool use:

- ``pass``: a Bash command no rule forbids (most tool uses);
- ``edit``: a file edit no rule forbids;
- ``hit``: a command a rule forbids (the answer names the rule; a recorder is started);
- ``order``: ``git commit`` under a ``require_before`` rule (the transcript is read).

Three untimed runs first write the bytecode cache (as an install from a wheel has it;
``PYTHONDONTWRITEBYTECODE`` is dropped from the hook's environment). Each run's wall time
covers the process from start to exit (reading the rules, judging, answering, and starting
the detached recorder on a hit). Before the next run the bench waits,
untimed, for a hit's recorder to write its event, so one run's background work never lands in
another's time; that wait is reported on its own. Reports p50/p99 per kind and overall, the
interpreter floor (``python -c pass``) and, paired, what each run took above a floor run
started just before it (on a busy machine both wait alike for a core), the 1-minute load
average before and after, and whether the hook process imported numpy, onnxruntime or
pydantic (it must not). The hook process's own CPU time (user + system) is reported beside
the wall time: on a busy shared machine it shows what the hook costs when the wall time
mostly shows the queue for a core.

    python bench/adherence/guard_latency.py --rules 1000 --checked 200 --runs 300
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BACKEND = Path(__file__).resolve().parents[2] / "backend"
sys.path.insert(0, str(BACKEND))

SESSION = "0b9e6c2a-4f1d-4e8b-9a3c-5d7e1f2a3b4c"
CWD = "/home/dev/shop"
HEAVY = ("numpy", "onnxruntime", "pydantic", "tokenizers")

CHECKS: list[tuple[list[dict[str, Any]], str]] = [
    ([{"forbid_command": r"(?<![\w./@-])npm(?![\w.@/-])"}], "remind"),
    ([{"forbid_edit": "src/generated/**"}], "remind"),
    (
        [
            {
                "require_before": {
                    "command": r"\bmake test\b",
                    "before": r"\bgit commit\b",
                }
            }
        ],
        "remind",
    ),
    ([{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}], "remind"),
    ([{"forbid_command": r"\bgit\s+push\b[^;&|\n]*\s(?:--force|-f)(?=\s|$)"}], "ask"),
    ([{"forbid_command": r"\bdropdb\b"}], "deny"),
]


def build_store(path: Path, rules: int, checked: int) -> None:
    from prism_memory.bootstrap import build_access, build_services
    from prism_memory.domain.access import operator_key
    from prism_memory.domain.contract.remember import validate_remember
    from prism_memory.domain.ids import new_id, uuid_for
    from prism_memory.domain.records import SessionContext
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=path, embedder="fake", database_url=""))
    try:
        ctx = SessionContext(uuid_for("tenant", "acme"), uuid_for("project", "shop"), new_id())
        access, key = build_access(services), operator_key(ctx.tenant_id)
        for i in range(rules):
            raw: dict[str, Any] = {
                "kind": "memorule",
                "memorule_kind": "convention",
                "subject": f"Shop rule {i}",
                "body": f"Shop rule {i}: what the agent is told about this part of the shop.",
                "applies_to": {"scope": "project"},
            }
            if i < checked:
                checks, enforcement = CHECKS[i % len(CHECKS)]
                # distinct patterns per rule, as a real store has (one literal word each)
                extra = {"forbid_command": rf"\btool{i}\b"}
                raw["checks"] = [*checks, extra]
                raw["enforcement"] = enforcement
            access.remember(key, ctx, validate_remember(raw))
    finally:
        services.close()


def build_transcript(path: Path, actions: int) -> None:
    lines = []
    for i in range(actions):
        use = f"toolu_01B{i:05d}"
        if i % 3 == 0:
            name, tool_input = "Edit", {"file_path": f"{CWD}/src/mod{i}.py"}
        else:
            name, tool_input = "Bash", {"command": f"pytest tests/test_{i}.py -q"}
        base = {
            "cwd": CWD,
            "sessionId": SESSION,
            "isSidechain": False,
            "version": "2.0.37",
        }
        lines.append(
            {
                **base,
                "type": "assistant",
                "timestamp": f"2026-12-05T09:{i // 60 % 60:02d}:{i % 60:02d}Z",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": use,
                            "name": name,
                            "input": tool_input,
                        }
                    ],
                },
            }
        )
        lines.append(
            {
                **base,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": use, "content": "ok"}],
                },
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def hook_input(kind: str, transcript: Path, n: int) -> dict[str, Any]:
    tool, tool_input = {
        "pass": ("Bash", {"command": "pnpm test -- --run"}),
        "edit": ("Edit", {"file_path": f"{CWD}/src/app.py"}),
        "hit": ("Bash", {"command": "npm install left-pad"}),
        "order": ("Bash", {"command": "git commit -m 'fix the cart'"}),
    }[kind]
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": CWD,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_01PENDING{n:05d}",
    }


def hook_command(db: Path) -> list[str]:
    """The command ``prism hooks install claude-code --guard --db DB`` writes."""
    from prism_memory.services.claude_settings import guard_command

    words = guard_command((sys.executable, "-m", "prism_memory"), ("--db", str(db)))
    return shlex.split(words)


def guard_events(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        (count,) = conn.execute(
            "SELECT count(*) FROM memorule_audit WHERE event IN ('reminded', 'blocked')"
        ).fetchone()
    finally:
        conn.close()
    return int(count)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--checked", type=int, default=200)
    parser.add_argument("--actions", type=int, default=300, help="earlier tool uses")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="prism-guard-bench-"))
    try:
        db, transcript = work / "prism.db", work / "session.jsonl"
        build_store(db, args.rules, args.checked)
        build_transcript(transcript, args.actions)
        # as an installed package runs: bytecode cached (pip compiles it on install)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PRISM_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env["PRISM_TENANT"], env["PRISM_PROJECT"] = "acme", "shop"
        command = hook_command(db)

        # the hook must not import the heavy modules (checked once, not timed)
        probe = subprocess.run(
            command,
            input=json.dumps(hook_input("hit", transcript, 0)),
            capture_output=True,
            text=True,
            env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
            check=True,
        )
        imported = {
            line.split("|")[-1].strip() for line in probe.stderr.splitlines() if "|" in line
        }
        heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
        assert json.loads(probe.stdout)["hookSpecificOutput"]["additionalContext"]

        for n in range(3):  # warm-up, untimed: the first runs write the bytecode cache
            subprocess.run(
                command,
                input=json.dumps(hook_input("pass", transcript, n)),
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
        floor = []
        for _ in range(20):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append((time.perf_counter() - t0) * 1000)

        kinds = ["pass"] * 14 + ["edit"] * 2 + ["hit"] * 2 + ["order"] * 2
        rng = random.Random(args.seed)
        plan = [rng.choice(kinds) for _ in range(args.runs)]
        times: dict[str, list[float]] = {k: [] for k in ("pass", "edit", "hit", "order")}
        cpu: dict[str, list[float]] = {k: [] for k in times}  # the hook's own CPU time
        recorded_ms: list[float] = []
        answered: dict[str, int] = {k: 0 for k in times}
        load_before = os.getloadavg()[0]
        events = guard_events(db)
        above_floor: list[float] = []
        for n, kind in enumerate(plan, start=1):
            data = json.dumps(hook_input(kind, transcript, n))
            t0 = time.perf_counter()  # the paired floor: an interpreter started just before
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            paired = (time.perf_counter() - t0) * 1000
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run(
                command,
                input=data,
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            elapsed = (time.perf_counter() - t0) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu[kind].append(used * 1000)
            if done.returncode != 0:
                raise SystemExit(f"hook exited {done.returncode}: {done.stderr}")
            times[kind].append(elapsed)
            above_floor.append(elapsed - paired)
            answered[kind] += bool(done.stdout)
            if kind in ("hit", "order"):  # wait (untimed) for the detached recorder
                t1 = time.perf_counter()
                while guard_events(db) == events:
                    if time.perf_counter() - t1 > 60:
                        raise SystemExit("the recorder wrote nothing in 60 s")
                    time.sleep(0.02)
                events = guard_events(db)
                recorded_ms.append((time.perf_counter() - t1) * 1000)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    every = [t for values in times.values() for t in values]
    every_cpu = [t for values in cpu.values() for t in values]
    report = {
        "rules": args.rules,
        "rules_with_checks": args.checked,
        "transcript_actions": args.actions,
        "runs": args.runs,
        "command": " ".join(["python", *command[1:5]]),
        "p50_ms": round(statistics.median(every), 1),
        "p99_ms": round(pct(every, 0.99), 1),
        "cpu_p50_ms": round(statistics.median(every_cpu), 1),
        "cpu_p99_ms": round(pct(every_cpu, 0.99), 1),
        "by_kind": {
            k: {
                "runs": len(v),
                "answered": answered[k],
                "p50_ms": round(statistics.median(v), 1),
                "p99_ms": round(pct(v, 0.99), 1),
                "cpu_p50_ms": round(statistics.median(cpu[k]), 1),
            }
            for k, v in times.items()
            if v
        },
        "recorder_done_after_ms_p50": round(statistics.median(recorded_ms), 1)
        if recorded_ms
        else None,
        "python_floor_p50_ms": round(statistics.median(floor), 1),
        "above_paired_floor_p50_ms": round(statistics.median(above_floor), 1),
        "above_paired_floor_p99_ms": round(pct(above_floor, 0.99), 1),
        "heavy_imports": heavy,
        "load_1min_before": round(load_before, 2),
        "load_1min_after": round(load_after, 2),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(
        f"guard: {report['runs']} runs on {args.rules} rules ({args.checked} with checks), "
        f"transcript of {args.actions} actions"
    )
    print(
        f"  all      p50 {report['p50_ms']} ms   p99 {report['p99_ms']} ms   "
        f"(hook CPU p50 {report['cpu_p50_ms']} ms, p99 {report['cpu_p99_ms']} ms)"
    )
    for kind, part in report["by_kind"].items():
        print(
            f"  {kind:8} p50 {part['p50_ms']} ms   p99 {part['p99_ms']} ms   "
            f"({part['runs']} runs, {part['answered']} answered, "
            f"CPU p50 {part['cpu_p50_ms']} ms)"
        )
    print(f"  recorder event written after p50 {report['recorder_done_after_ms_p50']} ms (untimed)")
    print(
        f"  python -c pass floor p50 {report['python_floor_p50_ms']} ms; the hook above a "
        f"floor run just before it: p50 {report['above_paired_floor_p50_ms']} ms, "
        f"p99 {report['above_paired_floor_p99_ms']} ms"
    )
    print(f"  heavy imports in the hook: {heavy or 'none'}")
    print(
        f"  load average (1 min): {report['load_1min_before']} before, "
        f"{report['load_1min_after']} after, {report['cpus']} cpus"
    )


if __name__ == "__main__":
    main()
