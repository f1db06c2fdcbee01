"""The rule in front of the agent at the moment of action (DESIGN §12): the ``PreToolUse``
guard's decision, and its record in the audit trail.

:meth:`GuardService.check` takes one action that has not run yet and answers which applicable
rules' checks it would break (:func:`prism_memory.domain.adherence.judge.pending`: a forbidden
command or edit, or a ``require_before`` trigger with no required command since the last
edit). The session's earlier actions are read only when a ``require_before`` needs them. What
the agent then sees follows the strictest ``enforcement`` among the rules hit: ``remind``
(the default) puts the rules in its context and lets the action go through the usual
permission flow; ``ask`` has the user confirm; ``deny`` blocks the action with the rules as
the reason. Only an admin key sets ``ask`` or ``deny`` (the write contract).

:meth:`GuardRecorder.record` writes one audit event per rule hit: ``reminded`` (remind and
ask: the action was put before the agent or the user) or ``blocked`` (deny), whose ``reason``
is the decision as canonical JSON (:func:`guard_record`: the command redacted and bounded),
so the chain commits to it and no door can edit it. A retried hook for the same tool use
writes nothing twice.

This module imports nothing heavy at import time: the guard process runs it before every
tool use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.adherence.checks import KINDS
from prism_memory.domain.adherence.judge import Hit, RuleChecks, pending
from prism_memory.domain.adherence.redact import redact_action
from prism_memory.domain.adherence.rules import CheckedRule, applicable
from prism_memory.domain.records import Enforcement, SessionContext

if TYPE_CHECKING:
    from prism_memory.services.memorule_service import MemoruleService
    from prism_memory.trigraph.port import AdherenceStore, TriGraphStore

RECORD_FORMAT: Final = "prism-guard/1"
RECORD_MAX_CHARS: Final = 16_000
CONTEXT_RULES_MAX: Final = 5  # rules spelled out in the agent's context (the rest counted)
BODY_CHARS_MAX: Final = 700
_STRICTNESS: Final = {Enforcement.REMIND: 0, Enforcement.ASK: 1, Enforcement.DENY: 2}


@dataclass(frozen=True)
class GuardDecision:
    """The rules a pending action would break, and what the guard does about it."""

    action: Action
    hits: tuple[Hit, ...] = ()
    rules: tuple[CheckedRule, ...] = ()  # the rules hit, in order, once each
    rules_read: int = 0
    broken: tuple[str, ...] = ()  # rules skipped: their stored checks cannot run

    @property
    def enforcement(self) -> Enforcement | None:
        """The strictest enforcement among the rules hit; None when nothing was hit."""
        if not self.rules:
            return None
        return max((r.enforcement for r in self.rules), key=_STRICTNESS.__getitem__)

    def hits_of(self, rule: CheckedRule) -> list[Hit]:
        return [h for h in self.hits if h.rule.memorule_id == str(rule.memorule_id)]

    def message(self) -> str:
        """The rules, as the agent (and, on ``ask``, the user) reads them."""
        what = "command" if self.action.type == "command" else "edit"
        lines = [f"Prism memorules apply to this {what}:"]
        for rule in self.rules[:CONTEXT_RULES_MAX]:
            body = " ".join(rule.body.split())
            if len(body) > BODY_CHARS_MAX:
                body = body[: BODY_CHARS_MAX - 1] + "…"
            lines.append(f"- {rule.subject} (memorule {rule.memorule_id} v{rule.version}): {body}")
            lines += [f"  check: {h.why}" for h in self.hits_of(rule)]
        if len(self.rules) > CONTEXT_RULES_MAX:
            lines.append(f"- and {len(self.rules) - CONTEXT_RULES_MAX} more rules")
        return "\n".join(lines)


class GuardService:
    """Decide on one pending action.

    Args:
        rules: the store's read of the rules with checks (the guard's light reader, or a
            full store: both are :class:`~prism_memory.trigraph.port.AdherenceStore`).
    """

    def __init__(self, rules: AdherenceStore) -> None:
        self.rules = rules

    def check(
        self,
        ctx: SessionContext,
        action: Action,
        cwd: str | None,
        history: Callable[[], SessionActions],
    ) -> GuardDecision:
        """The applicable rules ``action`` would break if it ran now.

        Args:
            ctx: who acts, where (the rules that apply to it are read).
            action: the action about to run (``ran`` is ignored).
            cwd: the session's folder (edited paths are made relative to it).
            history: the session's actions so far, without ``action``; called only when a
                ``require_before`` rule could be hit (it may read a whole transcript).

        Raises:
            StorageError: the rules cannot be read.
        """
        found, broken = _sound(
            applicable(self.rules.memorules_with_checks(ctx.tenant_id, ctx.project_id), ctx)
        )
        if not found:
            return GuardDecision(action, broken=broken)
        needs_history = action.type == "command" and any(
            c.kind == "require_before" and c.regexes[1].search(action.text)
            for rule in found
            for c in rule.checks
        )
        so_far = history() if needs_history else SessionActions(session="-", cwd=cwd)
        if so_far.cwd is None:
            so_far = SessionActions(so_far.session, cwd, so_far.actions)
        by_id = {str(r.memorule_id): r for r in found}
        hits = pending(so_far, action, [_rule_checks(r) for r in found])
        hit_rules = tuple(by_id[i] for i in dict.fromkeys(h.rule.memorule_id for h in hits))
        return GuardDecision(action, tuple(hits), hit_rules, len(found), broken)


def _sound(rules: list[CheckedRule]) -> tuple[list[CheckedRule], tuple[str, ...]]:
    """The rules whose stored checks can be run, and a line for each that cannot (a check
    broken in the database after it was written): one broken rule never silences the rest."""
    sound: list[CheckedRule] = []
    broken: list[str] = []
    for rule in rules:
        try:
            for check in rule.checks:
                if check.kind not in KINDS or not isinstance(check.pattern, str):
                    raise ValueError(f"not a check: {check.kind!r}")
                _ = check.regexes  # compiles them
        except (re.error, ValueError, TypeError) as exc:
            broken.append(f"memorule {rule.memorule_id} has a broken check ({exc}); skipped")
            continue
        sound.append(rule)
    return sound, tuple(broken)


def _rule_checks(rule: CheckedRule) -> RuleChecks:
    return RuleChecks(
        memorule_id=str(rule.memorule_id),
        subject=rule.subject,
        checks=rule.checks,
        version=rule.version,
        enforcement=rule.enforcement.value,
    )


def guard_record(
    rule: CheckedRule,
    hits: Sequence[Hit],
    action: Action,
    decision: Enforcement,
    *,
    client: str,
    session: str,
    tool_use_id: str | None,
) -> str:
    """The canonical JSON a ``reminded``/``blocked`` event's ``reason`` holds."""
    body: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "client": client,
        "session": session,
        "tool_use_id": tool_use_id,
        "decision": decision.value,
        "verdict": "violated",  # what the action would be, had it run (an attempt until then)
        "memorule_version": rule.version,
        "action": redact_action(action).to_json(),
        "checks": [h.check.to_json() for h in hits],
        "why": [h.why for h in hits],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(text) > RECORD_MAX_CHARS:
        body["checks"], body["why"] = body["checks"][:1], body["why"][:1]
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text


class GuardRecorder:
    """Record the guard's reminders and blocks as audit events of the rules hit.

    Args:
        store: the TriGraph engine (a full store: this runs after the hook has answered).
        memorules: audit drafts.
    """

    def __init__(self, store: TriGraphStore, memorules: MemoruleService) -> None:
        self.store = store
        self.memorules = memorules

    def record(
        self,
        ctx: SessionContext,
        decision: GuardDecision,
        *,
        client: str,
        session: str,
        tool_use_id: str | None,
    ) -> int:
        """One ``reminded`` or ``blocked`` event per rule hit, in one transaction.

        Returns:
            How many events were written (0 for a retried tool use already recorded).

        Raises:
            StorageError: the engine failed.
        """
        import hashlib

        from prism_memory.domain.records import AuditEventType, utcnow
        from prism_memory.trigraph.port import IdempotencyClaim, WriteBatch

        enforcement = decision.enforcement
        if enforcement is None:
            return 0
        event = (
            AuditEventType.BLOCKED if enforcement is Enforcement.DENY else AuditEventType.REMINDED
        )
        now = utcnow()
        drafts = []
        for rule in decision.rules:
            got = self.store.get(ctx.tenant_id, rule.memorule_id)
            if got is None:
                continue  # retired or gone since the hook read it
            reason = guard_record(
                rule,
                decision.hits_of(rule),
                decision.action,
                enforcement,
                client=client,
                session=session,
                tool_use_id=tool_use_id,
            )
            drafts.append(
                self.memorules.audit_draft(
                    ctx, got[0], got[1], event, f"{client}:{session}"[:200], now, reason
                )
            )
        if not drafts:
            return 0
        batch = WriteBatch(tenant_id=ctx.tenant_id, audits=drafts)
        if tool_use_id:
            key = f"guard:{client}:{session}:{tool_use_id}"
            digest = hashlib.sha256(key.encode()).hexdigest()
            batch.idempotency = IdempotencyClaim(
                f"guard:{digest[:48]}", digest, {"events": len(drafts)}
            )
        outcome = self.store.write(batch)
        return 0 if outcome.replay is not None else len(drafts)


def decision_from_record(payload: dict[str, Any]) -> tuple[GuardDecision, str, str | None]:
    """Rebuild a decision from :func:`decision_payload` (the recorder's input)."""
    from prism_memory.domain.adherence.actions import parse_session
    from prism_memory.domain.adherence.checks import parse_checks
    from prism_memory.domain.records import AppliesTo

    action = parse_session({"session": "-", "actions": [payload["action"]]}).actions[0]
    rules = []
    hits = []
    for raw in payload["rules"]:
        rule = CheckedRule(
            memorule_id=UUID(raw["memorule_id"]),
            state_id=UUID(raw["state_id"]),
            version=int(raw["version"]),
            project_id=UUID(raw["project_id"]),
            subject=raw["subject"],
            body=raw["body"],
            applies_to=AppliesTo.from_dict(raw["applies_to"]),
            checks=parse_checks(raw["checks"]),
            enforcement=Enforcement(raw["enforcement"]),
        )
        rules.append(rule)
        for hit in raw["hits"]:
            (check,) = parse_checks([hit["check"]])
            hits.append(Hit(_rule_checks(rule), check, str(hit["why"])))
    return (
        GuardDecision(action, tuple(hits), tuple(rules)),
        payload["session"],
        payload.get("tool_use_id"),
    )


def decision_payload(
    decision: GuardDecision, ctx: SessionContext, session: str, tool_use_id: str | None
) -> dict[str, Any]:
    """What the hook hands the background recorder (JSON): the decision and its context."""
    return {
        "context": {
            "tenant_id": str(ctx.tenant_id),
            "project_id": str(ctx.project_id),
            "session_id": str(ctx.session_id),
            "persona": ctx.persona,
            "surface": ctx.surface,
            "specialization": ctx.specialization,
        },
        "session": session,
        "tool_use_id": tool_use_id,
        "action": decision.action.to_json(),
        "rules": [
            {
                **rule.to_dict(),
                "hits": [
                    {"check": h.check.to_json(), "why": h.why} for h in decision.hits_of(rule)
                ],
            }
            for rule in decision.rules
        ],
    }
