"""Sentence boundaries in rule prose, deterministic and conservative.

A sentence ends at ``.``, ``!`` or ``?`` (after optional closing quotes, brackets or emphasis)
followed by white space and a capital, a digit or an opening mark — but not after a common
abbreviation ("e.g.", "etc."), a lone number ("1."), or inside an inline code span.
:func:`line_spans` reads a paragraph whose lines are a list written without its marks
line by line. Every function here is linear in its text (no expression is retried from
every offset).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final

_BOUNDARY: Final = re.compile(
    r"[.!?][\"')\]*_`]*\s+(?=[\"'(\[*_`]*[A-Z0-9])"
    r"|[。！？][」』）)\"']*\s*(?=\S)"  # CJK full stops need no space after them
)
_ABBREVIATION_WORDS: Final = (
    "e.g i.e etc vs cf al approx incl esp fig no nr mr mrs ms dr st jr sr inc ltd co u.s u.k "
    "a.k.a resp"
)
_ABBREVIATIONS: Final = frozenset(_ABBREVIATION_WORDS.split())
_WORD_BEFORE: Final = re.compile(r"([\w.]+)$")
WORD_WINDOW: Final = 24  # an abbreviation or a list number is shorter than this
_TICKS: Final = re.compile(r"`+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each sentence of ``text``, covering it in order.

    Linear in ``text``: the code-span parity is carried along, and only a bounded window
    before each full stop is searched for an abbreviation.
    """
    spans: list[tuple[int, int]] = []
    start = ticks = counted = 0
    for found in _BOUNDARY.finditer(text):
        dot = found.start()
        ticks += text.count("`", counted, dot)
        counted = dot
        if ticks % 2 == 1 or (text[dot] in ".!?" and _abbreviation(text, dot)):
            continue
        end = stop = found.end()
        while stop > start and text[stop - 1].isspace():
            stop -= 1
        if not text[start:stop].isspace() and stop > start:
            spans.append((start, stop))
        start = end
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


MIN_LINES: Final = 3
MIN_WORDS: Final = 3  # "ROLE" over the lines it names is a label, not an entry
_TREE: Final = re.compile(r"[│├└┌┐┘┤┬┴┼]")
_LINE_END: Final = re.compile(r"[.!?。！？:：,;]\W{0,3}$")
_SENTENCE_END: Final = re.compile(r"[.!?。！？][\"')\]*_`」』）]*$")
# "Projektsprache, Logs: deutsch": a label and its value, one setting a line
_SETTING_LINE: Final = re.compile(r"^\s*[^\s:：][^:：\n]{0,60}[:：](?!//)\s*\S")
# a line that a next one goes on from: it ends with a comma, a semicolon or a colon
_GOES_ON: Final = re.compile(r"[,;:：，；]\W{0,3}$")
_FIRST_LETTER: Final = re.compile(r"[^\W\d_]")


def line_spans(text: str) -> list[tuple[int, int]] | None:
    """``(start, end)`` of each line of ``text`` when its lines are entries written without
    list marks, else None: two lines or more that are each a "label: value" setting, or three
    lines or more of which either none ends with a stop or a comma (short entries, one a
    line), or every one ends a sentence, or every one opens a sentence of three words or
    more with a capital and none but the last ends in a comma, a semicolon or a colon.
    Wrapped prose ends some lines mid-sentence and goes on in lower case, so it is left to
    :func:`sentence_spans`."""
    lines = text.split("\n")
    settings = len(lines) >= 2 and all(_SETTING_LINE.match(line) for line in lines)
    if (len(lines) < MIN_LINES and not settings) or any(
        not line.strip() or _TREE.search(line) for line in lines
    ):
        return None  # a blank line, or a drawing of a folder tree
    bare = [line.rstrip() for line in lines]
    if not (
        settings
        or all(not _LINE_END.search(line) for line in bare)
        or all(_SENTENCE_END.search(line) for line in bare)
        or (
            all(_capital(line) and len(line.split()) >= MIN_WORDS for line in bare)
            and not any(_GOES_ON.search(line) for line in bare[:-1])
        )
    ):
        return None
    spans, start = [], 0
    for line in lines:
        stripped = line.rstrip()
        lead = len(stripped) - len(stripped.lstrip())
        spans.append((start + lead, start + len(stripped)))
        start += len(line) + 1
    return spans


def _capital(line: str) -> bool:
    """Whether the first letter of ``line`` is a capital (a script with case)."""
    letter = _FIRST_LETTER.search(line)
    return letter is not None and letter.group().isupper()


def _abbreviation(text: str, dot: int) -> bool:
    word = _WORD_BEFORE.search(text, max(0, dot - WORD_WINDOW), dot)
    if word is None:
        return False
    token = word.group(1).lower().strip(".")
    return token in _ABBREVIATIONS or token.isdigit() or len(token) == 1


def code_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each inline code span: a run of backticks up to the next run of
    the same length (CommonMark); a run that is never closed is text. Each run is looked at
    once (runs are indexed by length), so 10,000 backticks cost 10,000 steps, not 10,000³.
    """
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (begin, end) in enumerate(runs):
        by_length.setdefault(end - begin, []).append(index)
    spans, index = [], 0
    while index < len(runs):
        begin, end = runs[index]
        same = by_length[end - begin]
        later = bisect_right(same, index)
        if later < len(same):
            spans.append((begin, runs[same[later]][1]))
            index = same[later] + 1
        else:
            index += 1
    return spans


_BACK: Final = re.compile(
    r"^\W*(?:this|it|that|these|those|they|doing so|otherwise|such)\b"
    r"|^\W*(?:use|do|see|try|keep)\s+(?:this|it|that|these|those)\b",
    re.IGNORECASE,
)


def points_back(sentence: str) -> bool:
    """A sentence that points back to the one before it ("This keeps…", "Use it to…")."""
    return bool(_BACK.match(sentence))
