"""Does an operator message state a lasting rule, and of which kind? Deterministic, no LLM.

The steps, in order (``bench/capture/README.md`` has the guideline they implement):

1. **clean** — IDE context tags dropped; quoted text, inline code, fenced code, block quotes
   and pasted lists become a placeholder: rule-like words inside them are someone else's, not
   the operator's.
2. **split** into sentences; questions, reported speech, hedged and sarcastic sentences
   state nothing.
3. **cues** per sentence: lasting markers (*always, never, from now on, every time...*) with
   their false friends (*never mind, I always forget*), one-off markers (*for now, this time,
   yet, I meant...*), preference, convention, rejection and evaluation wording, imperatives.
4. **kind**, first that fits: ``correction`` (a rejection of what the assistant just did, plus a
   general right move), ``feedback`` (an evaluation of its work, plus a lesson), ``preference``,
   ``convention``, ``behavioral_rule`` (an imperative with a lasting marker).

A one-off marker vetoes a sentence unless it also carries a lasting marker.

5. **time scope** (:mod:`.scope`): a message with pasted review output or a diff proposes
   nothing; a candidate from a task description (long, several sentences, a list) stands only
   when a sentence addressed to the agent or team carries a standing marker; a message the
   cues miss proposes a ``behavioral_rule`` when it asks to write the lesson into the
   instruction file (CLAUDE.md, AGENTS.md) or tells the agent or team something with a strong
   standing marker (*from now on, going forward, remember to…*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prism_memory.capture import scope
from prism_memory.capture.cues import compiled
from prism_memory.domain.records import MemoruleKind

_FENCE = re.compile(r"```.*?(```|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_DOUBLE_QUOTED = re.compile(r"[\"“”][^\"“”\n]{1,300}[\"“”]")
_SINGLE_QUOTED = re.compile(r"(?:(?<=^)|(?<=[\s:(]))'[^'\n]{1,300}'(?=[\s.,;:!?)]|$)")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+|\s+[—–]\s+|\s-\s")
_LEADING = re.compile(r"^[\s,.:;!–—-]+")
SUBJECT_MAX = 200
BODY_MAX = 4_000
SUBJECT_MIN = 4
BODY_MIN = 10


@dataclass(frozen=True)
class Detection:
    """A lasting rule found in one message: its kind, the sentence that carried it, why."""

    kind: MemoruleKind
    subject: str
    body: str
    cues: tuple[str, ...]


@dataclass(frozen=True)
class _Sentence:
    text: str  # as the operator wrote it (cleaned of quotes)
    low: str
    cues: frozenset[str]


def clean(text: str) -> str:
    """The operator's own words: client tags dropped; quoted, pasted and code text replaced by
    ``QUOTE``."""
    text = _FENCE.sub(" QUOTE ", scope.without_client_tags(text))
    lines = []
    list_after_colon = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">"):
            continue
        if list_after_colon and stripped[:2] in ("- ", "* ", "+ "):
            continue
        list_after_colon = stripped.endswith(":") or (list_after_colon and stripped[:2] == "- ")
        lines.append(line)
    text = "\n".join(lines)
    text = _INLINE_CODE.sub("CODE", text)
    text = _DOUBLE_QUOTED.sub("QUOTE", text)
    return _SINGLE_QUOTED.sub("QUOTE", text)


def _sentences(text: str) -> list[_Sentence]:
    pats = compiled()
    out = []
    for part in _SENTENCE.split(text):
        part = _LEADING.sub("", part).strip()
        if not part:
            continue
        low = part.lower().replace("’", "'")
        cues = {name for name in _CUE_NAMES if pats[name].search(low)}
        # "From now on, ask me ...", "When in doubt, prefer ...": the clause after a comma
        # or colon can carry the imperative.
        for head in _heads(low):
            if pats["imperative"].search(head):
                cues.add("imperative")
            if head.startswith("prefer "):
                cues.add("preference")
        if "false_lasting" in cues:
            cues.discard("lasting")
        if pats["specific_object"].match(low.rstrip(".!")):
            cues.add("specific_object")
        out.append(_Sentence(part, low, frozenset(cues)))
    return out


def _heads(low: str) -> list[str]:
    """Each remainder of a sentence after a comma or a colon."""
    return [low[m.end() :] for m in re.finditer(r"[,:]\s+", low)]


_CUE_NAMES = (
    "lasting",
    "false_lasting",
    "one_off",
    "hedge",
    "sarcasm",
    "reported",
    "preference",
    "convention",
    "rejection",
    "evaluation",
    "lesson",
    "imperative",
    "question",
)
_SILENCING = frozenset({"question", "hedge", "sarcasm", "reported"})


def _states_something(s: _Sentence) -> bool:
    """Not a question, a doubt, a joke or another person's words; not time-limited."""
    if s.cues & _SILENCING:
        return False
    return not ("one_off" in s.cues and "lasting" not in s.cues)


def _rule_kind(s: _Sentence) -> MemoruleKind | None:
    """The kind a sentence states on its own, ignoring the turn it answers."""
    if not _states_something(s):
        return None
    if "preference" in s.cues and "i like it" not in s.low:
        return MemoruleKind.PREFERENCE
    if "convention" in s.cues:
        return MemoruleKind.CONVENTION
    if "lasting" in s.cues and ("imperative" in s.cues or _is_directive(s.low)):
        return MemoruleKind.BEHAVIORAL_RULE
    return None


def _is_directive(low: str) -> bool:
    """A must/should/want statement addressed to the agent, or ``X, never Y``."""
    return bool(
        re.search(
            r"\b(you (must|should|need to|have to)|i want|must|has to|have to|"
            r"should never|should always|never \w+|always \w+|don't \w+ ever|ever\.|"
            r"(^|: )no \w+)",
            low,
        )
    )


def _general_move(s: _Sentence) -> bool:
    """A sentence that gives a right move beyond the thing at hand."""
    if not _states_something(s) or "specific_object" in s.cues:
        return False
    if _rule_kind(s) is not None:
        return True
    if "imperative" in s.cues:
        return True
    return bool(re.search(r"\b(not|instead|rather than|only)\b", s.low)) and len(s.low) > 25


def detect(text: str, after_action: bool) -> Detection | None:
    """The lasting rule a message states, or None.

    Args:
        text: what the operator typed.
        after_action: the assistant turn this message answers had used a tool.
    """
    if scope.pasted(text):
        return None
    cleaned = clean(text)
    sentences = _sentences(cleaned)
    if not sentences:
        return None
    whole = cleaned.lower()
    pats = compiled()
    if pats["sarcasm"].search(whole.strip()):
        return None
    stating = [s for s in sentences if _states_something(s)]
    found = _stated(sentences, stating, after_action)
    # a task description is written in rule words: it proposes only where a sentence
    # addressed to the agent or the team says the rule outlives the change
    if (
        found is not None
        and scope.task_description(cleaned, len(sentences))
        and not any(_standing_addressed(s) for s in stating)
    ):
        found = None
    if found is None:
        found = _standing_request(sentences, stating)
    if found is None:
        return None
    kind, carrier, extra = found
    return Detection(
        kind=kind,
        subject=_subject(carrier.text),
        body=_body(text),
        cues=tuple(sorted(carrier.cues | extra)),
    )


_Found = tuple[MemoruleKind, _Sentence, frozenset[str]]


def _stated(
    sentences: list[_Sentence], stating: list[_Sentence], after_action: bool
) -> _Found | None:
    """What the cues find: a correction, feedback, or a rule a sentence states on its own."""
    if not stating:
        return None
    found = _correction(sentences, after_action) or _feedback(sentences, after_action)
    if found is None:
        for s in stating:
            kind = _rule_kind(s)
            if kind is not None:
                found = (kind, s)
                break
    return None if found is None else (found[0], found[1], frozenset())


def _standing_addressed(s: _Sentence) -> bool:
    return scope.standing(s.low) and scope.addressed(s.low, "imperative" in s.cues)


def _standing_request(sentences: list[_Sentence], stating: list[_Sentence]) -> _Found | None:
    """A rule that outlives the change on its own terms: a request to write the lesson into
    the instruction file (even asked as a question), or a sentence addressed to the agent or
    the team with a strong standing marker (from now on, going forward, remember to…)."""
    unsilenced = _SILENCING - {"question"}
    for s in sentences:
        if not (s.cues & unsilenced) and scope.asks_to_persist(s.low):
            return MemoruleKind.BEHAVIORAL_RULE, s, frozenset({"persist"})
    for s in stating:
        if scope.strongly_standing(s.low) and scope.addressed(s.low, "imperative" in s.cues):
            return MemoruleKind.BEHAVIORAL_RULE, s, frozenset({"standing"})
    return None


def _correction(
    sentences: list[_Sentence], after_action: bool
) -> tuple[MemoruleKind, _Sentence] | None:
    if not after_action:
        return None
    rejects = any("rejection" in s.cues and not (s.cues & _SILENCING) for s in sentences)
    if not rejects or any("one_off" in s.cues and "lasting" not in s.cues for s in sentences):
        return None
    moves = [s for s in sentences if _general_move(s)]
    if not moves:
        return None
    best = next((s for s in moves if _rule_kind(s) is not None), moves[-1])
    return MemoruleKind.CORRECTION, best


def _feedback(
    sentences: list[_Sentence], after_action: bool
) -> tuple[MemoruleKind, _Sentence] | None:
    if not after_action or not any("evaluation" in s.cues for s in sentences):
        return None
    lessons = [s for s in sentences if "lesson" in s.cues and _states_something(s)]
    if not lessons:
        return None
    return MemoruleKind.FEEDBACK, lessons[-1]


def _subject(sentence: str) -> str:
    subject = " ".join(sentence.split()).rstrip(" .;,")
    subject = subject[0].upper() + subject[1:] if subject else subject
    if len(subject) > SUBJECT_MAX:
        subject = subject[: SUBJECT_MAX - 1].rstrip() + "…"
    return subject if len(subject) >= SUBJECT_MIN else f"Operator rule: {subject}"


def _body(text: str) -> str:
    body = text.strip()
    if len(body) > BODY_MAX:
        body = body[: BODY_MAX - 1].rstrip() + "…"
    return body if len(body) >= BODY_MIN else f"The operator said: {body}"
