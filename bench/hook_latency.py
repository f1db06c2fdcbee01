"""Claude Code hook latency, answered by a running ``prism serve`` vs in-process (issue 31).

Builds a SQLite store of N real rules (``shared/bench/rules/rules.jsonl``, embedded with the
real model; :func:`brief_latency.build_store`) and copies it, so two identical stores exist:
one with a ``prism serve`` running (real model, as a user runs it), one without. Then runs the
hook command ``prism hooks install claude-code`` writes (``python -P -m prism_memory brief
--hook claude-code``) as a subprocess, ``--runs`` times per case, each round in a fresh Claude
session (a random UUID, as Claude Code's are; so every prompt run does the same work), for
each hook event:

- ``*_server``: the store with the server: the hook's fast path asks it;
- ``*_fallback``: the store without one: the hook answers in-process (loads the store, and
  the model for a prompt or a subagent's task), as every hook did before;
- ``python_only``: the floor, the same interpreter doing nothing;
- ``*_http_only``: the server's share, the same request sent from the benchmark's own
  process (no hook process): what a hook waits for.

With ``--events PreToolUse`` (a file's first touch, ``prism hooks install claude-code
--on-touch``) each round also touches the same file again in the same session
(``PreToolUse_repeat_*``: known from the session's briefed state, nothing loaded, no server
looked for), and times the bare hook start: the same command fed a ``Bash`` tool call, which
it reads and declines (``PreToolUse_bare``).

The cases run interleaved (one of each per round) so all see the same load; the first round
warms caches and is not counted. Per case: p50/p95/p99 wall time, the child's CPU time and
its peak RSS (GNU ``time``'s ``%M``), how often a server run fell back, and whether both
paths printed the same answer. The 1-minute load average is taken before and after. Not
part of the tests.

    python bench/hook_latency.py --rules 1000 --runs 30 --out bench/results/hook_latency.json
    python bench/hook_latency.py --events PreToolUse --runs 30 \
        --out bench/results/touch_latency.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brief_latency import PERSONA, SURFACE, TASK, build_store, environment
from lib.common import BACKEND, machine_info, pct, progress, save_report, summary_ms

HOOK = ["-P", "-m", "prism_memory", "brief", "--hook", "claude-code"]
EVENTS = ("UserPromptSubmit", "SubagentStart", "SessionStart", "PreToolUse")
TOUCH_CWD = "/home/dev/shop"
TOUCH_FILE = "backend/app/migrations/versions/0042_audit_table.py"
FELL_BACK = "answering in-process"
TIME = "/usr/bin/time"  # GNU time


@dataclass
class Case:
    """One hook command timed: its event, its store, its samples."""

    event: str
    env: dict[str, str]
    argv: list[str] = field(default_factory=lambda: list(HOOK))
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    outputs: set[str] = field(default_factory=set)
    fell_back: int = 0
    usage_file: Path = field(default_factory=lambda: Path(tempfile.mkstemp()[1]))

    def stdin(self, session: str) -> str | None:
        if self.event == "none":
            return None
        event, _, variant = self.event.partition("_")
        data: dict[str, Any] = {
            "session_id": session,
            "transcript_path": "/nonexistent/transcript.jsonl",
            "cwd": "/",
            "hook_event_name": event,
        }
        if event == "PreToolUse":
            # a session of its own, so the round's SessionStart brief does not replace it
            data["session_id"] = str(uuid.uuid5(uuid.UUID(session), "touch"))
            data["cwd"] = TOUCH_CWD
            data["tool_name"] = "Bash" if variant == "bare" else "Read"
            data["tool_input"] = (
                {"command": "ls"}
                if variant == "bare"
                else {"file_path": f"{TOUCH_CWD}/{TOUCH_FILE}"}
            )
        elif self.event == "SessionStart":
            data["source"] = "startup"
        elif self.event == "UserPromptSubmit":
            data["prompt"] = TASK
        else:
            data |= {"agent_id": "agent-1", "agent_type": "database migration reviewer"}
        return json.dumps(data)

    def run(self, session: str) -> None:
        stdin = self.stdin(session)
        start = time.perf_counter()
        # GNU time reports the child's own peak RSS: wait4 here would report at least this
        # process's RSS at fork time (the kernel carries it over), the model included.
        proc = subprocess.run(
            [
                TIME,
                "-f",
                "%U %S %M",
                "-o",
                str(self.usage_file),
                sys.executable,
                *self.argv,
            ],
            input=(stdin or "").encode(),
            capture_output=True,
            env=self.env,
            check=False,
        )
        self.wall.append(time.perf_counter() - start)
        user, system, max_kb = self.usage_file.read_text().split()[-3:]
        self.cpu.append(float(user) + float(system))
        self.rss_kb.append(int(max_kb))
        out, err, status = proc.stdout, proc.stderr, proc.returncode
        if status != 0:
            raise SystemExit(f"{self.event} failed: {status} {err.decode()[-500:]}")
        if FELL_BACK in err.decode():
            self.fell_back += 1
        self.outputs.add(hashlib.sha256(out).hexdigest()[:16])

    def summary(self) -> dict[str, Any]:
        wall, cpu, rss = self.wall[1:], self.cpu[1:], self.rss_kb[1:]
        return {
            **summary_ms(wall),
            "p95_ms": round(pct([w * 1000 for w in wall], 95), 3),
            "min_ms": round(min(wall) * 1000, 3),
            "cpu_p50_ms": summary_ms(cpu)["p50_ms"],
            "peak_rss_mib_p50": round(pct([r / 1024 for r in rss], 50), 1),
            "peak_rss_mib_max": round(max(rss) / 1024, 1),
            "fell_back": self.fell_back,
            "distinct_outputs": sorted(self.outputs),
        }


@dataclass
class HttpOnly:
    """The server's share: the fast path's own request (``post_json``) sent from this process,
    no hook process started; the time a hook spends waiting for the server."""

    event: str
    db: Path
    wall: list[float] = field(default_factory=list)

    def run(self, session: str) -> None:
        from prism_memory.cli.claude_hook_fast import ROUTE, post_json
        from prism_memory.services import local_serve
        from prism_memory.services.project_config import session_uuid

        found = local_serve.discover(self.db, None)
        if found is None:
            raise SystemExit("no discovery file beside the served store")
        texts = {"UserPromptSubmit": TASK, "PreToolUse": TOUCH_FILE}
        body = {
            "event": self.event,
            "text": texts.get(self.event, "database migration reviewer"),
            "store": found.store,
            "context": {
                "persona": PERSONA,
                "surface": SURFACE,
                "session_id": str(session_uuid("claude-code", session)),
            },
        }
        start = time.perf_counter()
        status, _ = post_json(found.host, found.port, ROUTE, found.token, body, 60.0)
        self.wall.append(time.perf_counter() - start)
        if status != 200:
            raise SystemExit(f"the hook route answered {status}")

    def summary(self) -> dict[str, Any]:
        wall = self.wall[1:]
        return {**summary_ms(wall), "p95_ms": round(pct([w * 1000 for w in wall], 95), 3)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def copy_store(src: Path, dst: Path) -> None:
    """A consistent copy (SQLite's backup API: the WAL included)."""
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def start_server(db: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (db.parent / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prism_memory",
            "serve",
            "--port",
            str(port),
            "--no-access-log",
        ],
        env={
            **env,
            "PRISM_EMBEDDER": "minilm",
            "PRISM_HTTP_RATE_LIMIT": "100000/minute",
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        if proc.poll() is not None:
            raise SystemExit((db.parent / "serve.log").read_text())
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=1) as answer:
                if answer.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("prism serve did not become ready")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=1000, help="rules in the store")
    parser.add_argument("--runs", type=int, default=30, help="timed processes per case")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument(
        "--events",
        default="UserPromptSubmit,SubagentStart,SessionStart",
        help=f"the hook events timed, comma-separated, of {', '.join(EVENTS)}",
    )
    opts = parser.parse_args()
    events = tuple(e for e in opts.events.split(",") if e)
    if not events or set(events) - set(EVENTS):
        parser.error(f"--events takes a comma-separated list of {', '.join(EVENTS)}")
    with tempfile.TemporaryDirectory(prefix="prism-hook-bench-") as tmp:
        served_db = Path(tmp) / "served" / "prism.db"
        alone_db = Path(tmp) / "alone" / "prism.db"
        served_db.parent.mkdir()
        alone_db.parent.mkdir()
        progress(f"writing {opts.rules} rules with the real model")
        written = build_store(served_db, opts.rules)
        copy_store(served_db, alone_db)
        served_env = environment(served_db) | {"PRISM_EMBEDDER": "minilm"}
        alone_env = environment(alone_db) | {"PRISM_EMBEDDER": "minilm"}
        server, url = start_server(served_db, served_env)
        try:
            cases: dict[str, Case | HttpOnly] = {}
            for event in events:
                cases[f"{event}_server"] = Case(event, served_env)
                cases[f"{event}_fallback"] = Case(event, alone_env)
                if event == "PreToolUse":  # after the first touch, in the same session
                    cases[f"{event}_repeat_server"] = Case(f"{event}_repeat", served_env)
                    cases[f"{event}_repeat_fallback"] = Case(f"{event}_repeat", alone_env)
                    cases[f"{event}_bare"] = Case(f"{event}_bare", alone_env)
            cases["python_only"] = Case("none", alone_env, ["-P", "-c", "pass"])
            for event in events:
                cases[f"{event}_http_only"] = HttpOnly(event, served_db)
            load_before = os.getloadavg()
            progress(f"{opts.runs + 1} rounds of {', '.join(cases)}, interleaved")
            for _ in range(opts.runs + 1):
                session = str(uuid.uuid4())  # Claude Code's session ids are UUIDs
                for case in cases.values():
                    case.run(session)
            load_after = os.getloadavg()
            server_rss = rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=120)
        results = {name: case.summary() for name, case in cases.items()}
    same = {
        event: results[f"{event}_server"]["distinct_outputs"]
        == results[f"{event}_fallback"]["distinct_outputs"]
        for event in events
    }
    report = {
        "rules": written,
        "runs": opts.runs,
        "context": {"persona": PERSONA, "surface": SURFACE, "prompt": TASK},
        "events": list(events),
        **({"touched": f"{TOUCH_CWD}/{TOUCH_FILE}"} if "PreToolUse" in events else {}),
        "command": f"python {' '.join(HOOK)}",
        "cases": results,
        "same_answer_both_paths": same,
        "server_rss_mib": server_rss,
        "server": url,
        "loadavg_1m_before": round(load_before[0], 2),
        "loadavg_1m_after": round(load_after[0], 2),
        "machine": machine_info(),
        "backend": str(BACKEND),
    }
    save_report(report, opts.out)


if __name__ == "__main__":
    main()
