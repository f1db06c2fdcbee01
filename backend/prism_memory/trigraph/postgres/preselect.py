"""How a PostgreSQL recall statement runs (:func:`session_settings`), and how a large
project pre-selects its candidates (:func:`preselect_sql`) before the §6 score.

Up to :data:`INDEX_ABOVE` candidates every one is scored (its vector read). A store remembers
which projects' last recall counted more (``large``: a hint, no data; a new process's first
recall of a large project is exact); their recalls carry a second path, taken from
INDEX_ABOVE candidates on while at most 1/:data:`MATCHED_SHARE` of them match a key of the
context: a CTE ``pre`` narrows them first and the same score is computed only for these:
(a) the :data:`NEAR_ROWS` applicable candidates nearest to the query by inner product, from
the HNSW index on ``vector::vector(384)`` (``prism migrate --vector-index``) with
``hnsw.iterative_scan = relaxed_order`` (the scan goes on until that many rows pass the
visibility and filter conditions; as many conflicting ones too when those are shown), (b)
every candidate that matches a key of the context (overlap lifts it above nearer rows), (c)
the :data:`NEAR_ROWS` with the highest BM25 for the query's words. The two paths are chosen
in the statement by one-time filters on the candidate count, so the plan reads only the one
it takes. When the index scan stops short of NEAR_ROWS rows (``hnsw.max_scan_tuples``: the
project is a small part of what the index holds), :mod:`~prism_memory.trigraph.postgres.ranking`
scores every candidate instead. Against scoring every row, recall@10 was 0.999–1.0 on
``bench/pg_large.py``'s mixed projects of 2k to 100k (docs/postgres.md, "Large projects");
it is approximate: a row outside (a)–(c) whose score would reach the top is missed. Queries
without a vector (empty), of another dimension or with a negative weight are always scored
in full.
"""

from __future__ import annotations

from typing import Any, Final

from prism_memory.trigraph.port import RecallRequest

RECALL_WORK_MEM: Final = "64MB"  # per recall statement (SET LOCAL), see session_settings()
# Large projects: from INDEX_ABOVE candidates on (measured: bench/pg_large.py), the
# NEAR_ROWS nearest by inner product come from the HNSW index of migration 6, which covers
# vectors of INDEXED_DIMS dimensions.
INDEX_ABOVE: Final = 10_000
NEAR_ROWS: Final = 100
MATCHED_SHARE: Final = 4  # the index path only while at most 1/4 of them match a key
INDEXED_DIMS: Final = frozenset({384})
HNSW_EF_SEARCH: Final = 40
HNSW_MAX_SCAN_TUPLES: Final = 50_000


def uses_index(req: RecallRequest) -> bool:
    """Whether a recall may pre-select through the HNSW index: a query vector of an indexed
    dimension, and weights none of which is negative (the union's reasoning needs that)."""
    if req.vector is None or int(req.vector.shape[0]) not in INDEXED_DIMS:
        return False
    numbers = [v for v in req.weights.to_dict().values() if isinstance(v, int | float)]
    return all(float(v) >= 0 for v in numbers)


def session_settings(index: bool) -> list[str]:
    """The ``SET LOCAL`` statements a recall runs before its statement."""
    # The statement's joins (candidates to BM25 hits, postings to idf) are between row sets
    # the planner estimates from table statistics, which know nothing of one project's size;
    # a nested loop chosen on a low estimate turns quadratic (2,000 rows: 1.6 s instead of
    # ms). Hash joins are right at every size, so nested loops are turned off for this one
    # statement. It also holds the project's live rows once (a materialised CTE of ~100
    # bytes a row): ``work_mem`` is raised for it so 100k candidates stay in memory instead
    # of spilling to a temporary file.
    out = ["SET LOCAL enable_nestloop = off", f"SET LOCAL work_mem = '{RECALL_WORK_MEM}'"]
    if index:
        # pgvector's iterative scan: the index is read until NEAR_ROWS rows pass the
        # visibility and filter conditions, not just hnsw.ef_search rows before them.
        out += [
            "SET LOCAL hnsw.iterative_scan = relaxed_order",
            f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}",
            f"SET LOCAL hnsw.max_scan_tuples = {HNSW_MAX_SCAN_TUPLES}",
        ]
    return out


def preselect_sql(
    req: RecallRequest,
    args: dict[str, Any],
    own: str,
    shared: str,
    matches: str,
    conflicts: str,
    keyed: bool,
) -> str:
    """The CTEs that narrow a large project's candidates to ``pre``.

    ``pre`` is the union of

    (a) ``near``: the NEAR_ROWS visible, selected, applicable rows of the query's model
        nearest to the query by inner product, from the HNSW index with pgvector's
        iterative scan (and as many conflicting ones when those are shown);
    (b) every row that matches a key of the context, from ``seen`` (overlap lifts such a
        row above nearer rows that match none; their number bounds the path's cost, so
        the path is taken only while they are at most 1/MATCHED_SHARE of the candidates);
    (c) the NEAR_ROWS rows with the highest BM25 for the query's words (a row's lexical
        share is not bounded by its cosine).
    """
    assert req.vector is not None
    dim = int(req.vector.shape[0])
    args["near"] = NEAR_ROWS
    visible = (
        f"((r.project_id = %(p)s AND {own}) OR "
        f"(r.scope IN ('global', 'org') AND r.project_id <> %(p)s AND {shared}))"
    )
    ann = (
        f"SELECT r.memory_id FROM recall_index r WHERE r.tenant_id = %(t)s AND r.active "
        f"AND vector_dims(r.vector) = {dim} AND r.model = %(model)s AND {visible} AND {{cond}} "
        f"ORDER BY r.vector::vector({dim}) <#> %(q)b::vector({dim}) LIMIT %(near)s"
    )
    ctes = f", near AS MATERIALIZED ({ann.format(cond=f'NOT {conflicts}')})"
    union = "SELECT memory_id FROM near"
    if req.include_inapplicable and conflicts != "false":
        ctes += f", near_conflicting AS MATERIALIZED ({ann.format(cond=conflicts)})"
        union += " UNION SELECT memory_id FROM near_conflicting"
    if keyed:
        union += " UNION SELECT memory_id FROM seen WHERE sel AND m > 0"
    if "terms" in args:
        union += " UNION (SELECT memory_id FROM bm ORDER BY bm25 DESC, memory_id LIMIT %(near)s)"
    return f"{ctes}, pre AS MATERIALIZED ({union})"
