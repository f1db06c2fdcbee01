"""``prism serve``: the HTTP API (``/v1``), MCP over Streamable HTTP (``/mcp``), probes, metrics.

FastAPI, uvicorn and the MCP SDK are imported when the command runs, not when the CLI loads.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from prism_memory.errors import InvalidInput, PrismError
from prism_memory.services import local_serve

if TYPE_CHECKING:
    from prism_memory.settings import Settings

EXIT_INVALID = 2
EXIT_REFUSED = 1


@click.command(name="serve")
@click.option("--host", help="address to bind [env PRISM_HOST; default: 127.0.0.1]")
@click.option("--port", type=int, help="port to listen on [env PRISM_PORT; default: 8765]")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file [env PRISM_DB; default: the user data directory]",
)
@click.option(
    "--database-url",
    help="postgresql://... selects the PostgreSQL engine instead [env PRISM_DATABASE_URL]",
)
@click.option(
    "--tenant", help="--insecure-local only: the tenant [env PRISM_TENANT; default: default]"
)
@click.option(
    "--project",
    help="project of requests that name none [env PRISM_PROJECT; default: default]",
)
@click.option(
    "--embedder",
    type=click.Choice(["minilm", "fake"]),
    help="embedding model [env PRISM_EMBEDDER; default: minilm]",
)
@click.option(
    "--max-body-bytes",
    type=int,
    help="largest request body [env PRISM_MAX_BODY_BYTES; default: 262144]",
)
@click.option(
    "--insecure-local",
    is_flag=True,
    help="no API keys: every request is an admin of --tenant; refuses a non-loopback bind",
)
@click.option("--no-migrate", is_flag=True, help="do not apply migrations (/readyz waits)")
@click.option(
    "--no-hook-file",
    is_flag=True,
    help="write no discovery file: Claude Code hooks of this store answer in-process "
    "(slower) instead of asking this server",
)
@click.option("--no-access-log", is_flag=True, help="do not log every request")
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
)
def serve_command(
    insecure_local: bool,
    no_migrate: bool,
    no_access_log: bool,
    log_level: str,
    no_hook_file: bool,
    **options: Any,
) -> None:
    """Serve the HTTP API (/v1, needs an API key), MCP (/mcp), /healthz, /readyz, /metrics.

    The operator console (review memorules, history, audit) is at /; sign in with a key.
    Create keys with 'prism keys create'. OpenAPI is at /openapi.json, docs at /docs.
    SIGTERM or Ctrl-C stops accepting requests and lets in-flight writes finish.

    Beside the store it writes a discovery file (<store>.serve.json, mode 0600) with a
    token that lets this machine's Claude Code hooks ask it instead of loading the model;
    it is removed at exit (see docs/clients.md).
    """
    from prism_memory.cli.runtime import require_extra

    require_extra("server", "prism serve")
    from prism_memory.api.server import build_server, is_loopback, run
    from prism_memory.settings import load_settings

    try:
        settings = load_settings(**options)
    except PrismError as exc:  # a bad setting (InvalidInput)
        _fail(exc)
    if insecure_local and not is_loopback(settings.host):
        raise click.UsageError(
            f"--insecure-local serves without API keys, so it binds only a loopback address "
            f"(127.0.0.1, ::1, localhost); refusing to bind {settings.host!r}. "
            "Drop --insecure-local and create a key with 'prism keys create' instead."
        )
    from prism_memory.asgi import create_app
    from prism_memory.bootstrap import build_services

    try:
        services = build_services(settings, migrate=not no_migrate)
    except PrismError as exc:
        _fail(exc)
    published = None if no_hook_file else _publish(settings)
    try:
        try:
            services.embedder.embed(["warm up"])  # load the model before the first request
            app = create_app(
                services,
                settings,
                insecure_local=insecure_local,
                json_logs=settings.log_format == "json",
                access_log=not no_access_log,
                hook=(published.token, published.store) if published else None,
            )
        except PrismError as exc:
            _fail(exc)
        server = build_server(app, settings, log_level=log_level, access_log=not no_access_log)
        mode = "insecure-local: NO API KEYS" if insecure_local else "API keys required"
        url = f"http://{_url_host(settings.host)}:{settings.port}"
        if settings.log_format == "json":  # build_server configured the JSON log lines
            logging.getLogger("prism.serve").info("serving", extra={"url": url, "mode": mode})
        else:
            click.echo(f"prism serve: {url} ({mode}); docs /docs, MCP /mcp", err=True)
        run(server)
    finally:
        if published is not None:
            local_serve.withdraw(settings.db_path(), settings.database_url or None, published.token)
        services.close()


def _publish(settings: Settings) -> local_serve.Discovery | None:
    """The store's discovery file for the hooks' fast path (None when the server cannot be
    reached on loopback or the file cannot be written: the hooks then answer in-process)."""
    host = local_serve.connect_host(settings.host)
    if host is None:
        click.echo(
            f"prism serve: no hook discovery file: {settings.host!r} is not a loopback or "
            "wildcard address, and the hook token must not cross a network",
            err=True,
        )
        return None
    try:
        return local_serve.publish(
            settings.db_path(), settings.database_url or None, host, settings.port
        )
    except OSError as exc:
        click.echo(f"prism serve: could not write the hook discovery file: {exc}", err=True)
        return None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _fail(exc: PrismError) -> NoReturn:
    click.echo(json.dumps(exc.to_payload(), ensure_ascii=False), err=True)
    sys.exit(EXIT_INVALID if isinstance(exc, InvalidInput) else EXIT_REFUSED)
