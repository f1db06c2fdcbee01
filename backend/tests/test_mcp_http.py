"""MCP over Streamable HTTP (``build_mcp_asgi_app``), mounted in a host app, in process.

``prism serve`` mounts the same app; its own tests run it on a socket.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from prism_memory.bootstrap import Services
from prism_memory.domain.records import SessionContext
from prism_memory.mcp_server.server import MCPHttpApp, build_mcp_asgi_app
from prism_memory.settings import load_settings

ContextFactory = Callable[..., SessionContext]
BASE = "http://127.0.0.1:8000"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def mcp_http(services: Services, db_path: Path) -> AsyncIterator[MCPHttpApp]:
    settings = load_settings(db=db_path, embedder="fake", tenant="acme", project="api")
    mcp = build_mcp_asgi_app(services, settings)
    async with mcp.lifespan():  # what the host's lifespan does; ASGITransport runs none
        yield mcp


def host_app(mcp: MCPHttpApp) -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, bool]:
        return {"ok": True}

    app.mount("/", mcp.app)  # last, as the contract says
    return app


@contextlib.asynccontextmanager
async def connect(mcp: MCPHttpApp, mode: str) -> AsyncIterator[Client]:
    transport = httpx2.ASGITransport(app=host_app(mcp))
    async with httpx2.AsyncClient(transport=transport, base_url=BASE) as http:
        stream = streamable_http_client(f"{BASE}/mcp", http_client=http)
        async with Client(stream, mode=mode) as client:
            yield client


async def remember(client: Client, subject: str) -> str:
    result = await client.call_tool(
        "prism_remember",
        {
            "kind": "memorule",
            "memorule_kind": "convention",
            "subject": subject,
            "body": "Every HTTP handler validates its input before use.",
            "applies_to": {"scope": "project"},
        },
    )
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return str(result.structured_content["id"])


def session_of(services: Services, ctx: SessionContext, memory_id: str) -> UUID:
    return services.memory.reads.get(ctx, UUID(memory_id))[1].written_by_session_id


@pytest.mark.anyio
async def test_a_handshake_session_over_http_is_one_prism_session(
    mcp_http: MCPHttpApp, services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(tenant="acme", project="api")
    async with connect(mcp_http, "legacy") as client:
        a = await remember(client, "First convention")
        b = await remember(client, "Second convention")
        found = await client.call_tool("semantic_recall", {"source_type": "memorule"})
        assert found.structured_content is not None and found.structured_content["count"] == 2
    async with connect(mcp_http, "legacy") as other:
        c = await remember(other, "Third convention")
    assert session_of(services, ctx, a) == session_of(services, ctx, b)
    assert session_of(services, ctx, c) != session_of(services, ctx, a)


@pytest.mark.anyio
async def test_stateless_protocol_requests_each_get_their_own_session(
    mcp_http: MCPHttpApp, services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(tenant="acme", project="api")
    async with connect(mcp_http, "2026-07-28") as client:
        a = await remember(client, "First convention")
        b = await remember(client, "Second convention")
        error = await client.call_tool("prism_remember", {"kind": "memorule"})
    assert session_of(services, ctx, a) != session_of(services, ctx, b)
    assert error.is_error
    assert error.structured_content is not None
    assert error.structured_content["error"]["code"] == "validation_failed"


@pytest.mark.anyio
async def test_the_host_keeps_its_own_routes(mcp_http: MCPHttpApp) -> None:
    transport = httpx2.ASGITransport(app=host_app(mcp_http))
    async with httpx2.AsyncClient(transport=transport, base_url=BASE) as http:
        assert (await http.get("/health")).json() == {"ok": True}
        response: Any = await http.post("/mcp", json={})
        assert response.status_code != 307  # no /mcp -> /mcp/ redirect
