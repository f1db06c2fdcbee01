"""HTTP load: requests/s and p50/p99 latency of remember and recall under N concurrent clients.

Starts ``prism serve`` on a free loopback port over a fresh SQLite file (or uses ``--url``),
creates an admin key, seeds memorules, then runs each operation for a fixed time with
``--clients`` concurrent keep-alive connections (asyncio + httpx, one process). Prints JSON.
The spawned server runs without the per-key rate limit (``PRISM_HTTP_RATE_LIMIT=""``); a
server given with ``--url`` keeps its own.

    python bench/http_load.py --embedder fake --clients 16 --seconds 20
    python bench/http_load.py --embedder minilm --clients 16 --seconds 20 --out r.json

Not part of the test suite. On a 2-core machine the load generator shares the CPU with
the server: the figures are a floor for what the server does with a machine of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
BACKEND = REPO / "backend"
WORDS = [
    "tests",
    "deploy",
    "review",
    "merge",
    "python",
    "typing",
    "docs",
    "api",
    "schema",
    "cache",
    "retry",
    "timeout",
    "logging",
    "release",
    "branch",
    "commit",
    "lint",
    "format",
    "secrets",
    "vault",
    "migration",
    "index",
    "query",
    "latency",
]


def rule(i: int) -> dict[str, Any]:
    a, b, c = (
        WORDS[i % len(WORDS)],
        WORDS[(i * 7) % len(WORDS)],
        WORDS[(i * 13) % len(WORDS)],
    )
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": f"Rule {i}: {a} before {b}",
        "body": f"Always handle {a} and {b} carefully; check {c} first (rule number {i}).",
        "applies_to": {"scope": "project"},
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Spawned:
    """``prism serve`` on a temp database, with an admin key."""

    def __init__(self, embedder: str, log_dir: Path) -> None:
        self.db = log_dir / "prism.db"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
        self.env.update(
            {
                "PRISM_DB": str(self.db),
                "PRISM_EMBEDDER": embedder,
                # No per-key rate limit: it would cap what is measured at its 30/s default.
                "PRISM_HTTP_RATE_LIMIT": "",
                "PYTHONPATH": str(BACKEND),
            }
        )
        made = subprocess.run(
            [sys.executable, "-m", "prism_memory", "keys", "create", "--tenant", "bench", "--role",
             "admin", "--json"],
            env=self.env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        self.key = json.loads(made.stdout)["key"]
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = (log_dir / "serve.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "prism_memory", "serve", "--port", str(port), "--no-access-log",
             "--log-level", "warning"],
            env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit("prism serve did not become ready")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self.log.close()


async def run_op(
    url: str, key: str, op: str, clients: int, seconds: float, seed: int
) -> dict[str, Any]:
    """Run ``op`` with ``clients`` concurrent clients for ``seconds``; latency statistics."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    counter = iter(range(10**9))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=60
    ) as client:
        stop_at = time.perf_counter() + seconds

        async def worker() -> None:
            failures = 0
            while time.perf_counter() < stop_at and failures < 20:
                n = next(counter)
                if op == "remember":
                    request = client.post("/v1/memories", json=rule(seed + n))
                else:
                    words = f"{WORDS[n % len(WORDS)]} {WORDS[(n * 5) % len(WORDS)]}"
                    request = client.post("/v1/recall", json={"query": words, "top_k": 10})
                started = time.perf_counter()
                try:
                    response = await request
                    status = str(response.status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                elapsed = time.perf_counter() - started
                if status in ("200", "201"):
                    latencies.append(elapsed)
                    failures = 0
                else:
                    errors[status] = errors.get(status, 0) + 1
                    failures += 1  # twenty in a row: the server is gone, stop

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - began
    ordered = sorted(latencies)

    def pct(p: float) -> float | None:
        if not ordered:
            return None
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "requests": len(latencies),
        "errors": errors,
        "seconds": round(wall, 2),
        "requests_per_s": round(len(latencies) / wall, 1),
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2) if latencies else None,
    }


async def seed_rules(url: str, key: str, count: int, clients: int) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
        queue = iter(range(count))

        async def worker() -> None:
            for i in queue:
                response = await client.post("/v1/memories", json=rule(i))
                response.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(clients)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="use this running server (needs --key) instead")
    parser.add_argument("--key", help="an admin/writer API key for --url")
    parser.add_argument("--embedder", choices=["fake", "minilm"], default="fake")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="per operation")
    parser.add_argument("--seed", type=int, default=1000, help="memorules written first")
    parser.add_argument("--ops", default="recall,remember", help="comma-separated, in order")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="prism-http-load-") as tmp:
        spawned = None
        if args.url:
            if not args.key:
                parser.error("--url needs --key")
            url, key = args.url, args.key
        else:
            spawned = Spawned(args.embedder, Path(tmp))
            url, key = spawned.url, spawned.key
        try:
            began = time.perf_counter()
            asyncio.run(seed_rules(url, key, args.seed, args.clients))
            seeded = time.perf_counter() - began
            results = {
                op: asyncio.run(run_op(url, key, op, args.clients, args.seconds, args.seed))
                for op in args.ops.split(",")
            }
        finally:
            if spawned is not None:
                spawned.stop()
    report = {
        "benchmark": "http_load",
        "embedder": args.embedder if not args.url else "(server's)",
        "clients": args.clients,
        "seconds_per_op": args.seconds,
        "seeded_memorules": args.seed,
        "seed_seconds": round(seeded, 2),
        "results": results,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_avg_1m": round(os.getloadavg()[0], 2),
        },
        "method": "asyncio + httpx, keep-alive, one process on the same machine; latency "
        "is client-observed per request; recall queries are two words, top_k 10",
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
