"""MCP resources and prompts: the brief, one memorule, and ``start_task``.

Resource and prompt errors travel as JSON-RPC errors (the protocol has no error *result* for
them); their message is Prism's error JSON, as for tools (see :func:`protocol_error`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated
from uuid import UUID

import anyio.to_thread
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer, UserMessage
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import Field

from prism_memory.domain.access import Caller
from prism_memory.domain.contract.recall import BriefCreate
from prism_memory.errors import FieldError, InvalidInput, PrismError
from prism_memory.mcp_server.session import Sessions
from prism_memory.serializers import memory_dict, state_dict
from prism_memory.services.access_service import AccessService
from prism_memory.services.brief_service import TASK_MAX, TOKEN_BUDGET_DEFAULT

BRIEF_URI = "prism://brief"
BRIEF_DESCRIPTION = (
    "The memorules that apply to this server's context, grouped by kind, best first, as "
    "Markdown (read it at the start of a task). prism://brief?task=...&token_budget=... "
    "ranks the rules for a task."
)
START_TASK_TEXT = """I am starting this task:

{task}

{brief}

Follow the rules above where they apply and cite the id of each rule you apply. When the \
operator corrects you, record it with prism_remember (kind='memorule', \
memorule_kind='correction' with corrects=<id>, or 'feedback')."""


def register_resources(server: MCPServer, access: AccessService, sessions: Sessions) -> None:
    """Add ``prism://brief``, ``prism://memorule/{id}`` and the ``start_task`` prompt; each
    read acts with the caller's key (as ``POST /v1/brief`` and ``GET /v1/memories/{id}``)."""

    def brief_markdown(caller: Caller, task: str, token_budget: str) -> str:
        budget = _int(token_budget, "token_budget") if token_budget else TOKEN_BUDGET_DEFAULT
        request = BriefCreate.parse({"task": task, "token_budget": budget})
        return access.brief(caller.key, caller.ctx, request).markdown

    if not sessions.per_request:
        # Static resources get no request context: listed only when the server's context
        # is the same for every caller (stdio, or HTTP without a per-request hook).
        @server.resource(
            BRIEF_URI,
            name="brief",
            title="Brief",
            description=BRIEF_DESCRIPTION,
            mime_type="text/markdown",
        )
        async def brief() -> str:
            return await _guarded(lambda: brief_markdown(sessions.local, "", ""))

    @server.resource(
        BRIEF_URI + "{?task,token_budget}",
        name="brief_for_task",
        title="Brief for a task",
        description=BRIEF_DESCRIPTION,
        mime_type="text/markdown",
    )
    async def brief_for_task(ctx: Context, task: str = "", token_budget: str = "") -> str:
        return await _guarded(lambda: brief_markdown(sessions.resolve(ctx), task, token_budget))

    @server.resource(
        "prism://memorule/{id}",
        name="memorule",
        title="A memorule",
        description="One memorule (or note) by id: its current version and status, as JSON.",
        mime_type="application/json",
    )
    async def memorule(id: str, ctx: Context) -> str:  # noqa: A002 (the URI says {id})
        def read() -> str:
            caller = sessions.resolve(ctx)
            memory, state = access.get(caller.key, caller.ctx, _uuid(id))
            payload = {"ok": True, "memory": memory_dict(memory), "state": state_dict(state)}
            return json.dumps(payload, ensure_ascii=False)

        return await _guarded(read)

    @server.prompt(
        name="start_task",
        title="Start a task with the brief",
        description="Start a task: the task text followed by the memorules that apply to it.",
    )
    async def start_task(
        task: Annotated[
            str, Field(description=f"What you are about to do (at most {TASK_MAX} characters).")
        ],
        ctx: Context,
    ) -> list[UserMessage]:
        def read() -> str:
            caller = sessions.resolve(ctx)
            return access.brief(caller.key, caller.ctx, BriefCreate.parse({"task": task})).markdown

        text = await _guarded(read)
        return [UserMessage(START_TASK_TEXT.format(task=task.strip(), brief=text))]


async def _guarded(read: Callable[[], str]) -> str:
    """Run a blocking read in a worker thread; Prism errors become protocol errors."""
    try:
        return await anyio.to_thread.run_sync(read)
    except PrismError as exc:
        raise protocol_error(exc) from None


def protocol_error(exc: PrismError) -> MCPError:
    """A JSON-RPC error whose message is Prism's error JSON.

    The caller's mistakes and refusals (``validation_failed``, ``not_found``, ``forbidden``,
    ...) answer ``-32602`` (invalid params); the server's own failures ``-32603``.
    """
    code = INTERNAL_ERROR if exc.http_status >= 500 else INVALID_PARAMS
    return MCPError(code=code, message=json.dumps(exc.to_payload(), ensure_ascii=False))


def _uuid(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise InvalidInput(
            [FieldError("id", "invalid_format", "'id' must be a memory id (a UUID)")]
        ) from None


def _int(value: str, label: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(
            [
                FieldError(
                    label,
                    "wrong_type",
                    f"'{label}' must be a whole number",
                    {"expected": "integer"},
                )
            ]
        ) from None
