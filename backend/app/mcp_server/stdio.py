"""MCP over stdio that answers every request it has read before it exits.

The SDK's ``MCPServer.run("stdio")`` stops serving the moment stdin reaches EOF: a request
still running then (a write, a recall loading the model) is cancelled and its answer never
written. An agent that writes its last request and closes its end of the pipe — or a
script's ``printf ... | prism mcp`` — would see its request vanish, possibly after the write
committed. Here EOF only stops *reading*: the server keeps running until every request read
has been answered (or ``drain_timeout_s`` passed), then exits cleanly.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

DRAIN_TIMEOUT_S = 60.0


class _Pending:
    """The ids of requests read and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.changed = anyio.Event()

    def read(self, message: object) -> None:
        if isinstance(message, SessionMessage) and isinstance(message.message, JSONRPCRequest):
            self.ids.add(message.message.id)

    def answered(self, message: SessionMessage) -> None:
        if isinstance(message.message, JSONRPCResponse | JSONRPCError):
            self.ids.discard(message.message.id)
            self.changed.set()
            self.changed = anyio.Event()

    async def drained(self) -> None:
        while self.ids:
            await self.changed.wait()


class _AnsweringWriter:
    """The server's write stream, noting each answer on its way out."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._pending.answered(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnsweringWriter:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


async def serve_stdio(server: MCPServer, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes and every request is answered."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    pending = _Pending()
    async with stdio_server() as (read_stream, write_stream):
        forward, inbox = create_context_streams[SessionMessage | Exception](0)

        async def pump() -> None:
            async with forward:
                async for message in read_stream:
                    pending.read(message)
                    await forward.send(message)
                with anyio.move_on_after(drain_timeout_s):
                    await pending.drained()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            await lowlevel.run(
                inbox,
                _AnsweringWriter(write_stream, pending),
                lowlevel.create_initialization_options(),
            )
