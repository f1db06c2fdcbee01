"""Does a piece of a rule file read as a description: the other side of the structural prior.

In a rule file, a list entry (or a line of a paragraph written as a list) under a section
that is not descriptive is an instruction unless it reads as a description
(:func:`.kinds.rule_likeness`). A description has one of two shapes, the same in every
language:

- a **statement**: a subject, then a copula or a verb that says what a thing is or holds
  ("The cache is rebuilt nightly", "Le module contient …", "Il backend è scritto …", "Der
  Dienst ist …"), from the per-language table :data:`COPULAS`, after one to five words;
  Japanese and Korean end a statement with theirs ("…である", "…이다");
- a **definition**: a short term, then ":", "→", "=>" or " - " and a gloss that has no mood
  of its own ("`feat`: 新功能", "app.go: Core application logic", "Backend → Go"). A
  command with what it does ("`make lint`: run the linters") is no definition: it says
  how a task is done.

A third shape is a **value**: only names and their versions ("Pydantic 2.7"), or only
code ("`yarn lint`").

The table has the same structure for every language (a tuple of word forms); a test
enumerates it. Every pattern is anchored at the start (or end) of one line and reads at
most a few words before its verb.
"""

from __future__ import annotations

import re
from typing import Final

from prism_memory.formats.rules_io.english import IMPERATIVE

# Per language: the copulas and "holds/contains/provides" verbs of a statement.
COPULAS: Final[dict[str, tuple[str, ...]]] = {
    "en": ("is", "are", "was", "were", "can", "will", "contains", "provides", "handles", "holds"),
    "fr": ("est", "sont", "était", "peut", "peuvent", "contient", "fournit", "gère", "permet"),
    "es": ("es", "son", "está", "están", "era", "puede", "pueden", "contiene", "proporciona"),
    "pt": ("é", "são", "está", "estão", "era", "pode", "podem", "contém", "fornece"),
    "it": ("è", "sono", "era", "viene", "vengono", "può", "possono", "contiene", "fornisce"),
    "de": ("ist", "sind", "war", "wird", "werden", "kann", "können", "enthält", "liefert"),
    "ru": ("является", "являются", "может", "могут", "содержит", "отвечает"),
}
# Japanese and Korean end a statement with the copula (a rule ends with its request form).
FINAL_COPULAS: Final[dict[str, tuple[str, ...]]] = {
    "ja": ("である", "です", "となっている", "されている", "される", "ている", "済み"),
    "ko": ("이다", "입니다", "되어 있다", "되어 있습니다"),
}
SUBJECT_WORDS: Final = 6  # a copula this far in has a subject before it
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

_WORD: Final = r"[^\W\d_][\w'’.-]*|`[^`\n]+`|\*\*[^*\n]+\*\*|\"[^\"\n]+\"|\[[^\]\n]*\]\([^)\n]*\)"
_ALL: Final = "|".join(sorted({w for ws in COPULAS.values() for w in ws}, key=len, reverse=True))
_STATEMENT: Final = re.compile(
    rf"^\W*(?:(?:{_WORD})[,;]?\s+){{1,{SUBJECT_WORDS}}}(?:{_ALL})(?![\w'’-])", re.IGNORECASE
)
# A verb in the third person first (its subject the heading or lead-in above: "adds the user
# to the group"), or after a subject of one to three words ("`@acme/db` exports a client").
_THIRD_PERSON: Final = re.compile(rf"^\W*(?:(?:{_WORD})\s+){{0,3}}?(?P<verb>[a-z]+s)\b(?!\s*[:：])")
_FINAL: Final = re.compile(
    "(?:" + "|".join(w for ws in FINAL_COPULAS.values() for w in ws) + r")[。．.!]?\s*$"
)
_LABEL: Final = re.compile(r"^[^:：\n]{1,40}[:：]\s+(?=\S)")
_CODE_ONLY: Final = re.compile(r"^\W{0,4}(?:`[^`\n]+`[\s,;/|]*)+$")
_VERSIONED: Final = re.compile(
    r"^\W*[\w@./-]+\s+v?\d+(?:\.[\dx*]+)*\+?"
    r"(?:\s*(?:[,+/&]|and|und|et|e|y)\s*[\w@./-]+\s+v?\d+(?:\.[\dx*]+)*\+?)*\W*$"
)
# "term: gloss", "term → gloss", "term - gloss": a term of at most four words or one code
# span, then the gloss.
_DEFINITION: Final = re.compile(
    r"^\W{0,4}(?P<term>`[^`\n]{1,60}`|\[[^\]\n]{1,60}\]\([^)\n]*\)"
    r"|[^\W\d][\w.&/'’+()-]*(?:\s+[\w.&/'’+()-]+){0,3})"
    r"\**\s*(?:[:：]|→|=>|->|\s[-–—]\s)\s*(?P<gloss>\S.*)$"
)


def statement(text: str) -> bool:
    """``text`` opens with a subject and a copula ("The cache is …", "Le module est …"),
    (Japanese, Korean) ends with one, or (English) opens with a verb in the third person,
    its subject the heading or lead-in above ("adds the user to the group")."""
    first = text.strip().split("\n")[0].replace("**", "")
    after_label = _LABEL.sub("", first, count=1)  # "CDP: All calls are typed"
    if _STATEMENT.match(first) or _STATEMENT.match(after_label) or _FINAL.search(first):
        return True
    verb = _THIRD_PERSON.match(first)
    return verb is not None and _english_verb(verb["verb"])


def _english_verb(word: str) -> bool:
    """``word`` is an English verb in the third person ("exports", "adds", "has")."""
    word = word.lower()
    if word in ("has", "does"):
        return True
    stem = word[:-1]
    return stem in IMPERATIVE or (stem.endswith("e") and stem[:-1] in IMPERATIVE)


def code_only(text: str) -> bool:
    """``text`` is only code spans ("`yarn lint`"): a value, no instruction in words."""
    first = text.strip().split("\n")[0].replace("**", "")
    return bool(_CODE_ONLY.match(first))


def versioned(text: str) -> bool:
    """``text`` is only names and their versions ("Pydantic 2.7", "React 18 + Vite 5"): what
    the project depends on, not what to do."""
    first = text.strip().split("\n")[0].replace("**", "")
    return bool(_VERSIONED.match(first))


def definition(text: str) -> tuple[str, str] | None:
    """``(term, gloss)`` when the first line of ``text`` is a term and its gloss, else
    None; whether the gloss has a mood is the caller's to judge."""
    first = text.strip().split("\n")[0].replace("**", "")
    found = _DEFINITION.match(first)
    if found is None:
        return None
    term = found["term"]
    if _CJK.search(found["gloss"]):
        return None  # "依赖与锁：以 … 为准": a label over an instruction in these languages
    if term.startswith("`") and " " in term.strip("`"):
        return None  # "`make lint`: run the linters": a command and what it does
    return term, found["gloss"]
