"""``prism migrate``: bring the database schema up to date (either engine).

Start-up applies pending migrations too; this command makes it an explicit step for
deployments that run schema changes separately, with a role that may alter the schema.
Built on :mod:`prism_memory.cli.runtime`, like every command module here.
"""

from __future__ import annotations

import click

from prism_memory.bootstrap import build_store
from prism_memory.cli.runtime import Runtime, common
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.settings import load_settings


def migrate_command() -> click.Command:
    """``prism migrate``."""

    @click.command("migrate")
    @click.option(
        "--vector-index/--no-vector-index",
        default=None,
        help="PostgreSQL: build (or drop) the HNSW index through which recall in projects of "
        "10,000+ memories pre-selects its candidates. It makes such recalls ~2x faster and "
        "every write 3-5x slower; built concurrently (writes go on), minutes for 100k.",
    )
    @common
    def command(rt: Runtime, vector_index: bool | None) -> None:
        """Apply pending schema migrations, in order, each once; print the version in force.

        Safe to run repeatedly and from several processes at once.
        """
        settings = load_settings(**rt.options)
        if vector_index is not None and not settings.database_url:
            raise InvalidInput(
                [
                    FieldError(
                        "vector_index",
                        "not_supported",
                        "the vector index is a PostgreSQL option (--database-url); SQLite "
                        "ranks in memory and needs none",
                    )
                ]
            )
        store = build_store(settings)
        try:
            version = store.migrate()
            out: dict[str, object] = {"ok": True, "schema_version": version}
            if settings.database_url:
                from prism_memory.trigraph.postgres.store import PostgresStore

                assert isinstance(store, PostgresStore)
                if vector_index is not None:
                    click.echo(
                        ("building" if vector_index else "dropping") + " the vector index…",
                        err=True,
                    )
                out["vector_index"] = store.vector_index(vector_index)
        finally:
            store.close()
        engine = "postgresql" if settings.database_url else "sqlite"
        rt.emit(
            {**out, "engine": engine},
            lambda d: (
                f"{d['engine']} schema at version {d['schema_version']}"
                + (
                    f", vector index {'on' if d['vector_index'] else 'off'}"
                    if "vector_index" in d
                    else ""
                )
            ),
        )

    return command
