"""A real ``prism serve`` process on a free loopback port, driven by real HTTP clients.

Concurrent writers, a graceful shutdown under load, slow clients, MCP over Streamable HTTP,
and the loopback-only rule of ``--insecure-local``.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

BACKEND = Path(__file__).resolve().parents[1]
WRITERS = 16

pytestmark = pytest.mark.slow


def environment(db: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update({"PRISM_DB": str(db), "PYTHONPATH": str(BACKEND), "PRISM_EMBEDDER": "fake"})
    # Far above what a test sends; the rate-limit tests set their own.
    env.update({"PRISM_HTTP_RATE_LIMIT": "100000/minute"})
    env.update({"PRISM_HTTP_RATE_LIMIT_ANONYMOUS": "100000/minute"})
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def create_key(db: Path, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "prism_memory", "keys", "create", "--json", *args],
        env=environment(db),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return str(json.loads(out.stdout)["key"])


class Server:
    """``prism serve`` in a subprocess; ``url`` once /readyz answers 200."""

    def __init__(self, db: Path, *args: str, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = db.parent / f"serve-{self.port}.log"
        self._log = self.log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "prism_memory",
                "serve",
                "--port",
                str(self.port),
                "--no-access-log",
                *args,
            ],
            env=environment(db, **env),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise AssertionError(self.log.read_text())
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("prism serve did not become ready:\n" + self.log.read_text())

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        finally:
            self._log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Path]]:
    """One server for the tests that do not stop it: (server, an admin key, its database)."""
    db = tmp_path_factory.mktemp("served") / "prism.db"
    key = create_key(db, "--tenant", "acme", "--role", "admin")
    server = Server(db, PRISM_HTTP_HEADER_TIMEOUT_S="1", PRISM_HTTP_BODY_TIMEOUT_S="1")
    try:
        yield server, key, db
    finally:
        assert server.stop() == 0, server.log.read_text()


def rule(writer: int, n: int) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": f"Writer {writer} rule {n}",
        "body": f"Convention number {n} recorded by concurrent writer {writer}.",
        "applies_to": {"scope": "project"},
    }


def write_many(url: str, key: str, writer: int, count: int) -> list[str]:
    """Write ``count`` memorules; the ids the server acknowledged (stops at the first refusal)."""
    done = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        for n in range(count):
            try:
                response = c.post("/v1/memories", json=rule(writer, n))
            except httpx.TransportError:
                break  # the server is shutting down
            if response.status_code != 201:
                break
            done.append(response.json()["id"])
    return done


def audit_ids(url: str, key: str) -> list[str]:
    ids, cursor = [], None
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as c:
        while True:
            params: dict[str, Any] = {"limit": 500, **({"before": cursor} if cursor else {})}
            page = c.get("/v1/audit", params=params).json()
            ids += [e["memorule_id"] for e in page["events"]]
            if not (cursor := page["next_cursor"]):
                return ids


def test_sixteen_concurrent_writers_lose_nothing_and_the_chain_stays_valid(
    served: tuple[Server, str, Path],
) -> None:
    server, _, db = served
    key = create_key(db, "--tenant", "writers", "--role", "admin")
    with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
        results = list(pool.map(lambda w: write_many(server.url, key, w, 15), range(WRITERS)))
    written = [i for r in results for i in r]
    assert len(written) == WRITERS * 15 == len(set(written))
    assert sorted(audit_ids(server.url, key)) == sorted(written)
    auth = {"Authorization": f"Bearer {key}"}
    verify = httpx.get(f"{server.url}/v1/audit/verify", headers=auth).json()
    assert verify["ok"] is True and verify["events"] == len(written)
    recall = httpx.post(f"{server.url}/v1/recall", json={"top_k": 1}, headers=auth).json()
    assert recall["candidates"] == len(written)


def test_a_graceful_shutdown_under_load_keeps_every_acknowledged_write(db_path: Path) -> None:
    key = create_key(db_path, "--tenant", "acme", "--role", "admin")
    server = Server(db_path)
    with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
        futures = [pool.submit(write_many, server.url, key, w, 200) for w in range(WRITERS)]
        time.sleep(1.5)
        assert server.stop() == 0, server.log.read_text()
        acknowledged = [i for f in futures for i in f.result()]
    assert acknowledged
    again = Server(db_path)
    try:
        assert sorted(audit_ids(again.url, key)) == sorted(acknowledged)
        verify = httpx.get(
            f"{again.url}/v1/audit/verify", headers={"Authorization": f"Bearer {key}"}
        ).json()
        assert verify["ok"] is True
    finally:
        assert again.stop() == 0


def raw_exchange(port: int, data: bytes, wait: float) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait + 5) as s:
        s.sendall(data)
        time.sleep(wait)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_slow_clients_are_cut_off(served: tuple[Server, str, Path]) -> None:
    server, key, _ = served
    slow_headers = raw_exchange(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", 2.5)
    assert slow_headers == b""  # closed without an answer
    head = (
        f"POST /v1/recall HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    ).encode()
    slow_body = raw_exchange(server.port, head, 2.5)
    assert slow_body.startswith(b"HTTP/1.1 408") and b'"request_timeout"' in slow_body
    huge = httpx.post(f"{server.url}/v1/recall", content=b"{" * 300_000)
    assert huge.status_code == 413
    assert httpx.get(f"{server.url}/healthz").status_code == 200


def test_mcp_over_streamable_http_uses_the_keys_tenant_and_role(
    served: tuple[Server, str, Path],
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    server, _, db = served
    admin = create_key(db, "--tenant", "mcp-tenant", "--role", "admin")
    reader = create_key(db, "--tenant", "mcp-tenant", "--role", "reader")

    async def session(key: str) -> list[Any]:
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
            async with Client(transport) as client:
                wrote = await client.call_tool("prism_remember", {"body": "written over MCP"})
                found = await client.call_tool("semantic_recall", {"query": "MCP"})
                return [wrote, found]

    wrote, found = anyio.run(session, admin)
    assert not wrote.is_error and not found.is_error
    assert json.loads(found.content[0].text)["count"] == 1
    refused, readable = anyio.run(session, reader)
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "forbidden"
    assert not readable.is_error
    anonymous = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert anonymous.status_code == 401


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_insecure_local_refuses_to_bind_a_non_loopback_address(db_path: Path, host: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "prism_memory", "serve", "--insecure-local", "--host", host],
        env=environment(db_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert "--insecure-local" in out.stderr and "loopback" in out.stderr


def test_insecure_local_serves_loopback_without_a_key(db_path: Path) -> None:
    server = Server(db_path, "--insecure-local", "--tenant", "me")
    try:
        me = httpx.get(f"{server.url}/v1/whoami").json()
        assert me["role"] == "admin" and me["key_id"] == "insecure-local"
    finally:
        assert server.stop() == 0
