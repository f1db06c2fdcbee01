"""Judging a session's actions against the checks of the rules it was told (DESIGN §12).

:func:`judge` gives one :class:`Verdict` per rule, after the session; :func:`pending` answers
for one action that has not run yet (the guard hook's question). Both are pure and read only
actions that ran: an *attempt* (``ran: false``) is never a violation, never a trigger, never a
satisfier, and a refused edit is not "the last edit".

The verdicts, per rule:

- ``violated`` — any of its checks is violated; the evidence is the actions that violate it;
- ``followed`` — else, a ``require_*`` check was triggered and satisfied; the evidence is the
  satisfied triggers;
- ``not_exercised`` — else (nothing forbidden happened, nothing required was triggered).

What each check asks:

- ``forbid_command``: no command that ran matches (``re.search`` on the whole command as sent,
  ``&&`` and newlines included);
- ``forbid_edit``: no edit that ran is of a file the glob names (:mod:`.paths`);
- ``require_before``: every command matching ``before`` is preceded by a command matching
  ``command`` that ran after the last edit before it (any edit that ran, sidechains
  included), or after the session start when nothing was edited yet. A command matching both
  (``make test && git commit``) does not precede itself, but precedes the commands after it;
- ``require_edit_with``: when an edit of a file matching ``edit`` ran, an edit of a file
  matching ``also`` ran too, before or after it, in the same session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.adherence.checks import Check
from prism_memory.domain.adherence.paths import glob_matches, session_path
from prism_memory.domain.adherence.redact import redact_action

VerdictKind = Literal["violated", "followed", "not_exercised"]
VIOLATED: Final = "violated"
FOLLOWED: Final = "followed"
NOT_EXERCISED: Final = "not_exercised"
EVIDENCE_MAX: Final = 20  # actions kept as the evidence of one verdict (the count is kept too)


@dataclass(frozen=True)
class RuleChecks:
    """A rule as the judge sees it: its id, subject, checks and how the guard enforces it."""

    memorule_id: str
    subject: str
    checks: tuple[Check, ...]
    version: int | None = None
    enforcement: str = "remind"


@dataclass(frozen=True)
class Evidence:
    """One action that decided a verdict: ``index`` is its place in the session's actions."""

    check: Check
    action: Action
    index: int
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check.to_json(),
            "index": self.index,
            "action": redact_action(self.action).to_json(),
            "why": self.why,
        }


@dataclass(frozen=True)
class Verdict:
    """The verdict on one rule for one session. ``at`` is when the deciding action happened
    (the first violating action, or the first satisfied trigger); ``evidence_count`` counts
    every such action, of which at most :data:`EVIDENCE_MAX` are kept."""

    rule: RuleChecks
    verdict: VerdictKind
    evidence: tuple[Evidence, ...] = ()
    evidence_count: int = 0
    at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "memorule_id": self.rule.memorule_id,
            "subject": self.rule.subject,
            "verdict": self.verdict,
            "evidence": [e.to_json() for e in self.evidence],
            "evidence_count": self.evidence_count,
        }


@dataclass(frozen=True)
class Hit:
    """A check that a pending action would violate: what the guard puts in front of the
    agent before the tool runs."""

    rule: RuleChecks
    check: Check
    why: str


@dataclass
class _Findings:
    violations: list[Evidence] = field(default_factory=list)
    satisfied: list[Evidence] = field(default_factory=list)


def judge(session: SessionActions, rules: Sequence[RuleChecks]) -> list[Verdict]:
    """One verdict per rule, in the order of ``rules``."""
    ran = [(i, a) for i, a in enumerate(session.actions) if a.ran]
    return [_verdict(rule, ran, session.cwd) for rule in rules]


def pending(
    session_so_far: SessionActions, action: Action, rules: Sequence[RuleChecks]
) -> list[Hit]:
    """The checks ``action`` would violate if it ran now, after ``session_so_far``.

    A ``forbid_*`` match is a hit; so is a command matching a ``require_before``'s ``before``
    with no command matching its ``command`` since the last edit (the action itself does not
    count as its own predecessor). ``require_edit_with`` is never a hit here: its ``also``
    may still come later.
    """
    ran = [a for a in session_so_far.actions if a.ran]
    hits: list[Hit] = []
    for rule in rules:
        for check in rule.checks:
            why = _pending_why(check, ran, action, session_so_far.cwd)
            if why is not None:
                hits.append(Hit(rule, check, why))
    return hits


def _pending_why(check: Check, ran: list[Action], action: Action, cwd: str | None) -> str | None:
    if check.kind == "forbid_command" and action.type == "command":
        if check.regexes[0].search(action.text):
            return f"a command matching `{check.pattern}` is forbidden"
    elif check.kind == "forbid_edit" and action.type == "edit":
        if glob_matches(check.pattern, session_path(action.text, cwd)):
            return f"editing files matching `{check.pattern}` is forbidden"
    elif check.kind == "require_before" and action.type == "command":
        command, before = check.regexes
        if before.search(action.text) and not _satisfied_now(ran, command):
            return _missing(check)
    return None


def _satisfied_now(ran: list[Action], command: re.Pattern[str]) -> bool:
    """Whether a command matching ``command`` ran after the last edit in ``ran``."""
    for action in reversed(ran):
        if action.type == "edit":
            return False
        if command.search(action.text):
            return True
    return False


def _missing(check: Check) -> str:
    return f"`{check.trigger}` needs `{check.pattern}` first, run after the last edit"


def _verdict(rule: RuleChecks, ran: list[tuple[int, Action]], cwd: str | None) -> Verdict:
    found = _Findings()
    for check in rule.checks:
        if check.kind == "forbid_command":
            _forbid_command(check, ran, found)
        elif check.kind == "forbid_edit":
            _forbid_edit(check, ran, cwd, found)
        elif check.kind == "require_before":
            _require_before(check, ran, found)
        elif check.kind == "require_edit_with":
            _require_edit_with(check, ran, cwd, found)
    if found.violations:
        return _decided(rule, VIOLATED, found.violations)
    if found.satisfied:
        return _decided(rule, FOLLOWED, found.satisfied)
    return Verdict(rule, NOT_EXERCISED)


def _decided(rule: RuleChecks, kind: VerdictKind, evidence: list[Evidence]) -> Verdict:
    ordered = sorted(evidence, key=lambda e: e.index)
    return Verdict(
        rule,
        kind,
        tuple(ordered[:EVIDENCE_MAX]),
        evidence_count=len(ordered),
        at=ordered[0].action.at,
    )


def _forbid_command(check: Check, ran: list[tuple[int, Action]], found: _Findings) -> None:
    (regex,) = check.regexes
    for i, action in ran:
        if action.type == "command" and regex.search(action.text):
            found.violations.append(
                Evidence(check, action, i, f"ran a command matching `{check.pattern}`")
            )


def _forbid_edit(
    check: Check, ran: list[tuple[int, Action]], cwd: str | None, found: _Findings
) -> None:
    for i, action in ran:
        if action.type == "edit" and glob_matches(check.pattern, session_path(action.text, cwd)):
            found.violations.append(
                Evidence(check, action, i, f"edited a file matching `{check.pattern}`")
            )


def _require_before(check: Check, ran: list[tuple[int, Action]], found: _Findings) -> None:
    command, before = check.regexes
    satisfier: int | None = None  # the last command matching `command` since the last edit
    for i, action in ran:
        if action.type == "edit":
            satisfier = None
            continue
        if before.search(action.text):
            if satisfier is None:
                found.violations.append(Evidence(check, action, i, _missing(check)))
            else:
                why = f"preceded by action {satisfier} matching `{check.pattern}`"
                found.satisfied.append(Evidence(check, action, i, why))
        # Checked after the trigger: a command matching both does not precede itself.
        if command.search(action.text):
            satisfier = i


def _require_edit_with(
    check: Check, ran: list[tuple[int, Action]], cwd: str | None, found: _Findings
) -> None:
    assert check.trigger is not None
    triggers: list[tuple[int, Action]] = []
    partner: int | None = None
    for i, action in ran:
        if action.type != "edit":
            continue
        path = session_path(action.text, cwd)
        if glob_matches(check.trigger, path):
            triggers.append((i, action))
        if partner is None and glob_matches(check.pattern, path):
            partner = i
    for i, action in triggers:
        if partner is None:
            why = f"edited `{check.trigger}` with no edit of `{check.pattern}` in the session"
            found.violations.append(Evidence(check, action, i, why))
        else:
            why = f"an edit matching `{check.pattern}` came with it (action {partner})"
            found.satisfied.append(Evidence(check, action, i, why))
