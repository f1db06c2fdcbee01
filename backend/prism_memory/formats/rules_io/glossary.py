"""Lists that describe rather than instruct: a definition list of terms and their glosses.

A specification, a glossary or a feature list is often written as a list of ``term: gloss``
entries ("**Affine types**: Each binding can be referenced 0-1 times", "`let mut x = value`
で可変変数"). An imperative inside a gloss there states how the language or the API works
("**Records**: Use `clone` and `freeze` for inheritance"); it is no instruction to the
agent. A list is such a definition list when it has at least three entries, every entry
opens with a term (bold, a code span, or a short label) and a separator, no entry carries a
modal (must, should, prefer… in any language :mod:`.cues` knows) and no entry is a command
with what it does ("`make lint`: run the linters" names the tool to use: a convention).
Then:

- when most of its entries read as no rule, none of them is a rule;
- when no gloss has any mood at all (no imperative either), none of them is a rule;

unless a heading above it names rules, conventions or a style (under "Code style",
"**Naming**: snake_case" is a convention).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from prism_memory.formats.rules_io import cues
from prism_memory.formats.rules_io.kinds import evidence, rule_headed

_TERM: Final = re.compile(
    r"^(?:\*\*[^*\n]{1,60}\*\*\s*[:：]?|`[^`\n]{1,80}`\s*[:：]?|[\w][\w /&().'-]{0,40}[:：])"
    r"(?:\s+[-–—]\s+|\s+|(?<=[:：]))(?=\S)"
)
MIN_ENTRIES: Final = 3


def describing(entries: Sequence[str], headings: Sequence[str], rules: int) -> bool:
    """True when ``entries`` (a list's own texts, ``rules`` of which read as rules on their
    own) are a definition list whose entries are no rules (see the module doc)."""
    if len(entries) < MIN_ENTRIES or rule_headed(headings):
        return False
    glosses = []
    for entry in entries:
        first = entry.strip().split("\n")[0]
        term = _TERM.match(first)
        if term is None:
            return False
        ev = evidence(entry)
        if ev.hard or ev.soft or ev.prefer or ev.labelled or cues.placeholder(entry):
            return False
        glosses.append(evidence(first[term.end() :]))
    moodless = not any(g.imperative for g in glosses)
    return moodless or 2 * rules < len(entries)
