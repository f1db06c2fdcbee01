"""Sentence boundaries in rule prose, deterministic and conservative.

A sentence ends at ``.``, ``!`` or ``?`` (after optional closing quotes, brackets or emphasis)
followed by white space and a capital, a digit or an opening mark — but not after a common
abbreviation ("e.g.", "etc."), a lone number ("1."), or inside an inline code span.
"""

from __future__ import annotations

import re
from typing import Final

_BOUNDARY: Final = re.compile(r"[.!?][\"')\]*_`]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
_ABBREVIATION_WORDS: Final = (
    "e.g i.e etc vs cf al approx incl esp fig no nr mr mrs ms dr st jr sr inc ltd co u.s u.k "
    "a.k.a resp"
)
_ABBREVIATIONS: Final = frozenset(_ABBREVIATION_WORDS.split())
_WORD_BEFORE: Final = re.compile(r"([\w.]+)$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each sentence of ``text``, covering it in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for found in _BOUNDARY.finditer(text):
        if _protected(text, found.start()):
            continue
        end = found.end()
        stop = len(text[:end].rstrip())
        if text[start:stop].strip():
            spans.append((start, stop))
        start = end
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def _protected(text: str, dot: int) -> bool:
    if text.count("`", 0, dot) % 2 == 1:
        return True
    word = _WORD_BEFORE.search(text[:dot])
    if word is None:
        return False
    token = word.group(1).lower().strip(".")
    return token in _ABBREVIATIONS or token.isdigit() or len(token) == 1
