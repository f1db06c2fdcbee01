"""A populated HTTP API for the API tests: two tenants, several projects, keys of every kind.

Tenant ``acme`` (A) and tenant ``beta`` (B) both use a project slug ``p1`` — slugs map to the
same project UUID in every tenant, so B's key naming "p1" is B's p1, never A's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from prism_memory.asgi import create_app
from prism_memory.bootstrap import Services, build_auth, build_services
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import SessionContext
from prism_memory.services.auth_service import AuthService
from prism_memory.settings import Settings, load_settings

ROOMY_RATE_LIMITS = {
    "http_rate_limit": "100000/minute",
    "http_rate_limit_anonymous": "100000/minute",
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
KEYS: dict[str, dict[str, Any]] = {
    "a_reader": {"tenant": "acme", "role": "reader"},
    "a_writer": {"tenant": "acme", "role": "writer"},
    "a_admin": {"tenant": "acme", "role": "admin"},
    "a_p1_writer": {"tenant": "acme", "role": "writer", "projects": ["p1"]},
    "a_p1_admin": {"tenant": "acme", "role": "admin", "projects": ["p1"]},
    "a_donna": {"tenant": "acme", "role": "writer", "persona": "donna"},
    "b_reader": {"tenant": "beta", "role": "reader"},
    "b_writer": {"tenant": "beta", "role": "writer"},
    "b_admin": {"tenant": "beta", "role": "admin"},
    "revoked": {"tenant": "acme", "role": "admin"},
}


def rule(subject: str, body: str, **applies: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": subject,
        "body": body,
        "applies_to": applies or {"scope": "project"},
        "confidence": "observed",
    }


@dataclass
class World:
    """Services, a client of the app over them, keys (name -> secret) and memory ids."""

    services: Services
    settings: Settings
    auth: AuthService
    client: TestClient
    keys: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    mcp_sessions: dict[str, str] = field(default_factory=dict)

    def ctx(self, tenant: str, project: str, persona: str | None = None) -> SessionContext:
        return SessionContext(
            uuid_for("tenant", tenant), uuid_for("project", project), new_id(), persona
        )

    def headers(self, key: str | None, **extra: str) -> dict[str, str]:
        out = {k.replace("_", "-"): v for k, v in extra.items()}
        if key is not None:
            out["Authorization"] = f"Bearer {self.keys.get(key, key)}"
        return out

    def call(
        self,
        key: str | None,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        return self.client.request(
            method, path, json=body, headers={**self.headers(key), **(headers or {})}
        )

    def mcp(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One JSON-RPC request over /mcp in the key's MCP session; the decoded response."""
        if key not in self.mcp_sessions:
            self.mcp_sessions[key] = self._mcp_initialize(key)
        headers = {**self.headers(key), **MCP_HEADERS, "Mcp-Session-Id": self.mcp_sessions[key]}
        message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        response = self.client.post("/mcp", json=message, headers=headers)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def tool(self, key: str, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """A tool call: (is_error, the JSON payload of its text)."""
        result = self.mcp(key, "tools/call", {"name": name, "arguments": arguments})["result"]
        return bool(result.get("isError")), json.loads(result["content"][0]["text"])

    def _mcp_initialize(self, key: str) -> str:
        headers = {**self.headers(key), **MCP_HEADERS}
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "prism-tests", "version": "0"},
            },
        }
        response = self.client.post("/mcp", json=init, headers=headers)
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.client.post("/mcp", json=note, headers={**headers, "Mcp-Session-Id": session})
        return session


def populate(world: World) -> None:
    """Keys of every kind, and memories in A (two projects) and B."""
    for name, spec in KEYS.items():
        issued = world.auth.create_key(
            spec["tenant"], spec["role"], spec.get("projects", ()), spec.get("persona")
        )
        world.keys[name] = issued.secret
        if name == "revoked":
            world.auth.revoke_key(issued.key.key_id)
    memory = world.services.memory
    writes = {
        "a_note_p1": ("acme", "p1", {"body": "Acme's deploys happen on Tuesdays."}),
        "a_rule_p1": ("acme", "p1", rule("Run tests first", "Always run the test suite first.")),
        "a_note_p2": ("acme", "p2", {"body": "Project two keeps its secrets in the vault."}),
        "a_rule_p2": ("acme", "p2", rule("Review every PR", "Every pull request needs review.")),
        "a_global_p2": (
            "acme",
            "p2",
            rule("Write in English", "All code comments are written in English.", scope="global"),
        ),
        "a_texi_p1": (
            "acme",
            "p1",
            rule(
                "Texi reviews APIs",
                "Texi reviews every API change.",
                scope="persona",
                persona="texi",
            ),
        ),
        "a_retired_p1": ("acme", "p1", rule("Old rule here", "This rule was retired long ago.")),
        "b_note_p1": ("beta", "p1", {"body": "Beta's deploys happen on Fridays."}),
        "b_rule_p1": ("beta", "p1", rule("Lint before push", "Always lint before pushing code.")),
    }
    for name, (tenant, project, raw) in writes.items():
        world.ids[name] = str(
            memory.writes.remember(world.ctx(tenant, project), validate_remember(raw)).id
        )
    memory.lifecycle.retire(
        world.ctx("acme", "p1"), uuid.UUID(world.ids["a_retired_p1"]), "obsolete"
    )


@contextmanager
def running_world(tmp: Path, **settings: Any) -> Iterator[World]:
    """A populated world over a fresh SQLite file (or ``database_url``'s PostgreSQL), its
    app running (lifespan entered).

    Rate limits are far above what a test module sends (their own tests set them low).
    """
    settings = {**ROOMY_RATE_LIMITS, "database_url": "", **settings}
    config = load_settings(db=tmp / "prism.db", embedder="fake", project="p1", **settings)
    services = build_services(config)
    try:
        app = create_app(services, config)
        with TestClient(app) as client:
            world = World(services, config, build_auth(services), client)
            populate(world)
            yield world
    finally:
        services.close()


ENGINES: list[Any] = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@contextmanager
def world_on(request: pytest.FixtureRequest, tmp: Path) -> Iterator[World]:
    """The populated world on ``request.param``'s engine (``ENGINES``; PostgreSQL: a fresh
    schema of the session's server, dropped after)."""
    if request.param == "sqlite":
        with running_world(tmp) as w:
            yield w
        return
    pg = request.getfixturevalue("pg_server")
    schema, url = pg.fresh_schema()
    try:
        with running_world(tmp, database_url=url) as w:
            yield w
    finally:
        pg.drop_schema(schema)
