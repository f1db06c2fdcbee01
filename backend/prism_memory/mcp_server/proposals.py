"""``memorule_proposals``: the capture review queue, read over MCP (deciding is for people,
in the console, the CLI or the HTTP API, with a writer key)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from prism_memory.domain.access import Caller
from prism_memory.domain.contract.bounds import PROPOSALS_LIMIT_DEFAULT, PROPOSALS_LIMIT_MAX
from prism_memory.mcp_server.parsing import parse
from prism_memory.serializers import memory_dict, state_dict
from prism_memory.services.access_service import AccessService

DESCRIPTION = (
    "The review queue of memorules captured from what the operator said in past sessions "
    "(status 'proposed', newest first, with the messages they came from). Proposals are not "
    "rules yet: recall and the brief never return them until a person approves one."
)


class ProposalsArguments(BaseModel):
    """``memorule_proposals``."""

    model_config = ConfigDict(extra="forbid")

    limit: Annotated[
        int, Field(description="At most this many proposals.", ge=1, le=PROPOSALS_LIMIT_MAX)
    ] = PROPOSALS_LIMIT_DEFAULT


def list_proposals(svc: AccessService, c: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """The pending proposals of the session's project the key can see, with their evidence
    (as ``GET /v1/proposals``)."""
    p = parse(ProposalsArguments, args)
    items = [
        {
            "memory": memory_dict(m),
            "state": state_dict(s),
            "evidence": [e.to_dict() for e in evidence],
        }
        for m, s, evidence in svc.pending(c.key, c.ctx, p.limit)
    ]
    return {"ok": True, "proposals": items, "count": len(items)}
