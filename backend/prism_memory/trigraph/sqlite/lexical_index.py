"""The in-process BM25 index kept beside the recall cache's columns (the embedded engine).

The tokenizer, the constants and the scoring contract are :mod:`prism_memory.domain.lexical`; this
is
the mutable part: rows appended as they are written, tokenised lazily under a lock on the
first search after they were added, packed for a stored recall segment and loaded back.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from prism_memory.domain.lexical import (
    K1,
    STOPWORDS,
    WORD,
    B,
    BoolArray,
    IntArray,
    LexicalHits,
    PackedPostings,
    tokenize,
)


@dataclass(frozen=True)
class _Batch:
    """The postings of one batch of rows, by term (compressed sparse rows).

    Term ``terms[i]`` is in rows ``rows[starts[i]:starts[i + 1]]`` (ascending) with term
    frequencies ``tf[...]`` alike.
    """

    terms: IntArray  # ascending term ids
    starts: IntArray  # len(terms) + 1 offsets
    rows: IntArray
    tf: IntArray

    def postings(self, tid: int) -> tuple[IntArray, IntArray] | None:
        i = int(np.searchsorted(self.terms, tid))
        if i == self.terms.size or self.terms[i] != tid:
            return None
        lo, hi = self.starts[i], self.starts[i + 1]
        return self.rows[lo:hi], self.tf[lo:hi]

    @classmethod
    def of(cls, term_of: IntArray, rows: IntArray, tf: IntArray) -> _Batch:
        """From postings sorted by (term, row)."""
        cuts = np.flatnonzero(np.diff(term_of)) + 1
        starts = np.concatenate([[0], cuts, [term_of.size]]).astype(np.int64)
        return cls(term_of[starts[:-1]], starts, rows, tf)

    @classmethod
    def merged(cls, batches: Sequence[_Batch]) -> _Batch:
        term_of = np.concatenate([np.repeat(b.terms, np.diff(b.starts)) for b in batches])
        rows = np.concatenate([b.rows for b in batches])
        tf = np.concatenate([b.tf for b in batches])
        order = np.lexsort((rows, term_of))
        return cls.of(term_of[order], rows[order], tf[order])


_SMALL_BATCHES = 8  # more batches than this: the small ones are merged


class LexicalIndex:
    """An append-only BM25 index over rows 0, 1, 2, ... (the recall cache's row numbers).

    Each batch of rows tokenised together keeps its postings as one set of arrays
    (:class:`_Batch`); a search reads a term's postings from every batch. Small batches
    (incremental writes) are merged once they pile up, so a search reads a few at most.
    """

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._lock = threading.Lock()
        self._pending: list[str] = []  # texts of rows [indexed, indexed + len(pending))
        self._indexed = 0
        # Term -> id; stopwords map to -1 so batches filter them in numpy.
        self._ids: dict[str, int] = dict.fromkeys(STOPWORDS, -1)
        self._terms = 0
        # Terms 0 .. len(_frozen) - 1 of an index loaded packed, sorted; later terms and
        # those seen again since are in _ids.
        self._frozen: npt.NDArray[np.bytes_] = np.zeros(0, dtype="S1")
        self._batches: list[_Batch] = []
        self._lengths: IntArray = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return self._indexed + len(self._pending)

    @property
    def nbytes(self) -> int:
        """Bytes held: postings arrays, lengths, pending texts and the term dictionary."""
        arrays = sum(
            b.terms.nbytes + b.starts.nbytes + b.rows.nbytes + b.tf.nbytes for b in self._batches
        )
        pending = sum(len(t) + 49 for t in self._pending)
        terms = len(self._ids) * 100 + self._frozen.nbytes
        return arrays + self._lengths.nbytes + pending + terms

    def _term_id(self, word: str) -> int:
        """The id of ``word``, -1 if no row holds it (or it is a stopword)."""
        tid = self._ids.get(word)
        if tid is not None:
            return tid
        frozen = self._frozen
        if frozen.size:
            key = word.encode()
            i = int(np.searchsorted(frozen, key))
            if i < frozen.size and frozen[i] == key and len(key) <= frozen.itemsize:
                self._ids[word] = i
                return i
        return -1

    def _frozen_ids(self, words: Sequence[str]) -> IntArray:
        """:meth:`_term_id` of each of ``words`` among the loaded terms (-1: not one)."""
        frozen = self._frozen
        if not frozen.size or not words:
            return np.full(len(words), -1, dtype=np.int64)
        keys = [w.encode() for w in words]
        wide = np.array(keys, dtype=bytes)
        at = np.minimum(np.searchsorted(frozen, wide), frozen.size - 1)
        fits = np.fromiter(map(len, keys), np.int64, len(keys)) <= frozen.itemsize
        found = (frozen[at] == wide) & fits
        return np.where(found, at, -1).astype(np.int64)

    def packed(self, keep: BoolArray) -> PackedPostings:
        """The postings of the rows ``keep`` marks, renumbered ``0, 1, ...`` in row order.

        Pending rows are tokenised first; ``keep`` covers every row (``len(self)``).
        Terms no kept row holds are left out.
        """
        with self._lock:
            self._catch_up()
            n = self._indexed
            keep = np.asarray(keep[:n], dtype=bool)
            renumber = np.cumsum(keep) - 1
            if self._batches:
                one = len(self._batches) == 1
                whole = self._batches[0] if one else _Batch.merged(self._batches)
                term_of = np.repeat(whole.terms, np.diff(whole.starts))
                on = keep[whole.rows]
                term_of, rows, tf = term_of[on], renumber[whole.rows[on]], whole.tf[on]
            else:
                term_of = rows = tf = np.zeros(0, dtype=np.int64)
            used, term_of = np.unique(term_of, return_inverse=True)
            names: list[bytes] = [b""] * self._terms
            names[: self._frozen.size] = self._frozen.tolist()
            for word, tid in self._ids.items():
                if tid >= 0:
                    names[tid] = word.encode()
            words = np.array([names[int(t)] for t in used], dtype=bytes)
            if words.size == 0:
                words = np.zeros(0, dtype="S1")
            # Terms renumbered in sorted order, postings re-sorted by (term, row).
            order = np.argsort(words, kind="stable")
            words, rank = words[order], np.empty_like(order)
            rank[order] = np.arange(order.size)
            term_of = rank[term_of]
            resort = np.lexsort((rows, term_of))
            term_of, rows, tf = term_of[resort], rows[resort], tf[resort]
            cuts = np.flatnonzero(np.diff(term_of)) + 1
            starts = np.concatenate([[0], cuts, [term_of.size]]).astype(np.int64)
            if not term_of.size:
                starts = np.zeros(1, dtype=np.int64)
            return PackedPostings(
                words=words,
                starts=starts,
                rows=rows.astype(np.int64),
                tf=tf.astype(np.int64),
                lengths=self._lengths[:n][keep].copy(),
            )

    @classmethod
    def from_packed(cls, packed: PackedPostings, k1: float = K1, b: float = B) -> LexicalIndex:
        """An index over ``len(packed.lengths)`` rows, from :meth:`packed` (no tokenising)."""
        index = cls(k1, b)
        index._frozen = packed.words
        index._terms = len(packed.words)
        if packed.rows.size:
            terms = np.arange(len(packed.words), dtype=np.int64)
            index._batches = [_Batch(terms, packed.starts, packed.rows, packed.tf)]
        index._lengths = packed.lengths
        index._indexed = int(packed.lengths.size)
        return index

    def add(self, texts: Sequence[str]) -> None:
        """Append rows (cheap: they are tokenised by the next :meth:`search`)."""
        with self._lock:
            self._pending.extend(texts)

    def search(
        self,
        query: str,
        n: int,
        live: BoolArray,
        k1: float | None = None,
        b: float | None = None,
    ) -> LexicalHits:
        """BM25 of ``query`` against rows ``[0, n)`` whose ``live`` flag is set.

        Args:
            query: the query text (tokenised like the documents; repeated terms count once).
            n: how many rows the caller's snapshot holds (later rows are ignored).
            live: per-row flags for at least ``n`` rows; only live rows score and count.
            k1, b: BM25's parameters for this search (None: the index's own).

        Returns:
            The live rows with a positive score.
        """
        terms = set(tokenize(query))
        k1 = self.k1 if k1 is None else k1
        b = self.b if b is None else b
        with self._lock:
            if not terms:
                return LexicalHits.empty()
            self._catch_up()
            n = min(n, self._indexed)
            alive = live[:n]
            total = int(alive.sum())
            if total == 0:
                return LexicalHits.empty()
            lengths = self._lengths[:n]
            avgdl = float(lengths[alive].sum()) / total or 1.0
            scores = np.zeros(n)
            ceiling = 0.0
            for term in sorted(terms):  # a fixed order: the same float sums everywhere
                tid = self._term_id(term)
                if tid < 0:
                    continue
                rows, tf = self._postings_of(tid)
                if rows.size and rows[-1] >= n:
                    cut = int(np.searchsorted(rows, n))
                    rows, tf = rows[:cut], tf[:cut]
                on = alive[rows]
                rows, tf = rows[on], tf[on]
                if rows.size == 0:
                    continue
                df = rows.size
                idf = np.log(1.0 + (total - df + 0.5) / (df + 0.5))
                ceiling += idf
                norm = k1 * (1.0 - b + b * lengths[rows] / avgdl)
                scores[rows] += idf * tf * (k1 + 1.0) / (tf + norm)
        hit = np.flatnonzero(scores > 0)
        return LexicalHits(hit, scores[hit], ceiling)

    def _postings_of(self, tid: int) -> tuple[IntArray, IntArray]:
        found = [p for p in (b.postings(tid) for b in self._batches) if p is not None]
        if len(found) == 1:
            return found[0]
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate([r for r, _ in found]), np.concatenate([f for _, f in found])

    def _catch_up(self) -> None:
        """Tokenise the pending rows as one batch (vectorised after the regex pass)."""
        if not self._pending:
            return
        # tokenize() per row, restated for speed: words in C, stopwords dropped in numpy.
        docs = [WORD.findall(t.lower()) for t in self._pending]
        start, count = self._indexed, len(docs)
        words = list(chain.from_iterable(docs))
        ids_of = self._ids
        unseen = sorted(set(words).difference(ids_of))
        known = self._frozen_ids(unseen)  # terms of a loaded index: one search for all
        for word, tid in zip(unseen, known.tolist(), strict=True):
            if tid >= 0:
                ids_of[word] = tid
            else:
                ids_of[word] = self._terms
                self._terms += 1
        ids = np.fromiter(map(ids_of.__getitem__, words), np.int64, len(words))
        local = np.repeat(np.arange(count, dtype=np.int64), list(map(len, docs)))
        kept = ids >= 0
        ids, local = ids[kept], local[kept]
        lengths = np.bincount(local, minlength=count)
        if start + count > self._lengths.size:
            grown = np.zeros(max(start + count, 2 * self._lengths.size), dtype=np.int64)
            grown[:start] = self._lengths[:start]
            self._lengths = grown
        self._lengths[start : start + count] = lengths
        # One key per (term, row): sorting groups a term's rows together, ascending.
        keys, tf = np.unique(ids * count + local, return_counts=True)
        if keys.size:
            self._batches.append(_Batch.of(keys // count, keys % count + start, tf))
        if len(self._batches) > _SMALL_BATCHES:
            # Keep the biggest batch (a cache's first load) and merge the small ones after
            # it; batches stay in row order, so every term's rows stay ascending.
            big = int(np.argmax([b.rows.size for b in self._batches]))
            tail = self._batches[big + 1 :]
            if len(tail) > 1:
                self._batches[big + 1 :] = [_Batch.merged(tail)]
            else:
                self._batches = [_Batch.merged(self._batches)]
        self._indexed += count
        self._pending = []
