"""The MCP tools: thin calls into :class:`AccessService` with the caller's key, errors mapped
once.

Each handler gets the caller (key + context, see :mod:`prism_memory.mcp_server.session`) and makes
the
same guarded call the matching ``/v1`` route makes, so a key is refused or served alike over
HTTP, MCP over HTTP and MCP over stdio (there with the local operator key).

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

from prism_memory.domain.access import Caller
from prism_memory.domain.contract.adherence import JudgeCreate
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.errors import PrismError
from prism_memory.mcp_server import adherence, proposals
from prism_memory.mcp_server import arguments as a
from prism_memory.mcp_server.parsing import decode_json_strings, parse
from prism_memory.mcp_server.session import OVERRIDE_SETTING, Sessions
from prism_memory.serializers import (
    audit_page_dict,
    brief_dict,
    history_dict,
    pin_dict,
    recall_dict,
    served_page_dict,
    write_dict,
)
from prism_memory.services.access_service import AccessService
from prism_memory.services.ledger_service import audit_filter, served_filter

logger = logging.getLogger("prism.mcp")

Handler = Callable[[AccessService, Caller, dict[str, Any]], dict[str, Any]]
INTERNAL_ERROR_PAYLOAD: dict[str, Any] = {
    "ok": False,
    "error": {"code": "internal_error", "message": "unexpected server error; see the server log"},
}


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what a model reads about it, its arguments and its handler."""

    name: str
    title: str
    description: str
    arguments: a.Arguments
    handler: Handler
    read_only: bool
    text: Callable[[dict[str, Any]], str] | None = None


def _remember(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return write_dict(svc.remember(c.key, c.ctx, validate_remember(args)))


def _recall(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return recall_dict(svc.recall(c.key, c.ctx, a.RECALL.parse(args)))


def _brief(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return brief_dict(svc.brief(c.key, c.ctx, a.BRIEF.parse(args)))


def _update(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.UpdateArguments, args)
    result = svc.update(
        c.key,
        c.ctx,
        p.id,
        p.changes.raw,
        reason=p.reason,
        evidence_signal_id=p.evidence_signal_id,
        idempotency_key=p.idempotency_key,
    )
    return write_dict(result)


def _retire(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.StatusArguments, args)
    return write_dict(svc.retire(c.key, c.ctx, p.id, p.reason, idempotency_key=p.idempotency_key))


def _restore(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.StatusArguments, args)
    return write_dict(svc.restore(c.key, c.ctx, p.id, p.reason, idempotency_key=p.idempotency_key))


def _pin(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    p = parse(a.PinArguments, args)
    return pin_dict(svc.pin(c.key, c.ctx, p.id, p.pinned, p.reason))


def _history(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return history_dict(svc.history(c.key, c.ctx, parse(a.HistoryArguments, args).id))


def _audit(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    query = a.AuditArguments.parse(args)
    return audit_page_dict(svc.audit(c.key, c.ctx, audit_filter(query)))


def _served(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    query = a.ServedArguments.parse(args)
    return served_page_dict(svc.served(c.key, c.ctx, served_filter(query)))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "prism_remember",
        "Remember a rule or a note",
        "Store what you learned so you and other agents recall it in later tasks. "
        "kind='memorule' stores a typed behavioural rule: memorule_kind, subject, body and "
        "applies_to are required; confidence defaults to 'inferred'. To fix a wrong rule, write "
        "memorule_kind='correction' with corrects=<its id>. A memorule may carry checks (what "
        "can be checked from what an agent does: forbidden commands or edits, a command "
        "required before another, an edit required with another) and an enforcement ('remind' "
        "by default; 'ask'/'deny' need an admin key). kind='note' (the default) stores "
        "free text in body. A rejected write stores nothing and lists EVERY field error at once "
        'as JSON {"ok": false, "error": {"code": "validation_failed", "fields": [...]}}: fix '
        "them all and retry. Pass an idempotency_key if you might retry.",
        a.REMEMBER,
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
        a.RECALL,
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
        a.BRIEF,
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
        "memorule_pin",
        "Pin or unpin a memorule",
        "An operator's pin: pinned=true puts an active memorule first in every brief (under "
        "'Pinned by an operator', before the rules ranked for the task); pinned=false removes "
        "it. 'reason' is required and kept in the audit trail. Pinning a pinned rule (or "
        "unpinning an unpinned one) writes nothing and answers changed=false.",
        a.PinArguments,
        _pin,
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
        "The memorule audit events of this tenant (created, superseded, retired, restored, "
        "pinned, unpinned, ...), "
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
        "filter by session_id, memorule (or memorule_id), since, until. Pass next_cursor as "
        "'after' for more.",
        a.ServedArguments,
        _served,
        read_only=True,
    ),
    ToolSpec(
        "adherence_judge",
        "Judge a session against the rules",
        adherence.JUDGE_DESCRIPTION,
        JudgeCreate,
        adherence.judge,
        read_only=False,
    ),
    ToolSpec(
        "adherence_report",
        "Adherence of this project's rules",
        adherence.REPORT_DESCRIPTION,
        adherence.ReportArguments,
        adherence.report,
        read_only=True,
    ),
)


def build_tools(access: AccessService, sessions: Sessions) -> list[Tool]:
    """The SDK tools for ``TOOLS``, bound to ``access`` and ``sessions``."""
    return [_tool(spec, access, sessions) for spec in TOOLS]


def _tool(spec: ToolSpec, access: AccessService, sessions: Sessions) -> Tool:
    flat = a.published_schema(spec.arguments)
    extra: dict[str, Any] = {}
    if sessions.allow_override:
        override = a.published_schema(a.ContextArgument)
        override["description"] = (
            "Optional: run this call as a narrower context (persona, surface, "
            f"specialization). Allowed on this server ({OVERRIDE_SETTING}=true)."
        )
        extra["context"] = override
    flat["properties"].update(extra)
    # What the client sees; the door reads the arguments by the flat one (same fields).
    schema = a.precise_schema(spec.arguments, extra) if sessions.precise_schemas else flat
    declared = set(flat["properties"])

    def call(mcp_ctx: Context, raw: dict[str, Any]) -> CallToolResult:
        try:
            caller = sessions.resolve(mcp_ctx, raw.pop("context", None))
            # null means "not given" for a declared field; unknown fields are kept so the
            # validator can name them.
            args = {k: val for k, val in raw.items() if val is not None or k not in declared}
            payload = spec.handler(access, caller, decode_json_strings(args, flat))
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
