"""What the CLI's commands share: the :class:`Runtime`, the :func:`common` options, exit codes.

Every command module imports from here, and :mod:`prism_memory.cli.main` only registers the
commands,
so no module of ``prism_memory.cli`` imports ``prism_memory.cli.main`` (no import circle). Nothing
heavy is
imported at module level: the services, the settings and the engines load when a command
runs, so ``prism --help`` and each command's ``--help`` stay fast.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

import click

from prism_memory.errors import FieldError, InvalidInput, PrismError

if TYPE_CHECKING:
    from prism_memory.bootstrap import Services
    from prism_memory.domain.records import SessionContext
    from prism_memory.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
EXIT_INVALID = 2
EXIT_REFUSED = 1

# The optional parts of the install (pyproject's extras) and the modules each one brings.
# (A postgresql:// URL without the postgres extra is refused by prism_memory.bootstrap.build_store.)
EXTRAS = {"server": ("fastapi", "uvicorn", "jinja2", "prometheus_client", "limits")}


def require_extra(extra: str, what: str) -> None:
    """Stop with a one-line answer, not a traceback, when ``what`` needs a missing extra.

    Raises:
        click.ClickException: a module of the extra is not installed (exit 1).
    """
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(
            f"{what} needs the '{extra}' extra ({', '.join(missing)} not installed): "
            f"pip install 'prism-memory[{extra}]'"
        )


class Runtime:
    """Services and context for one command, built on first use."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.json = bool(options.pop("as_json"))
        self.options = options
        self._settings: Settings | None = None
        self._services: Services | None = None
        self._ctx: SessionContext | None = None

    @property
    def settings(self) -> Settings:
        """The settings of the command's flags and ``PRISM_*`` variables, judged once.

        Raises:
            InvalidInput: a flag or variable is not valid (each error names which).
        """
        if self._settings is None:
            from prism_memory.settings import load_settings

            self.options = _with_project_file(self.options)
            self._settings = load_settings(**self.options)
        return self._settings

    @property
    def services(self) -> Services:
        if self._services is None:
            from prism_memory.bootstrap import build_services

            self._services = build_services(self.settings)
        return self._services

    @property
    def ctx(self) -> SessionContext:
        if self._ctx is None:
            from prism_memory.bootstrap import context_from

            self._ctx = context_from(self.services.settings)
        return self._ctx

    def emit(self, payload: dict[str, Any], human: Callable[[dict[str, Any]], str]) -> None:
        if self.json:
            click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            click.echo(human(payload))

    def close(self) -> None:
        if self._services is not None:
            self._services.close()


def _with_project_file(options: dict[str, Any]) -> dict[str, Any]:
    """The options completed from the ``.prism.toml`` of the folder the command runs in (or
    the nearest above it), as the Claude Code hook reads it; no file, no change.

    Raises:
        InvalidInput: the file is there but is not a valid ``.prism.toml``.
    """
    from prism_memory.services.project_config import find_project_config, with_project_config

    config = find_project_config(Path.cwd())
    if config.path is None:
        return options
    return with_project_config(options, config, os.environ)


def common(func: F) -> F:
    """Adds the engine, context and output options, and maps errors to exit codes once."""

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
    @click.option("--session-id", help="a fixed session UUID [env PRISM_SESSION_ID; default: new]")
    @click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> None:
        keys = (
            "db",
            "database_url",
            "tenant",
            "project",
            "persona",
            "surface",
            "specialization",
            "session_id",
            "as_json",
        )
        rt = Runtime({k: kwargs.pop(k) for k in keys})
        try:
            if not kwargs.get("hook"):
                # Every flag and PRISM_* variable is judged at start (not kept: a command may
                # still fill an option, as capture does with the transcript's project). A
                # client hook never fails the agent's turn: it reports bad settings its own way.
                from prism_memory.settings import load_settings

                load_settings(**rt.options)
            func(rt, **kwargs)
        except PrismError as exc:
            from prism_memory.cli import render

            payload = exc.to_payload()
            if rt.json:
                click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
            else:  # once, for people, in the command's own words; --json gives the payload
                flags = dict(render.FLAG_OF_FIELD)
                if click.get_current_context().info_name == "update":
                    flags["applies_to"] = "--applies-to"
                click.echo(render.error(payload, flags), err=True)
            sys.exit(EXIT_INVALID if isinstance(exc, InvalidInput) else EXIT_REFUSED)
        finally:
            rt.close()

    return cast(F, wrapper)


def parse_id(value: str, label: str = "id") -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise InvalidInput(
            [FieldError(label, "invalid_format", f"'{label}' must be a memory id (a UUID)")]
        ) from None
