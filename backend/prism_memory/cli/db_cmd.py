"""``prism migrate``: bring the database schema up to date (either engine).

Start-up applies pending migrations too; this command makes it an explicit step for
deployments that run schema changes separately, with a role that may alter the schema.
Built on :mod:`prism_memory.cli.runtime`, like every command module here.
"""

from __future__ import annotations

import click

from prism_memory.bootstrap import build_store
from prism_memory.cli.runtime import Runtime, common
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
        from prism_memory.cli.progress import progress_for

        settings = load_settings(**rt.options)
        store = build_store(settings)
        shown = progress_for(rt.json, "schema migrations applied")
        try:
            if vector_index is not None and store.vector_index() is None:
                store.vector_index(vector_index)  # refused: this engine has no such index
            version = store.migrate(shown if shown.enabled else None)
            shown.close()
            out: dict[str, object] = {"ok": True, "schema_version": version}
            if vector_index is not None:
                click.echo(
                    ("building" if vector_index else "dropping") + " the vector index…",
                    err=True,
                )
            if (state := store.vector_index(vector_index)) is not None:
                out["vector_index"] = state
        finally:
            shown.close()
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
