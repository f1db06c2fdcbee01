"""The rule benchmark's data mapping, shared by Prism and the peers.

``rules.jsonl`` records become memorules as ``shared/bench/README.md`` says:
``memorule_kind`` <- ``kind_guess``; ``applies_to.surface`` <- ``surface`` (none when
``general``); ``applies_to.persona``/``scope`` <- ``persona``/``scope``. ``specialization``
is a guess the README calls informational: it is NOT mapped (mapping it would make rules
of another specialization conflict with the context and vanish).

``context`` records (descriptive text, not rules) are skipped by default, or stored as
notes (``--context notes``); memorule recall never returns notes, and no ground-truth
rule of the benchmark is a ``context`` record, so the choice cannot change the scores.

Subjects (``--subjects``; the same text for Prism and every peer, via :func:`rule_text`):

- ``importer`` (default): what ``prism import-rules`` writes, from the product's own
  ``subject_for``: the innermost heading of ``section`` (shortened to its ``CONTEXT_MAX``)
  and the body's first sentence, ``"Performance Optimization: Lazy-load images"``, with its
  de-duplication (no heading when the sentence starts with it). Rules without a section
  get the first sentence alone.
- ``plain``: the dataset's ``subject`` as it is (the mapping before the rule-subjects
  study). For most rules it already starts with the innermost heading, cut after a few
  words with "..."; the others (a bold label such as "Purpose", "Pro Tip") have none.
- ``path``: the whole heading path, ``"A > B > C: first sentence"`` (the importer's form
  with every heading, not only the innermost; a variant, not what the importer does).
- ``heading``: the dataset's subject with the innermost heading (shortened as the importer
  shortens it) put in front when it does not already start with it: the heading's share
  of ``importer`` alone (a diagnostic, not what the importer does).
"""

from __future__ import annotations

from typing import Any

GENERAL = "general"
SUBJECT_MIN = 4  # the product's bound (prism_memory.domain.validation.SUBJECT_MIN)
SUBJECT_MAX = 300
SUBJECTS = ("importer", "plain", "path", "heading")
DEFAULT_SUBJECTS = "importer"
HEADING_SEP = " > "  # how ``section`` joins the heading path


def subject_of(rule: dict[str, Any], subjects: str = DEFAULT_SUBJECTS) -> str:
    """The rule's subject under the ``subjects`` mapping (module docstring)."""
    if subjects == "plain":
        return plain_subject(rule)
    if subjects not in SUBJECTS:
        raise ValueError(f"unknown subjects mapping {subjects!r} (one of {SUBJECTS})")
    from prism_memory.formats.rules_io.records import Location, Unit
    from prism_memory.formats.rules_io.requests import CONTEXT_MAX, shorten, subject_for

    headings = tuple(h for h in (rule.get("section") or "").split(HEADING_SEP) if h.strip())
    if subjects == "heading":
        plain = plain_subject(rule)
        if not headings:
            return plain
        head = shorten(" ".join(headings[-1].split()), CONTEXT_MAX)
        return plain if plain.lower().startswith(head.lower()) else f"{head}: {plain}"[:SUBJECT_MAX]
    if subjects == "path" and headings:
        headings = (HEADING_SEP.join(headings),)
    where = Location(rule.get("source_path") or "rules", rule["line_start"], rule["line_end"])
    unit = Unit(text=rule["body"].strip(), location=where, context=headings)
    if subjects == "path":  # the importer shortens one heading to CONTEXT_MAX; a path is longer
        return path_subject(unit)
    return subject_for(unit)


def path_subject(unit: Any) -> str:
    """``subject_for`` with the whole heading path as the context, not shortened to 60."""
    from prism_memory.formats.rules_io import requests

    limit = requests.CONTEXT_MAX
    try:
        requests.CONTEXT_MAX = SUBJECT_MAX  # type: ignore[misc]
        return str(requests.subject_for(unit))
    finally:
        requests.CONTEXT_MAX = limit  # type: ignore[misc]


def plain_subject(rule: dict[str, Any]) -> str:
    """The dataset's subject; too-short ones ("ci", "DRY": 92 rules) take the body's start."""
    subject = (rule.get("subject") or "").strip()
    if len(subject) < SUBJECT_MIN:
        subject = rule["body"].strip().splitlines()[0][:80]
    return subject[:SUBJECT_MAX]


def rule_text(rule: dict[str, Any], subjects: str = DEFAULT_SUBJECTS) -> str:
    """The text every system indexes: Prism's embedding text (subject, newline, body)."""
    return f"{subject_of(rule, subjects)}\n{rule['body'].strip()}"


def rule_to_request(
    rule: dict[str, Any], context_mode: str = "skip", subjects: str = DEFAULT_SUBJECTS
) -> dict[str, Any] | None:
    """The ``prism_remember`` request for a rule (None: skipped)."""
    subject = subject_of(rule, subjects)
    if rule["kind_guess"] == "context":
        if context_mode == "skip":
            return None
        return {"kind": "note", "subject": subject, "body": rule["body"].strip()}
    applies: dict[str, str] = {"scope": rule["scope"]}
    if rule.get("surface") and rule["surface"] != GENERAL:
        applies["surface"] = rule["surface"]
    if rule.get("persona"):
        applies["persona"] = rule["persona"]
    return {
        "kind": "memorule",
        "memorule_kind": rule["kind_guess"],
        "subject": subject,
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
