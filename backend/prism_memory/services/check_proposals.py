"""Proposed checks in the review queue (DESIGN §7, §12): nothing active changes without a
person's approval.

``prism checks propose`` (and ``prism import-rules``) reads the text of active memorules that
have no checks and derives candidates (:func:`prism_memory.domain.adherence.propose.propose`).
Each rule with candidates gets one *check proposal*: a ``proposed`` memorule in the rule's
project that repeats the rule's text, kind and ``applies_to`` and carries the candidate
``checks``; its ``evidence_signal_id`` names the rule and the version it was read from
(``checks-for:<rule id>@v<version>``). It waits in the same queue as captured corrections
(``prism proposals``, ``/v1/proposals``, MCP, console):

- *approve* writes a new version of the rule itself carrying the checks (a ``superseded``
  event on the rule; its id, text and served history are unchanged) and closes the proposal
  (an ``approved`` event; retired). When the rule changed since the checks were read, the
  approval is refused (:class:`~prism_memory.errors.Conflict`): propose again;
- *reject* closes it like any proposal (``rejected``); the rule is untouched.

Proposing is idempotent per rule version: the key ``checks:<rule id>:v<version>`` is claimed
in the transaction that writes the proposal, so a second run, or a run after a rejection,
writes nothing for the same version. A proposal for a new version of a rule closes the
pending ones read from its older versions (``rejected``, saying why): they could no longer be
approved. The proposal copies the rule's stored vector: proposing
loads no embedding model unless a rule has none.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.adherence.checks import Check, checks_json, parse_checks
from prism_memory.domain.adherence.propose import proposal_signal, propose, signal_target
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import (
    AuditEventType,
    Kind,
    Memory,
    MemoryState,
    SessionContext,
    Status,
    WriteResult,
    first_version,
    utcnow,
)
from prism_memory.embeddings.port import Embedder
from prism_memory.errors import Conflict, FieldError, InvalidInput, NotFound
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.trigraph.port import (
    IdempotencyClaim,
    ListFilter,
    StateWrite,
    TriGraphStore,
    WriteBatch,
)

PAGE: Final = 500  # rules read per page of the store


def proposal_target(state: MemoryState) -> tuple[UUID, int] | None:
    """The rule (id, version) a proposal proposes checks for; None for other proposals."""
    return signal_target(state.evidence_signal_id)


@dataclass(frozen=True)
class CheckProposal:
    """What proposing did for one rule: ``proposed``, ``already_proposed`` (this version has
    a proposal, pending or decided), or ``would_propose`` (a dry run)."""

    memorule_id: UUID
    version: int
    subject: str
    checks: tuple[Check, ...]
    action: str
    proposal_id: UUID | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "memorule_id": str(self.memorule_id),
            "version": self.version,
            "subject": self.subject,
            "checks": checks_json(self.checks),
            "action": self.action,
            "proposal_id": str(self.proposal_id) if self.proposal_id else None,
        }


@dataclass
class CheckProposalReport:
    """One run over rules: how many were read, and the rules that got candidates."""

    rules_read: int = 0
    with_checks: int = 0  # rules that already carry checks (never proposed for)
    dry_run: bool = False
    proposals: list[CheckProposal] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules_read": self.rules_read,
            "rules_with_checks": self.with_checks,
            "dry_run": self.dry_run,
            "proposals": [p.to_dict() for p in self.proposals],
            "proposed": sum(1 for p in self.proposals if p.action == "proposed"),
        }


class CheckProposalService:
    """Derive check proposals for active rules, and apply an approved one.

    Args:
        store: the TriGraph engine.
        embedder: only for a rule whose vector is missing (its text is embedded then).
        memorules: audit drafts.
    """

    def __init__(self, store: TriGraphStore, embedder: Embedder, memorules: MemoruleService):
        self.store = store
        self.embedder = embedder
        self.memorules = memorules

    def rules(self, ctx: SessionContext) -> list[tuple[Memory, MemoryState]]:
        """The active memorules of ``ctx``'s project, every page."""
        out: list[tuple[Memory, MemoryState]] = []
        before: UUID | None = None
        while True:
            flt = ListFilter(
                project_id=ctx.project_id,
                status=Status.ACTIVE,
                memorules_only=True,
                tenant_wide=False,
                before=before,
                limit=PAGE,
            )
            page = self.store.list_memories(ctx.tenant_id, flt)
            out += page
            if len(page) < PAGE:
                return out
            before = page[-1][0].id

    def propose(
        self,
        ctx: SessionContext,
        rules: Sequence[tuple[Memory, MemoryState]],
        dry_run: bool = False,
    ) -> CheckProposalReport:
        """A check proposal for each of ``rules`` (active memorules) without checks whose text
        yields candidates.

        Raises:
            StorageError: the engine failed.
        """
        report = CheckProposalReport(dry_run=dry_run)
        stale = self._pending_by_rule(ctx) if not dry_run else {}
        for memory, state in rules:
            if memory.kind is not Kind.MEMORULE or memory.status is not Status.ACTIVE:
                continue
            report.rules_read += 1
            if state.checks:
                report.with_checks += 1
                continue
            candidates = propose(f"{state.subject or ''}\n{state.body}")
            if not candidates:
                continue
            checks = parse_checks(candidates)
            key = f"checks:{memory.id}:v{state.version}"
            claim = self.store.idempotent_result(ctx.tenant_id, key)
            if claim is not None:
                done = UUID(str(claim.result["id"]))
                report.proposals.append(_outcome(state, checks, "already_proposed", done))
            elif dry_run:
                report.proposals.append(_outcome(state, checks, "would_propose"))
            else:
                older = [p for p in stale.get(memory.id, []) if p[2] < state.version]
                proposal_id, fresh = self._write(ctx, memory, state, checks, key, older)
                action = "proposed" if fresh else "already_proposed"
                report.proposals.append(_outcome(state, checks, action, proposal_id))
        return report

    def _pending_by_rule(
        self, ctx: SessionContext
    ) -> dict[UUID, list[tuple[Memory, MemoryState, int]]]:
        """The pending check proposals of ``ctx``'s project, by the rule they are for (with
        the rule version each was read from)."""
        flt = ListFilter(
            project_id=ctx.project_id,
            status=Status.PROPOSED,
            memorules_only=True,
            tenant_wide=False,
            limit=PAGE,
        )
        out: dict[UUID, list[tuple[Memory, MemoryState, int]]] = {}
        for memory, state in self.store.list_memories(ctx.tenant_id, flt):
            target = proposal_target(state)
            if target is not None:
                out.setdefault(target[0], []).append((memory, state, target[1]))
        return out

    def _write(
        self,
        ctx: SessionContext,
        rule: Memory,
        state: MemoryState,
        checks: tuple[Check, ...],
        key: str,
        older: Sequence[tuple[Memory, MemoryState, int]] = (),
    ) -> tuple[UUID, bool]:
        """Write the proposal; close the pending ones read from older versions of the rule
        (``rejected``: they can no longer be approved), in the same transaction."""
        now = utcnow()
        vector = self.store.vector(ctx.tenant_id, rule.id)
        model = state.embedding_model
        if vector is None:
            vector = self.embedder.embed([state.embedding_text()])[0]
            model = self.embedder.model_id
        # the rule's project: the proposal waits in the queue of the project the rule is in
        where = dataclasses.replace(ctx, project_id=rule.project_id)
        memory, proposed = first_version(
            where,
            Kind.MEMORULE,
            rule.namespace,
            state.subject,
            state.body,
            model,
            now,
            memorule_kind=state.memorule_kind,
            applies_to=state.applies_to,
            evidence_signal_id=proposal_signal(rule.id, state.version),
            confidence=state.confidence,
            checks=checks,
            reason=f"checks proposed from the text of memorule {rule.id} v{state.version}",
        )
        memory = dataclasses.replace(memory, status=Status.PROPOSED)
        draft = self.memorules.audit_draft(
            ctx,
            memory,
            proposed,
            AuditEventType.PROPOSED,
            proposed.evidence_signal_id,
            now,
            reason=proposed.reason,
        )
        result = WriteResult(memory.id, proposed.id, 1, Kind.MEMORULE, now, draft.id)
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            new_memories=[memory],
            states=[StateWrite(proposed, vector)],
            audits=[draft],
        )
        for old, old_state, old_version in older:
            why = (
                f"memorule {rule.id} changed (v{old_version} -> v{state.version}); "
                f"proposal {memory.id} proposes checks for its new text"
            )
            batch.status_changes.append((old.id, Status.RETIRED))
            batch.expected_versions[old.id] = old.current_version
            batch.audits.append(
                self.memorules.audit_draft(
                    ctx,
                    old,
                    old_state,
                    AuditEventType.REJECTED,
                    old_state.evidence_signal_id,
                    now,
                    why,
                )
            )
        digest = hashlib.sha256(key.encode()).hexdigest()
        batch.idempotency = IdempotencyClaim(key, digest, result.to_dict())
        replay = self.store.write(batch).replay
        if replay is None:
            return memory.id, True
        return UUID(str(replay.result["id"])), False

    def approve(
        self, ctx: SessionContext, proposal: Memory, state: MemoryState, reason: str | None
    ) -> WriteResult:
        """Give the rule the proposal's checks (a new version of the rule, ``superseded``) and
        close the proposal (``approved``, retired), in one transaction.

        Raises:
            NotFound: the rule is gone. Conflict: the rule is retired, or changed since the
                checks were read from it (or now has checks of its own).
        """
        target = proposal_target(state)
        assert target is not None
        rule_id, version = target
        found = self.store.get(ctx.tenant_id, rule_id)
        if found is None or found[0].kind is not Kind.MEMORULE:
            raise NotFound(f"no memorule {rule_id} for these checks", id=str(rule_id))
        rule, current = found
        if rule.status is not Status.ACTIVE:
            raise Conflict(
                f"memorule {rule_id} is {rule.status.value}; reject this proposal",
                id=str(rule_id),
            )
        if current.version != version or current.checks:
            raise Conflict(
                f"memorule {rule_id} changed since these checks were proposed (v{version}, "
                f"now v{current.version}); reject this proposal and run "
                "`prism checks propose` again",
                id=str(rule_id),
                version=current.version,
            )
        now = utcnow()
        why = reason or f"checks approved from proposal {proposal.id}"
        checked = dataclasses.replace(
            current,
            id=new_id(),
            version=current.version + 1,
            checks=state.checks,
            written_by_session_id=ctx.session_id,
            written_by_persona=ctx.persona,
            written_at=now,
            reason=why,
        )
        superseded = self.memorules.audit_draft(
            ctx, rule, checked, AuditEventType.SUPERSEDED, state.evidence_signal_id, now, why
        )
        approved = self.memorules.audit_draft(
            ctx,
            proposal,
            state,
            AuditEventType.APPROVED,
            state.evidence_signal_id,
            now,
            f"checks given to memorule {rule.id} v{checked.version}"
            + (f": {reason}" if reason else ""),
        )
        batch = WriteBatch(
            tenant_id=ctx.tenant_id,
            states=[StateWrite(checked, None)],
            status_changes=[(proposal.id, Status.RETIRED)],
            audits=[superseded, approved],
            expected_versions={rule.id: current.version, proposal.id: proposal.current_version},
        )
        self.store.write(batch)
        return WriteResult(rule.id, checked.id, checked.version, rule.kind, now, superseded.id)


def refuse_edits(edits: dict[str, Any] | None) -> None:
    """A check proposal is approved as proposed: its text is the rule's own.

    Raises:
        InvalidInput: any edit (change the rule with ``prism update`` instead).
    """
    if edits:
        raise InvalidInput(
            [
                FieldError(
                    k,
                    "not_editable",
                    f"'{k}' cannot be edited when approving proposed checks; approve or "
                    "reject them, then change the rule with an update",
                )
                for k in sorted(edits)
            ]
        )


def _outcome(
    state: MemoryState, checks: tuple[Check, ...], action: str, proposal_id: UUID | None = None
) -> CheckProposal:
    return CheckProposal(
        state.memory_id, state.version, state.subject or "", checks, action, proposal_id
    )
