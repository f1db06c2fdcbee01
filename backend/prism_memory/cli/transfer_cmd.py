"""``prism dump`` and ``prism import``: a whole store as JSON Lines, out and back in.

``prism dump`` writes every tenant (or one) of the selected engine; ``prism import`` loads such a
file — or one tenant's ``prism export --format jsonl`` — into another store, which is how a
store moves from SQLite to PostgreSQL and back (:mod:`prism_memory.services.transfer` has the
format).
Built on :mod:`prism_memory.cli.runtime`, like every command module here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import click

from prism_memory.cli.runtime import Runtime, common
from prism_memory.serializers import transfer_dict
from prism_memory.services.transfer import export_store, import_store


def dump_command() -> click.Command:
    """``prism dump``."""

    @click.command("dump")
    @click.option("--out", default="-", show_default=True, help="file to write; - is stdout")
    @click.option(
        "--single-tenant",
        is_flag=True,
        help="only the --tenant tenant (default: every tenant in the store)",
    )
    @common
    def command(rt: Runtime, out: str, single_tenant: bool) -> None:
        """Write the whole store (every memory, version, vector, audit event and idempotency
        claim) as JSON Lines, for backups and for 'prism import' into another engine.

        API keys are not written (a dump is a file people copy): create them again on the
        store you import into, with 'prism keys create'.
        """
        from prism_memory.cli.progress import progress_for

        tenant = rt.ctx.tenant_id if single_tenant else None
        store = rt.services.store
        progress = progress_for(rt.json, "dumped (records)")
        try:
            if out == "-":
                report = export_store(store, sys.stdout, tenant, progress.counted)
                sys.stdout.flush()
                progress.close()
                click.echo(_text({"counts": report.counts, "path": None}), err=True)
                return
            path = Path(out)
            with _replacing(path) as handle:
                report = export_store(store, handle, tenant, progress.counted)
        finally:
            progress.close()
        rt.emit({**transfer_dict(report), "path": str(path)}, _text)

    return command


def import_command() -> click.Command:
    """``prism import``."""

    @click.command("import")
    @click.argument("file", type=click.File("r", encoding="utf-8"))
    @common
    def command(rt: Runtime, file: TextIO) -> None:
        """Load a 'prism dump' (or 'prism export --format jsonl') file into this store.

        All or nothing, in one transaction; the store must not hold the file's tenants yet.
        Audit events are copied verbatim and every tenant's hash chain is checked on the way.
        """
        from prism_memory.cli.progress import progress_for

        progress = progress_for(rt.json, "read (lines)")
        try:
            report = import_store(rt.services.store, progress.counted(file))
        finally:
            progress.close()
        rt.emit(transfer_dict(report), _imported_text)

    return command


def _text(data: dict[str, Any]) -> str:
    c = data["counts"]
    where = f" to {data['path']}" if data.get("path") else ""
    return (
        f"dumped {c['memories']} memories, {c['states']} states, {c['audit_events']} audit "
        f"events, {c['idempotency']} idempotency claims{where}"
    )


def _imported_text(data: dict[str, Any]) -> str:
    c = data["counts"]
    lines = [
        f"imported {c['memories']} memories, {c['states']} states, {c['audit_events']} audit "
        f"events, {c['idempotency']} idempotency claims into {len(data['tenants'])} tenant(s)"
    ]
    for tenant, chain in data["chains"].items():
        lines.append(f"  {tenant}: chain of {chain['events']} events verified")
    return "\n".join(lines)


@contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path``; put it in place only on success."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
