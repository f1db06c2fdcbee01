"""Reading memories back: one by id, every version with its audit events, listings by page,
and the pinned rules that apply to a context (the brief's first tier)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from uuid import UUID

from prism_memory.domain import listing
from prism_memory.domain.access import visible
from prism_memory.domain.listing import ListRequest
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    AppliesTo,
    MemoruleAudit,
    Memory,
    MemoryState,
    SessionContext,
    SourceType,
    Status,
)
from prism_memory.errors import NotFound
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.trigraph.port import AuditFilter, ListFilter, ReadStore

# The most pinned rules a brief reads (its top_k is at most 100 as well).
PINNED_MAX: Final = 100


@dataclass(frozen=True)
class History:
    """Every version of a memory, oldest first, and its audit events, newest first."""

    memory: Memory
    states: list[MemoryState]
    events: list[MemoruleAudit]


@dataclass(frozen=True)
class MemoryPage:
    """One page of a listing, newest first; ``next_cursor`` is None on the last page."""

    items: list[tuple[Memory, MemoryState]]
    next_cursor: str | None


def get_memory(
    store: ReadStore, ctx: SessionContext, memory_id: UUID
) -> tuple[Memory, MemoryState]:
    """A memory and its current state (retired ones too).

    Raises:
        NotFound: no such memory in the caller's tenant.
    """
    found = store.get(ctx.tenant_id, memory_id)
    if found is None:
        raise NotFound(f"no memory {memory_id}", id=str(memory_id))
    return found


class MemoryReads:
    """Reads by id, history and listings."""

    def __init__(self, deps: MemoryDeps) -> None:
        self.deps = deps

    def get(self, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        """A memory and its current state, retired ones too (:func:`get_memory`).

        Raises:
            NotFound: no such memory in the caller's tenant.
        """
        return get_memory(self.deps.store, ctx, memory_id)

    def history(self, ctx: SessionContext, memory_id: UUID) -> History:
        """Every version of a memory with its writers, and its audit events."""
        store = self.deps.store
        memory, _ = get_memory(store, ctx, memory_id)
        states = store.states(ctx.tenant_id, memory_id)
        events = store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=memory_id, limit=10_000))
        return History(memory, states, events)

    def list_memories(
        self,
        ctx: SessionContext,
        request: ListRequest,
        viewer_persona: str | None = None,
    ) -> MemoryPage:
        """One page of the project's memories and the tenant's global/org memorules, newest
        first (retired ones with ``status='retired'`` or ``'all'``).

        Args:
            ctx: the session context (its tenant and project).
            request: filters, ``cursor`` and ``limit``, as the door parsed them
                (:class:`ListRequest`).
            viewer_persona: a persona-bound caller's persona: other personas' ``persona``-scope
                rules are left out, as :func:`prism_memory.domain.access.can_see` does.
        """
        q = request.to_query()
        flt = ListFilter(
            project_id=ctx.project_id,
            status=q.status,
            memorules_only=q.source_type is SourceType.MEMORULE,
            namespace=q.namespace,
            memorule_kinds=q.memorule_kinds,
            confidences=q.confidences,
            scopes=q.scopes,
            applies=q.applies,
            viewer_persona=normalise_key(viewer_persona),
            pinned=q.pinned,
            before=q.before,
            limit=q.limit + 1,  # one more tells whether a next page exists
        )
        found = self.deps.store.list_memories(ctx.tenant_id, flt)
        items = found[: q.limit]
        more = len(found) > q.limit
        return MemoryPage(items, listing.encode_cursor(items[-1][0].id) if more else None)

    def pinned(
        self, ctx: SessionContext, namespace: str | None = None
    ) -> list[tuple[Memory, MemoryState]]:
        """The active memorules an operator pinned that apply to ``ctx``, in the order the
        rules were written: visible as recall sees them (``domain.access.visible``; a context
        without a persona sees no persona rule) and naming no persona, surface or
        specialization other than the context's (recall's applicability). At most
        :data:`PINNED_MAX`.
        """
        flt = ListFilter(
            project_id=ctx.project_id,
            status=Status.ACTIVE,
            memorules_only=True,
            namespace=namespace,
            pinned=True,
            limit=PINNED_MAX,
        )
        found = self.deps.store.list_memories(ctx.tenant_id, flt)
        kept = [(m, s) for m, s in found if _applies(m, s.applies_to or AppliesTo(), ctx)]
        return sorted(kept, key=lambda pair: pair[0].id.int)


def _applies(memory: Memory, a: AppliesTo, ctx: SessionContext) -> bool:
    if not visible(
        memory.project_id,
        a.effective_scope,
        a.persona,
        ctx.project_id,
        ctx.persona,
        no_persona_sees_persona_rules=False,
    ):
        return False
    for key in APPLIES_TO_KEYS:
        wanted, named = normalise_key(ctx.value(key)), normalise_key(getattr(a, key))
        if wanted is not None and named is not None and named != wanted:
            return False
    return True
