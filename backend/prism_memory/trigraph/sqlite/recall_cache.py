"""A per-process cache of one project's recall candidates, as append-only numpy columns.

Engines keep a per-tenant change clock: every write batch bumps it and stamps the rows it
touches. A cache entry remembers the clock it has seen and, on the next recall, folds in only
the rows stamped later — so recall at 100k memories is a matrix-vector product, not a table
scan, and a write by another process is seen at the next call.

Readers get views of the first ``n`` rows; refreshes only append rows past ``n`` or swap in
new arrays (``active`` is copied before it changes), so a snapshot stays consistent while
another thread refreshes. A cache loaded from a stored segment starts on read-only views
of the bytes read and copies an array only when it first writes to it.

The rows an engine hands in: :mod:`prism_memory.trigraph.sqlite.recall_rows`; the process's caches:
:mod:`prism_memory.trigraph.sqlite.recall_registry`; ranking over a snapshot:
:mod:`prism_memory.trigraph.sqlite.recall_snapshot`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from itertools import chain, compress
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.domain.ranking import (
    ABSENT,
    CONFIDENCE_CODE,
    NONE,
    PRESELECT_MIN,
    SCOPE_RANK,
    Candidates,
    encode,
    micros_array,
    normalise_key,
    tiebreak_of,
)
from prism_memory.domain.records import APPLIES_TO_KEYS
from prism_memory.trigraph.port import CandidateFilter
from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex
from prism_memory.trigraph.sqlite.recall_rows import Columns, IndexRow, columns_of

COARSE_DIM = 128  # dimensions of the sketch that bounds every row's cosine (ranking.py)
SKETCH_MIN_ENERGY = 0.6  # share of the vectors' energy a sketch must keep to be used
ID_DTYPE = "<U36"  # a UUID's text form
_DICT_ENTRY = 100  # bytes a dict entry costs, with its share of the table
_STR_36 = 85  # bytes of a 36-character str object
STORE_MIN = 512  # changed rows that justify storing a project's segment anew
_FLAGS = ("project_match", "active", "is_memorule")
_COLUMNS = (
    *_FLAGS,
    "scope",
    "namespace",
    "memorule_kind",
    "confidence",
    "written_us",
    "tiebreak",
    *APPLIES_TO_KEYS,
)


class ProjectCache:
    """The candidates visible from one project (its own rows, the tenant's global/org rows)."""

    def __init__(self, project_id: str) -> None:
        self.project_id = project_id
        self.lock = threading.Lock()
        self.clock = -1
        self.n = 0
        self.dead = 0
        self.dim = 0
        self._pos: dict[str, int] | None = {}  # memory id -> row; None: built when needed
        self.vocab: dict[str, dict[str, int]] = {
            k: {} for k in (*APPLIES_TO_KEYS, "namespace", "memorule_kind")
        }
        # Fixed-width text, not Python strings: loads from a segment with one cast.
        self.ids: npt.NDArray[Any] = np.empty(0, dtype=ID_DTYPE)
        self.cols: dict[str, npt.NDArray[Any]] = {c: np.zeros(0, dtype=np.int64) for c in _COLUMNS}
        self.matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        # The sketch: ``projection`` (dim × COARSE_DIM, orthonormal columns) fitted to the
        # rows, ``coarse`` the rows projected (stored transposed, COARSE_DIM × capacity: a
        # column-major matrix-vector product streams twice as fast here) and ``residual`` the
        # norm of what the projection misses. Replaced, never changed in place, when refitted.
        self.projection: npt.NDArray[np.float32] | None = None
        self.fitted_at = 0
        self.coarse: npt.NDArray[np.float32] = np.zeros((COARSE_DIM, 0), dtype=np.float32)
        self.residual: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.lexicon = LexicalIndex()  # BM25 over the same rows, tokenised on first search
        # What a stored segment (prism_memory.trigraph.sqlite.recall_segment) would save: the clock
        # of the
        # last one this cache was loaded from or saved as (-1: none), how many of its rows
        # changed since, and how many changes of rows it cannot see were read since.
        self.stored_clock = -1
        self.changes = 0
        self.foreign = 0

    @property
    def nbytes(self) -> int:
        """Bytes the cache holds: arrays at their capacity, ids, the lexical index."""
        arrays = [self.ids, self.matrix, self.coarse, self.residual, *self.cols.values()]
        # The position dict: its table, and a str object per key (36 characters).
        ids = len(self._pos) * (_DICT_ENTRY + _STR_36) if self._pos is not None else 0
        return sum(a.nbytes for a in arrays) + ids + self.lexicon.nbytes

    @property
    def pos(self) -> dict[str, int]:
        """Row of each memory id the cache holds (built on first use after a load)."""
        if self._pos is None:
            self._pos = dict(zip(self.ids[: self.n].tolist(), range(self.n), strict=True))
        return self._pos

    @pos.setter
    def pos(self, value: dict[str, int] | None) -> None:
        self._pos = value

    @property
    def wants_store(self) -> bool:
        """True when a new segment would save a cold load real work: none is stored yet,
        more of its rows changed since than an eighth (at least STORE_MIN), or more rows of
        other projects changed since than it holds (at least 16 × STORE_MIN: each costs a
        cold load an index entry)."""
        if self.stored_clock < 0:
            return self.n > 0
        live = self.n - self.dead
        return self.changes > max(STORE_MIN, live // 8) or self.foreign > max(16 * STORE_MIN, live)

    @property
    def needs_rebuild(self) -> bool:
        """True when superseded rows outnumber live ones (the owner compacts it)."""
        return self.dead > max(1000, self.n - self.dead)

    def apply(self, rows: Iterable[IndexRow], clock: int, gone: Iterable[str] = ()) -> None:
        """:meth:`fold` for rows given one by one."""
        self.fold(columns_of(list(rows)), clock, gone)

    def fold(self, rows: Columns, clock: int, gone: Iterable[str] = ()) -> None:
        """Fold changed rows in, given as columns (no object per row): a changed memory's
        old row dies, its new row is appended.

        ``rows`` may include rows this project cannot see (they only end the old row);
        ``gone`` names more changed memories it cannot see, by id alone.
        """
        active = self.cols["active"].copy()
        pos = self.pos
        for memory_id in chain(gone, rows["memory_id"]):
            old = pos.pop(memory_id, None)
            if old is not None:
                active[old] = False
                self.dead += 1
        seen = [
            p == self.project_id or x in ("global", "org")
            for p, x in zip(rows["project_id"], rows["scope"], strict=True)
        ]
        kept = sum(seen)
        if kept < len(seen):
            rows = {f: list(compress(v, seen)) for f, v in rows.items()}
        self.changes += kept
        self.foreign += len(seen) - kept
        self.cols["active"] = active
        if kept:
            self._append(rows)
        self.clock = clock

    def _append(self, c: Columns) -> None:
        if not self.dim:
            self.dim = next((len(v) // 4 for v in c["vector"] if v), 0)
            if self.dim:  # rows so far had no vector of this model: they stay zero
                self.matrix = np.zeros((len(self.ids), self.dim), dtype=np.float32)
        b, start = len(c["memory_id"]), self.n
        need = start + b
        if need > len(self.ids):
            self._grow(max(need, len(self.ids) * 3 // 2, 64))
        else:
            self._own_arrays()
        width = self.dim * 4
        zero = bytes(width)
        vectors = b"".join(v if v is not None and len(v) == width else zero for v in c["vector"])
        if self.dim:
            self.matrix[start:need] = np.frombuffer(vectors, dtype=np.float32).reshape(b, self.dim)
        ids, cols, vocab = c["memory_id"], self.cols, self.vocab
        self.ids[start:need] = ids
        cols["project_match"][start:need] = np.asarray(c["project_id"], dtype=object) == (
            self.project_id
        )
        cols["active"][start:need] = c["active"]
        cols["is_memorule"][start:need] = c["is_memorule"]
        cols["scope"][start:need] = [SCOPE_RANK.get(x, 2) for x in c["scope"]]
        cols["confidence"][start:need] = [CONFIDENCE_CODE.get(x, 3) for x in c["confidence"]]
        cols["written_us"][start:need] = micros_array(c["written_at"])
        cols["tiebreak"][start:need] = [tiebreak_of(x) for x in ids]
        for key in ("namespace", "memorule_kind", *APPLIES_TO_KEYS):
            cols[key][start:need] = encode(c[key], vocab[key])
        self.pos.update(zip(ids, range(start, need), strict=True))
        # A retired row arrives inactive and never turns live again (a restore appends a
        # new row), so its words need no postings.
        self.lexicon.add([t if a else "" for t, a in zip(c["text"], c["active"], strict=True)])
        if self.dim > COARSE_DIM and need >= max(PRESELECT_MIN, 2 * self.fitted_at):
            self._fit_projection(need)
        elif self.projection is not None:
            self._sketch(start, need, self.coarse, self.residual)
        self.n = need

    def _fit_projection(self, n: int) -> None:
        """Principal directions of a sample of the rows: the sketch ranking prunes with.

        Refitted each time the cache doubles, so the directions follow the data; how well
        they fit changes only how much ranking can prune, never its result.
        """
        rng = np.random.default_rng(0)
        rows = rng.choice(n, size=min(n, 8192), replace=False)
        sample = self.matrix[rows]
        # The sample's right singular vectors, as the eigenvectors of its Gram matrix
        # (dim × dim: a tenth of the cost of an SVD of the sample), largest first.
        wide = sample.astype(np.float64)
        _, vectors = np.linalg.eigh(wide.T @ wide)
        projection = np.ascontiguousarray(vectors[:, ::-1][:, :COARSE_DIM], dtype=np.float32)
        kept = float(np.square(sample @ projection).sum())
        if kept < SKETCH_MIN_ENERGY * float(np.square(sample).sum()):
            # No low-dimensional structure (e.g. random vectors): bounds would prune almost
            # nothing, and computing them first would only slow recall down.
            self.projection, self.fitted_at = None, n
            self.coarse = np.zeros((COARSE_DIM, 0), dtype=np.float32)
            self.residual = np.zeros(0, dtype=np.float32)
            return
        capacity = len(self.ids)
        coarse = np.zeros((COARSE_DIM, capacity), dtype=np.float32)
        residual = np.zeros(capacity, dtype=np.float32)
        self.projection = projection
        self._sketch(0, n, coarse, residual)
        self.coarse, self.residual, self.fitted_at = coarse, residual, n

    def _sketch(
        self,
        start: int,
        stop: int,
        coarse: npt.NDArray[np.float32],
        residual: npt.NDArray[np.float32],
    ) -> None:
        """Project rows ``start:stop`` into ``coarse`` and their residual norms."""
        assert self.projection is not None
        for lo in range(start, stop, 16384):
            hi = min(stop, lo + 16384)
            rows = self.matrix[lo:hi]
            sketch = rows @ self.projection
            coarse[:, lo:hi] = sketch.T
            left = np.einsum("ij,ij->i", rows, rows) - np.einsum("ij,ij->i", sketch, sketch)
            residual[lo:hi] = np.sqrt(np.maximum(left, 0.0))

    def _own_arrays(self) -> None:
        """Copy-on-write: a cache loaded from a segment holds read-only views of the bytes
        read (columns, and the vectors and sketch of a one-chunk segment), and ``active``
        as a copy of its first ``n`` rows. Before rows are appended in place, each such
        array is copied once into one of the cache's capacity."""
        capacity, n = len(self.ids), self.n
        for name, col in self.cols.items():
            if len(col) < capacity or not col.flags.writeable:
                self.cols[name] = _column(name, capacity, col[:n])
        if len(self.matrix) < capacity or not self.matrix.flags.writeable:
            matrix = np.zeros((capacity, self.dim), dtype=np.float32)
            matrix[:n] = self.matrix[:n]
            self.matrix = matrix
        if self.projection is not None and not (
            self.coarse.flags.writeable and self.coarse.shape[1] >= capacity
        ):
            coarse = np.zeros((COARSE_DIM, capacity), dtype=np.float32)
            coarse[:, :n] = self.coarse[:, :n]
            self.coarse = coarse
        if self.projection is not None and not (
            self.residual.flags.writeable and len(self.residual) >= capacity
        ):
            residual = np.zeros(capacity, dtype=np.float32)
            residual[:n] = self.residual[:n]
            self.residual = residual

    def _grow(self, capacity: int) -> None:
        n = self.n
        ids = np.empty(capacity, dtype=ID_DTYPE)
        ids[:n] = self.ids[:n]
        self.ids = ids
        for name, old in self.cols.items():
            self.cols[name] = _column(name, capacity, old[:n])
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        if self.matrix.shape[1] == self.dim:
            matrix[:n] = self.matrix[:n]
        self.matrix = matrix
        if self.projection is not None:  # without a sketch, coarse and residual stay empty
            coarse = np.zeros((COARSE_DIM, capacity), dtype=np.float32)
            coarse[:, :n] = self.coarse[:, :n]
            self.coarse = coarse
            residual = np.zeros(capacity, dtype=np.float32)
            residual[:n] = self.residual[:n]
            self.residual = residual

    def snapshot(self, flt: CandidateFilter) -> Candidates:
        """The cached columns with the filter applied as a ``selected`` mask."""
        n, c = self.n, self.cols
        scope = c["scope"][:n]
        persona = c["persona"][:n]
        own_persona = self.vocab["persona"].get(normalise_key(flt.persona) or "", ABSENT)
        visible = (
            c["project_match"][:n] & ((scope == 2) | ((scope == 3) & (persona == own_persona)))
        ) | (scope <= 1)
        mask = c["active"][:n] & visible
        if flt.memorules_only:
            mask &= c["is_memorule"][:n]
        if flt.namespace is not None:
            mask &= c["namespace"][:n] == self.vocab["namespace"].get(flt.namespace, ABSENT)
        if flt.memorule_kinds:
            codes = [self.vocab["memorule_kind"].get(k.value, ABSENT) for k in flt.memorule_kinds]
            mask &= np.isin(c["memorule_kind"][:n], codes)
        if flt.confidences:
            mask &= np.isin(
                c["confidence"][:n], [CONFIDENCE_CODE[x.value] for x in flt.confidences]
            )
        for key, value in flt.exclude_conflicts.items():
            col = c[key][:n]
            mask &= (col == NONE) | (col == self.vocab[key].get(value, ABSENT))
        return Candidates(
            ids=self.ids[:n],
            is_memorule=c["is_memorule"][:n],
            scope_rank=scope,
            confidence=c["confidence"][:n],
            written_us=c["written_us"][:n],
            tiebreak=c["tiebreak"][:n],
            keys={k: c[k][:n] for k in APPLIES_TO_KEYS},
            vocab={k: self.vocab[k] for k in APPLIES_TO_KEYS},
            matrix=self.matrix[:n],
            selected=mask,
            coarse=self.coarse[:, :n] if self.projection is not None else None,
            projection=self.projection,
            residual=self.residual[:n] if self.projection is not None else None,
            lexicon=self.lexicon,
            live=c["active"][:n],
        )


def _column(name: str, capacity: int, head: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A writable column of ``capacity`` rows starting with ``head``."""
    col = np.zeros(capacity, dtype=bool if name in _FLAGS else np.int64)
    col[: len(head)] = head
    return col
