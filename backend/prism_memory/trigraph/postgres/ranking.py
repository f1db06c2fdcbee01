"""Recall on PostgreSQL, ranked in the database: one statement per recall, next to the data.

The statement applies what :func:`prism_memory.domain.ranking.rank` applies in process, in SQL:

- **Visibility** (DESIGN §6; :mod:`~prism_memory.trigraph.postgres.visibility`), as two index
  branches of one ``UNION ALL``: the project's own live rows (``recall_index_by_project``)
  and the tenant's ``global``/``org`` rows of other projects (``recall_index_by_scope``); in
  the project, ``persona`` rules only of the viewer. Every branch filters by ``tenant_id``
  first, so the statement runs unchanged on Citus.
- **Filters** of :class:`~prism_memory.trigraph.port.CandidateFilter` and **applicability** (a rule
  naming another value than the context conflicts and is left out, or ranked last).
- **Relevance**: the clipped inner product of the stored and query vectors (pgvector's
  ``<#>``: every embedder emits unit vectors, so it is their cosine, summed in float32 as
  numpy does) and BM25 (:mod:`prism_memory.domain.lexical`'s k1, b and idf) computed from the
  ``recall_term`` postings (:mod:`~prism_memory.trigraph.postgres.terms`), its statistics N, avgdl
  and
  df over the live rows the project can see, whatever the viewer's persona.
- **The §6 score** in float8, with the same operations in the same order as the numpy ranker,
  then the order: applicable first, ``round(score, 9)`` (``rint(score · 1e9)``, as numpy
  rounds), newer ``written_at``, larger id; ``LIMIT top_k``.

BM25's statistics and the candidate count come from ``seen``: index-only scans of the two
visibility indexes, which carry every column they read (migration 6), not the vectors.

**Large projects** pre-select their candidates first
(:mod:`~prism_memory.trigraph.postgres.preselect`).

The statement returns the best rows with the parts of their scores, and
:func:`prism_memory.domain.ranking.parts_of` carries them as ``rank`` does.
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

import psycopg

from prism_memory.domain.lexical import tokenize
from prism_memory.domain.ranking import Ranked, parts_of
from prism_memory.domain.records import APPLIES_TO_KEYS, Kind
from prism_memory.embeddings.port import Vector
from prism_memory.trigraph.port import CandidateFilter, NearMatch, RankedPage, RecallRequest
from prism_memory.trigraph.postgres.preselect import (
    INDEX_ABOVE,
    MATCHED_SHARE,
    NEAR_ROWS,
    preselect_sql,
    session_settings,
    uses_index,
)
from prism_memory.trigraph.postgres.visibility import (
    PROJECT_BRANCH,
    SHARED_BRANCH,
    applicability_sql,
    filter_args,
    filter_sql,
)

Conn = psycopg.Connection[tuple[Any, ...]]

_MEMORULE: Final = Kind.MEMORULE.value
# The pre-selected rows of a large project, fetched by primary key.
_PICKED_BRANCH: Final = (
    "r.tenant_id = %(t)s AND r.memory_id = ANY(ARRAY(SELECT memory_id FROM pre)) AND r.active"
)
# Whether this recall takes the index path: enough candidates, few enough matching a key.
_INDEXED: Final = "(SELECT selected >= %(above)s AND {matched} FROM stats)"
_SCOPE_RANK: Final = (
    "CASE r.scope WHEN 'global' THEN 0 WHEN 'org' THEN 1 WHEN 'persona' THEN 3 ELSE 2 END"
)
_CONF_W: Final = (
    "CASE r.confidence WHEN 'observed' THEN %(w_observed)s WHEN 'inferred' THEN %(w_inferred)s "
    "WHEN 'asserted' THEN %(w_asserted)s ELSE %(w_note)s END"
)
_COSINE: Final = (
    "CASE WHEN r.model = %(model)s AND vector_dims(r.vector) = %(dim)s "
    "THEN greatest(0.0::float8, least(1.0::float8, (r.vector <#> %(q)b::vector) * -1)) "
    "ELSE 0.0::float8 END"
)
_POSTINGS: Final = (
    "SELECT term, memory_id, tf, doc_len FROM recall_term WHERE tenant_id = %(t)s AND active "
    "AND project_id = %(p)s AND term = ANY(%(terms)s) UNION ALL "
    "SELECT term, memory_id, tf, doc_len FROM recall_term WHERE tenant_id = %(t)s AND active "
    "AND shared AND project_id <> %(p)s AND term = ANY(%(terms)s)"
)
# BM25 as domain.lexical computes it, operation for operation (float8 throughout).
_LEXICAL_CTES: Final = f""", df AS (
    SELECT term, count(*)::float8 AS df FROM ({_POSTINGS}) x GROUP BY term
), idf AS (
    SELECT d.term, ln(1.0::float8 + (s.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS idf
    FROM df d CROSS JOIN stats s
), ceiling AS MATERIALIZED (
    SELECT coalesce(sum(idf), 0.0::float8) AS c FROM idf
), bm AS (
    SELECT p.memory_id, sum(
        i.idf * p.tf * %(k1_1)s
        / (p.tf + %(k1)s * (1.0::float8 - %(b)s + %(b)s * p.doc_len / s.avgdl))
    ) AS bm25
    FROM ({_POSTINGS}) p JOIN idf i USING (term) CROSS JOIN stats s GROUP BY p.memory_id
)"""
_LEXICAL_SHARE: Final = (
    "CASE WHEN ce.c > 0 THEN least(coalesce(bm.bm25, 0.0::float8) / ce.c, 1.0::float8) "
    "ELSE 0.0::float8 END"
)
_SCORE: Final = (
    "l.conf_w * (%(w_relevance)s * ((1.0::float8 - l.alpha) * l.cos + l.alpha * l.lex) "
    "+ (%(w_overlap)s * l.matches + %(w_scope)s * l.scope_rank + %(w_prior)s))"
)


def _stats_sql(source: str, matched: bool) -> str:
    """N and the total length of the live rows the project sees (BM25), and how many the
    filter keeps (the page's candidate count), from one scan of ``source``: ``live`` (the
    rows the exact path scores anyway) or ``seen`` (index-only scans of the two visibility
    indexes, which carry every column these read: migration 6; not the vectors).
    ``matched``: also how many kept rows match a key of the context."""
    also = ", matched" if matched else ""
    count = ", count(*) FILTER (WHERE sel AND m > 0) AS matched" if matched else ""
    return (
        f"stats AS MATERIALIZED (SELECT n, len, selected{also}, "
        "CASE WHEN len > 0 THEN len / n ELSE 1.0::float8 END AS avgdl FROM ("
        "SELECT count(*)::float8 AS n, coalesce(sum(doc_len), 0)::float8 AS len, "
        f"count(*) FILTER (WHERE sel) AS selected{count} FROM {source}) x)"
    )


_CONF_CODE: Final = (
    "CASE r.confidence WHEN 'observed' THEN 0 WHEN 'inferred' THEN 1 "
    "WHEN 'asserted' THEN 2 ELSE 3 END"
)
_OUT: Final = "memory_id, scope_rank, conf_code, masks, cos, lex, applicable, score"
_SUBJECT_AT: Final = 2 + len(_OUT.split(","))  # a row: selected, near, _OUT, written_at, ...


def recall(
    conn: Conn,
    tenant_id: UUID,
    req: RecallRequest,
    index_above: int = INDEX_ABOVE,
    large: set[tuple[UUID, UUID]] | None = None,
) -> RankedPage:
    """``RecallStore.recall`` in one statement (see the module's docstring).

    ``index_above``: from this many candidates on, the statement pre-selects them through
    the HNSW index ("Large projects" in the module's docstring); below it every candidate
    is scored (0: always pre-selected). ``large``: the (tenant, project) pairs whose last
    recall counted that many, updated here: only their recalls carry the pre-selection
    (which re-checks the count), so a small project's statement stays the exact one.
    """
    key = (tenant_id, req.filter.project_id)
    known = large if large is not None else set()
    index = None
    if uses_index(req) and (index_above == 0 or key in known):
        index = index_above
    found = _run(conn, *recall_sql(tenant_id, req, index), index=index is not None)
    total = int(found[0][0]) if found else 0
    near = found[0][1] if found else None
    if total >= index_above and uses_index(req):
        known.add(key)
    else:
        known.discard(key)
    if near is not None and near < min(NEAR_ROWS, total):
        # The index scan stopped short (hnsw.max_scan_tuples: the project is a small part
        # of what the index holds): score every candidate instead.
        found = _run(conn, *recall_sql(tenant_id, req, None), index=False)
    rows = [row for row in found if row[2] is not None]
    ranked = [_ranked(i, row[2:_SUBJECT_AT], req) for i, row in enumerate(rows)]
    subjects = {str(row[2]): (Kind(row[-2]), row[-1]) for row in rows}
    return RankedPage(ranked, total, subjects)


def _run(conn: Conn, query: str, args: dict[str, Any], *, index: bool) -> list[tuple[Any, ...]]:
    # BEGIN, the SETs, the query and COMMIT go out in one round trip.
    try:
        with conn.pipeline():
            conn.execute("BEGIN")
            for setting in session_settings(index):
                conn.execute(setting)
            cur = conn.execute(query, args, binary=True)
            conn.execute("COMMIT")
            return cur.fetchall()
    except psycopg.Error:
        conn.rollback()  # leave no aborted transaction behind in the pool
        raise


def recall_sql(
    tenant_id: UUID, req: RecallRequest, index_above: int | None = None
) -> tuple[str, dict[str, Any]]:
    """The recall statement and its parameters: one row per result, each led by the count
    of candidates and the number of rows the index pre-selected (NULL when it was not used;
    one row with NULLs after those when nothing is found).

    ``index_above`` (only for a request :func:`uses_index` accepts): from this many
    candidates on, only the pre-selected ones are scored.
    """
    args = filter_args(tenant_id, req.filter)
    w = req.weights
    args.update(
        w_relevance=float(w.relevance),
        w_overlap=float(w.overlap),
        w_scope=float(w.scope),
        w_prior=float(w.prior),
        w_observed=float(w.observed),
        w_inferred=float(w.inferred),
        w_asserted=float(w.asserted),
        w_note=float(w.note),
        w_lexical=float(w.lexical),
        w_lexical_note=float(w.lexical_note),
        k=int(req.top_k),
    )
    terms = sorted(set(tokenize(req.query))) if (w.lexical or w.lexical_note) else []
    if terms:
        args.update(terms=terms, k1=w.bm25_k1, k1_1=w.bm25_k1 + 1.0, b=w.bm25_b)
    if req.vector is not None:
        args.update(q=req.vector, model=req.model, dim=int(req.vector.shape[0]))
    matches, conflicts, masks = applicability_sql(req, args)
    alpha = f"CASE WHEN r.kind = '{_MEMORULE}' THEN %(w_lexical)s ELSE %(w_lexical_note)s END"

    def branch(where: str, selected: str) -> str:
        # Rows the filter leaves out stay for BM25's statistics, without a dot product.
        cosine = "0.0::float8"
        if req.vector is not None:
            cosine = f"CASE WHEN {selected} THEN {_COSINE} ELSE 0.0::float8 END"
        return (
            # Narrow rows (numbers, no text): they are held and sorted once each.
            f"SELECT r.memory_id, r.doc_len, ({selected}) AS sel, r.written_at, "
            f"{_CONF_CODE} AS conf_code, {masks} AS masks, "
            f"{cosine} AS cos, ({matches})::float8 AS matches, "
            f"NOT {conflicts} AS applicable, ({_SCOPE_RANK})::float8 AS scope_rank, "
            f"{_CONF_W} AS conf_w, {alpha} AS alpha FROM recall_index r WHERE {where}"
        )

    own, shared = filter_sql(req.filter)
    index = index_above is not None
    keyed = index and matches != "0"
    # The index path also counts, per row, the keys it matches (for its pre-selection).
    m = f", ({matches}) AS m" if keyed else ""
    seen = (
        f"seen AS (SELECT r.memory_id, r.doc_len, ({own}) AS sel{m} FROM recall_index r "
        f"WHERE {PROJECT_BRANCH} UNION ALL SELECT r.memory_id, r.doc_len, ({shared}) AS sel{m} "
        f"FROM recall_index r WHERE {SHARED_BRANCH})"
    )
    near = "NULL::bigint"
    if index_above is None:
        live = f"{branch(PROJECT_BRANCH, own)} UNION ALL {branch(SHARED_BRANCH, shared)}"
        ctes = f"live AS MATERIALIZED ({live}), {_stats_sql('live', False)}"
        ctes += _LEXICAL_CTES if terms else ""
    else:
        args["above"] = int(index_above)
        narrowing = preselect_sql(req, args, own, shared, matches, conflicts, keyed)
        args["share"] = MATCHED_SHARE
        few = "matched * %(share)s <= selected" if keyed else "true"
        indexed = _INDEXED.format(matched=few)
        exact, indexed = f" AND NOT {indexed}", f" AND {indexed}"
        live = " UNION ALL ".join(
            (
                branch(PROJECT_BRANCH + exact, own),
                branch(SHARED_BRANCH + exact, shared),
                branch(f"{_PICKED_BRANCH} AND r.project_id = %(p)s{indexed}", own),
                branch(
                    f"{_PICKED_BRANCH} AND r.scope IN ('global', 'org') "
                    f"AND r.project_id <> %(p)s{indexed}",
                    shared,
                ),
            )
        )
        near = f"CASE WHEN true{indexed} THEN (SELECT count(*) FROM near) END"
        ctes = f"{seen}, {_stats_sql('seen', keyed)}{_LEXICAL_CTES if terms else ''}"
        ctes += f"{narrowing}, live AS MATERIALIZED ({live})"
    lexical = _LEXICAL_SHARE if terms else "0.0::float8"
    joined = "live c"
    if terms:
        joined += " CROSS JOIN ceiling ce LEFT JOIN bm ON bm.memory_id = c.memory_id"
    keep = "" if req.include_inapplicable else " AND c.applicable"
    order = (
        "{t}.applicable DESC, round({t}.score * 1e9::float8) DESC, "
        "{t}.written_at DESC, {t}.memory_id DESC"
    )
    # The best rows, then each one's kind and current subject (what recall's section
    # smoothing reads: ``RankedPage.subjects``), in the same order. Scalar subqueries: per
    # row, by primary key (the statement runs without nested loops, so a join would hash
    # every memory of the tenant).
    current = "(SELECT m.{col} FROM memory m WHERE m.tenant_id = %(t)s AND m.id = top.memory_id)"
    version = current.format(col="current_version")
    subject = (
        "(SELECT st.subject FROM memory_state st WHERE st.tenant_id = %(t)s "
        f"AND st.memory_id = top.memory_id AND st.version = {version})"
    )
    query = (
        f"WITH {ctes} SELECT s.selected, {near} AS near, top.*, "
        f"{current.format(col='kind')} AS kind, {subject} AS subject "
        "FROM stats s LEFT JOIN LATERAL ("
        f"SELECT {_OUT}, sc.written_at FROM (SELECT l.*, {_SCORE} AS score FROM "
        f"(SELECT c.*, {lexical} AS lex FROM {joined} WHERE c.sel{keep}) l) sc "
        f"ORDER BY {order.format(t='sc')} LIMIT %(k)s) top ON true "
        f"ORDER BY {order.format(t='top')}"
    )
    return query, args


def near_duplicates(
    conn: Conn,
    tenant_id: UUID,
    flt: CandidateFilter,
    vector: Vector,
    model: str,
    threshold: float,
    limit: int,
) -> list[NearMatch]:
    """``RecallStore.near_duplicates``: an exact scan of the visible rows' inner products."""
    args = filter_args(tenant_id, flt)
    args.update(q=vector, model=model, dim=int(vector.shape[0]), th=float(threshold), lim=limit)
    columns = (
        "r.memory_id, (r.vector <#> %(q)b::vector) * -1 AS sim, "
        "r.a_persona, r.a_surface, r.a_specialization"
    )
    same_model = "r.model = %(model)s AND vector_dims(r.vector) = %(dim)s"
    own, shared = filter_sql(flt)
    query = (
        f"SELECT * FROM (SELECT {columns} FROM recall_index r WHERE {PROJECT_BRANCH} "
        f"AND {own} AND {same_model} UNION ALL SELECT {columns} FROM recall_index r "
        f"WHERE {SHARED_BRANCH} AND {shared} AND {same_model}) x "
        "WHERE sim >= %(th)s ORDER BY sim DESC, memory_id LIMIT %(lim)s"
    )
    found = conn.execute(query, args, binary=True).fetchall()
    return [
        NearMatch(r[0], float(r[1]), dict(zip(APPLIES_TO_KEYS, r[2:5], strict=True))) for r in found
    ]


def _ranked(position: int, row: tuple[Any, ...], req: RecallRequest) -> Ranked:
    memory_id, scope_rank, conf_code, masks, cos, lex, applicable, score = row
    matched = [k for i, k in enumerate(APPLIES_TO_KEYS) if masks & (1 << i)]
    conflicts = [k for i, k in enumerate(APPLIES_TO_KEYS) if masks & (1 << (3 + i))]
    parts = parts_of(
        req.weights,
        relevance=float(cos),
        lexical=float(lex),
        matched=matched,
        conflicts=conflicts,
        scope_rank=int(scope_rank),
        confidence_code=int(conf_code),
    )
    return Ranked(position, str(memory_id), float(score), bool(applicable), parts)
