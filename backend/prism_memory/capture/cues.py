"""The detector's vocabulary: cue patterns, compiled once on first use.

Each pattern is matched against one sentence, lower-cased, with quoted text and code already
replaced by a placeholder (``detector.clean``). Words, not meaning: the labelled set in
``bench/capture/`` is what says whether they are good enough.
"""

from __future__ import annotations

import re
from functools import cache

# A verb the operator tells the agent to do (sentence-initial imperative).
IMPERATIVE_VERBS = (
    "use|keep|put|run|write|add|make|give|let|stop|avoid|prefer|catch|change|wait|raise|fix|"
    "lead|say|ask|check|include|aim|clean|tell|poll|show|answer|document|convert|pin|name|"
    "commit|push|rebase|format|delete|remove|read|call|store|return|test|log|merge|edit|"
    "install|update|split|type|spell|do|don't|dont|do not|never|always|please|only|"
    "double-check|think|explain|mention|respect"
)

RAW: dict[str, str] = {
    # Lasting markers: the words that make an instruction outlive the task.
    "lasting": (
        r"\b(always(?!-)|never|ever|from now on|going forward|in (the )?future|next time|"
        r"every time|each time|whenever|every (single )?\w+|everywhere|all (new |public )?\w+s\b|"
        r"any \w+|rule of thumb|make it a rule|one more rule|in new code|as a rule|"
        r"by default|keep in mind|for the record|note for the future|"
        r"has to|must|in all|at all times|anywhere|any more|anymore)\b|^remember:"
    ),
    # Operator habits, idioms and complaints where always/never is not a rule.
    "false_lasting": (
        r"\b(never mind|nevermind|never seen|never heard|never gonna|i always forget|"
        r"always the same|i never remember|never again\?|never worked|always takes|"
        r"always fails|always been)\b"
    ),
    # Time-limited or task-limited wording (one-off instructions).
    "one_off": (
        r"\b(for now|this time|today|right now|for the moment|at the moment|yet|"
        r"in this pr|for this one|this one|temporarily|for this spike|spike|until|"
        r"quick experiment|in this run|for this test|this benchmark|for this benchmark|"
        r"when you're done|when you are done|before you hand it back|i meant|i asked|"
        r"i wanted|the other (file|one|branch|function)|that one|on line \d+|line \d+|"
        r"later|tonight|this afternoon|this morning|for the demo|instead of \d+)\b"
    ),
    # Doubt, hypothesis, wishes.
    "hedge": (
        r"\b(maybe|perhaps|not sure|i'm not sure|i am not sure|i guess|ideally|"
        r"wouldn't it be|would it be|if we ever|i might|we might|might be|could|"
        r"i don't know|i dont know|probably|not convinced|i wonder|let's see)\b"
    ),
    "sarcasm": (
        r"^(oh (sure|great|yes|wonderful)|yeah,? because|sure,? because|great,? because)\b"
        r"|\bexactly what i wanted\b|\bgreat idea\b"
    ),
    # Someone else's words, reported.
    "reported": (
        r"(?<!you )(?<!i )\b(says|said|wrote|writes|complains|has this line|paste from|"
        r"from the style guide|"
        r"the error says|the error is|here's the error|here is the error|error:|"
        r"here's the stack trace|here is the hook output|the test says|the linter (says|reports))\b"
    ),
    "preference": (
        r"(\bi (really |much |generally |personally |tend to |do )?(prefer|like|love|hate|"
        r"dislike|don't like|do not like|can't stand|enjoy)\b|\bi'd (much )?(rather|prefer)\b|"
        r"\bi would (much )?(rather|prefer)\b|\bmy preference\b|\bi'm not a fan\b|"
        r"\bi am not a fan\b|^for me\b|\bbetter for me\b|^prefer\b|\bpersonally\b|"
        r"\bi (much )?prefer\b|^generally i prefer\b|\bi like (it )?when\b)"
    ),
    "convention": (
        r"(\bwe (use|keep|don't|do not|never|always|run|release|review|format|version|"
        r"standardi[sz]ed|follow|name|write|deploy|store|ship|squash|pin|work|tag|"
        r"only)\b|"
        r"\b(this|the) (project|repo|repository|codebase|team|monorepo|package|system) "
        r"(uses|is|has|keeps|runs|follows|doesn't|does not)\b|"
        r"\bin (this|our|the) (repo|repository|project|codebase|team|system|makefile|package)\b|"
        r"\bhere we\b|\bhere (is|are)\b|\b\w+ here (is|are)\b|\bour \w+( \w+)? "
        r"(are|is|follow|go|live|use|run|get|must)\b|"
        r"\b(the|our|team's) convention\b|\bthe rule in this\b|\bconvention is\b|"
        r"\bfyi\b|\bjust so you know\b|\bnote for the future\b|\bplease remember that\b|"
        r"\bbelongs? in\b|\blives? in\b|\bis read from\b|\bgo under\b|\bis used\b|"
        r"\bin this (project|repo|codebase|system)\b|\bbtw\b|"
        r"\b(uses|is|are) (not|never) used\b|\bis read-only\b|\bapproves all\b)"
    ),
    # The operator rejects what the assistant just did.
    "rejection": (
        r"(^(no|nope|nah|wrong|not like that|hmm,? no|ugh|wait|again|hey|actually)\b|"
        r"\bthat's (wrong|not (right|how|what))|\bthat is (wrong|not)|\bwrong\b|"
        r"\byou (used|put|forgot|changed|ran|committed|deleted|shouldn't have|should not have|"
        r"keep|added|removed|broke|edited|named|pushed|are editing|'re editing|missed)\b|"
        r"\bagain\b|\bstop \w+ing\b|\bplease stop\b|\binstead\b|"
        r"\b(don't|do not|not)\b.*\blike that\b|^(please )?(don't|do not|stop) |"
        r"\bi told you\b|\bis already used\b|\bnot like\b|\bdon't do that\b|"
        r"\bthat's not how\b|\bnever do that\b)"
    ),
    # The operator judges the assistant's work.
    "evaluation": (
        r"(\btoo (long|short|vague|terse|big|many|much|chatty|clever|verbose|slow|complex)\b|"
        r"\bgreat job\b|\bgood (job|call|work)\b|\bnice,|\bexcellent\b|\bperfect\b|"
        r"\bsolid\b|\bhard to (read|review|follow)\b|\bover-?engineer|\bassert nothing\b|"
        r"\byou keep\b|\byou're asking\b|\byou are asking\b|\byour \w+( \w+)? (is|are|was|were)\b|"
        r"\bthe way you\b|\bthat's exactly how\b|\bexactly how i want\b|\bjust repeat\b|"
        r"\bclear, but\b|\bwell done\b|\blove (the|how)\b|\btoo much\b|"
        r"\b(is|was|are|were) (fine|great|good|bad|wrong|messy|confusing|unreadable)\b)"
    ),
    # The lesson an evaluation carries.
    "lesson": (
        r"(\bkeep (them|it|writing|doing|modules|\w+ing)\b|\bnext time\b|\bevery time\b|"
        r"\bthat's (exactly )?(how|the level|what) i\b|\bthe level of\b|\bi need\b|"
        r"\bi want\b|\bi'd like\b|\bshould\b|\bmust\b|\bsay why\b|\bfirst\b|\bless\b|"
        r"\bsmaller\b|\bsimpler\b|\bbefore (you|big)\b|\bjust (fix|tell)\b|\bno need\b|"
        r"\bmake reasonable\b|\balways\b|\bdo it like\b|\baim for\b|\blead with\b|"
        r"\bclean up\b|\bi prefer\b)"
    ),
    "imperative": (
        rf"^(please |ok,? |hey,? |so,? |and |also,? |then,? |just )*({IMPERATIVE_VERBS})\b"
        r"(?![,.!]|$)"
    ),
    # An imperative whose object is only "it/that/this": about the thing at hand.
    "specific_object": (
        r"^(please )?(\w+) (it|that|this|them|these|those)( again| back| now| up)?\.?$"
    ),
    "question": r"\?\s*$",
}


@cache
def compiled() -> dict[str, re.Pattern[str]]:
    """The cue patterns, compiled (once per process, on first use)."""
    return {name: re.compile(pattern) for name, pattern in RAW.items()}
