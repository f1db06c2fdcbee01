"""``prism migrate``: bring the database schema up to date (either engine).

Start-up applies pending migrations too; this command makes it an explicit step for
deployments that run schema changes separately, with a role that may alter the schema.
Built on :mod:`app.cli.runtime`, like every command module here.
"""

from __future__ import annotations

import click

from app.bootstrap import build_store
from app.cli.runtime import Runtime, common
from app.settings import load_settings


def migrate_command() -> click.Command:
    """``prism migrate``."""

    @click.command("migrate")
    @common
    def command(rt: Runtime) -> None:
        """Apply pending schema migrations, in order, each once; print the version in force.

        Safe to run repeatedly and from several processes at once.
        """
        settings = load_settings(**rt.options)
        store = build_store(settings)
        try:
            version = store.migrate()
        finally:
            store.close()
        engine = "postgresql" if settings.database_url else "sqlite"
        rt.emit(
            {"ok": True, "engine": engine, "schema_version": version},
            lambda d: f"{d['engine']} schema at version {d['schema_version']}",
        )

    return command
