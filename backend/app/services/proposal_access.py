"""The review queue as an API key may use it: readers see, writers and admins decide.

The same rules as :class:`app.services.access_service.AccessService` (:mod:`app.domain.access`):
a proposal or rule the key cannot see is reported exactly as a missing one; deciding needs the
writer role and the right to change that memory's project.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from app.domain import access
from app.domain.access import ApiKey, Role
from app.domain.ranking import normalise_key
from app.domain.records import Memory, MemoryState, SessionContext, WriteResult
from app.errors import NotFound
from app.services.proposal_service import Evidence, ProposalService


class ProposalAccess:
    """Guarded queue reads and decisions.

    Args:
        proposals: the proposal service.
    """

    def __init__(self, proposals: ProposalService) -> None:
        self.proposals = proposals

    def pending(
        self, key: ApiKey, ctx: SessionContext, limit: int = 50
    ) -> list[tuple[Memory, MemoryState, list[Evidence]]]:
        """Pending proposals of ``ctx``'s project the key can see, with their evidence."""
        access.require_role(key, Role.READER, "list proposals")
        found = self.proposals.proposals(ctx, limit, viewer_persona=normalise_key(key.persona))
        return [
            (m, s, self.proposals.evidence(ctx, m.id))
            for m, s in found
            if access.can_see(key, m, s)
        ]

    def evidence(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> list[Evidence]:
        """The signals behind a memorule the key can see."""
        access.require_role(key, Role.READER, "read evidence")
        self._visible(key, ctx, memory_id)
        return self.proposals.evidence(ctx, memory_id)

    def approve(
        self,
        key: ApiKey,
        ctx: SessionContext,
        proposal_id: UUID,
        edits: Mapping[str, Any] | None,
        reason: str | None,
    ) -> WriteResult:
        """Approve (see :meth:`ProposalService.approve`) as a writer of its project."""
        self._decider(key, ctx, proposal_id)
        return self.proposals.approve(ctx, proposal_id, edits, reason)

    def reject(
        self, key: ApiKey, ctx: SessionContext, proposal_id: UUID, reason: str | None
    ) -> WriteResult:
        """Reject (see :meth:`ProposalService.reject`) as a writer of its project."""
        self._decider(key, ctx, proposal_id)
        return self.proposals.reject(ctx, proposal_id, reason)

    def merge(
        self,
        key: ApiKey,
        ctx: SessionContext,
        proposal_id: UUID,
        into: UUID,
        reason: str | None,
    ) -> WriteResult:
        """Merge into a rule the key may also change."""
        self._decider(key, ctx, proposal_id)
        self._decider(key, ctx, into)
        return self.proposals.merge(ctx, proposal_id, into, reason)

    def promote(
        self, key: ApiKey, ctx: SessionContext, memorule_id: UUID, reason: str | None
    ) -> WriteResult:
        """Promote a rule the key may change to ``observed``."""
        self._decider(key, ctx, memorule_id)
        return self.proposals.promote(ctx, memorule_id, reason)

    def _decider(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> None:
        access.require_role(key, Role.WRITER, "decide on proposals")
        memory, _ = self._visible(key, ctx, memory_id)
        access.require_change(key, memory)

    def _visible(
        self, key: ApiKey, ctx: SessionContext, memory_id: UUID
    ) -> tuple[Memory, MemoryState]:
        found = self.proposals.store.get(ctx.tenant_id, memory_id)
        if found is None or not access.can_see(key, *found):
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        return found
