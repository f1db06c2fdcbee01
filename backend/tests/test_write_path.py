"""The write path reads what it needs once: a correcting memorule write reads the rule it
corrects one time (the access check's read, handed on to the supersession and the audit
drafts), and a new rule's own id is never looked up. On both engines, through the one
authorisation path every door calls (:class:`AccessService`)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from prism_memory.bootstrap import Services
from prism_memory.domain.access import operator_key
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import Memory, MemoryState, SessionContext, Status
from prism_memory.services.access_service import AccessService
from prism_memory.services.brief_service import BriefService
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.trigraph.port import TriGraphStore


class ReadCounter:
    """The real store, with every read of a memory by id written down (what was asked)."""

    def __init__(self, inner: TriGraphStore) -> None:
        self.inner = inner
        self.reads: list[tuple[str, UUID]] = []

    def get(self, tenant_id: UUID, memory_id: UUID) -> tuple[Memory, MemoryState] | None:
        self.reads.append(("get", memory_id))
        return self.inner.get(tenant_id, memory_id)

    def get_many(self, tenant_id: UUID, memory_ids: Any) -> Any:
        ids = list(memory_ids)
        self.reads += [("get_many", i) for i in ids]
        return self.inner.get_many(tenant_id, ids)

    def states(self, tenant_id: UUID, memory_id: UUID) -> list[MemoryState]:
        self.reads.append(("states", memory_id))
        return self.inner.states(tenant_id, memory_id)

    def vector(self, tenant_id: UUID, memory_id: UUID) -> Any:
        self.reads.append(("vector", memory_id))
        return self.inner.vector(tenant_id, memory_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def access_over(services: Services, store: Any) -> AccessService:
    memorules = MemoruleService(
        store, services.embedder, services.settings.near_duplicate_threshold, services.ledger
    )
    memory = MemoryRooms(MemoryDeps(store, services.embedder, memorules))
    return AccessService(memory, memorules, BriefService(memory))


def rule(**fields: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "Two reviewers for schema migrations",
        "body": "Every schema migration needs two reviewers before it merges.",
        "applies_to": {"persona": "donna"},
        "confidence": "observed",
        **fields,
    }


def test_a_correcting_write_reads_the_corrected_rule_once(
    services: Services, ctx: SessionContext
) -> None:
    key = operator_key(ctx.tenant_id)
    counter = ReadCounter(services.store)
    access = access_over(services, counter)
    wrong = access.remember(key, ctx, validate_remember(rule()))
    assert counter.reads == []  # a new rule's own id is not looked up
    fixed = access.remember(
        key,
        ctx,
        validate_remember(
            rule(
                memorule_kind="correction",
                corrects=str(wrong.id),
                subject="One reviewer for schema migrations",
                body="A schema migration needs one reviewer; two slowed every release down.",
            )
        ),
    )
    assert counter.reads == [("get", wrong.id)]
    corrected, _ = services.store.get(ctx.tenant_id, wrong.id) or (None, None)
    assert corrected is not None and corrected.status is Status.RETIRED
    events = services.memory.reads.history(ctx, wrong.id).events
    assert events[0].reason == f"corrected by memorule {fixed.id}"
    assert services.memorules.verify_chain(ctx).ok


def test_a_check_proposal_for_another_projects_rule_hashes_the_project_it_is_written_in(
    services: Services, make_ctx: Any
) -> None:
    """The proposal waits in the rule's project; its event's content hash names that project
    (the drafts take it from the memory itself), so the chain verifies."""
    api, web = make_ctx(project="api"), make_ctx(project="web")
    key = operator_key(api.tenant_id)
    access = access_over(services, services.store)
    wide = access.remember(
        key,
        api,
        validate_remember(
            rule(
                subject="Use pnpm, never npm",
                body="Use `pnpm`, never `npm`, in every repository of the company.",
                applies_to={"scope": "global"},
            )
        ),
    )
    (proposal,) = access.propose_checks(key, web, [wide.id]).proposals
    assert proposal.proposal_id is not None
    memory, _ = services.store.get(api.tenant_id, proposal.proposal_id) or (None, None)
    assert memory is not None and memory.project_id == api.project_id
    report = access.verify_chain(key, web)
    assert report.ok, report.problem
