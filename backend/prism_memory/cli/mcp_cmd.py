"""``prism mcp``: serve MCP over stdio (what Claude Code, Claude Desktop and Cursor launch).

stdout carries the protocol: everything else (errors before serving, logs) goes to stderr.
The MCP SDK is imported when the command runs, not when the CLI loads.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from prism_memory.errors import InvalidInput, PrismError

if TYPE_CHECKING:
    from prism_memory.bootstrap import Services

EXIT_INVALID = 2
EXIT_REFUSED = 1


@click.command(name="mcp")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file [env PRISM_DB; default: the user data directory]",
)
@click.option(
    "--database-url",
    help="postgresql://... selects the PostgreSQL engine instead [env PRISM_DATABASE_URL]",
)
@click.option("--tenant", help="tenant UUID or slug [env PRISM_TENANT; default: default]")
@click.option("--project", help="project UUID or slug [env PRISM_PROJECT; default: default]")
@click.option("--persona", help="who is acting, e.g. donna [env PRISM_PERSONA]")
@click.option("--surface", help="where, e.g. python or github [env PRISM_SURFACE]")
@click.option("--specialization", help="in what role, e.g. backend [env PRISM_SPECIALIZATION]")
@click.option(
    "--session-id", help="a fixed session UUID [env PRISM_SESSION_ID; default: one per process]"
)
@click.option(
    "--allow-context-override",
    "mcp_allow_context_override",
    is_flag=True,
    default=None,
    help="let a tool call narrow persona/surface/specialization "
    "[env PRISM_MCP_ALLOW_CONTEXT_OVERRIDE; default: off]",
)
@click.option(
    "--tool-schemas",
    "mcp_tool_schemas",
    type=click.Choice(["flat", "precise"]),
    default=None,
    help="flat: plain-object tool schemas, as Claude Code requires; precise: each kind's "
    "own required fields (oneOf), for clients that validate arguments "
    "[env PRISM_MCP_TOOL_SCHEMAS; default: flat]",
)
def mcp_command(**options: Any) -> None:
    """Serve the Prism tools over MCP on stdin/stdout.

    One process per client: the process is the MCP session, and its session id is recorded
    on every write. Several processes may share one database file.
    """
    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.settings import load_settings

    try:
        settings = load_settings(**options)
        context_from(settings)  # a bad tenant, project or persona stops here, before any work
        services = build_services(settings)
    except PrismError as exc:  # a bad setting too (InvalidInput)
        _fail(exc)
    warm_up: threading.Thread | None = None
    try:
        import anyio

        from prism_memory.mcp_server.server import build_mcp_server  # the SDK: the slow import
        from prism_memory.mcp_server.stdio import serve_stdio

        server = build_mcp_server(services, settings)
        # Load the embedding model in the background once the server is ready to answer:
        # the handshake is not slowed, and the model is loaded by the agent's first recall.
        # Joined before exit, never left running as a daemon: onnxruntime's native threads,
        # torn down by interpreter exit mid-load, abort the process ("terminate called
        # without an active exception", exit 134) when stdin closes early.
        warm_up = threading.Thread(target=_warm_up, args=(services,), name="prism-embedder-warm-up")
        warm_up.start()
        signal.signal(signal.SIGTERM, functools.partial(_terminate, services))
        anyio.run(serve_stdio, server)  # EOF on stdin: answer what was read, then exit 0
    finally:
        if warm_up is not None:
            warm_up.join()  # at most one model load (about a second)
        services.close()


def _terminate(services: Services, signum: int, frame: object) -> None:
    """SIGTERM: write the pending served receipts, release the store, exit 0.

    Raising SystemExit instead would leave the process waiting on the SDK's stdin reader
    thread (blocked in a read that no signal ends); the default action lost the receipts.
    Writes are transactions, so one cut short is simply not there.
    """
    try:
        services.close()
    finally:
        os._exit(0)


def _warm_up(services: Services) -> None:
    try:
        services.embedder.embed(["warm up"])
    except PrismError as exc:
        # Not fatal here: every call that needs the model reports this error itself.
        logging.getLogger("prism.mcp").warning("embedding model not loaded: %s", exc)


def _fail(exc: PrismError) -> NoReturn:
    click.echo(json.dumps(exc.to_payload(), ensure_ascii=False), err=True)
    sys.exit(EXIT_INVALID if isinstance(exc, InvalidInput) else EXIT_REFUSED)
