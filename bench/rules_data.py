"""The rule benchmark's data mapping, shared by Prism and the peers.

``rules.jsonl`` records become memorules as ``shared/bench/README.md`` says:
``memorule_kind`` <- ``kind_guess``; ``applies_to.surface`` <- ``surface`` (none when
``general``); ``applies_to.persona``/``scope`` <- ``persona``/``scope``. ``specialization``
is a guess the README calls informational: it is NOT mapped (mapping it would make rules
of another specialization conflict with the context and vanish).

``context`` records (descriptive text, not rules) are skipped by default, or stored as
notes (``--context notes``); memorule recall never returns notes, and no ground-truth
rule of the benchmark is a ``context`` record, so the choice cannot change the scores.
"""

from __future__ import annotations

from typing import Any

GENERAL = "general"
SUBJECT_MIN = 4  # the product's bound (app.domain.validation.SUBJECT_MIN)
SUBJECT_MAX = 300


def subject_of(rule: dict[str, Any]) -> str:
    """The rule's subject; too-short ones ("ci", "DRY": 92 rules) take the body's start."""
    subject = (rule.get("subject") or "").strip()
    if len(subject) < SUBJECT_MIN:
        subject = rule["body"].strip().splitlines()[0][:80]
    return subject[:SUBJECT_MAX]


def rule_text(rule: dict[str, Any]) -> str:
    """The text every system indexes: Prism's embedding text (subject, newline, body)."""
    return f"{subject_of(rule)}\n{rule['body'].strip()}"


def rule_to_request(rule: dict[str, Any], context_mode: str = "skip") -> dict[str, Any] | None:
    """The ``prism_remember`` request for a rule (None: skipped)."""
    if rule["kind_guess"] == "context":
        if context_mode == "skip":
            return None
        return {"kind": "note", "subject": subject_of(rule), "body": rule["body"].strip()}
    applies: dict[str, str] = {"scope": rule["scope"]}
    if rule.get("surface") and rule["surface"] != GENERAL:
        applies["surface"] = rule["surface"]
    if rule.get("persona"):
        applies["persona"] = rule["persona"]
    return {
        "kind": "memorule",
        "memorule_kind": rule["kind_guess"],
        "subject": subject_of(rule),
        "body": rule["body"].strip(),
        "applies_to": applies,
    }


def is_rule(rule: dict[str, Any]) -> bool:
    return bool(rule["kind_guess"] != "context")


def applies(rule: dict[str, Any], ctx: dict[str, Any]) -> bool:
    """What a fair user of a peer filters on: Prism's visibility and applicability.

    A rule applies when its surface is the context's or general, and it is a global rule
    or a persona rule of the context's persona.
    """
    surface_ok = rule["surface"] in (GENERAL, ctx.get("surface"))
    if rule["scope"] == "persona":
        return surface_ok and rule.get("persona") == ctx.get("persona")
    return surface_ok
