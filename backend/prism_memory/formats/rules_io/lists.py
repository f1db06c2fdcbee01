"""How a list reads: an entry that only introduces the entries under it, entries that are
only the objects of their lead-in, and lists that describe rather than instruct.

**Lead-ins and objects.** An entry that is a short label or ends in ":" ("Testing:", "Code
Quality") is a lead-in: its entries are the rules. The entries after an instruction ("Check
X for:") or after a lead-in that enumerates ("… which includes:", "the source of truth
for:") are its objects when they carry no mood of their own: they stay with it; so are
bare command lines after a lead-in ending in ":" ("Verification before completion:" over
"node --check app.js", "python3 -m pytest -q"): the commands to run then, one rule.

**Definition lists.**
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
from prism_memory.formats.rules_io.blocks import Node, item_lines
from prism_memory.formats.rules_io.cues import COLON, ENUMERATING_LEAD
from prism_memory.formats.rules_io.drafts import join
from prism_memory.formats.rules_io.headings import rule_headed
from prism_memory.formats.rules_io.kinds import bare_command, evidence, rule_likeness
from prism_memory.formats.rules_io.sentences import sentence_spans

_TERM: Final = re.compile(
    r"^(?:\*\*[^*\n]{1,60}\*\*\s*[:：]?|`[^`\n]{1,80}`\s*[:：]?|[\w][\w /&().'-]{0,40}[:：])"
    r"(?:\s+[-–—]\s+|\s+|(?<=[:：]))(?=\S)"
)
MIN_ENTRIES: Final = 3
LISTS: Final = ("bullet_list", "ordered_list")
OBJECT_ENTRY: Final = 40  # an entry this short that reads as no rule is an object of its lead-in
# An entry with a label of its own ("类名: PascalCase", "Database: PostgreSQL"): a short
# label, no sentence end in it, then a value.
_OWN_LABEL: Final = re.compile(r"^\W*[^\s:：.!?。！？`][^:：.!?。！？`\n]{0,29}[:：]\s*\S")
LABEL_MAX: Final = 60


def describing(entries: Sequence[str], headings: Sequence[str], rules: int) -> bool:
    """True when ``entries`` (a list's own texts, ``rules`` of which read as rules on their
    own) are a definition list whose entries are no rules (see the module doc)."""
    if len(entries) < MIN_ENTRIES or rule_headed(headings):
        return False
    if headings and cues.STACK_HEADING.match(headings[-1]):  # what the project uses
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
    moodless = not any(g.imperative or g.grammatical for g in glosses)
    return moodless or 2 * rules < len(entries)


_CODE_TERM: Final = re.compile(
    r"^`(?P<code>[^`\s]{1,30})`\s*(?:[:：]|\s[-–—]\s)\s*(?P<gloss>\S.{0,60})$"
)


def vocabulary_list(entries: Sequence[str]) -> bool:
    """Three entries or more, each one code token and its short gloss ("`feat`: new
    feature", "`fix`: 修复问题"): the values a convention uses (commit types, labels), no
    rules, under whatever heading; a gloss with a mood ("`lint`: run it first") is not."""
    if len(entries) < MIN_ENTRIES:
        return False
    for entry in entries:
        found = _CODE_TERM.match(entry.strip().replace("**", ""))
        if found is None or "\n" in entry.strip():
            return False
        ev = evidence(found["gloss"])
        if ev.imperative or ev.grammatical or ev.hard or ev.soft or ev.prefer:
            return False
    return True


def is_lead(text: str) -> bool:
    """A list entry that only introduces the entries under it ("Testing:", "Code Quality")."""
    if "\n" in text.strip() or len(sentence_spans(text)) > 1:
        return False
    if text.rstrip().endswith(COLON):
        return True
    ev = evidence(text)
    plain = text.replace("**", "").strip()
    return (
        len(plain) <= LABEL_MAX
        and not re.search(r"[.!?]$", plain)
        and not (ev.imperative or ev.grammatical or ev.hard or ev.soft or ev.prefer)
    )


def commands_to_run(lines: dict[int, str], lst: Node, lead: str) -> bool:
    """Two or more bare command lines after a lead-in ending in ":" ("Verification before
    completion:" over "node --check app.js", …): the commands to run then, one rule."""
    return _commands(lead, [join(item_lines(item, lines, set())) for item in lst.children])


def _commands(lead: str, texts: list[str]) -> bool:
    return lead.rstrip().endswith(COLON) and len(texts) > 1 and all(map(bare_command, texts))


def objects_only(lines: dict[int, str], lst: Node, lead: str, threshold: float) -> bool:
    """Entries that are only the objects of the line before them, no rules: short ones, or
    any that read as no rule when that line is itself an instruction ("Check X for:")."""
    if cues.PREDICATE_LEAD.search(lead):
        return False  # "… deve essere:" over "completo", "accurato": a requirement each
    texts = [join(item_lines(item, lines, set())) for item in lst.children]
    if _commands(lead, texts):
        return True
    instruction = rule_likeness(lead) >= threshold
    enumerating = ENUMERATING_LEAD.search(lead) is not None
    if not instruction and len(texts) > 1 and all(_OWN_LABEL.match(t) for t in texts):
        return False  # "**命名规范**:" over "类名: PascalCase", …: each entry is read on its own
    for item, text in zip(lst.children, texts, strict=True):
        if any(c.kind in LISTS for c in item.children):
            return False
        ev = evidence(text)
        if ev.hard or ev.soft or ev.prefer or ev.labelled or "\n" in text:
            return False
        if ev.convention and not instruction:
            return False  # "**语言选择**" over "配置文件使用 JSON": a setting each
        if (ev.imperative or ev.grammatical) and not (
            enumerating and len(sentence_spans(text)) == 1
        ):
            return False  # "Run X" is a rule; "Commit message rules" after "includes:" no
        if not (instruction or enumerating) and ("\n" in text or len(text) >= OBJECT_ENTRY):
            return False
    return True
