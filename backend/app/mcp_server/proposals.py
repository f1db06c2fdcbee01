"""``memorule_proposals``: the capture review queue, read over MCP (deciding is for people,
in the console, the CLI or the HTTP API, with a writer key)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.bootstrap import Services
from app.domain.ranking import normalise_key
from app.domain.records import SessionContext
from app.mcp_server.parsing import parse
from app.serializers import memory_dict, state_dict
from app.services.proposal_service import ProposalService

DESCRIPTION = (
    "The review queue of memorules captured from what the operator said in past sessions "
    "(status 'proposed', newest first, with the messages they came from). Proposals are not "
    "rules yet: recall and the brief never return them until a person approves one."
)


class ProposalsArguments(BaseModel):
    """``memorule_proposals``."""

    model_config = ConfigDict(extra="forbid")

    limit: Annotated[int, Field(description="At most this many proposals.", ge=1, le=500)] = 50


def list_proposals(svc: Services, ctx: SessionContext, args: dict[str, Any]) -> dict[str, Any]:
    """The pending proposals of the session's project, with their evidence."""
    p = parse(ProposalsArguments, args)
    service = ProposalService(svc.store, svc.embedder, svc.memorules)
    items = [
        {
            "memory": memory_dict(m),
            "state": state_dict(s),
            "evidence": [e.to_dict() for e in service.evidence(ctx, m.id)],
        }
        for m, s in service.proposals(ctx, p.limit, viewer_persona=normalise_key(ctx.persona))
    ]
    return {"ok": True, "proposals": items, "count": len(items)}
