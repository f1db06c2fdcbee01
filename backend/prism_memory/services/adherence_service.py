"""Judging a session against the rules it was told, and recording the verdicts (DESIGN §12).

:meth:`AdherenceService.judge` takes a session's actions (the client-neutral shape of
:mod:`prism_memory.domain.adherence.actions`, from any agent, or read from a Claude Code
transcript), judges them against every active memorule with checks that applies to the
context (:func:`~prism_memory.domain.adherence.rules.applicable`), says for each verdict
whether and when the session had been served the rule before the action (the served-receipt
chain), and — unless it is a dry run — records each ``violated`` / ``followed`` verdict as an
audit event of the rule in the tenant's hash-chained audit trail.

The event's ``reason`` is the verdict as canonical JSON (:func:`verdict_record`): commands
redacted and bounded, at most :data:`RECORD_EVIDENCE_MAX` actions of evidence, so a verdict
is content-committed by the chain hash and no door can edit it (audit events have no update
path; ``prism audit verify`` detects an edit made in the database). Judging the same session
again records only what changed: an identical verdict is an idempotent replay.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.adherence.judge import (
    FOLLOWED,
    VIOLATED,
    RuleChecks,
    Verdict,
    judge,
)
from prism_memory.domain.adherence.redact import redact_action, storable
from prism_memory.domain.adherence.rules import CheckedRule, applicable
from prism_memory.domain.records import AuditEventType, SessionContext, iso, utcnow
from prism_memory.domain.served import ServedReceipt
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.project_config import session_uuid
from prism_memory.trigraph.ledger import ServedFilter
from prism_memory.trigraph.port import IdempotencyClaim, TriGraphStore, WriteBatch

RECORD_FORMAT: Final = "prism-verdict/1"
RECORD_EVIDENCE_MAX: Final = 5  # actions of evidence kept in a recorded verdict
RECORD_MAX_CHARS: Final = 16_000  # a recorded verdict's JSON; fewer actions are kept past it
RECEIPT_PAGES_MAX: Final = 20  # 500 receipts each: what one session's lookup reads at most
EVIDENCE_SIGNAL_MAX: Final = 200
_EVENTS: Final = {VIOLATED: AuditEventType.VIOLATED, FOLLOWED: AuditEventType.FOLLOWED}


@dataclass(frozen=True)
class ServedBefore:
    """Whether, and when, the session had been served the rule before the deciding action
    (any time in the session when the verdict has no action, or the action no time)."""

    receipts: int
    first_at: datetime | None
    last_at: datetime | None
    version: int | None  # the rule version last served before the action
    action_at: datetime | None

    @property
    def served(self) -> bool:
        return self.receipts > 0

    def to_dict(self) -> dict[str, Any]:
        gap = None
        if self.first_at is not None and self.action_at is not None:
            gap = round((self.action_at - self.first_at).total_seconds() / 60, 2)
        return {
            "served": self.served,
            "receipts": self.receipts,
            "first_at": iso(self.first_at) if self.first_at else None,
            "last_at": iso(self.last_at) if self.last_at else None,
            "version": self.version,
            "action_at": iso(self.action_at) if self.action_at else None,
            "minutes_after_first_served": gap,
        }


@dataclass(frozen=True)
class JudgedRule:
    """One rule's verdict for the session; ``event_seq`` is the audit event recorded now."""

    rule: CheckedRule
    verdict: Verdict
    served_before: ServedBefore | None  # None: this store keeps no served receipts
    event_seq: int | None = None
    replayed: bool = False  # the same verdict had been recorded before

    def to_dict(self) -> dict[str, Any]:
        out = self.verdict.to_json()
        out |= {
            "version": self.rule.version,
            "enforcement": self.rule.enforcement.value,
            "at": iso(self.verdict.at) if self.verdict.at else None,
            "served_before": self.served_before.to_dict() if self.served_before else None,
        }
        if self.event_seq is not None:
            out["event_seq"] = self.event_seq
        if self.replayed:
            out["already_recorded"] = True
        return out


@dataclass(frozen=True)
class SessionJudgement:
    """What :meth:`AdherenceService.judge` found for one session."""

    session: str
    session_uuid: UUID
    cwd: str | None
    verdicts: list[JudgedRule]
    attempts: tuple[Action, ...]
    actions: int
    dry_run: bool
    recorded: int = 0
    rules_checked: int = field(default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "session_uuid": str(self.session_uuid),
            "cwd": self.cwd,
            "dry_run": self.dry_run,
            "actions": self.actions,
            "rules_checked": self.rules_checked,
            "recorded": self.recorded,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "attempts": [redact_action(a).to_json() for a in self.attempts],
        }


def verdict_record(
    judged: JudgedRule, *, client: str, session: str, session_id: UUID, ctx: SessionContext
) -> str:
    """The canonical JSON a verdict event's ``reason`` holds (the chain hashes it)."""
    verdict = judged.verdict
    evidence = [e.to_json() for e in verdict.evidence[:RECORD_EVIDENCE_MAX]]
    while True:
        body = {
            "format": RECORD_FORMAT,
            "client": storable(client),
            "session": storable(session),
            "session_uuid": str(session_id),
            "project_id": str(ctx.project_id),
            "persona": ctx.persona,
            "verdict": verdict.verdict,
            "memorule_version": judged.rule.version,
            "at": iso(verdict.at) if verdict.at else None,
            "evidence": evidence,
            "evidence_count": verdict.evidence_count,
            "served_before": judged.served_before.to_dict() if judged.served_before else None,
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if len(text) <= RECORD_MAX_CHARS or len(evidence) <= 1:
            return text
        evidence = evidence[:-1]


class AdherenceService:
    """Judge sessions; record verdicts.

    Args:
        store: the TriGraph engine (the rules with checks, the audit chain).
        memorules: audit drafts and the ledger of served receipts.
    """

    def __init__(self, store: TriGraphStore, memorules: MemoruleService) -> None:
        self.store = store
        self.memorules = memorules

    def rules(self, ctx: SessionContext) -> list[CheckedRule]:
        """The active memorules with checks that apply to ``ctx`` (its project, persona,
        surface and specialization), by memorule id."""
        return applicable(self.store.memorules_with_checks(ctx.tenant_id, ctx.project_id), ctx)

    def judge(
        self,
        ctx: SessionContext,
        session: SessionActions,
        *,
        client: str = "agent",
        dry_run: bool = False,
        rules: Sequence[CheckedRule] | None = None,
    ) -> SessionJudgement:
        """Judge ``session`` against ``rules`` (default: :meth:`rules` of ``ctx``) and, unless
        ``dry_run``, record its violated and followed verdicts.

        Args:
            ctx: the caller's context: its project and persona decide which rules apply;
                the events are written by its session.
            session: what the session did.
            client: the agent's client (``claude-code``...): with the session id it names the
                Prism session whose served receipts count (``session_uuid``).
            dry_run: judge and report, record nothing.

        Raises:
            StorageError: the engine failed.
        """
        checked = list(self.rules(ctx) if rules is None else rules)
        prism_session = session_uuid(client, session.session)
        verdicts = judge(session, [_rule_checks(r) for r in checked])
        served = self._served(ctx, prism_session)
        judged = [
            JudgedRule(rule, verdict, _served_before(served, rule.memorule_id, verdict.at))
            for rule, verdict in zip(checked, verdicts, strict=True)
        ]
        recorded = 0
        if not dry_run:
            out = []
            for one in judged:
                if one.verdict.verdict in _EVENTS:
                    one = self._record(ctx, one, client, session.session, prism_session)
                    recorded += one.event_seq is not None
                out.append(one)
            judged = out
        return SessionJudgement(
            session=session.session,
            session_uuid=prism_session,
            cwd=session.cwd,
            verdicts=judged,
            attempts=session.attempts,
            actions=len(session.actions),
            dry_run=dry_run,
            recorded=recorded,
            rules_checked=len(checked),
        )

    def _served(self, ctx: SessionContext, session: UUID) -> dict[UUID, list[ServedReceipt]] | None:
        """The session's served receipts by memorule, oldest first (None: no ledger)."""
        ledger = self.memorules.ledger
        if ledger is None:
            return None
        found: dict[UUID, list[ServedReceipt]] = {}
        cursor: int | None = None
        for _ in range(RECEIPT_PAGES_MAX):
            page = ledger.served(ctx, ServedFilter(session_id=session, after_seq=cursor, limit=500))
            for receipt in page.receipts:
                found.setdefault(receipt.memorule_id, []).append(receipt)
            cursor = page.next_cursor
            if cursor is None:
                break
        return found

    def _record(
        self, ctx: SessionContext, judged: JudgedRule, client: str, session: str, prism: UUID
    ) -> JudgedRule:
        got = self.store.get(ctx.tenant_id, judged.rule.memorule_id)
        if got is None:
            return judged  # retired or gone since it was read: nothing to hang the event on
        rule, state = got
        reason = verdict_record(judged, client=client, session=session, session_id=prism, ctx=ctx)
        now = utcnow()
        draft = self.memorules.audit_draft(
            ctx,
            rule,
            state,
            _EVENTS[judged.verdict.verdict],
            storable(f"{client}:{session}")[:EVIDENCE_SIGNAL_MAX],
            now,
            reason=reason,
        )
        digest = hashlib.sha256(f"{state.id}\n{reason}".encode()).hexdigest()
        claim = IdempotencyClaim(
            f"adherence:{digest[:48]}",
            digest,
            {"memorule_id": str(judged.rule.memorule_id), "verdict": judged.verdict.verdict},
        )
        outcome = self.store.write(
            WriteBatch(tenant_id=ctx.tenant_id, audits=[draft], idempotency=claim)
        )
        if outcome.replay is not None or not outcome.audits:
            return JudgedRule(judged.rule, judged.verdict, judged.served_before, replayed=True)
        return JudgedRule(
            judged.rule, judged.verdict, judged.served_before, event_seq=outcome.audits[0].seq
        )


def _rule_checks(rule: CheckedRule) -> RuleChecks:
    return RuleChecks(
        memorule_id=str(rule.memorule_id),
        subject=rule.subject,
        checks=rule.checks,
        version=rule.version,
        enforcement=rule.enforcement.value,
    )


def _served_before(
    served: dict[UUID, list[ServedReceipt]] | None, rule: UUID, at: datetime | None
) -> ServedBefore | None:
    if served is None:
        return None
    receipts = [r for r in served.get(rule, []) if at is None or r.served_at <= at]
    if not receipts:
        return ServedBefore(0, None, None, None, at)
    return ServedBefore(
        len(receipts), receipts[0].served_at, receipts[-1].served_at, receipts[-1].version, at
    )
