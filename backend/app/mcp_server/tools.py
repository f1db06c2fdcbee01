"""The MCP tools: thin calls into the services, errors mapped once.

Every tool answers with the service's JSON payload (as ``structuredContent`` and as compact
JSON text; the brief answers with its Markdown as text). Every :class:`PrismError` becomes an
error result whose text is exactly ``PrismError.to_payload()`` as JSON; anything unexpected
is logged with its traceback and reported as ``internal_error`` in the same shape.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from app.bootstrap import Services
from app.domain.field_checks import to_utc
from app.domain.records import AuditEventType, SessionContext
from app.errors import PrismError
from app.mcp_server import arguments as a
from app.mcp_server import proposals
from app.mcp_server.parsing import decode_json_strings, parse, refuse_unknown
from app.mcp_server.session import OVERRIDE_SETTING, Sessions
from app.serializers import audit_page_dict, brief_dict, history_dict, served_page_dict
from app.trigraph.ledger import ServedFilter
from app.trigraph.port import AuditFilter

logger = logging.getLogger("prism.mcp")

Handler = Callable[[Services, SessionContext, dict[str, Any]], dict[str, Any]]
INTERNAL_ERROR_PAYLOAD: dict[str, Any] = {
    "ok": False,
    "error": {"code": "internal_error", "message": "unexpected server error; see the server log"},
}
WRITE_TOOLS = frozenset(
    {"prism_remember", "memorule_update", "memorule_retire", "memorule_restore"}
)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what a model reads about it, its arguments and its handler."""

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    handler: Handler
    read_only: bool
    text: Callable[[dict[str, Any]], str] | None = None


def _remember(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    return svc.memory.remember(ctx, args).to_dict()


def _recall(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    return svc.memory.recall(ctx, args).to_dict()


def _brief(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    refuse_unknown(args, a.BriefArguments)
    return brief_dict(svc.brief.brief(ctx, **args))


def _update(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.UpdateArguments, args)
    result = svc.memory.update(
        ctx,
        p.id,
        p.changes,
        reason=p.reason,
        evidence_signal_id=p.evidence_signal_id,
        idempotency_key=p.idempotency_key,
    )
    return result.to_dict()


def _retire(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.StatusArguments, args)
    return svc.memory.retire(ctx, p.id, p.reason, idempotency_key=p.idempotency_key).to_dict()


def _restore(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.StatusArguments, args)
    return svc.memory.restore(ctx, p.id, p.reason, idempotency_key=p.idempotency_key).to_dict()


def _history(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    return history_dict(svc.memory.history(ctx, parse(a.HistoryArguments, args).id))


def _audit(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.AuditArguments, args)
    flt = AuditFilter(
        memorule_id=p.memorule_id,
        session_id=p.written_by_session_id,
        persona=p.written_by_persona,
        events=tuple(AuditEventType(e) for e in p.event or ()),
        since=to_utc(p.since, "since"),
        until=to_utc(p.until, "until"),
        before_seq=p.before,
        limit=p.limit,
    )
    return audit_page_dict(svc.memorules.audit(ctx, flt))


def _served(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.ServedArguments, args)
    flt = ServedFilter(
        session_id=p.session_id,
        memorule_id=p.memorule_id,
        since=to_utc(p.since, "since"),
        until=to_utc(p.until, "until"),
        after_seq=p.after,
        limit=p.limit,
    )
    return served_page_dict(svc.ledger.served(ctx, flt))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "prism_remember",
        "Remember a rule or a note",
        "Store what you learned so you and other agents recall it in later tasks. "
        "kind='memorule' stores a typed behavioural rule: memorule_kind, subject, body and "
        "applies_to are required; confidence defaults to 'inferred'. To fix a wrong rule, write "
        "memorule_kind='correction' with corrects=<its id>. kind='note' (the default) stores "
        "free text in body. A rejected write stores nothing and lists EVERY field error at once "
        'as JSON {"ok": false, "error": {"code": "validation_failed", "fields": [...]}}: fix '
        "them all and retry. Pass an idempotency_key if you might retry.",
        a.RememberArguments,
        _remember,
        read_only=False,
    ),
    ToolSpec(
        "semantic_recall",
        "Recall memories",
        "Find the memories that apply to you now, best first. source_type='memorule' returns "
        "behavioural rules only; 'memory' (default) returns notes and rules. query may be "
        "empty ('what applies to me now'). Rules are ranked by how well applies_to matches "
        "your persona/surface/specialization, narrower scope first, then relevance to the "
        "query and confidence; rules that conflict with your context are left out. Each match "
        "has its id, subject, body, score and a 'why' breakdown; rules add memorule_kind, "
        "applies_to, confidence and evidence_signal_id.",
        a.RecallArguments,
        _recall,
        read_only=True,
    ),
    ToolSpec(
        "memorule_brief",
        "Brief for the task at hand",
        "Call this at the START of every task. Returns the memorules that apply to your "
        "context (and to the task, if you describe it) as compact Markdown grouped by kind "
        "(behavioral rules, corrections, conventions, preferences, feedback), best first, "
        "within token_budget; each rule shows its id so you can cite it or correct it.",
        a.BriefArguments,
        _brief,
        read_only=True,
        text=lambda payload: str(payload["markdown"]),
    ),
    ToolSpec(
        "memorule_update",
        "Update a memorule",
        "Change a memorule (or note) by writing a new version; earlier versions stay in its "
        "history. Give only the fields to change in 'changes' and say why in 'reason'. The "
        "new version is validated like a new write. To replace a rule that was wrong, prefer "
        "prism_remember with memorule_kind='correction' and corrects=<id>.",
        a.UpdateArguments,
        _update,
        read_only=False,
    ),
    ToolSpec(
        "memorule_retire",
        "Retire a memorule",
        "Retire a memorule (or note) that no longer holds: recall and the brief stop "
        "returning it; its history and audit trail stay. 'reason' is required. "
        "memorule_restore undoes it.",
        a.StatusArguments,
        _retire,
        read_only=False,
    ),
    ToolSpec(
        "memorule_restore",
        "Restore a retired memorule",
        "Bring a retired memorule (or note) back into recall and the brief. 'reason' is required.",
        a.StatusArguments,
        _restore,
        read_only=False,
    ),
    ToolSpec(
        "memorule_history",
        "History of a memorule",
        "Every version of a memorule (or note), oldest first, with who wrote each (persona, "
        "session) and why, plus its audit events, newest first.",
        a.HistoryArguments,
        _history,
        read_only=True,
    ),
    ToolSpec(
        "memorule_audit",
        "Memorule audit trail",
        "The memorule audit events of this tenant (created, superseded, retired, restored), "
        "newest first, filtered by memorule, session, persona, event or time. Pass the "
        "returned next_cursor as 'before' for the next page.",
        a.AuditArguments,
        _audit,
        read_only=True,
    ),
    ToolSpec(
        "memorule_proposals",
        "Captured memorules awaiting review",
        proposals.DESCRIPTION,
        proposals.ProposalsArguments,
        proposals.list_proposals,
        read_only=True,
    ),
    ToolSpec(
        "memorule_served",
        "Memorules served to a session",
        "Which memorule versions semantic_recall and memorule_brief returned, to which session "
        "and persona, at which rank and when (served receipts, hash-chained), oldest first; "
        "filter by session_id, memorule_id, since, until. Pass next_cursor as 'after' for more.",
        a.ServedArguments,
        _served,
        read_only=True,
    ),
)


def build_tools(services: Services, sessions: Sessions) -> list[Tool]:
    """The SDK tools for ``TOOLS``, bound to ``services`` and ``sessions``."""
    return [_tool(spec, services, sessions) for spec in TOOLS]


def _tool(spec: ToolSpec, services: Services, sessions: Sessions) -> Tool:
    schema = a.published_schema(spec.arguments)
    if sessions.allow_override:
        override = a.published_schema(a.ContextArgument)
        override["description"] = (
            "Optional: run this call as a narrower context (persona, surface, "
            f"specialization). Allowed on this server ({OVERRIDE_SETTING}=true)."
        )
        schema["properties"]["context"] = override
    declared = set(schema["properties"])

    def call(mcp_ctx: Context, raw: dict[str, Any]) -> CallToolResult:
        try:
            ctx = sessions.resolve(mcp_ctx, spec.name, raw.pop("context", None))
            # null means "not given" for a declared field; unknown fields are kept so the
            # validator can name them.
            args = {k: val for k, val in raw.items() if val is not None or k not in declared}
            payload = spec.handler(services, ctx, decode_json_strings(args, schema))
        except PrismError as exc:
            return error_result(exc.to_payload())
        except Exception:
            logger.exception("tool %s failed unexpectedly", spec.name)
            return error_result(INTERNAL_ERROR_PAYLOAD)
        text = spec.text(payload) if spec.text else json.dumps(payload, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=payload
        )

    async def run(ctx: Context) -> CallToolResult:
        # The SDK validates nothing here (no declared parameters): the arguments reach the
        # services exactly as sent, so every error comes back in Prism's shape.
        raw = dict((ctx.request_context.params or {}).get("arguments") or {})
        return await anyio.to_thread.run_sync(call, ctx, raw)

    tool = Tool.from_function(
        run,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=False,
            idempotent_hint=spec.read_only,
            open_world_hint=False,
        ),
    )
    return tool.model_copy(update={"parameters": schema})


def error_result(payload: dict[str, Any]) -> CallToolResult:
    """An MCP error result whose text is exactly the JSON of ``payload``."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=True,
    )
