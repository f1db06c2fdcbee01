"""``POST /v1/hooks/claude-code``: a Claude Code hook's answer from the running server.

The hook's fast path (``python -P -m prism_memory brief --hook claude-code``) asks here
instead of loading the store and the embedding model itself. It is the local operator of the
store (it can read the store's file), so the route takes no API key: it takes only the
token this server wrote into the store's discovery file (mode 0600, beside the store; see
:mod:`prism_memory.services.local_serve`), only from a loopback peer, and only for the store
the server serves (the body judged by :mod:`prism_memory.services.hook_wire`). API keys are
refused here, and the token is refused everywhere else. The
answer is :func:`prism_memory.services.hook_answers.answer`, the same the hook computes
in-process; its served receipts are recorded here, under the session the request names.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

import anyio
from fastapi import APIRouter, Request

from prism_memory.api.deps import StateDep, json_object
from prism_memory.bootstrap import context_of
from prism_memory.domain.access import Caller, operator_key
from prism_memory.errors import Conflict, PermissionDenied, Unauthenticated
from prism_memory.services.hook_answers import answer
from prism_memory.services.hook_wire import request_from

router = APIRouter(prefix="/v1", include_in_schema=False)
BEARER = "bearer "


@router.post("/hooks/claude-code")
async def claude_code_hook(request: Request, state: StateDep) -> dict[str, Any]:
    """The hook's answer (``context`` to add, or ``skipped`` and why) and the rule ids the
    session was given (``served``; ``replace``: instead of what the hook recorded)."""
    _loopback_peer(request)
    _check_token(state.hook_token, request.headers.get("authorization", ""))
    hook, fields, store = request_from(await json_object(request))  # after the token
    if store != state.hook_store:
        raise Conflict("this server serves another store; answer in-process", store=store)

    def job() -> dict[str, Any]:
        ctx = context_of(
            fields.get("tenant") or "default",
            fields.get("project") or "default",
            session_id=fields.get("session_id"),
            persona=fields.get("persona"),
            surface=fields.get("surface"),
            specialization=fields.get("specialization"),
        )
        caller = Caller(operator_key(ctx.tenant_id, label="prism hook"), ctx)
        return answer(state.access, caller, hook).to_dict()

    return {"ok": True, "answer": await anyio.to_thread.run_sync(job)}


def _loopback_peer(request: Request) -> None:
    host = request.client.host if request.client is not None else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise PermissionDenied("the hook route answers only this machine (a loopback peer)")


def _check_token(token: str | None, header: str) -> None:
    """The discovery file's token, compared in constant time; nothing else opens the route."""
    if token is None:
        raise Unauthenticated("this server has no hook token (it wrote no discovery file)")
    if not header.lower().startswith(BEARER):
        raise Unauthenticated("the hook route needs the store's hook token as a Bearer token")
    given = header[len(BEARER) :].strip()
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise Unauthenticated("not this server's hook token")
