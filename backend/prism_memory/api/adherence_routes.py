"""``/v1/adherence``: judge a session's actions against the rules it was told, and the report
(DESIGN §12).

Thin, like :mod:`prism_memory.api.routes`: parse, call
:class:`~prism_memory.services.access_service.AccessService` once in the request's worker
thread, return its record. Judging (which records verdicts) needs a writer key; the report a
reader. The context (project, persona...) comes from the key and the ``X-Prism-*`` headers.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from prism_memory.api.deps import CallDep, JsonBody, StateDep
from prism_memory.api.models import ErrorPublic
from prism_memory.domain.contract.adherence import JudgeCreate

router = APIRouter(prefix="/v1", tags=["adherence"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorPublic, "description": text}
    for status, text in (
        (401, "missing, unknown or revoked API key"),
        (403, "the key's role or projects forbid it"),
        (408, "the request body arrived too slowly"),
        (413, "the request body is too large"),
        (422, "validation failed: every field error at once"),
        (503, "the store is not ready"),
    )
}


class VerdictPublic(BaseModel):
    """One rule's verdict: evidence (commands redacted) and whether it had been served to the
    session before the deciding action."""

    model_config = ConfigDict(extra="allow")

    memorule_id: UUID
    subject: str
    verdict: Literal["violated", "followed", "not_exercised"]
    evidence: list[dict[str, Any]]
    served_before: dict[str, Any] | None


class JudgementPublic(BaseModel):
    """The verdicts of every applicable rule with checks, and the refused attempts."""

    model_config = ConfigDict(extra="allow")

    ok: Literal[True]
    session: str
    dry_run: bool
    recorded: int
    verdicts: list[VerdictPublic]
    attempts: list[dict[str, Any]]


class ReportPublic(BaseModel):
    """Per rule: sessions served, exercised, violated and the last violation; per project:
    the most-violated rules, rules never exercised, sessions with violations."""

    model_config = ConfigDict(extra="allow")

    ok: Literal[True]
    project_id: UUID
    rules: list[dict[str, Any]]
    most_violated: list[dict[str, Any]]
    never_exercised: list[dict[str, Any]]
    sessions_with_violations: list[dict[str, Any]]


@router.post(
    "/adherence/judge",
    response_model=JudgementPublic,
    responses=_ERRORS,
    summary="Judge a session's actions against the rules with checks; record the verdicts",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": JudgeCreate.model_json_schema()}},
        }
    },
)
async def judge(state: StateDep, call: CallDep, raw: JsonBody) -> dict[str, Any]:
    """Any agent's session in the client-neutral shape (the Claude Code reader produces the
    same); ``dry_run`` judges without recording. Writer keys."""
    body = JudgeCreate.parse(raw)
    found = await call.run(
        lambda key, ctx: state.access.judge_session(
            key, ctx, body.session, client=body.client, dry_run=body.dry_run
        )
    )
    return {"ok": True, **found.to_dict()}


@router.get(
    "/adherence/report",
    response_model=ReportPublic,
    responses=_ERRORS,
    summary="Adherence of the project: per rule served / exercised / violated",
)
async def report(state: StateDep, call: CallDep) -> dict[str, Any]:
    """The rules with checks the key can see in the request's project. Reader keys."""
    found = await call.run(lambda key, ctx: state.access.adherence_report(key, ctx))
    return {"ok": True, **found.to_dict()}
