"""Recall candidates on SQLite: a project's cache, started from its stored segment.

A project this process does not hold starts from its stored recall segment
(:mod:`prism_memory.trigraph.sqlite.recall_segment`, :mod:`prism_memory.trigraph.sqlite.segments`),
if
any, and folds
in the rows changed after it, all in one read snapshot; a project it holds folds in what
changed since it last looked. When a segment saved too little (none yet, or many rows
changed since), the cache is stored as the project's new segment in a write transaction of
its own, so writes by any number of processes stay safe and cheap.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from uuid import UUID

from prism_memory.domain.ranking import Candidates
from prism_memory.errors import StorageError
from prism_memory.trigraph.port import CandidateFilter
from prism_memory.trigraph.sqlite import segments as sqlite_segments
from prism_memory.trigraph.sqlite.conn import SQLiteFile
from prism_memory.trigraph.sqlite.recall_cache import ProjectCache
from prism_memory.trigraph.sqlite.recall_registry import CacheRegistry
from prism_memory.trigraph.sqlite.recall_rows import columns_from_index
from prism_memory.trigraph.sqlite.recall_segment import SegmentImage, compact, image, load_into

_log = logging.getLogger("prism.sqlite")
MMAP_BYTES = 1 << 31  # how much of the file a segment is read through (SQLite's own cap)


def candidates(
    file: SQLiteFile,
    caches: CacheRegistry,
    segments: bool,
    tenant_id: UUID,
    flt: CandidateFilter,
    model: str,
) -> Candidates:
    """The project's cached candidates in ``caches``, brought up to the tenant's clock in
    ``file``; ``segments``: start from and store recall segments.

    A project this process does not hold starts from its stored segment
    (:mod:`prism_memory.trigraph.sqlite.recall_segment`), if any, and folds in the rows changed
    after
    it, all in one read snapshot. When that saved too little (no segment yet, or many
    rows changed since), the cache is then stored as the project's new segment, in a
    write transaction of its own.
    """
    key = (str(tenant_id), str(flt.project_id), model)
    project = str(flt.project_id)
    cache = caches.get(key, lambda: ProjectCache(project))
    img = None
    with cache.lock:
        conn = file.connection()
        cold = cache.clock < 0 and segments
        if cold:  # a segment is read through a memory map: no read() call per page
            conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        conn.execute("BEGIN")
        try:
            row = conn.execute(
                "SELECT n FROM tenant_clock WHERE tenant_id = ?", (str(tenant_id),)
            ).fetchone()
            clock = int(row[0]) if row else 0
            if cache.needs_rebuild:
                compact(cache)
            if cache.clock < 0 and segments:
                stored = sqlite_segments.read(conn, key)
                if stored is not None:
                    load_into(cache, *stored)
            if cache.clock != clock:
                _fold(conn, key, cache, clock)
        finally:
            conn.execute("COMMIT")
            if cold:  # unmapped again: the file's pages are not held by this process
                conn.execute("PRAGMA mmap_size = 0")
        if cache.wants_store and segments:
            img = image(cache)
        snapshot = cache.snapshot(flt)
    if img is not None:
        _store_segment(file, key, cache, img)
    caches.trim()
    return snapshot


def _store_segment(
    file: SQLiteFile, key: tuple[str, str, str], cache: ProjectCache, img: SegmentImage
) -> None:
    try:
        file.transaction(lambda conn: sqlite_segments.store(conn, key, img))
    except (StorageError, sqlite3.OperationalError) as exc:  # e.g. a read-only file
        _log.warning("recall segment of project %s not stored: %s", key[1], exc)
        return
    with cache.lock:
        cache.stored_clock, cache.changes, cache.foreign = img.clock, 0, 0


def _fold(
    conn: sqlite3.Connection, key: tuple[str, str, str], cache: ProjectCache, clock: int
) -> None:
    """Fold the rows the cache has not seen in; ``clock`` is the snapshot's."""
    t, project, model = key
    cols = (
        "memory_id, project_id, active, kind, namespace, memorule_kind, confidence, scope, "
        "a_persona, a_surface, a_specialization, written_at, model, vector, "
        # The current state's text, for the cache's BM25 index (by primary key and
        # the (tenant_id, memory_id, version) unique index).
        "(SELECT coalesce(s.subject || char(10), '') || s.body FROM memory m "
        "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
        "AND s.version = m.current_version "
        "WHERE m.tenant_id = recall_index.tenant_id AND m.id = recall_index.memory_id)"
    )
    gone: list[str] = []
    if cache.clock < 0:  # first load: only what the project can see, by index
        cur = conn.execute(
            f"SELECT {cols} FROM recall_index WHERE tenant_id = ? AND project_id = ? "
            f"UNION ALL SELECT {cols} FROM recall_index WHERE tenant_id = ? "
            "AND scope IN ('global', 'org') AND project_id != ?",
            (t, project, t, project),
        )
    else:
        # coalesce: a rule without a scope is a project rule (NULL would make NOT … unknown)
        visible = "(project_id = ? OR coalesce(scope, 'project') IN ('global', 'org'))"
        by_clock = "recall_index INDEXED BY recall_index_by_clock"
        gone = _gone(conn, key, cache, visible, by_clock)
        cur = conn.execute(
            f"SELECT {cols} FROM {by_clock} WHERE tenant_id = ? AND clock > ? AND {visible}",
            (t, cache.clock, project),
        )
    # In bulk: the rows as columns, no object per row.
    cache.fold(columns_from_index(cur.fetchall(), model), clock, gone)


def _gone(
    conn: sqlite3.Connection,
    key: tuple[str, str, str],
    cache: ProjectCache,
    visible: str,
    by_clock: str,
) -> list[str]:
    """The cache's rows from other projects that changed and left its view (a rule no
    longer global or org). Only such rows can leave (a memory never changes project):
    looked up by id when the cache holds fewer of them than changes were made since,
    else read off the clock index; either way no other project's row is read."""
    t, project, _ = key
    since = (t, cache.clock, project)
    changed = conn.execute(
        f"SELECT count(*) FROM {by_clock} WHERE tenant_id = ? AND clock > ? AND NOT {visible}",
        since,
    ).fetchone()[0]
    cache.foreign += changed
    if not changed:
        return []
    n = cache.n
    held = cache.ids[:n][cache.cols["active"][:n] & ~cache.cols["project_match"][:n]]
    if held.size < changed:
        found = conn.execute(
            "SELECT memory_id FROM recall_index WHERE tenant_id = ? AND memory_id IN "
            f"(SELECT value FROM json_each(?)) AND clock > ? AND NOT {visible}",
            (t, json.dumps(held.tolist()), cache.clock, project),
        )
    else:
        found = conn.execute(
            f"SELECT memory_id FROM {by_clock} WHERE tenant_id = ? AND clock > ? AND NOT {visible}",
            since,
        )
    return [r[0] for r in found]
