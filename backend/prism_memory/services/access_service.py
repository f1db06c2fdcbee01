"""Every memory operation as an API key may do it: the role, project and persona rules of
:mod:`prism_memory.domain.access` in front of the memory rooms (:class:`MemoryRooms`: writes,
lifecycle, recall, reads), :class:`MemoruleService`, the brief, the ledger and the capture
review queue (:class:`ProposalService`).

The one authorisation path: ``/v1``, MCP (over HTTP with the request's key; over stdio with
the local operator key), the console (its session's key) and the CLI (the operator key) all
call these methods with the key they act with.

Anything the key cannot see is reported exactly as a missing id would be (the same
:class:`NotFound`), so a key learns nothing about other tenants, projects or personas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from uuid import UUID

from prism_memory.domain import access
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.audit import ChainReport, Head
from prism_memory.domain.contract.recall import BriefCreate, RecallCreate
from prism_memory.domain.listing import ListRequest
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    MemoruleWrite,
    Memory,
    MemoryState,
    NoteWrite,
    PinResult,
    RecallResult,
    SessionContext,
    WriteResult,
)
from prism_memory.errors import NotFound, PermissionDenied, StorageError
from prism_memory.services.brief_service import Brief, BriefService
from prism_memory.services.ledger_service import ChainHeads, LedgerService, ServedPage
from prism_memory.services.memorule_service import AuditPage, MemoruleService
from prism_memory.services.memory_reads import History, MemoryPage
from prism_memory.services.memory_rooms import MemoryRooms

if TYPE_CHECKING:
    from prism_memory.capture.proposals import Candidate
    from prism_memory.domain.adherence.actions import SessionActions
    from prism_memory.formats.rules_io.exporter import Rule
    from prism_memory.services.adherence_report import AdherenceReport
    from prism_memory.services.adherence_service import SessionJudgement
    from prism_memory.services.capture_service import CaptureProgress, CaptureReport
    from prism_memory.services.check_proposals import CheckProposalReport
    from prism_memory.services.guard_service import GuardDecision
    from prism_memory.services.proposal_service import Evidence, ProposalService
from prism_memory.trigraph.ledger import ServedFilter
from prism_memory.trigraph.port import AuditFilter


class AccessService:
    """Guarded reads and writes.

    Args:
        memory: the memory rooms (each operation calls the room that does it).
        memorules: the memorule service (audit reads).
        briefs: the task-start brief service.
        proposals: the capture review queue (default: one over the memory's store).
    """

    def __init__(
        self,
        memory: MemoryRooms,
        memorules: MemoruleService,
        briefs: BriefService,
        proposals: ProposalService | None = None,
    ) -> None:
        self.memory = memory
        self.memorules = memorules
        self.briefs = briefs
        if proposals is None:
            # Imported here: the capture modules are not needed by `prism brief`'s hot path.
            from prism_memory.services.proposal_service import ProposalService

            proposals = ProposalService(memory.deps.store, memory.deps.embedder, memorules)
        self.proposals = proposals

    def remember(
        self, key: ApiKey, ctx: SessionContext, write: NoteWrite | MemoruleWrite
    ) -> WriteResult:
        """Write a note or memorule in ``ctx``'s project (already allowed for the key).

        Args:
            key: the key the door acts with.
            ctx: the session context.
            write: the request, validated at the door (:func:`validate_remember`).

        Raises:
            PermissionDenied, NotFound: see :meth:`check_remember`.
            Conflict: as :meth:`WriteService.remember`.
        """
        corrected = self.check_remember(key, ctx, write)
        return self.memory.writes.remember(ctx, write, corrected)

    def check_remember(
        self, key: ApiKey, ctx: SessionContext, write: NoteWrite | MemoruleWrite | None
    ) -> tuple[Memory, MemoryState] | None:
        """Whether the key may make this write: the role first, then a memorule's reach.

        Args:
            write: the validated write; None checks the role alone.

        Returns:
            The rule ``corrects`` names, as read for the check (None when it names none):
            the write supersedes it without reading it again.

        Raises:
            PermissionDenied: the key cannot write; or a persona-bound key names another
                persona in ``applies_to.persona``; or a key restricted to projects names a
                tenant-wide scope; or a key below admin sets ``enforcement`` ``ask``/``deny``;
                or ``corrects`` names a memorule the key may see but not change (a
                correction retires the rule it corrects).
            NotFound: ``corrects`` names a memorule the key cannot see.
        """
        access.require_role(key, Role.WRITER, "write memories")
        if not isinstance(write, MemoruleWrite):
            return None
        access.require_rule_write(key, write)
        if write.corrects is None:
            return None
        found = self._visible(key, ctx, write.corrects)
        if found is None:
            raise NotFound(f"no memorule {write.corrects} to correct", id=str(write.corrects))
        access.require_change(key, *found)
        return found

    def recall(self, key: ApiKey, ctx: SessionContext, request: RecallCreate) -> RecallResult:
        """``semantic_recall`` in ``ctx``'s project (already allowed for the key)."""
        access.require_role(key, Role.READER, "recall")
        return self.memory.recalls.recall(ctx, request.to_query())

    def brief(self, key: ApiKey, ctx: SessionContext, request: BriefCreate | None = None) -> Brief:
        """The task-start brief of ``ctx`` (see :meth:`BriefService.brief`)."""
        access.require_role(key, Role.READER, "read a brief")
        return self.briefs.brief(ctx, request)

    def get(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> tuple[Memory, MemoryState]:
        """A memory the key can see, and its current state.

        Raises:
            NotFound: no such memory, or one the key cannot see (alike).
        """
        access.require_role(key, Role.READER, "read memories")
        found = self._visible(key, ctx, memory_id)
        if found is None:
            raise NotFound(f"no memory {memory_id}", id=str(memory_id))
        return found

    def _visible(
        self, key: ApiKey, ctx: SessionContext, memory_id: UUID
    ) -> tuple[Memory, MemoryState] | None:
        try:
            found = self.memory.reads.get(ctx, memory_id)
        except NotFound:
            return None
        return found if access.can_see(key, *found) else None

    def list_memories(self, key: ApiKey, ctx: SessionContext, request: ListRequest) -> MemoryPage:
        """A page of ``ctx``'s project (already allowed for the key), as the key sees it.

        The store filters by the key's persona; every row is then checked with the same
        :func:`~prism_memory.domain.access.can_see` as :meth:`get`, so a listing never shows a
        memory
        that reading it by id would refuse.

        Raises:
            PermissionDenied: the key may not read.
        """
        access.require_role(key, Role.READER, "list memories")
        page = self.memory.reads.list_memories(ctx, request, viewer_persona=key.persona)
        visible = [pair for pair in page.items if access.can_see(key, *pair)]
        return MemoryPage(visible, page.next_cursor)

    def history(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> History:
        """Every version of a memory the key can see, and its audit events."""
        self.get(key, ctx, memory_id)
        return self.memory.reads.history(ctx, memory_id)

    def check_change(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> None:
        """Whether the key may update, retire or restore this memory.

        Raises:
            PermissionDenied: the key cannot write, or not in the memory's project.
            NotFound: the key cannot see the memory (or it does not exist).
        """
        access.require_role(key, Role.WRITER, "change memories")
        access.require_change(key, *self.get(key, ctx, memory_id))

    def update(
        self,
        key: ApiKey,
        ctx: SessionContext,
        memory_id: UUID,
        changes: Mapping[str, Any],
        reason: str | None = None,
        evidence_signal_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Supersede a memory the key may change (see :meth:`LifecycleService.update`).

        The changes are judged on the version they make, as validated (a malformed change
        is refused as such, before its reach), for the fields they change
        (:func:`~prism_memory.domain.access.require_rule_write`).

        Raises:
            PermissionDenied, NotFound: as :meth:`check_change`; or a persona-bound key
                names another persona in ``changes.applies_to.persona``; or a key restricted
                to projects a tenant-wide scope; or a key below admin sets ``enforcement``
                ``ask``/``deny``, or changes the checks or the enforcement of a rule at
                ``ask``/``deny``.
            InvalidInput, MemoryRetired, Conflict: as :meth:`LifecycleService.update`.
        """
        self.check_change(key, ctx, memory_id)

        def reach(current: MemoryState, write: NoteWrite | MemoruleWrite) -> None:
            if isinstance(write, MemoruleWrite):
                access.require_rule_write(key, write, set(changes), current)

        return self.memory.lifecycle.update(
            ctx, memory_id, changes, reason, evidence_signal_id, idempotency_key, reach
        )

    def retire(
        self,
        key: ApiKey,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Retire a memory the key may change."""
        self.check_change(key, ctx, memory_id)
        return self.memory.lifecycle.retire(ctx, memory_id, reason, idempotency_key)

    def restore(
        self,
        key: ApiKey,
        ctx: SessionContext,
        memory_id: UUID,
        reason: str | None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Restore a retired memory the key may change."""
        self.check_change(key, ctx, memory_id)
        return self.memory.lifecycle.restore(ctx, memory_id, reason, idempotency_key)

    def pin(
        self, key: ApiKey, ctx: SessionContext, memory_id: UUID, pinned: bool, reason: str | None
    ) -> PinResult:
        """Pin or unpin a memorule the key may change (who may retire a rule may pin it)."""
        self.check_change(key, ctx, memory_id)
        return self.memory.lifecycle.pin(ctx, memory_id, pinned, reason)

    def audit(self, key: ApiKey, ctx: SessionContext, flt: AuditFilter) -> AuditPage:
        """Audit events: of one memorule the key can see, or (admin) of the whole tenant.

        Raises:
            NotFound: ``flt.memorule_id`` names a memory the key cannot see.
            PermissionDenied: no memorule filter and the key may not read the tenant's trail.
        """
        if flt.memorule_id is not None:
            self.get(key, ctx, flt.memorule_id)
        else:
            access.require_tenant_audit(key, "list the whole tenant's audit trail")
        return self.memorules.audit(ctx, flt)

    def verify_chain(
        self,
        key: ApiKey,
        ctx: SessionContext,
        given: Head | None = None,
        served_given: Head | None = None,
    ) -> ChainReport:
        """Recompute the tenant's chains (admin keys not restricted to projects); ``given``
        and ``served_given`` are heads kept elsewhere that the chains must extend."""
        access.require_tenant_audit(key, "verify the audit chain")
        return self.memorules.verify_chain(ctx, given, served_given)

    def _ledger(self) -> LedgerService:
        if self.memorules.ledger is None:
            raise StorageError("this store has no audit ledger")
        return self.memorules.ledger

    def audit_head(self, key: ApiKey, ctx: SessionContext) -> ChainHeads:
        """The tenant's chain heads (admin keys not restricted to projects)."""
        access.require_tenant_audit(key, "read the audit chain's head")
        return self._ledger().head(ctx)

    def served(self, key: ApiKey, ctx: SessionContext, flt: ServedFilter) -> ServedPage:
        """Served receipts: the whole tenant's (admin keys not restricted to projects), or
        one session's, as served through this same key (any role).

        Raises:
            PermissionDenied: neither an unrestricted admin key nor a ``session_id`` filter.
        """
        try:
            access.require_tenant_audit(key, "list the whole tenant's served receipts")
        except PermissionDenied:
            if flt.session_id is None:
                raise PermissionDenied(
                    "this key can list only the served receipts of a session it called with: "
                    "give session_id"
                ) from None
            access.require_role(key, Role.READER, "list served receipts")
            flt = replace(flt, key_id=key.key_id)
        return self._ledger().served(ctx, flt)

    # -- the capture review queue: readers see it, writers of the project decide ----------

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
        """The signals behind a memorule the key can see.

        Raises:
            NotFound: no such memory, or one the key cannot see (alike).
        """
        self.get(key, ctx, memory_id)
        return self.proposals.evidence(ctx, memory_id)

    def approve(
        self,
        key: ApiKey,
        ctx: SessionContext,
        proposal_id: UUID,
        edits: Mapping[str, Any] | None,
        reason: str | None,
    ) -> WriteResult:
        """Approve (see :meth:`ProposalService.approve`) as a writer of its project.

        A proposal of checks for an active rule changes that rule's checks: the key must be
        allowed to change the rule, and, when its enforcement is an admin's ``ask``/``deny``,
        to change its checks (else a writer could arm a block by approving). Edits are judged
        on the rule they make, as validated (a malformed edit is refused as such, before its
        reach), as an update's changes are.
        """
        self._decider(key, ctx, proposal_id)
        from prism_memory.services.check_proposals import proposal_target

        _, proposal = self.get(key, ctx, proposal_id)
        target = proposal_target(proposal)
        if target is not None:
            rule, current = self.get(key, ctx, target[0])
            access.require_change(key, rule, current)
            access.require_enforcement_right(key, {"checks": proposal.checks}, current)

        def reach(state: MemoryState, write: MemoruleWrite) -> None:
            access.require_rule_write(key, write, set(edits or ()), state)

        return self.proposals.approve(ctx, proposal_id, edits, reason, reach)

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

    # -- the operator's bulk work on one context: rule files and transcripts ------------

    def applicable_rules(self, key: ApiKey, ctx: SessionContext) -> list[Rule]:
        """Every active memorule that applies to ``ctx`` and the key can see, unbounded
        (``prism export-rules``; see
        :func:`prism_memory.formats.rules_io.exporter.applicable_memorules`).
        """
        access.require_role(key, Role.READER, "export rules")
        from prism_memory.formats.rules_io.exporter import (
            applicable_memorules,
        )  # not on the brief's path

        found = applicable_memorules(self.memory.deps.store, ctx)
        return [(m, s) for m, s in found if access.can_see(key, m, s)]

    def capture(
        self,
        key: ApiKey,
        ctx: SessionContext,
        found: list[Candidate],
        messages: int,
        dry_run: bool = False,
        progress: CaptureProgress | None = None,
    ) -> CaptureReport:
        """Propose captured corrections in ``ctx``'s project (:meth:`CaptureService.capture`).

        Raises:
            PermissionDenied: the key cannot write.
        """
        access.require_role(key, Role.WRITER, "capture proposals")
        from prism_memory.services.capture_service import CaptureService  # not on the brief's path

        queue = CaptureService(self.memory.deps.store, self.memory.deps.embedder, self.memorules)
        return queue.capture(ctx, found, messages, dry_run=dry_run, progress=progress)

    def propose_checks(
        self,
        key: ApiKey,
        ctx: SessionContext,
        memorule_ids: Sequence[UUID] | None = None,
        dry_run: bool = False,
    ) -> CheckProposalReport:
        """Check proposals (into the review queue) for the active memorules of ``ctx``'s
        project that have no checks, or for the named ones
        (:class:`~prism_memory.services.check_proposals.CheckProposalService`).

        Raises:
            PermissionDenied: the key cannot write, or may not change a named rule.
            NotFound: a named rule the key cannot see.
        """
        access.require_role(key, Role.WRITER, "propose checks")
        from prism_memory.services.check_proposals import CheckProposalService

        service = CheckProposalService(
            self.memory.deps.store, self.memory.deps.embedder, self.memorules
        )
        if memorule_ids is None:
            rules = [(m, s) for m, s in service.rules(ctx) if access.can_see(key, m, s)]
        else:
            rules = []
            for memorule_id in memorule_ids:
                memory, state = self.get(key, ctx, memorule_id)
                access.require_change(key, memory, state)
                rules.append((memory, state))
        return service.propose(ctx, rules, dry_run)

    def record_guard(
        self,
        key: ApiKey,
        ctx: SessionContext,
        decision: GuardDecision,
        *,
        client: str,
        session: str,
        tool_use_id: str | None,
    ) -> int:
        """Record what the ``PreToolUse`` guard did (``reminded``/``blocked`` audit events of
        the rules hit; :class:`~prism_memory.services.guard_service.GuardRecorder`).

        Raises:
            PermissionDenied: the key cannot write.
        """
        access.require_role(key, Role.WRITER, "record guard decisions")
        from prism_memory.services.guard_service import GuardRecorder

        recorder = GuardRecorder(self.memory.deps.store, self.memorules)
        return recorder.record(
            ctx, decision, client=client, session=session, tool_use_id=tool_use_id
        )

    def _decider(self, key: ApiKey, ctx: SessionContext, memory_id: UUID) -> None:
        access.require_role(key, Role.WRITER, "decide on proposals")
        access.require_change(key, *self.get(key, ctx, memory_id))

    # -- adherence (DESIGN §12): judging a session writes verdicts; the report is a read ----

    def judge_session(
        self,
        key: ApiKey,
        ctx: SessionContext,
        session: SessionActions,
        client: str = "agent",
        dry_run: bool = False,
    ) -> SessionJudgement:
        """Judge ``session`` against the rules with checks that apply to ``ctx`` (those the
        key can see) and, unless ``dry_run``, record the verdicts as audit events
        (:class:`~prism_memory.services.adherence_service.AdherenceService`).

        Raises:
            PermissionDenied: the key cannot write.
        """
        access.require_role(key, Role.WRITER, "judge a session")
        from prism_memory.services.adherence_report import visible_to
        from prism_memory.services.adherence_service import AdherenceService

        service = AdherenceService(self.memory.deps.store, self.memorules)
        rules = [r for r in service.rules(ctx) if visible_to(r, key.persona)]
        return service.judge(ctx, session, client=client, dry_run=dry_run, rules=rules)

    def adherence_report(
        self, key: ApiKey, ctx: SessionContext, memorule_id: UUID | None = None
    ) -> AdherenceReport:
        """Adherence of ``ctx``'s project: per rule served / exercised / violated and the last
        violation, the most-violated rules, rules never exercised, sessions with violations;
        given ``memorule_id``, of that rule alone (a rule page's section).

        Raises:
            PermissionDenied: the key cannot read.
        """
        access.require_role(key, Role.READER, "read the adherence report")
        from prism_memory.services.adherence_report import AdherenceReporter

        reporter = AdherenceReporter(self.memory.deps.store, self.memorules)
        return reporter.report(ctx, viewer_persona=key.persona, memorule_id=memorule_id)
