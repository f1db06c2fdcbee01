"""``PRISM_LOG_FORMAT=json``: ``prism serve`` writes one JSON object per line — an access line
per request with its id, tenant, route template, status and latency — and never a key or
anything a caller wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.test_api_server import create_key, environment, free_port

pytestmark = pytest.mark.slow

SECRET_RULE = "Never deploy on Fridays: ask the release captain zebra-quartz-1138 first."


def test_json_logs_carry_request_id_tenant_route_status_latency_and_no_secrets(
    db_path: Path,
) -> None:
    key = create_key(db_path, "--tenant", "acme", "--role", "writer", "--persona", "donna")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = db_path.parent / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prism_memory", "serve", "--port", str(port)],
            env=environment(db_path, PRISM_LOG_FORMAT="json"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    for _ in range(600):  # bounded tries until /readyz answers
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        headers = {"Authorization": f"Bearer {key}", "X-Request-ID": "req-abc.123"}
        body = {
            "kind": "memorule",
            "memorule_kind": "behavioral_rule",
            "subject": "Friday deploys",
            "body": SECRET_RULE,
            "applies_to": {"persona": "donna"},
        }
        wrote = httpx.post(f"{url}/v1/memories", json=body, headers=headers, timeout=30)
        assert wrote.status_code == 201, wrote.text
        assert wrote.headers["x-request-id"] == "req-abc.123"
        memory_id = wrote.json()["id"]
        shown = httpx.get(
            f"{url}/v1/memories/{memory_id}",
            headers={"Authorization": f"Bearer {key}", "X-Request-ID": "bad id\twith tab"},
            timeout=30,
        )
        assert shown.status_code == 200
        minted = shown.headers["x-request-id"]
        assert minted != "bad id\twith tab" and len(minted) == 32
        refused = httpx.get(f"{url}/v1/memories/{memory_id}", timeout=30)
        assert refused.status_code == 401
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
    text = log.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # all JSON
    access = [line for line in lines if line["logger"] == "prism.access"]
    by_id = {line["request_id"]: line for line in access}
    written = by_id["req-abc.123"]
    assert written["route"] == "/v1/memories" and written["method"] == "POST"
    assert written["status"] == 201 and written["latency_ms"] > 0
    assert written["tenant"] and len(written["tenant"]) == 36
    assert by_id[minted]["route"] == "/v1/memories/{memory_id}"
    assert by_id[minted]["tenant"] == written["tenant"]
    keyless = [(line["route"], line["status"]) for line in access if line["tenant"] is None]
    assert set(keyless) == {("/readyz", 200), ("/v1/memories/{memory_id}", 401)}
    assert any(line["logger"] == "prism.serve" and line["url"] == url for line in lines)
    for secret in (key, SECRET_RULE, "zebra-quartz", memory_id):
        assert secret not in text
