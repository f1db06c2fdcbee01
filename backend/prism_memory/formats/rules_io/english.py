"""The English imperative: which word an English instruction opens with.

An English rule opens with its verb ("Run the tests", "Never push to main"), after what may
come before it: a label ("Testing: run …"), a clause that says when ("If you add X, Y or
Z, clean up …", where the verb may follow a later comma), fillers ("Then", "Also") and an
adverb ("Explicitly ask …"). :func:`lead_word` finds that word; :data:`IMPERATIVE` lists
the verbs an instruction opens with, :data:`ACTIONS` those that make it a step to take
rather than a convention. The grammar of the other languages is in :mod:`.grammar`.
"""

from __future__ import annotations

import re
from typing import Final

LABEL: Final = re.compile(r"^[\w /&().'-]{1,48}:\s+")
_CLAUSE: Final = re.compile(
    r"^(?:when|whenever|if|before|after|once|while|during|unless|for|in|on|at|to)\b[^,.;:]{1,90},\s*",
    re.IGNORECASE,
)
# An instruction led by one of these is an action to take, even when it mentions a style
# ("Run `make format` before committing" is a step, not a formatting convention).
ACTIONS: Final = frozenset(
    {"follow", "read", "consult", "run", "execute", "push", "call", "check", "confirm"}
)
_FILLER: Final = frozenset(
    {"then", "also", "and", "finally", "next", "first", "please", "but", "so"}
)
IMPERATIVE: Final = frozenset(
    """
    add aim annotate apply ask attach author avoid await batch be benchmark build bump cache
    call cap catch cd check choose cite clean clone close collapse comment commit confirm
    configure consult copy create declare default define delete deploy describe disable do
    document don't double-check emit enable encode enforce ensure escalate escape execute
    explain export expose extend extract familiarize favor favour fetch find fix focus follow
    format generate get give go grep group guard handle hash hide implement import include
    inject inline install invoke isolate keep leave let limit lint list load localize
    localise lock log look make mark match measure mention merge migrate minimize minimise
    mirror mock move name never note open optimize parse pass patch pick pin place plan
    prefer prefix preserve prevent print prioritize profile prompt provide publish pull push
    quote
    put raise read rebase refactor reference refresh regenerate register release reload
    remove rename render replace reply report reproduce require respect respond retry return
    reuse review run sanitize save search select send separate serialize set show sign skip
    sort split squash start stay stick stop store strive structure stub summarize support
    surround tag target tell test think throw track treat try type update upgrade use
    validate verify warn watch wrap write
    abide adhere align append clarify combine communicate continue defer delegate
    determine edit employ evaluate explore gather highlight identify ignore improve inform
    inspect investigate iterate justify leverage maintain modify notify obey omit organize
    organise prepend proceed propose recommend reduce refer reject rely remember resolve
    restrict revert rewrite seek simplify specify submit suggest summarise take translate
    utilize utilise wait clear reset restart
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def _opening_words(text: str) -> list[str]:
    """The words ``text`` opens with, fillers and an adverb before the verb left out ("Then
    …", "Explicitly ask …")."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", text[:80])
    while words and (words[0].lower() in _FILLER or _adverb(words[0])):
        words.pop(0)
    return words


def lead_word(text: str) -> str:
    """The first word of the instruction: after a label, a leading clause and fillers."""
    rest = re.sub(r"^[^\w`\"'(\[]+", "", text)
    label = LABEL.match(rest)
    if label and not _CLAUSE.match(rest):
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", label.group())
        if not words or words[0].lower() not in IMPERATIVE:  # "Testing: run…", not "Run X:"
            rest = rest[label.end() :]
    conditional = _CLAUSE.match(rest) is not None
    rest = _CLAUSE.sub("", rest, count=1)
    words = _opening_words(rest)
    lead = words[0].lower() if words else ""
    if conditional and lead not in IMPERATIVE:  # "If you add X, Y or Z, clean up…"
        for found in re.finditer(r",\s*(?:[A-Za-z]+ly\s+)?([A-Za-z][A-Za-z'-]*)", rest[:240]):
            if found[1].lower() in IMPERATIVE:
                return found[1].lower()
    return lead


# After a clause that says when, a word the instruction's object follows ("After each step,
# state what changed", "If a task needs more than 5 steps, present the plan"): the verb,
# whether or not :data:`IMPERATIVE` lists it. Not a subject ("If it fails, the build stops",
# "When X, it runs the tests"), a helper verb, nor a word that joins ("In this case, unless
# the user …").
_OBJECT: Final = re.compile(
    r"(?:the|a|an|what|which|how|why|it|them|this|that|these|those|your|all|any|each|every"
    r"|its|their|our|his|her|us|me|him)$"
)
_NOT_VERB: Final = frozenset(
    """
    i you we they he she it this that these those there here the a an all each every any some
    no one our your their its my which what who nothing everything something anything is are
    was were will would should can could may might must do does did has have had been being
    also only just still even then now not
    unless if when whenever while because since although though as so but and or nor for
    with without within in on at by from to of into onto than after before once until like
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def verb_after_clause(text: str) -> bool:
    """``text`` opens with a clause that says when, then a verb and its object."""
    rest = re.sub(r"^[^\w`\"'(\[]+", "", text)
    clause = _CLAUSE.match(rest)
    if clause is None:
        return False
    words = _opening_words(rest[clause.end() :])
    return (
        len(words) >= 2
        and words[0].islower()
        and words[0] not in _NOT_VERB
        and _OBJECT.match(words[1].lower()) is not None
    )


def _adverb(word: str) -> bool:
    """An adverb before the verb ("Explicitly ask …", "Always …" is a cue of its own)."""
    low = word.lower()
    return len(low) >= 5 and low.endswith("ly") and low not in IMPERATIVE and low != "only"
