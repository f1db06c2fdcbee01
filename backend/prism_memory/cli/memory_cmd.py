"""The memory commands: ``remember``, ``recall``, ``show``, ``update``, ``retire``, ``restore``,
``pin``, ``unpin``, ``history`` and ``reindex`` (the ``prism_*`` MCP tools on the command line).

Registered by :mod:`prism_memory.cli.main`; built on :mod:`prism_memory.cli.runtime`, which loads
the services
only when a command runs.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import click

from prism_memory.cli import render
from prism_memory.cli.acting import as_operator
from prism_memory.cli.runtime import Runtime, common, parse_id
from prism_memory.domain.contract.bounds import TOP_K_RECALL_DEFAULT
from prism_memory.domain.contract.recall import RecallCreate
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.serializers import pin_dict, recall_dict, write_dict

CHECKS_HELP = (
    "memorules: what can be checked, as a JSON list of at most 8 one-key objects: "
    '\'[{"forbid_command": "\\\\bnpm\\\\b"}, {"forbid_edit": "src/generated/**"}, '
    '{"require_before": {"command": "make test", "before": "git commit"}}, '
    '{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}]\''
)
ENFORCEMENT_HELP = (
    "memorules: what the guard hook does on a hit: remind (default), ask or deny "
    "(ask and deny need an admin; the CLI acts as the local admin)"
)


def checks_option(text: str) -> Any:
    """``--checks`` as JSON (the contract judges what it holds).

    Raises:
        InvalidInput: the text is no JSON, named by its flag.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            [FieldError("checks", "invalid_json", f"--checks must be a JSON list of checks: {exc}")]
        ) from None


_FLAGGED = ("checks", "enforcement")  # fields whose errors name their flag


@contextlib.contextmanager
def flags_named() -> Iterator[None]:
    """The errors of ``checks`` and ``enforcement`` (``checks.2.forbid_command``) say which
    flag to fix (``--checks``); the field names and codes stay the contract's."""
    try:
        yield
    except InvalidInput as exc:
        named = [
            FieldError(e.field, e.code, f"--{e.field.split('.')[0]}: {e.message}", e.details)
            if e.field.split(".")[0] in _FLAGGED
            else e
            for e in exc.errors
        ]
        raise InvalidInput(named) from None


@click.command()
@click.option("--kind", type=click.Choice(["note", "memorule"]), help="default: note")
@click.option("--memorule-kind", help="behavioral_rule|feedback|preference|correction|convention")
@click.option("--subject", help="concise rule statement (memorules: 4 to 300 characters)")
@click.option("--body", help="full text (memorules: at least 10 characters); '-' reads stdin")
@click.option("--for-persona", help="applies_to.persona: the persona the rule is for")
@click.option("--for-surface", help="applies_to.surface, e.g. python")
@click.option("--for-specialization", help="applies_to.specialization")
@click.option(
    "--scope",
    help="applies_to.scope: global|org|project|persona. A memorule needs --scope or at least "
    "one --for-* option (no default)",
)
@click.option("--confidence", help="observed|inferred|asserted (default inferred)")
@click.option("--evidence", "evidence_signal_id", help="the signal/postmortem that prompted it")
@click.option("--namespace", help="namespace (default: default)")
@click.option("--corrects", help="(correction) id of the memorule this one corrects")
@click.option("--strict", is_flag=True, default=None, help="refuse near-duplicate memorules")
@click.option("--idempotency-key", help="a retried write with the same key writes nothing")
@click.option("--checks", help=CHECKS_HELP)
@click.option("--enforcement", help=ENFORCEMENT_HELP)
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
        if raw.get("checks") is not None:
            raw["checks"] = checks_option(raw["checks"])
    with flags_named():
        write = validate_remember(raw)
    access, me = as_operator(rt.services, rt.ctx)
    result = access.remember(me.key, me.ctx, write)
    rt.emit(write_dict(result), render.write_result)


@click.command()
@click.argument("query", required=False, default="")
@click.option(
    "--top-k", type=int, default=TOP_K_RECALL_DEFAULT, show_default=True, help="how many to return"
)
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
    rt.emit(
        recall_dict(access.recall(me.key, me.ctx, RecallCreate.parse(raw))), render.recall_result
    )


@click.command()
@click.argument("memory_id")
@common
def show(rt: Runtime, memory_id: str) -> None:
    """Show one memory (its current version)."""
    from prism_memory.serializers import memory_dict, state_dict

    access, me = as_operator(rt.services, rt.ctx)
    memory, state = access.get(me.key, me.ctx, parse_id(memory_id))
    rt.emit({"ok": True, "memory": memory_dict(memory), "state": state_dict(state)}, render.memory)


@click.command()
@click.argument("memory_id")
@click.option("--subject", help="new subject")
@click.option("--body", help="new body")
@click.option("--memorule-kind", help="new memorule kind")
@click.option("--confidence", help="new confidence")
@click.option("--applies-to", "applies_to", help="new applies_to as a JSON object")
@click.option("--checks", help="new checks as a JSON list ('[]' removes them)")
@click.option("--enforcement", help="new enforcement: remind|ask|deny (ask/deny: admin)")
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
    if changes.get("checks") is not None:
        changes["checks"] = checks_option(changes["checks"])
    access, me = as_operator(rt.services, rt.ctx)
    with flags_named():
        result = access.update(
            me.key,
            me.ctx,
            parse_id(memory_id),
            {k: v for k, v in changes.items() if v is not None},
            reason=reason,
            evidence_signal_id=evidence_signal_id,
            idempotency_key=idempotency_key,
        )
    rt.emit(write_dict(result), render.write_result)


def _status_command(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @click.argument("memory_id")
    @click.option("--reason", required=True, help="why (kept in the audit trail)")
    @click.option("--idempotency-key", help="a retried call with the same key writes nothing")
    @common
    def command(rt: Runtime, memory_id: str, reason: str, idempotency_key: str | None) -> None:
        access, me = as_operator(rt.services, rt.ctx)
        method = access.retire if name == "retire" else access.restore
        result = method(me.key, me.ctx, parse_id(memory_id), reason, idempotency_key)
        rt.emit(write_dict(result), render.write_result)

    return command


retire = _status_command(
    "retire", "Retire a memory: recall no longer returns it; history keeps it."
)
restore = _status_command("restore", "Restore a retired memory into recall.")


def _pin_command(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @click.argument("memory_id")
    @click.option("--reason", required=True, help="why (kept in the audit trail)")
    @common
    def command(rt: Runtime, memory_id: str, reason: str) -> None:
        access, me = as_operator(rt.services, rt.ctx)
        result = access.pin(me.key, me.ctx, parse_id(memory_id), name == "pin", reason)
        rt.emit(pin_dict(result), render.pin_result)

    return command


pin = _pin_command(
    "pin",
    "Pin a memorule: the brief shows it first, before every ranked rule, within its budget.",
)
unpin = _pin_command("unpin", "Unpin a memorule: the brief ranks it like any other again.")


@click.command()
@click.argument("memory_id")
@common
def history(rt: Runtime, memory_id: str) -> None:
    """Every version of a memory, who wrote it and when, and its audit events."""
    from prism_memory.serializers import history_dict

    access, me = as_operator(rt.services, rt.ctx)
    rt.emit(history_dict(access.history(me.key, me.ctx, parse_id(memory_id))), render.history)


@click.command()
@common
def reindex(rt: Runtime) -> None:
    """Re-embed memories written with another embedding model (after changing the model)."""
    from prism_memory.cli.progress import progress_for
    from prism_memory.services.bulk_service import reindex as run_reindex

    services = rt.services
    progress = progress_for(rt.json, "re-embedded")
    try:
        count = run_reindex(services.store, services.embedder, progress=progress)
    finally:
        progress.close()
    rt.emit(
        {"ok": True, "reindexed": count, "embedding_model": services.embedder.model_id},
        lambda d: f"re-embedded {d['reindexed']} memories with {d['embedding_model']}",
    )
