"""Recall segments in the SQLite file: ``recall_segment`` (head) and its parts.

A segment is derived data (:mod:`prism_memory.trigraph.sqlite.recall_segment`): the recall cache of
one
(tenant, project, model) as it stood at a tenant clock. Reading one is two queries inside
the caller's read transaction, so it and the rows changed after its clock come from the
same snapshot. Storing one is its own write transaction that replaces an older segment
and keeps a newer one (another process may have stored it meanwhile), so any number of
processes may store segments of the same project at once without losing anything: a
segment only decides where a load starts, never what it ends with.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from prism_memory.domain.records import iso
from prism_memory.trigraph.sqlite.recall_segment import FORMAT, Part, SegmentImage

_KEY = "tenant_id = ? AND project_id = ? AND model = ?"


def read(
    conn: sqlite3.Connection, key: tuple[str, str, str]
) -> tuple[dict[str, Any], Iterator[Part]] | None:
    """The stored segment of ``key`` (tenant, project, model): its head, and its parts as
    they are read (consume them inside the caller's read transaction: a loader copies
    each vector chunk into place and drops it, so the parts are never all held at once)."""
    row = conn.execute(f"SELECT head FROM recall_segment WHERE {_KEY}", key).fetchone()
    if row is None:
        return None
    head: dict[str, Any] = json.loads(row[0])
    if head.get("format") != FORMAT:
        return None  # an older layout: rebuilt from the rows, then stored anew
    cur = conn.execute(f"SELECT name, chunk, data FROM recall_segment_part WHERE {_KEY}", key)
    return head, iter(cur)


def store(conn: sqlite3.Connection, key: tuple[str, str, str], img: SegmentImage) -> bool:
    """Replace ``key``'s segment by ``img`` unless one as new, of this layout, is stored
    (call in a write transaction). True when ``img`` was stored."""
    row = conn.execute(f"SELECT clock, head FROM recall_segment WHERE {_KEY}", key).fetchone()
    newer = row is not None and int(row[0]) >= img.clock
    if newer and json.loads(row[1]).get("format") == FORMAT:
        return False
    conn.execute(f"DELETE FROM recall_segment_part WHERE {_KEY}", key)
    conn.executemany(
        "INSERT INTO recall_segment_part VALUES (?, ?, ?, ?, ?, ?)",
        ((*key, name, chunk, data) for name, chunk, data in img.parts()),
    )
    conn.execute(
        "INSERT INTO recall_segment VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant_id, project_id, model) DO UPDATE SET clock = excluded.clock, "
        "rows = excluded.rows, head = excluded.head, built_at = excluded.built_at",
        (*key, img.clock, img.head["rows"], json.dumps(img.head), iso(datetime.now(UTC))),
    )
    return True


def forget_tenant(conn: sqlite3.Connection, tenant_id: str) -> None:
    """Drop a tenant's segments (a load replaces what they were built from)."""
    conn.execute("DELETE FROM recall_segment_part WHERE tenant_id = ?", (tenant_id,))
    conn.execute("DELETE FROM recall_segment WHERE tenant_id = ?", (tenant_id,))
