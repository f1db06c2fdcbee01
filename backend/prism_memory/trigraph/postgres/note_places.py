"""Where a recall window's notes stand in writing order, on PostgreSQL
(``trigraph/note_places_sql.py`` says what is asked and why); the pairs go in as three
arrays, and the counts read the partial index of migration 11."""

from __future__ import annotations

from uuid import UUID

from prism_memory.domain.neighbours import NotePlace
from prism_memory.trigraph import note_places_sql as places_sql
from prism_memory.trigraph.postgres.conn import Conn


def _sql(template: str, **parts: str) -> str:
    return template.replace("?", "%s").format(active="active", **parts)


def note_places(
    conn: Conn, tenant_id: UUID, project_id: UUID, memory_ids: list[str], reach: int
) -> dict[str, NotePlace]:
    """The port's ``note_places`` in three statements, each read from an index."""
    found = conn.execute(
        _sql(places_sql.WINDOW_NOTES, ids="= ANY(%s)"),
        (tenant_id, [UUID(i) for i in memory_ids], project_id),
    ).fetchall()
    by_namespace = places_sql.chains((str(i), ns) for i, ns in found)
    pairs = places_sql.pairs(by_namespace)
    between: dict[tuple[str, str], int] = {}
    if pairs:
        rows = "SELECT * FROM unnest(%s::text[], %s::uuid[], %s::uuid[])"
        namespaces, lows, highs = ([p[i] for p in pairs] for i in range(3))
        counted = conn.execute(
            _sql(places_sql.BETWEEN, pairs=rows),
            (
                namespaces,
                [UUID(i) for i in lows],
                [UUID(i) for i in highs],
                tenant_id,
                project_id,
                reach,
            ),
        ).fetchall()
        between = {(str(a), str(b)): n for a, b, n in counted}
    single = [ns for ns, ids in by_namespace.items() if len(ids) == 1]
    sizes: dict[str, int] = {}
    if single:
        counts = conn.execute(
            _sql(places_sql.SIZES, namespaces="= ANY(%s)"), (tenant_id, project_id, single)
        ).fetchall()
        sizes = dict(counts)
    return places_sql.places(by_namespace, between, sizes, reach)
