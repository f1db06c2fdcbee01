"""A project cache saved in a form that loads in bulk: a recall segment.

A segment is what a :class:`~prism_memory.trigraph.sqlite.recall_cache.ProjectCache` holds, dead
rows
dropped, as named parts of raw little-endian arrays: vectors and sketch rows in chunks of
:data:`CHUNK_ROWS` rows (as sqlite-vec's ``vec0`` packs vectors per BLOB), the filter
columns, the ids, BM25 postings already tokenised, plus a small JSON head (row count,
vocabularies, the tenant clock it reflects). No tokenising, no SVD, no per-row Python at
load: the parts are stored in the dtypes the cache holds and used in place
(``np.frombuffer`` over the bytes SQLite returned: read-only; the cache copies one only
when it must write to it, see ``ProjectCache._own_arrays``), except the ids (cast once to
the cache's text dtype) and the vector and sketch chunks of a segment of more than one
chunk, copied as they are read into one array each, so its parts are never all held at
once. An engine stores the parts
(:mod:`prism_memory.trigraph.sqlite.segments`) and folds in the rows changed after ``clock``
through the cache's ordinary incremental path, so a segment only ever saves work, never
changes a result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.domain.lexical import PackedPostings
from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex
from prism_memory.trigraph.sqlite.recall_cache import COARSE_DIM, ID_DTYPE, ProjectCache

FORMAT = 5  # bumped when the layout changes: older segments are ignored, then rebuilt
CHUNK_ROWS = 8192  # rows per vector BLOB (12 MB at 384-d): most projects load as one
ID_BYTES = 36  # a UUID's text form, ASCII
_INT = "<i8"  # integer columns and postings, as the cache holds them
_FLAGS = ("project_match", "active", "is_memorule")
SPARE = 8  # a loaded cache reserves 1/SPARE more rows, untouched until appended to

Part = tuple[str, int, bytes]  # (name, chunk number, data)


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
            kept = col[live].astype(bool if name in _FLAGS else _INT)
            yield f"col:{name}", 0, kept.tobytes()
        step = int(self.head["chunk_rows"])
        for k, lo in enumerate(range(0, live.size, step)):
            rows = live[lo : lo + step]
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
            yield f"lex:{name}", 0, arr.astype(_INT).tobytes()
        yield "lex:lengths", 0, p.lengths.astype(_INT).tobytes()


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
        "chunk_rows": CHUNK_ROWS,
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


def load_into(cache: ProjectCache, head: Mapping[str, Any], parts: Iterable[Part]) -> ProjectCache:
    """Fill an empty cache from a stored segment, consuming ``parts`` as they come (in any
    order): it is then at ``head["clock"]`` and holds exactly the segment's rows.

    Nothing is copied that the cache can use in place: the columns, the postings, the
    projection and, when the segment is one chunk, the vectors and the sketch too are
    read-only views of the bytes read, which the cache copies only when it first writes
    to them. Larger segments' chunks are copied as they arrive into one array each, with
    1/:data:`SPARE` more rows reserved (not touched, so neither faulted in nor copied)
    for rows appended later.
    """
    m, dim, sketched = int(head["rows"]), int(head["dim"]), bool(head["sketch"])
    chunk_rows = int(head["chunk_rows"])
    whole = m <= chunk_rows  # at most one chunk: its bytes are the arrays
    capacity = m if whole else m + m // SPARE
    # Rows past ``m`` are never read before they are written (snapshots stop at ``n``); a
    # one-chunk segment's vectors and sketch are its parts (no vectors: none are stored).
    rows = 0 if whole and dim else capacity
    matrix = np.empty((rows, dim), dtype=np.float32)
    coarse = np.empty((COARSE_DIM, rows if sketched else 0), dtype=np.float32)
    filled = 0
    small: dict[str, bytes] = {}
    for name, chunk, data in parts:
        lo = chunk * chunk_rows
        if name == "vec":
            block = np.frombuffer(data, dtype=np.float32).reshape(-1, dim)
            filled += len(block)
            if whole:
                matrix = block
            else:
                matrix[lo : lo + len(block)] = block
        elif name == "coarse":
            sketch = np.frombuffer(data, dtype=np.float32).reshape(COARSE_DIM, -1)
            if whole:
                coarse = sketch
            else:
                coarse[:, lo : lo + sketch.shape[1]] = sketch
        else:
            small[name] = data
    if dim and filled != m:
        raise ValueError(f"recall segment holds {filled} vectors, its head says {m}")
    cache.dim, cache.matrix, cache.coarse = dim, matrix, coarse
    ids = np.empty(capacity, dtype=ID_DTYPE)
    ids[:m] = np.frombuffer(small["ids"], dtype=f"S{ID_BYTES}")
    cache.ids = ids
    cache.pos = None  # built by the first change folded in
    for name in cache.cols:
        dtype = "|b1" if name in _FLAGS else _INT
        cache.cols[name] = np.frombuffer(small[f"col:{name}"], dtype=dtype)
    cache.vocab = {k: {name: i for i, name in enumerate(v)} for k, v in head["vocab"].items()}
    cache.residual = np.zeros(0, dtype=np.float32)
    cache.projection = None
    if sketched:
        residual = np.frombuffer(small["residual"], dtype=np.float32)
        if not whole:
            residual = np.concatenate([residual, np.empty(capacity - m, dtype=np.float32)])
        cache.residual = residual
        projection = np.frombuffer(small["projection"], dtype=np.float32)
        cache.projection = projection.reshape(dim, COARSE_DIM)
    cache.fitted_at = int(head["fitted_at"])
    cache.lexicon = LexicalIndex.from_packed(
        PackedPostings(
            words=np.frombuffer(small["lex:words"], dtype=f"S{head['word_bytes']}"),
            starts=np.frombuffer(small["lex:starts"], dtype=_INT),
            rows=np.frombuffer(small["lex:rows"], dtype=_INT),
            tf=np.frombuffer(small["lex:tf"], dtype=_INT),
            lengths=np.frombuffer(small["lex:lengths"], dtype=_INT),
        )
    )
    cache.n, cache.dead, cache.changes, cache.foreign = m, 0, 0, 0
    cache.clock = cache.stored_clock = int(head["clock"])
    return cache


def compact(cache: ProjectCache) -> None:
    """Drop the cache's dead rows, in place (call with its lock held; snapshots already
    taken keep the arrays they have)."""
    img = image(cache)
    stored, changes, foreign = cache.stored_clock, cache.changes, cache.foreign
    load_into(cache, img.head, img.parts())
    cache.stored_clock, cache.changes, cache.foreign = stored, changes, foreign
