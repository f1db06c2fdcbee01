"""What a heading says about the entries under it: that they are rules (it names rules,
conventions, a style, constraints, defaults…, in the languages :mod:`.cues` knows), that
they are forbidden ("What to avoid", "Verboten", "禁止事項"), that they are known mistakes
("Anti-patterns", "Code smells", "坏味道"), that they describe ("Overview", "Architecture",
a log such as "Known issues" or a dated snapshot), that they are a template's fields
— a parenthesis only qualifies a heading ("Règles de travail (portée : tout le dépôt)"
names rules) — or which kind it names outright ("Conventions").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from prism_memory.domain.records import MemoruleKind
from prism_memory.formats.rules_io import cues

_KIND_HEADINGS: Final[dict[str, MemoruleKind]] = {
    "behavioral rules": MemoruleKind.BEHAVIORAL_RULE,
    "behavioural rules": MemoruleKind.BEHAVIORAL_RULE,
    "conventions": MemoruleKind.CONVENTION,
    "preferences": MemoruleKind.PREFERENCE,
    "corrections": MemoruleKind.CORRECTION,
    "feedback": MemoruleKind.FEEDBACK,
}
CORRECTION_HEADING: Final = re.compile(
    r"\b(?:anti-?patterns?|common (?:mistakes|errors|issues)|mistakes|gotchas|pitfalls"
    r"|corrections|don'?ts|code smells?)\b|坏味道|代码异味|コードスメル|코드 ?스멜",
    re.IGNORECASE,
)
_RULE_HEADING: Final = re.compile(
    r"\b(?:rules?|guidelines?|instructions?|requirements?|standards?|conventions?|style"
    r"|practices|workflow|checklist|criteria|principles|do not|must|policy|policies|naming"
    r"|constraints|guardrails|do'?s|expectations|preferences|preferred)\b",
    re.IGNORECASE,
)
_DESCRIPTIVE_HEADING: Final = re.compile(
    r"\b(?:overview|architecture|structure|about|what is|purpose|background|introduction"
    r"|references?|database|glossary|scope|design"
    r"|how it works|project map|examples?|future|roadmap|planned|upcoming)\b",
    re.IGNORECASE,
)
_QUALIFIER: Final = re.compile(r"[(（][^()（）\n]{0,80}[)）]")


def names_rules(heading: str) -> bool:
    """The heading names rules, conventions, a style, constraints or defaults."""
    return bool(_RULE_HEADING.search(heading) or cues.RULE_HEADING.search(heading))


def rule_headed(headings: Sequence[str]) -> bool:
    """A heading of the path names rules, a style or a prohibition."""
    return any(names_rules(h) or negating(h) for h in headings)


def unqualified(heading: str) -> str:
    """The heading without the parentheses that qualify it ("Règles de travail (portée :
    tout le dépôt)" names "Règles de travail"); the heading itself when that is all it is."""
    return _QUALIFIER.sub(" ", heading).strip() or heading


def describes(heading: str) -> bool:
    """The heading names what describes ("Overview", "Architektur", "概要")."""
    main = unqualified(heading)
    if logs(heading):
        return True  # a log or a dated snapshot ("Current focus (June 2026)")
    if names_rules(main) and not cues.WHY_HEADING.match(main):
        return False  # "Architecture rules", "架构硬约束": rules about the thing described
    return _describes(main)


def mixed(heading: str) -> bool:
    """The heading names rules and what describes at once ("Architecture & Conventions",
    "아키텍처 원칙"): its entries may be either, and their own wording tells which."""
    main = unqualified(heading)
    return names_rules(main) and _describes(main) and not cues.WHY_HEADING.match(main)


def _describes(main: str) -> bool:
    return bool(_DESCRIPTIVE_HEADING.search(main) or cues.DESCRIPTIVE_HEADING.search(main))


def logs(heading: str) -> bool:
    """The heading names a log ("In progress", "Known issues", "В работе") or is dated like a
    snapshot ("Current focus (June 2026)"), and names no rules ("Coding rules (2025)")."""
    return bool(cues.STATUS_HEADING.search(heading)) and not names_rules(heading)


def template(heading: str) -> bool:
    """The heading names a template to fill ("Prompt-Optimierung (Template)"), not the steps
    of a task ("Workflow templates") nor rules ("Template conventions"): its entries are the
    fields."""
    return bool(cues.TEMPLATE_HEADING.search(heading)) and not (
        cues.PROCEDURE_HEADING.search(heading) or names_rules(heading)
    )


def correcting(heading: str) -> bool:
    """The heading names known mistakes ("Anti-patterns", "Common mistakes", "Code smells")."""
    return bool(CORRECTION_HEADING.search(heading))


def negating(heading: str) -> bool:
    """A heading that negates the entries under it ("What to avoid", "Verboten", "禁止事項")."""
    return bool(cues.NEGATING_HEADING.search(heading) or CORRECTION_HEADING.search(heading))


def kind_of_heading(heading: str) -> MemoruleKind | None:
    """The kind a heading names outright ("Conventions"), or None."""
    plain = " ".join(heading.strip().lstrip("#>").strip().replace("**", "").split())
    return _KIND_HEADINGS.get(plain.strip(" :").lower())
