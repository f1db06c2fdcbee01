"""What operators see of adherence (DESIGN §12): per rule and per project, from the chains.

Per rule with checks: how many sessions it was *served* to (the served-receipt chain), how
many sessions *exercised* it (a recorded ``followed`` or ``violated`` verdict), how many
*violated* it (their newest verdict), and the last violation with its evidence. Per project:
the most-violated rules, the rules never exercised, and the sessions with violations.

Everything is read from the tenant's audit events (``followed``/``violated``, whose reason is
the recorded verdict JSON) and served receipts of the project; a session judged several times
counts once, by its newest verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import AuditEventType, MemoruleAudit, Scope, SessionContext, iso
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.trigraph.ledger import ServedFilter
from prism_memory.trigraph.port import AuditFilter, TriGraphStore

EVENT_PAGES_MAX: Final = 40  # 500 verdict events a page, newest first
RECEIPT_PAGES_MAX: Final = 20  # 500 served receipts a page per rule
SESSIONS_SHOWN: Final = 50
MOST_VIOLATED_SHOWN: Final = 10
_VERDICTS: Final = (AuditEventType.VIOLATED, AuditEventType.FOLLOWED)


@dataclass(frozen=True)
class RuleAdherence:
    """One rule's figures; ``last_violation`` is its newest recorded violation."""

    rule: CheckedRule
    served_sessions: int
    exercised_sessions: int
    violated_sessions: int
    followed_sessions: int
    last_violation: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "memorule_id": str(self.rule.memorule_id),
            "subject": self.rule.subject,
            "version": self.rule.version,
            "enforcement": self.rule.enforcement.value,
            "checks": self.rule.to_dict()["checks"],
            "served_sessions": self.served_sessions,
            "exercised_sessions": self.exercised_sessions,
            "violated_sessions": self.violated_sessions,
            "followed_sessions": self.followed_sessions,
            "last_violation": self.last_violation,
        }


@dataclass(frozen=True)
class AdherenceReport:
    """The project's adherence: every rule with checks, and the sessions with violations."""

    project_id: UUID
    rules: list[RuleAdherence]
    sessions_with_violations: list[dict[str, Any]]
    verdict_events: int
    complete: bool  # False: more verdict events than one report reads (the newest were read)

    def to_dict(self) -> dict[str, Any]:
        violated = sorted(
            (r for r in self.rules if r.violated_sessions),
            key=lambda r: (-r.violated_sessions, r.rule.subject),
        )
        return {
            "project_id": str(self.project_id),
            "rules": [r.to_dict() for r in self.rules],
            "most_violated": [
                {
                    "memorule_id": str(r.rule.memorule_id),
                    "subject": r.rule.subject,
                    "violated_sessions": r.violated_sessions,
                    "exercised_sessions": r.exercised_sessions,
                }
                for r in violated[:MOST_VIOLATED_SHOWN]
            ],
            "never_exercised": [
                {"memorule_id": str(r.rule.memorule_id), "subject": r.rule.subject}
                for r in self.rules
                if not r.exercised_sessions
            ],
            "sessions_with_violations": self.sessions_with_violations,
            "verdict_events": self.verdict_events,
            "complete": self.complete,
        }


def visible_to(rule: CheckedRule, persona: str | None) -> bool:
    """Whether a viewer bound to ``persona`` may see ``rule`` (a persona-scope rule only
    by its own persona; an unbound viewer sees every rule of the project)."""
    if persona is None or rule.applies_to.effective_scope is not Scope.PERSONA:
        return True
    return normalise_key(rule.applies_to.persona) == normalise_key(persona)


class AdherenceReporter:
    """Build :class:`AdherenceReport`\\ s.

    Args:
        store: the TriGraph engine.
        memorules: the ledger of served receipts.
    """

    def __init__(self, store: TriGraphStore, memorules: MemoruleService) -> None:
        self.store = store
        self.memorules = memorules

    def report(
        self,
        ctx: SessionContext,
        viewer_persona: str | None = None,
        memorule_id: UUID | None = None,
    ) -> AdherenceReport:
        """The adherence of ``ctx``'s project (rules with checks visible from it); given
        ``memorule_id``, of that rule alone (no rule when it has no checks or is not seen).

        Raises:
            StorageError: the engine failed.
        """
        rules = [
            r
            for r in self.store.memorules_with_checks(ctx.tenant_id, ctx.project_id)
            if visible_to(r, viewer_persona)
            and (memorule_id is None or r.memorule_id == memorule_id)
        ]
        ids = {r.memorule_id for r in rules}
        newest, events, complete = self._newest_verdicts(ctx, ids)
        by_rule: dict[UUID, list[tuple[str, MemoruleAudit, dict[str, Any]]]] = {}
        for (rule_id, session), (event, record) in newest.items():
            by_rule.setdefault(rule_id, []).append((session, event, record))
        figures = [self._figures(ctx, r, by_rule.get(r.memorule_id, [])) for r in rules]
        subjects = {r.memorule_id: r.subject for r in rules}
        return AdherenceReport(
            ctx.project_id, figures, _sessions(newest, subjects), events, complete
        )

    def _newest_verdicts(
        self, ctx: SessionContext, ids: set[UUID]
    ) -> tuple[dict[tuple[UUID, str], tuple[MemoruleAudit, dict[str, Any]]], int, bool]:
        """(rule, session) -> its newest verdict event of this project, and the count read."""
        newest: dict[tuple[UUID, str], tuple[MemoruleAudit, dict[str, Any]]] = {}
        cursor: int | None = None
        read = 0
        for _ in range(EVENT_PAGES_MAX):
            page = self.store.audit_events(
                ctx.tenant_id, AuditFilter(events=_VERDICTS, before_seq=cursor, limit=500)
            )
            for event in page:
                read += 1
                record = _record(event)
                if record is None or event.memorule_id not in ids:
                    continue
                if record.get("project_id") != str(ctx.project_id):
                    continue
                session = f"{record.get('client')}:{record.get('session')}"
                newest.setdefault((event.memorule_id, session), (event, record))
            if len(page) < 500:
                return newest, read, True
            cursor = page[-1].seq
        return newest, read, False

    def _figures(
        self,
        ctx: SessionContext,
        rule: CheckedRule,
        sessions: list[tuple[str, MemoruleAudit, dict[str, Any]]],
    ) -> RuleAdherence:
        violated = [(s, e, r) for s, e, r in sessions if e.event is AuditEventType.VIOLATED]
        last = max(violated, key=lambda x: x[1].seq, default=None)
        last_violation = None
        if last is not None:
            _session, event, record = last
            last_violation = {
                "session": record.get("session"),
                "client": record.get("client"),
                "at": record.get("at"),
                "recorded_at": iso(event.written_at),
                "event_seq": event.seq,
                "memorule_version": record.get("memorule_version"),
                "evidence": record.get("evidence", []),
                "evidence_count": record.get("evidence_count"),
                "served_before": record.get("served_before"),
            }
        return RuleAdherence(
            rule=rule,
            served_sessions=self._served_sessions(ctx, rule.memorule_id),
            exercised_sessions=len(sessions),
            violated_sessions=len(violated),
            followed_sessions=len(sessions) - len(violated),
            last_violation=last_violation,
        )

    def _served_sessions(self, ctx: SessionContext, rule: UUID) -> int:
        ledger = self.memorules.ledger
        if ledger is None:
            return 0
        sessions: set[UUID] = set()
        cursor: int | None = None
        for _ in range(RECEIPT_PAGES_MAX):
            page = ledger.served(ctx, ServedFilter(memorule_id=rule, after_seq=cursor, limit=500))
            sessions.update(r.session_id for r in page.receipts if r.project_id == ctx.project_id)
            cursor = page.next_cursor
            if cursor is None:
                break
        return len(sessions)


def _record(event: MemoruleAudit) -> dict[str, Any] | None:
    try:
        value = json.loads(event.reason or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _sessions(
    newest: dict[tuple[UUID, str], tuple[MemoruleAudit, dict[str, Any]]],
    subjects: dict[UUID, str],
) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    last_seen: dict[str, datetime] = {}
    for (rule_id, session), (event, record) in newest.items():
        if event.event is not AuditEventType.VIOLATED:
            continue
        entry = found.setdefault(
            session,
            {"session": record.get("session"), "client": record.get("client"), "rules": []},
        )
        entry["rules"].append({"memorule_id": str(rule_id), "subject": subjects.get(rule_id)})
        if session not in last_seen or event.written_at > last_seen[session]:
            last_seen[session] = event.written_at
    ordered = sorted(found, key=lambda s: last_seen[s], reverse=True)[:SESSIONS_SHOWN]
    out = []
    for session in ordered:
        entry = found[session]
        entry["rules"].sort(key=lambda r: r["memorule_id"])
        out.append(entry | {"last_recorded_at": iso(last_seen[session])})
    return out
