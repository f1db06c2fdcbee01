"""MCP over stdio that answers every request it has read, before it exits.

The SDK's ``MCPServer.run("stdio")`` stops serving the moment stdin reaches EOF: a request
still running then (a write, a recall loading the model) is cancelled and its answer never
written. An agent that writes its last request and closes its end of the pipe — or a
script's ``printf ... | prism mcp`` — would see its request vanish, possibly after the write
committed. Here EOF only stops *reading*: the server keeps running until every request read
has been answered (or ``drain_timeout_s`` passed), then exits cleanly.

Lines are read here too, not by the SDK: its parser refuses a JSON string escape that names
a lone surrogate (``"\\ud800"``, valid JSON) and then drops the request without an answer.
Python's JSON parser accepts it, so the arguments reach the validators, which refuse the
field like every other bad character (an ``isError`` result naming it). A line that is not
JSON-RPC at all (or not UTF-8) is answered with the JSON-RPC parse error (``id`` null)
instead of silence.
"""

from __future__ import annotations

import json
import sys
from types import TracebackType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

DRAIN_TIMEOUT_S = 60.0
PARSE_ERROR = -32700


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


def parse_line(line: bytes) -> SessionMessage | None:
    """One line of stdin as a JSON-RPC message (None: not UTF-8, not JSON, not JSON-RPC)."""
    try:
        data = json.loads(line.decode("utf-8"))
        return SessionMessage(jsonrpc_message_adapter.validate_python(data))
    except (ValueError, RecursionError):  # UnicodeDecodeError, ValidationError: ValueErrors
        return None


def _parse_error() -> SessionMessage:
    error = ErrorData(code=PARSE_ERROR, message="Parse error: not a JSON-RPC message")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def serve_stdio(server: MCPServer, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes and every request is answered."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    pending = _Pending()
    stdin = anyio.wrap_file(sys.stdin.buffer)
    # The SDK still owns stdout (it keeps stray prints off the wire); stdin is read here.
    async with stdio_server(stdin=_no_lines()) as (_, write_stream):
        writer = _AnsweringWriter(write_stream, pending)
        forward, inbox = create_context_streams[SessionMessage | Exception](0)

        async def pump() -> None:
            async with forward:
                async for line in stdin:
                    if not line.strip():
                        continue
                    message = parse_line(line)
                    if message is None:
                        await write_stream.send(_parse_error())
                        continue
                    pending.read(message)
                    await forward.send(message)
                with anyio.move_on_after(drain_timeout_s):
                    await pending.drained()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            await lowlevel.run(inbox, writer, lowlevel.create_initialization_options())


class _NoLines:
    """An empty stdin for the SDK's transport (this module reads the real one)."""

    def __aiter__(self) -> _NoLines:
        return self

    async def __anext__(self) -> str:
        raise StopAsyncIteration


def _no_lines() -> Any:
    return _NoLines()
