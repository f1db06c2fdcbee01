"""``adherence_judge`` and ``adherence_report``: adherence over MCP (DESIGN §12), the same
guarded calls as ``POST /v1/adherence/judge`` and ``GET /v1/adherence/report``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from prism_memory.domain.access import Caller
from prism_memory.domain.contract.adherence import JudgeCreate
from prism_memory.mcp_server.parsing import parse
from prism_memory.services.access_service import AccessService

JUDGE_DESCRIPTION = (
    "Judge what a session did (its shell commands and file edits, in order, in the "
    "client-neutral shape: {session, cwd, actions: [{type: 'command', command} | {type: 'edit', "
    "path}, ran?, at?...]}) against the checks of every memorule that applies to your context. "
    "Each rule gets 'violated' (with the actions as evidence), 'followed' or 'not_exercised', "
    "and whether it had been served to that session before the action; refused tool uses "
    "(ran: false) are attempts, never violations. Unless dry_run, violated and followed "
    "verdicts are recorded in the audit trail (commands redacted). Needs a writer key."
)
REPORT_DESCRIPTION = (
    "Adherence of this project: for each memorule with checks, the sessions it was served "
    "to, exercised in and violated in, and its last violation with evidence; the most-violated "
    "rules, rules never exercised and sessions with violations."
)


class ReportArguments(BaseModel):
    """``adherence_report`` takes no arguments (the context is the session's)."""

    model_config = ConfigDict(extra="forbid")


def judge(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Judge the session in ``args`` (as ``POST /v1/adherence/judge``)."""
    body = JudgeCreate.parse(args)
    found = svc.judge_session(c.key, c.ctx, body.session, client=body.client, dry_run=body.dry_run)
    return {"ok": True, **found.to_dict()}


def report(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """The project's adherence report (as ``GET /v1/adherence/report``)."""
    parse(ReportArguments, args)
    return {"ok": True, **svc.adherence_report(c.key, c.ctx).to_dict()}
