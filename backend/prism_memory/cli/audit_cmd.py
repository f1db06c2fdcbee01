"""``prism audit``: list, verify, head and served, and their text."""

from __future__ import annotations

import sys
from typing import Any

import click

from prism_memory.cli import render
from prism_memory.cli.acting import as_operator
from prism_memory.cli.runtime import EXIT_REFUSED, Runtime, common
from prism_memory.domain.contract.audit import AuditQuery, ServedQuery
from prism_memory.domain.contract.bounds import AUDIT_LIMIT_DEFAULT, SERVED_LIMIT_DEFAULT
from prism_memory.domain.records import AuditEventType
from prism_memory.serializers import audit_page_dict, heads_dict, served_page_dict
from prism_memory.services.ledger_service import audit_filter, parse_head, served_filter

__all__ = ["audit", "parse_head", "render_head", "render_served"]


def render_head(data: dict[str, Any]) -> str:
    lines = []
    for name, label in (("audit", "audit chain"), ("served", "served receipts")):
        head = data[name]
        lines.append(f"{label}: {head['seq']}:{head['hash']}  ({head['at'] or 'empty'})")
    lines.append(
        "keep both lines elsewhere; 'prism audit verify --head SEQ:HASH --served-head SEQ:HASH' "
        "checks them"
    )
    return "\n".join(lines)


def render_served(data: dict[str, Any]) -> str:
    if not data["served"]:
        return "no served receipts"
    lines = []
    for r in data["served"]:
        lines.append(
            f"#{r['seq']:<6} {r['served_at']}  {r['tool']:<15} rank {r['rank']:<3} "
            f"memorule {r['memorule_id']} v{r['version']} (state {r['state_id']})  "
            f"to {r['persona'] or '-'} (session {r['session_id']})"
        )
    if data.get("next_cursor"):
        lines.append(f"more: --after {data['next_cursor']}")
    return "\n".join(lines)


@click.command()
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
@click.option("--since", help="events at or after this time (ISO 8601; no offset: UTC)")
@click.option("--until", help="events before this time (ISO 8601; no offset: UTC)")
@click.option("--before", "before_seq", type=int, help="page cursor: events before this number")
@click.option("--after", "after_seq", type=int, help="served: page cursor (a next_cursor)")
@click.option("--head", "given_head", help="verify: the audit chain must extend this SEQ:HASH")
@click.option(
    "--served-head",
    "served_head",
    help="verify: the served-receipt chain must extend this SEQ:HASH",
)
@click.option(
    "--limit",
    type=int,
    help=f"per page (default {AUDIT_LIMIT_DEFAULT}; served: {SERVED_LIMIT_DEFAULT})",
)
@common
def audit(
    rt: Runtime,
    action: str,
    memorule_id: str | None,
    session: str | None,
    by_persona: str | None,
    events: tuple[str, ...],
    since: str | None,
    until: str | None,
    before_seq: int | None,
    after_seq: int | None,
    given_head: str | None,
    served_head: str | None,
    limit: int | None,
) -> None:
    """List memorule audit events, newest first; 'verify' checks the chains; 'head' prints
    the chain heads to keep elsewhere; 'served' lists served receipts.

    verify recomputes the tenant's audit chain (every link, hash and content hash, its
    length against the recorded head, and --head SEQ:HASH if given), checks every memory's
    status, current version, project and recall row against its events, then the
    served-receipt chain (and --served-head SEQ:HASH if given), and exits 1 at the first
    flaw. served lists which memorule versions recalls and briefs returned, oldest first
    (--session-id or --session, --memorule, --since, --until).
    """
    access, me = as_operator(rt.services, rt.ctx)
    if action == "verify":
        head = parse_head(given_head) if given_head else None
        kept = parse_head(served_head, "served_head") if served_head else None
        report = access.verify_chain(me.key, me.ctx, head, kept)
        rt.emit({**report.to_dict()}, render.chain_report)
        if not report.ok:
            sys.exit(EXIT_REFUSED)
        return
    if action == "head":
        rt.emit(heads_dict(access.audit_head(me.key, me.ctx)), render_head)
        return
    if action == "served":
        served = ServedQuery.parse(
            given(
                session_id=session or rt.options.get("session_id"),
                memorule=memorule_id,
                since=since,
                until=until,
                after=after_seq,
                limit=limit,
            )
        )
        page = access.served(me.key, me.ctx, served_filter(served))
        rt.emit(served_page_dict(page), render_served)
        return
    query = AuditQuery.parse(
        given(
            memorule=memorule_id,
            session=session,
            persona=by_persona,
            event=list(events),
            since=since,
            until=until,
            before=before_seq,
            limit=limit,
        )
    )
    rt.emit(audit_page_dict(access.audit(me.key, me.ctx, audit_filter(query))), render.audit_events)


def given(**options: Any) -> dict[str, Any]:
    """The options the command was given, as the query's fields (the model judges them)."""
    return {k: v for k, v in options.items() if v is not None and v != []}
