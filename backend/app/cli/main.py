"""``prism``: the command line, on the embedded engine by default.

Every command takes the context options (``--tenant``, ``--project``, ``--persona``,
``--surface``, ``--specialization``; or ``PRISM_*`` variables) and ``--db``/``PRISM_DB``.
People get readable output; ``--json`` prints the payloads. A validation error prints the
structured error and exits 2; other refused requests exit 1.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast
from uuid import UUID

import click

from app.bootstrap import Services, build_services, context_from
from app.cli import audit_cmd, brief_cmd, db_cmd, hooks_cmd, render
from app.cli.acting import as_operator
from app.cli.keys_cmd import keys_group
from app.cli.lazy import LazyGroup
from app.domain.field_checks import AUDIT_CURSOR_MAX
from app.domain.records import AuditEventType, SessionContext
from app.errors import FieldError, InvalidInput, PrismError
from app.serializers import (
    audit_page_dict,
    heads_dict,
    history_dict,
    memory_dict,
    served_page_dict,
    state_dict,
)
from app.settings import load_settings
from app.trigraph.ledger import ServedFilter
from app.trigraph.port import AuditFilter

F = TypeVar("F", bound=Callable[..., Any])
EXIT_INVALID = 2
EXIT_REFUSED = 1


class Runtime:
    """Services and context for one command, built on first use."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.json = bool(options.pop("as_json"))
        self.options = options
        self._services: Services | None = None
        self._ctx: SessionContext | None = None

    @property
    def services(self) -> Services:
        if self._services is None:
            self._services = build_services(load_settings(**self.options))
        return self._services

    @property
    def ctx(self) -> SessionContext:
        if self._ctx is None:
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
            func(rt, **kwargs)
        except PrismError as exc:
            payload = exc.to_payload()
            if rt.json:
                click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
            else:
                click.echo(render.error(payload), err=True)
                click.echo(json.dumps(payload, ensure_ascii=False), err=True)
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


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="prism-memory")
def cli() -> None:
    """Prism Memory: typed, scoped, auditable memory for teams of AI agents.

    Notes are free text; memorules are typed behavioural records (behavioral_rule, feedback,
    preference, correction, convention) that recall ranks by how well they apply to you.
    """


@cli.command()
@click.option("--kind", type=click.Choice(["note", "memorule"]), help="default: note")
@click.option("--memorule-kind", help="behavioral_rule|feedback|preference|correction|convention")
@click.option("--subject", help="concise rule statement (memorules: 4 to 300 characters)")
@click.option("--body", help="full text (memorules: at least 10 characters); '-' reads stdin")
@click.option("--for-persona", help="applies_to.persona: the persona the rule is for")
@click.option("--for-surface", help="applies_to.surface, e.g. python")
@click.option("--for-specialization", help="applies_to.specialization")
@click.option("--scope", help="applies_to.scope: global|org|project|persona (default project)")
@click.option("--confidence", help="observed|inferred|asserted (default inferred)")
@click.option("--evidence", "evidence_signal_id", help="the signal/postmortem that prompted it")
@click.option("--namespace", help="namespace (default: default)")
@click.option("--corrects", help="(correction) id of the memorule this one corrects")
@click.option("--strict", is_flag=True, default=None, help="refuse near-duplicate memorules")
@click.option("--idempotency-key", help="a retried write with the same key writes nothing")
@click.option(
    "--input",
    "input_file",
    type=click.File("r"),
    help="the whole write as a JSON object from a file ('-' for stdin)",
)
@common
def remember(rt: Runtime, input_file: Any, **fields: Any) -> None:
    """Write a note or a memorule (prism_remember)."""
    if input_file is not None:
        given = sorted(k for k, v in fields.items() if v is not None)
        if given:
            raise InvalidInput(
                [
                    FieldError(k, "conflict", "give the write as --input or as options, not both")
                    for k in given
                ]
            )
        try:
            raw = json.load(input_file)
        except json.JSONDecodeError as exc:
            raise InvalidInput([FieldError("input", "invalid_json", str(exc))]) from None
    else:
        if fields.get("body") == "-":
            fields["body"] = sys.stdin.read()
        applies = {k[4:]: fields.pop(k) for k in list(fields) if k.startswith("for_")}
        if fields.get("scope") is not None:
            applies["scope"] = fields["scope"]
        fields.pop("scope")
        raw = {k: v for k, v in fields.items() if v is not None}
        if any(v is not None for v in applies.values()):
            raw["applies_to"] = {k: v for k, v in applies.items() if v is not None}
    access, me = as_operator(rt.services, rt.ctx)
    result = access.remember(me.key, me.ctx, raw)
    rt.emit(result.to_dict(), render.write_result)


@cli.command()
@click.argument("query", required=False, default="")
@click.option("--top-k", type=int, default=10, show_default=True, help="how many to return")
@click.option(
    "--source-type",
    type=click.Choice(["memory", "memorule"]),
    default="memory",
    show_default=True,
    help="memory = notes and memorules; memorule = memorules only",
)
@click.option("--namespace", help="only this namespace")
@click.option("--memorule-kind", "kinds", multiple=True, help="only these kinds (repeatable)")
@click.option("--confidence", "confidences", multiple=True, help="only these confidence levels")
@click.option(
    "--include-inapplicable",
    is_flag=True,
    help="also show rules that conflict with your context, last and marked",
)
@common
def recall(
    rt: Runtime,
    query: str,
    top_k: int,
    source_type: str,
    namespace: str | None,
    kinds: tuple[str, ...],
    confidences: tuple[str, ...],
    include_inapplicable: bool,
) -> None:
    """Recall what applies to you now (semantic_recall); QUERY may be empty."""
    raw: dict[str, Any] = {
        "query": query,
        "top_k": top_k,
        "source_type": source_type,
        "include_inapplicable": include_inapplicable,
    }
    if namespace:
        raw["namespace"] = namespace
    if kinds:
        raw["memorule_kind"] = list(kinds)
    if confidences:
        raw["confidence"] = list(confidences)
    access, me = as_operator(rt.services, rt.ctx)
    rt.emit(access.recall(me.key, me.ctx, raw).to_dict(), render.recall_result)


@cli.command()
@click.argument("memory_id")
@common
def show(rt: Runtime, memory_id: str) -> None:
    """Show one memory (its current version)."""
    access, me = as_operator(rt.services, rt.ctx)
    memory, state = access.get(me.key, me.ctx, parse_id(memory_id))
    rt.emit({"ok": True, "memory": memory_dict(memory), "state": state_dict(state)}, render.memory)


@cli.command()
@click.argument("memory_id")
@click.option("--subject", help="new subject")
@click.option("--body", help="new body")
@click.option("--memorule-kind", help="new memorule kind")
@click.option("--confidence", help="new confidence")
@click.option("--applies-to", "applies_to", help="new applies_to as a JSON object")
@click.option("--evidence", "evidence_signal_id", help="the signal that prompted the change")
@click.option("--reason", help="why it changed")
@click.option("--idempotency-key", help="a retried update with the same key writes nothing")
@common
def update(
    rt: Runtime,
    memory_id: str,
    reason: str | None,
    evidence_signal_id: str | None,
    idempotency_key: str | None,
    **changes: Any,
) -> None:
    """Supersede a memory with a new version (the old ones stay in its history)."""
    if changes.get("applies_to") is not None:
        try:
            changes["applies_to"] = json.loads(changes["applies_to"])
        except json.JSONDecodeError as exc:
            raise InvalidInput([FieldError("applies_to", "invalid_json", str(exc))]) from None
    access, me = as_operator(rt.services, rt.ctx)
    result = access.update(
        me.key,
        me.ctx,
        parse_id(memory_id),
        {k: v for k, v in changes.items() if v is not None},
        reason=reason,
        evidence_signal_id=evidence_signal_id,
        idempotency_key=idempotency_key,
    )
    rt.emit(result.to_dict(), render.write_result)


def _status_command(name: str, doc: str) -> None:
    @cli.command(name=name, help=doc)
    @click.argument("memory_id")
    @click.option("--reason", required=True, help="why (kept in the audit trail)")
    @click.option("--idempotency-key", help="a retried call with the same key writes nothing")
    @common
    def command(rt: Runtime, memory_id: str, reason: str, idempotency_key: str | None) -> None:
        access, me = as_operator(rt.services, rt.ctx)
        method = access.retire if name == "retire" else access.restore
        result = method(me.key, me.ctx, parse_id(memory_id), reason, idempotency_key)
        rt.emit(result.to_dict(), render.write_result)


_status_command("retire", "Retire a memory: recall no longer returns it; history keeps it.")
_status_command("restore", "Restore a retired memory into recall.")


@cli.command()
@click.argument("memory_id")
@common
def history(rt: Runtime, memory_id: str) -> None:
    """Every version of a memory, who wrote it and when, and its audit events."""
    access, me = as_operator(rt.services, rt.ctx)
    rt.emit(history_dict(access.history(me.key, me.ctx, parse_id(memory_id))), render.history)


@cli.command()
@click.argument("action", type=click.Choice(["list", "verify", "head", "served"]), default="list")
@click.option("--memorule", "memorule_id", help="only events of this memorule")
@click.option("--session", "session", help="only events written in this session")
@click.option("--by", "by_persona", help="only events written by this persona")
@click.option(
    "--event",
    "events",
    multiple=True,
    type=click.Choice([e.value for e in AuditEventType]),
    help="only these events",
)
@click.option("--since", type=click.DateTime(), help="events at or after this time (UTC)")
@click.option("--until", type=click.DateTime(), help="events before this time (UTC)")
@click.option(
    "--before",
    "before_seq",
    type=click.IntRange(1, AUDIT_CURSOR_MAX),
    help="page cursor: events before this number",
)
@click.option("--after", "after_seq", type=int, help="served: page cursor (a next_cursor)")
@click.option("--head", "given_head", help="verify: the chain must extend this SEQ:HASH")
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@common
def audit(
    rt: Runtime,
    action: str,
    memorule_id: str | None,
    session: str | None,
    by_persona: str | None,
    events: tuple[str, ...],
    since: datetime | None,
    until: datetime | None,
    before_seq: int | None,
    after_seq: int | None,
    given_head: str | None,
    limit: int,
) -> None:
    """List memorule audit events, newest first; 'verify' checks the chains; 'head' prints
    the chain heads to keep elsewhere; 'served' lists served receipts.

    verify recomputes the tenant's audit chain (every link, hash and content hash, its
    length against the recorded head, and --head SEQ:HASH if given) and its served-receipt
    chain, and exits 1 at the first flaw. served lists which memorule versions recalls and
    briefs returned, oldest first (--session-id or --session, --memorule, --since, --until).
    """
    access, me = as_operator(rt.services, rt.ctx)
    if action == "verify":
        head = audit_cmd.parse_head(given_head) if given_head else None
        report = access.verify_chain(me.key, me.ctx, head)
        rt.emit({**report.to_dict()}, render.chain_report)
        if not report.ok:
            sys.exit(EXIT_REFUSED)
        return
    if action == "head":
        rt.emit(heads_dict(access.audit_head(me.key, me.ctx)), audit_cmd.render_head)
        return
    if action == "served":
        sid = session or rt.options.get("session_id")
        served = ServedFilter(
            session_id=parse_id(sid, "session") if sid else None,
            memorule_id=parse_id(memorule_id, "memorule") if memorule_id else None,
            since=since.replace(tzinfo=UTC) if since else None,
            until=until.replace(tzinfo=UTC) if until else None,
            after_seq=after_seq,
            limit=limit,
        )
        page = access.served(me.key, me.ctx, served)
        rt.emit(served_page_dict(page), audit_cmd.render_served)
        return
    flt = AuditFilter(
        memorule_id=parse_id(memorule_id, "memorule") if memorule_id else None,
        session_id=parse_id(session, "session") if session else None,
        persona=by_persona,
        events=tuple(AuditEventType(e) for e in events),
        since=since.replace(tzinfo=UTC) if since else None,
        until=until.replace(tzinfo=UTC) if until else None,
        before_seq=before_seq,
        limit=limit,
    )
    rt.emit(audit_page_dict(access.audit(me.key, me.ctx, flt)), render.audit_events)


@cli.command()
@common
def reindex(rt: Runtime) -> None:
    """Re-embed memories written with another embedding model (after changing the model)."""
    from app.services.bulk_service import reindex as run_reindex

    services = rt.services

    def progress(done: int) -> None:
        click.echo(f"re-embedded {done}", err=True)

    count = run_reindex(services.store, services.embedder, progress=progress)
    rt.emit(
        {"ok": True, "reindexed": count, "embedding_model": services.embedder.model_id},
        lambda d: f"re-embedded {d['reindexed']} memories with {d['embedding_model']}",
    )


# Front-door commands live in their own modules; register each here with one line.
# (keep this block: one `cli.add_command(...)` or `cli.add_lazy_command(...)` per command;
# lazy ones load their module only when they run, see app.cli.lazy: `prism brief` runs at
# every agent session start and must not pay for the others)
cli.add_command(db_cmd.migrate_command(common))
cli.add_lazy_command("dump", lambda: _transfer_command("dump"))
cli.add_lazy_command("import", lambda: _transfer_command("import"))
cli.add_lazy_command("mcp", lambda: _front_door("mcp"))
cli.add_lazy_command("serve", lambda: _front_door("serve"))
cli.add_command(keys_group)
cli.add_command(brief_cmd.brief_command(common))
cli.add_command(hooks_cmd.hooks_group)
cli.add_lazy_command("import-rules", lambda: _rules_command("import-rules"))
cli.add_lazy_command("export-rules", lambda: _rules_command("export-rules"))
cli.add_lazy_command("export", lambda: _rules_command("export"))
cli.add_lazy_command("capture", lambda: _capture_command("capture"))
cli.add_lazy_command("proposals", lambda: _capture_command("proposals"))


def _capture_command(name: str) -> click.Command:
    if name == "capture":
        from app.cli import capture_cmd

        return capture_cmd.capture_group(common)
    from app.cli import proposals_cmd

    return proposals_cmd.proposals_command(common, parse_id)


def _transfer_command(name: str) -> click.Command:
    from app.cli import transfer_cmd

    return (transfer_cmd.dump_command if name == "dump" else transfer_cmd.import_command)(common)


def _front_door(name: str) -> click.Command:
    if name == "mcp":
        from app.cli.mcp_cmd import mcp_command

        return mcp_command
    from app.cli.serve_cmd import serve_command

    return serve_command


def _rules_command(name: str) -> click.Command:
    from app.cli import rules_cmd

    factories = {
        "import-rules": rules_cmd.import_rules,
        "export-rules": rules_cmd.export_rules,
        "export": rules_cmd.export_graph,
    }
    return factories[name](common)


def main() -> None:
    cli(prog_name="prism")


if __name__ == "__main__":
    main()
