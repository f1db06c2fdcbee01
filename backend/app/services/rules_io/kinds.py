"""A deterministic ``memorule_kind`` guesser (no model): keyword and sentence-shape rules.

Order of the tests, first hit wins:

1. ``feedback`` — a reaction to something done ("Feedback:", "last time you...").
2. ``correction`` — a mistake and the right move ("mistake", "wrong", "deprecated",
   "no longer", "pitfall", "instead of ... which").
3. ``preference`` — "prefer", "favour", "ideally", "where possible", "consider"...
4. ``behavioral_rule`` — a hard modal: always, never, must, don't, do not, shall, required.
5. ``convention`` — a project pattern: naming, layout, formatting, "lives in", "we use",
   or a labelled command ("Installation: `uv add <package>`").
6. ``behavioral_rule`` — a softer instruction: should, ensure, avoid, or an imperative verb
   first ("Use pytest", "Run make lint").
7. otherwise ``None``: descriptive text ("context"), kept as a note or skipped.

A heading that names a kind ("## Conventions", "## Common mistakes") decides instead.
"""

from __future__ import annotations

import re
from typing import Final

from app.domain.records import MemoruleKind

_FEEDBACK: Final = re.compile(
    r"^\W*feedback\b|\blast time\b|\byou (?:did|forgot|keep|kept|used|wrote|missed)\b"
    r"|\b(?:reviewer|operator|user) (?:said|noted|asked|complained|pointed out)\b",
    re.IGNORECASE,
)
_CORRECTION: Final = re.compile(
    r"\b(?:mistakes?|wrong(?:ly)?|incorrect(?:ly)?|pitfalls?|gotchas?|deprecated|no longer"
    r"|common errors?|anti-?patterns?|used to be|was broken|correction)\b"
    r"|^\W*(?:fix|bug|correction)\s*:",
    re.IGNORECASE,
)
_PREFERENCE: Final = re.compile(
    r"\b(?:prefer(?:s|red|ably|ence)?|favou?r(?:s|ed)?|ideally|where possible|when possible"
    r"|if possible|whenever possible|consider|opt for|lean (?:towards|toward)|better to"
    r"|it'?s best|recommended|rather than|try to)\b",
    re.IGNORECASE,
)
_HARD_RULE: Final = re.compile(
    r"\b(?:always|never|must|mustn'?t|don'?t|do not|does not|shall|required|mandatory"
    r"|under no circumstances|forbidden|prohibited|not allowed"
    r"|you (?:will|need to|have to)|it(?:'s| is) (?:important|critical|essential) to)\b"
    r"|^\W*(?:no|only)\s|^\W*(?:important|critical)\b",
    re.IGNORECASE,
)
_CONVENTION: Final = re.compile(
    r"\b(?:conventions?|conventional commits|naming|named|names? (?:files|variables|functions"
    r"|classes|tests|branches)|file ?names?|folders?|director(?:y|ies)|layout|located"
    r"|lives? (?:in|under)|goes (?:in|under)|(?:camel|snake|kebab|pascal|screaming)[ _-]?case"
    r"|prefix(?:ed)?|suffix(?:ed)?|format(?:ted|ting)?|formatter|code style|style guide"
    r"|indent(?:ation|ed)?|commit messages?|branch names?|we (?:use|name|put|keep))\b",
    re.IGNORECASE,
)
_SOFT_RULE: Final = re.compile(
    r"\b(?:should(?:n'?t)?|ensure|make sure|avoid|need to|needs to|have to|has to)\b",
    re.IGNORECASE,
)
_LEAD: Final = re.compile(r"^[\W_]*(?:[\w /&.-]{1,40}:\s+)?(?P<word>[A-Za-z][A-Za-z'-]*)")
# "When you change X, run Y": the instruction follows a leading clause.
_CLAUSE_LEAD: Final = re.compile(
    r"^\W*(?:when|whenever|if|before|after|once|while|during|unless|for|in|on)\b"
    r"[^,.;:]{1,80},\s*(?P<word>[A-Za-z][A-Za-z'-]*)",
    re.IGNORECASE,
)
# "Installation: `uv add <package>`": how a thing is done here.
_LABELLED_CODE: Final = re.compile(r"^[\w /().-]{2,40}:\s+.*`[^`]+`")
_IMPERATIVE: Final = frozenset(
    """
    add annotate apply ask avoid await batch be benchmark break build bump cache call catch get
    check choose cite clean close comment commit configure confirm consult copy create declare
    default define delete deploy describe do document don't double-check emit enable enforce
    escape explain export expose extract favor favour fetch follow format generate group guard
    handle hash implement import include inject install isolate keep leave let limit lint list
    load lock log make mark match measure mention merge migrate mirror mock move name note
    open optimize parse pass pick pin place plan prefer prefix print profile prompt publish
    push put raise read rebase refer refactor release reload remove rename render replace reply
    report require respond retry return reuse review run sanitize save search select send
    separate serialize set show sign sort split squash start state stay stick stop store
    structure suffix summarize support tag target test think throw track type update upgrade
    use validate verify wrap write
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_QUESTION: Final = re.compile(r"\?\s*$")

# Headings that name a kind: the author has classified what is under them.
_KIND_HEADINGS: Final[dict[str, MemoruleKind]] = {
    "behavioral rules": MemoruleKind.BEHAVIORAL_RULE,
    "behavioral rule": MemoruleKind.BEHAVIORAL_RULE,
    "behavioural rules": MemoruleKind.BEHAVIORAL_RULE,
    "rules": MemoruleKind.BEHAVIORAL_RULE,
    "conventions": MemoruleKind.CONVENTION,
    "convention": MemoruleKind.CONVENTION,
    "preferences": MemoruleKind.PREFERENCE,
    "preference": MemoruleKind.PREFERENCE,
    "corrections": MemoruleKind.CORRECTION,
    "correction": MemoruleKind.CORRECTION,
    "feedback": MemoruleKind.FEEDBACK,
}
# Headings that only lean: they decide the kind of text that reads as an instruction.
_LEANING_HEADINGS: Final = (
    (re.compile(r"\b(?:gotchas?|pitfalls?|mistakes?|anti-?patterns?)\b", re.I), "correction"),
    (re.compile(r"\b(?:naming|code style|style guide|conventions?)\b", re.I), "convention"),
)

KIND_TITLES: Final[dict[MemoruleKind, str]] = {
    MemoruleKind.BEHAVIORAL_RULE: "Behavioral rules",
    MemoruleKind.CONVENTION: "Conventions",
    MemoruleKind.PREFERENCE: "Preferences",
    MemoruleKind.CORRECTION: "Corrections",
    MemoruleKind.FEEDBACK: "Feedback",
}


def kind_of_heading(heading: str) -> MemoruleKind | None:
    """The kind a heading names outright ("Conventions"), or None."""
    return _KIND_HEADINGS.get(_plain(heading).lower())


def guess_kind(text: str, heading: str | None = None) -> MemoruleKind | None:
    """Guess a rule's kind from its text; None means descriptive text, not a rule.

    Args:
        text: the rule text (its first line weighs most; code blocks are ignored).
        heading: the innermost heading it sits under, which can tip an instruction's kind.
    """
    prose = _prose(text)
    if not prose or _QUESTION.search(prose.split("\n", 1)[0]):
        return None
    if _FEEDBACK.search(prose):
        return MemoruleKind.FEEDBACK
    if _CORRECTION.search(prose):
        return MemoruleKind.CORRECTION
    if _PREFERENCE.search(prose):
        return MemoruleKind.PREFERENCE
    leaning = _leaning(heading)
    if _HARD_RULE.search(prose):
        return leaning or MemoruleKind.BEHAVIORAL_RULE
    if _CONVENTION.search(prose) and (_instruction(prose) or _descriptive_convention(prose)):
        return MemoruleKind.CONVENTION
    if _LABELLED_CODE.match(prose) and not _instruction(prose):
        return MemoruleKind.CONVENTION
    if _instruction(prose):
        return leaning or MemoruleKind.BEHAVIORAL_RULE
    return None


def _leaning(heading: str | None) -> MemoruleKind | None:
    for pattern, kind in _LEANING_HEADINGS:
        if heading and pattern.search(heading):
            return MemoruleKind(kind)
    return None


def _instruction(prose: str) -> bool:
    if _SOFT_RULE.search(prose):
        return True
    for pattern in (_LEAD, _CLAUSE_LEAD):
        lead = pattern.match(prose)
        if lead is not None and lead["word"].lower() in _IMPERATIVE:
            return True
    return False


def _descriptive_convention(prose: str) -> bool:
    return bool(
        re.search(
            r"\b(?:are|is) (?:named|kept|stored|located|formatted|written)\b|\blives? in\b"
            r"|\bgoes in\b|\bby convention\b|\bwe (?:use|name|put|keep)\b|\bconvention\b",
            prose,
            re.IGNORECASE,
        )
    )


def _prose(text: str) -> str:
    """The text without fenced code, emphasis markers and surrounding space."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return _plain("\n".join(lines))


def _plain(text: str) -> str:
    return re.sub(r"(\*\*|__|~~)", "", text).strip().strip("#").strip()
