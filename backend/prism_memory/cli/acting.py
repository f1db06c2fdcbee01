"""Who the CLI acts as: the local operator, through the same access rules as every front door.

The CLI's user owns the store it opens (as ``prism mcp`` over stdio does), so its commands act
with the operator key (:func:`prism_memory.domain.access.operator_key`: an unrestricted admin of the
context's tenant, bound to no persona, never stored) and call
:class:`~prism_memory.services.access_service.AccessService` like ``/v1``, MCP and the console do.
The
context keeps its persona for attribution (``written_by_persona``).
"""

from __future__ import annotations

from prism_memory.bootstrap import Services, build_access
from prism_memory.domain.access import Caller, operator_key
from prism_memory.domain.records import SessionContext
from prism_memory.services.access_service import AccessService


def as_operator(services: Services, ctx: SessionContext) -> tuple[AccessService, Caller]:
    """The guarded operations, and the operator acting in ``ctx``."""
    return build_access(services), Caller(operator_key(ctx.tenant_id, label="prism CLI"), ctx)
