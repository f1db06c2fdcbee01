"""The memorules with checks a session is judged or guarded against (DESIGN §12). Pure.

The store lists a project's active memorules whose current version carries checks
(:meth:`~prism_memory.trigraph.port.AdherenceStore.memorules_with_checks`: the project's own
and the tenant's ``global``/``org`` rules, nothing embedded, no model loaded);
:func:`applicable` keeps those that apply to a context, with recall's rules: a ``persona``
scope rule only for its persona, and no rule naming another persona, surface or
specialization than the context does (a key the context leaves open conflicts with nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from prism_memory.domain.adherence.checks import Check, checks_json
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    AppliesTo,
    Enforcement,
    Scope,
    SessionContext,
)


def _key(value: str | None) -> str | None:
    # recall's comparison (ranking_why.normalise_key), kept here so the guard's process
    # imports no ranking (numpy) code
    return value.strip().lower() if value else None


@dataclass(frozen=True)
class CheckedRule:
    """An active memorule's current version that carries checks: what the judge and the
    guard need of it, and no more."""

    memorule_id: UUID
    state_id: UUID
    version: int
    project_id: UUID
    subject: str
    body: str
    applies_to: AppliesTo
    checks: tuple[Check, ...]
    enforcement: Enforcement = Enforcement.REMIND

    def to_dict(self) -> dict[str, Any]:
        return {
            "memorule_id": str(self.memorule_id),
            "state_id": str(self.state_id),
            "version": self.version,
            "project_id": str(self.project_id),
            "subject": self.subject,
            "body": self.body,
            "applies_to": self.applies_to.to_dict(),
            "checks": checks_json(self.checks),
            "enforcement": self.enforcement.value,
        }


def applies(rule: CheckedRule, ctx: SessionContext) -> bool:
    """Whether ``rule`` (visible from ``ctx``'s project) applies to ``ctx``, as recall
    decides: a persona-scope rule only in its project for its persona; no applies_to key
    names another value than the context's."""
    a = rule.applies_to
    if a.scope in (Scope.GLOBAL, Scope.ORG):
        pass
    elif rule.project_id != ctx.project_id:
        return False
    elif a.scope is Scope.PERSONA:
        persona = _key(ctx.persona)
        if persona is None or _key(a.persona) != persona:
            return False
    for key in APPLIES_TO_KEYS:
        wanted = _key(ctx.value(key))
        named = _key(getattr(a, key))
        if wanted is not None and named is not None and named != wanted:
            return False
    return True


def applicable(rules: Iterable[CheckedRule], ctx: SessionContext) -> list[CheckedRule]:
    """The rules that apply to ``ctx`` (see :func:`applies`), in the order given."""
    return [r for r in rules if applies(r, ctx)]
