"""A real server at its limits (issue #15, defects 7 and 8): saturation, idle sockets, a 500.

``prism serve`` subprocesses on free loopback ports: at the concurrency limit the answer is
the JSON 503 with ``Retry-After`` while the probes still answer; 140 idle sockets held open
by one client do not keep an authenticated client out; and after an internal error the same
keep-alive connection serves the next request (uvicorn in a thread, with one route that
fails on purpose, since the product has no known 500 left to trigger).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from prism_memory.api.server import build_server
from prism_memory.asgi import create_app
from prism_memory.bootstrap import build_services
from prism_memory.settings import load_settings
from tests.test_api_server import Server, create_key, free_port

pytestmark = pytest.mark.slow
IDLE_SOCKETS = 140
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "saturation", "version": "0"},
    },
}


@contextlib.contextmanager
def held_request_slot(url: str, key: str) -> Iterator[None]:
    """One request in flight for as long as the block runs: an MCP session's GET stream."""
    auth = {"Authorization": f"Bearer {key}", **MCP_HEADERS}
    with httpx.Client(base_url=url, timeout=10) as client:
        session = client.post("/mcp", json=INIT, headers=auth).headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post("/mcp", json=note, headers={**auth, "Mcp-Session-Id": session})
        stream_headers = {**auth, "Accept": "text/event-stream", "Mcp-Session-Id": session}
        with client.stream("GET", "/mcp", headers=stream_headers) as stream:
            assert stream.status_code == 200
            yield


def test_at_the_concurrency_limit_the_answer_is_json_503_and_the_probes_still_answer(
    tmp_path: Path,
) -> None:
    db = tmp_path / "prism.db"
    key = create_key(db, "--tenant", "acme", "--role", "admin")
    server = Server(db, PRISM_HTTP_MAX_CONCURRENCY="1")
    auth = {"Authorization": f"Bearer {key}"}
    try:
        with held_request_slot(server.url, key):
            busy = httpx.post(f"{server.url}/v1/recall", json={}, headers=auth, timeout=10)
            assert busy.status_code == 503
            assert busy.headers["content-type"] == "application/json"
            assert busy.headers["retry-after"] == "1"
            assert busy.json()["error"]["code"] == "overloaded"
            for probe in ("/healthz", "/readyz"):
                assert httpx.get(f"{server.url}{probe}", timeout=10).status_code == 200
        freed = httpx.post(f"{server.url}/v1/recall", json={}, headers=auth, timeout=10)
        assert freed.status_code == 200
    finally:
        assert server.stop() == 0, server.log.read_text()


@pytest.mark.parametrize("max_connections", [None, 64], ids=["default cap", "cap 64"])
def test_idle_sockets_from_one_client_do_not_keep_an_authenticated_client_out(
    tmp_path: Path, max_connections: int | None
) -> None:
    db = tmp_path / "prism.db"
    key = create_key(db, "--tenant", "acme", "--role", "reader")
    env = {"PRISM_HTTP_MAX_CONNECTIONS": str(max_connections)} if max_connections else {}
    server = Server(db, **env)
    idle: list[socket.socket] = []
    try:
        for _ in range(IDLE_SOCKETS):  # connect, then send nothing: each waits for headers
            idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        started = time.monotonic()
        statuses = []
        for _ in range(20):  # each on a new connection, with a timeout well below 10 s
            response = httpx.get(
                f"{server.url}/v1/whoami", headers={"Authorization": f"Bearer {key}"}, timeout=3
            )
            statuses.append(response.status_code)
        elapsed = time.monotonic() - started
        assert statuses == [200] * 20
        print(f"20 authenticated requests past {IDLE_SOCKETS} idle sockets: {elapsed:.3f} s")
    finally:
        for s in idle:
            s.close()
        assert server.stop() == 0, server.log.read_text()


@contextlib.contextmanager
def threaded_server(app: FastAPI, port: int) -> Iterator[None]:
    config = load_settings(port=port, embedder="fake", database_url="")
    server = build_server(app, config, log_level="critical", access_log=False)
    thread = threading.Thread(target=server.run, name="uvicorn-under-test")
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_after_an_internal_error_the_same_connection_serves_the_next_request(
    tmp_path: Path,
) -> None:
    settings = load_settings(db=tmp_path / "prism.db", embedder="fake", database_url="")
    services = build_services(settings)
    try:
        app = create_app(services, settings)

        @app.get("/fails-on-purpose")
        def fails() -> None:
            raise RuntimeError("a bug")

        port = free_port()
        with threaded_server(app, port):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/fails-on-purpose")
            failed = conn.getresponse()
            payload = json.loads(failed.read())
            assert failed.status == 500 and payload["error"]["code"] == "internal_error"
            for _ in range(3):  # the same socket, kept alive
                conn.request("GET", "/healthz")
                ok = conn.getresponse()
                assert ok.status == 200 and json.loads(ok.read())["ok"] is True
            conn.close()
    finally:
        services.close()
