"""Lexical relevance: a BM25 inverted index kept beside the recall cache's columns.

The embedded engine ranks with this index in process; the PostgreSQL engine computes the same
BM25 in SQL from postings it tokenises with :func:`tokenize` at write time
(``trigraph/postgres/terms.py``), so both engines see the same words and scores (FTS5 and
``tsvector`` tokenise and score differently).

Tokenizer (:func:`tokenize`): lowercase; runs of unicode word characters (``\\w+``: letters,
digits, underscore, in any script); minus :data:`STOPWORDS`, a short English list of
articles, auxiliaries, prepositions, pronouns and question words (so "when did Caroline go
to the beach" is about ``caroline``, ``go`` and ``beach``). No stemming.

BM25 (Robertson / Lucene form), summed over the distinct query terms ``t`` in document ``d``::

    idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl))
    idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

with k1 = :data:`K1` and b = :data:`B` (0 by default: no length normalisation, see there).

``N``, ``df`` and ``avgdl`` count live rows only: a superseded or retired row neither scores
nor shifts the statistics. Documents are tokenised lazily, on the first search after they
were added, so a cache that only serves empty queries never pays for it. An index can be
saved already tokenised (:class:`PackedPostings`) and loaded back without tokenising: what a
stored recall segment holds.

This module is the pure part (tokenizer, constants, result types). The index itself, with its
lock and its lazily tokenised rows, is engine state:
:mod:`prism_memory.trigraph.sqlite.lexical_index`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

K1 = 1.2  # term-frequency saturation (the textbook value)
# Document-length normalisation: none. A memory is one rule or one dialogue turn, and a long
# one is not a longer document about the same words; on LoCoMo's tuning half b 0 beat the
# textbook 0.75 at every k1 tried, the rules did not move (bench/README.md, issue 19).
B = 0.0

_STOPWORD_TEXT = """a an the and or but if of to in on at by for with from into onto about as
    than then
    so not no nor is are was were be been being am do does did done doing has have had having
    will would shall should can could may might must i me my mine we us our ours you your yours
    he him his she her hers it its they them their theirs this that these those there here
    what when where who whom whose which why how"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

WORD = re.compile(r"\w+")

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def tokenize(text: str) -> list[str]:
    """The index terms of ``text``, in order (repeats kept: they are term frequencies)."""
    return [t for t in WORD.findall(text.lower()) if t not in STOPWORDS]


@dataclass(frozen=True)
class LexicalHits:
    """The rows a query matched: ascending row numbers and their (positive) BM25 scores."""

    rows: IntArray
    scores: FloatArray
    # The sum of idf over the query's terms that live rows hold: the score of a document
    # of average length holding each of them once (ranking scales BM25 by it).
    ceiling: float = 0.0

    @classmethod
    def empty(cls) -> LexicalHits:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0))


@dataclass(frozen=True)
class PackedPostings:
    """A whole index as plain arrays: term ``words[i]`` is in rows ``rows[starts[i]:
    starts[i + 1]]`` (ascending) with frequencies ``tf`` alike; ``lengths`` per row.
    ``words`` are UTF-8, fixed width, sorted (looked up by binary search, no dict)."""

    words: npt.NDArray[np.bytes_]
    starts: IntArray
    rows: IntArray
    tf: IntArray
    lengths: IntArray


class Lexicon(Protocol):
    """What ranking reads from a lexical index (the in-process one:
    :class:`prism_memory.trigraph.sqlite.lexical_index.LexicalIndex`)."""

    def search(
        self,
        query: str,
        n: int,
        live: BoolArray,
        k1: float | None = None,
        b: float | None = None,
    ) -> LexicalHits:
        """BM25 of ``query`` against rows ``[0, n)`` whose ``live`` flag is set (``k1``/``b``:
        BM25's parameters for this search, None for the index's own)."""
        ...
