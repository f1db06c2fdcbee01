"""A project cache saved in a form that loads in bulk: a recall segment.

A segment is what a :class:`~app.trigraph.recall_cache.ProjectCache` holds, dead rows
dropped, as named parts of raw little-endian arrays: vectors and sketch rows in chunks of
:data:`CHUNK_ROWS` rows (as sqlite-vec's ``vec0`` packs vectors per BLOB), the filter
columns, the ids, BM25 postings already tokenised, plus a small JSON head (row count,
vocabularies, the tenant clock it reflects). Loading is ``np.frombuffer`` and a few copies:
no tokenising, no SVD, no per-row Python beyond the ids. An engine stores the parts
(:mod:`app.trigraph.sqlite_segments`) and folds in the rows changed after ``clock`` through
the cache's ordinary incremental path, so a segment only ever saves work, never changes a
result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from app.domain.lexical import PackedPostings
from app.trigraph.lexical_index import LexicalIndex
from app.trigraph.recall_cache import COARSE_DIM, ID_DTYPE, ProjectCache

FORMAT = 3  # bumped when the layout changes: older segments are ignored, then rebuilt
CHUNK_ROWS = 1024
ID_BYTES = 36  # a UUID's text form, ASCII
_CODE_DTYPE = "<i4"  # categorical codes and postings, stored
_WIDE = ("written_us", "tiebreak")  # int64 in the cache and on disk
_FLAGS = ("project_match", "active", "is_memorule")

PartKey = tuple[str, int]  # (name, chunk number)


@dataclass(frozen=True)
class SegmentImage:
    """A cache's live rows, ready to store: ``head`` (JSON) and :meth:`parts` (BLOBs).

    Taken under the cache's lock; :meth:`parts` may run after it is released (rows below
    the cache's ``n`` are never changed in place, only appended after or swapped out).
    """

    head: dict[str, Any]
    live: npt.NDArray[np.int64]
    cache: ProjectCache
    matrix: npt.NDArray[np.float32]
    coarse: npt.NDArray[np.float32] | None
    residual: npt.NDArray[np.float32] | None
    projection: npt.NDArray[np.float32] | None
    cols: dict[str, npt.NDArray[Any]]
    ids: npt.NDArray[Any]
    postings: PackedPostings

    @property
    def clock(self) -> int:
        return int(self.head["clock"])

    def parts(self) -> Iterator[tuple[str, int, bytes]]:
        """Every part, vectors chunk by chunk (so storing never doubles the cache)."""
        live = self.live
        yield "ids", 0, self.ids[live].astype(f"S{ID_BYTES}").tobytes()
        for name, col in self.cols.items():
            kept = col[live]
            if name not in _WIDE and name not in _FLAGS:
                kept = kept.astype(_CODE_DTYPE)
            yield f"col:{name}", 0, np.ascontiguousarray(kept).tobytes()
        for k, lo in enumerate(range(0, live.size, CHUNK_ROWS)):
            rows = live[lo : lo + CHUNK_ROWS]
            if self.matrix.shape[1]:
                yield "vec", k, np.ascontiguousarray(self.matrix[rows]).tobytes()
            if self.coarse is not None:
                yield "coarse", k, np.ascontiguousarray(self.coarse[:, rows]).tobytes()
        if self.residual is not None and self.projection is not None:
            yield "residual", 0, self.residual[live].tobytes()
            yield "projection", 0, np.ascontiguousarray(self.projection).tobytes()
        p = self.postings
        yield "lex:words", 0, p.words.tobytes()
        for name, arr in (("starts", p.starts), ("rows", p.rows), ("tf", p.tf)):
            yield f"lex:{name}", 0, arr.astype(_CODE_DTYPE).tobytes()
        yield "lex:lengths", 0, p.lengths.astype(_CODE_DTYPE).tobytes()


def image(cache: ProjectCache) -> SegmentImage:
    """The cache's live rows as a segment (call with ``cache.lock`` held)."""
    n = cache.n
    active = cache.cols["active"][:n]
    live = np.flatnonzero(active)
    sketched = cache.projection is not None
    head = {
        "format": FORMAT,
        "rows": int(live.size),
        "dim": cache.dim,
        "clock": cache.clock,
        "fitted_at": min(cache.fitted_at, int(live.size)),
        "sketch": sketched,
        "vocab": {k: list(v) for k, v in cache.vocab.items()},
    }
    postings = cache.lexicon.packed(active)
    head["word_bytes"] = postings.words.itemsize
    return SegmentImage(
        head=head,
        live=live,
        cache=cache,
        matrix=cache.matrix,
        coarse=cache.coarse if sketched else None,
        residual=cache.residual if sketched else None,
        projection=cache.projection,
        cols=dict(cache.cols),
        ids=cache.ids,
        postings=postings,
    )


def load_into(
    cache: ProjectCache, head: Mapping[str, Any], parts: Mapping[PartKey, bytes]
) -> ProjectCache:
    """Fill an empty cache from a stored segment: it is then at ``head["clock"]``; its
    arrays hold exactly the segment's rows (most projects are read far more than written)."""
    m, dim, sketched = int(head["rows"]), int(head["dim"]), bool(head["sketch"])
    capacity = m  # grown (by half) when the first row is appended
    cache.dim = dim
    ids = np.empty(capacity, dtype=ID_DTYPE)
    ids[:m] = np.frombuffer(parts["ids", 0], dtype=f"S{ID_BYTES}")
    cache.ids = ids
    cache.pos = None  # built by the first change folded in
    for name in cache.cols:
        dtype: Any = bool if name in _FLAGS else np.int64
        col = np.zeros(capacity, dtype=dtype)
        stored = "|b1" if name in _FLAGS else "<i8" if name in _WIDE else _CODE_DTYPE
        col[:m] = np.frombuffer(parts[f"col:{name}", 0], dtype=stored)
        cache.cols[name] = col
    cache.vocab = {k: {name: i for i, name in enumerate(v)} for k, v in head["vocab"].items()}
    cache.matrix = np.zeros((capacity, dim), dtype=np.float32)
    chunks = (m + CHUNK_ROWS - 1) // CHUNK_ROWS
    if dim:
        for k in range(chunks):
            block = np.frombuffer(parts["vec", k], dtype=np.float32).reshape(-1, dim)
            cache.matrix[k * CHUNK_ROWS : k * CHUNK_ROWS + len(block)] = block
    cache.coarse = np.zeros((COARSE_DIM, capacity if sketched else 0), dtype=np.float32)
    cache.residual = np.zeros(capacity if sketched else 0, dtype=np.float32)
    if sketched:
        for k in range(chunks):
            block = np.frombuffer(parts["coarse", k], dtype=np.float32).reshape(COARSE_DIM, -1)
            cache.coarse[:, k * CHUNK_ROWS : k * CHUNK_ROWS + block.shape[1]] = block
        cache.residual[:m] = np.frombuffer(parts["residual", 0], dtype=np.float32)
        projection = np.frombuffer(parts["projection", 0], dtype=np.float32)
        cache.projection = projection.reshape(dim, COARSE_DIM).copy()
    else:
        cache.projection = None
    cache.fitted_at = int(head["fitted_at"])
    cache.lexicon = LexicalIndex.from_packed(
        PackedPostings(
            words=np.frombuffer(parts["lex:words", 0], dtype=f"S{head['word_bytes']}"),
            starts=_ints(parts["lex:starts", 0]),
            rows=_ints(parts["lex:rows", 0]),
            tf=_ints(parts["lex:tf", 0]),
            lengths=_ints(parts["lex:lengths", 0]),
        )
    )
    cache.n, cache.dead, cache.changes, cache.foreign = m, 0, 0, 0
    cache.clock = cache.stored_clock = int(head["clock"])
    return cache


def compact(cache: ProjectCache) -> None:
    """Drop the cache's dead rows, in place (call with its lock held; snapshots already
    taken keep the arrays they have)."""
    img = image(cache)
    parts = {(name, k): blob for name, k, blob in img.parts()}
    stored, changes, foreign = cache.stored_clock, cache.changes, cache.foreign
    load_into(cache, img.head, parts)
    cache.stored_clock, cache.changes, cache.foreign = stored, changes, foreign


def _ints(blob: bytes) -> npt.NDArray[np.int64]:
    return np.frombuffer(blob, dtype=_CODE_DTYPE).astype(np.int64)
