"""Recall on PostgreSQL, ranked in the database: one statement per recall, next to the data.

The statement applies what :func:`app.domain.ranking.rank` applies in process, in SQL:

- **Visibility** (DESIGN §6), as two index branches of one ``UNION ALL``: the project's own
  live rows (``recall_index_by_project``) and the tenant's ``global``/``org`` rows of other
  projects (``recall_index_by_scope``); in the project, ``persona`` rules only of the viewer.
  Every branch filters by ``tenant_id`` first, so the statement runs unchanged on Citus.
- **Filters** of :class:`~app.trigraph.port.CandidateFilter` and **applicability** (a rule
  naming another value than the context conflicts and is left out, or ranked last).
- **Relevance**: the clipped inner product of the stored and query vectors (pgvector's
  ``<#>``: every embedder emits unit vectors, so it is their cosine, summed in float32 as
  numpy does) and BM25 (:mod:`app.domain.lexical`'s k1, b and idf) computed from the
  ``recall_term`` postings (:mod:`~app.trigraph.postgres_terms`), its statistics N, avgdl and
  df over the live rows the project can see, whatever the viewer's persona.
- **The §6 score** in float8, with the same operations in the same order as the numpy ranker,
  then the order: applicable first, ``round(score, 9)`` (``rint(score · 1e9)``, as numpy
  rounds), newer ``written_at``, larger id; ``LIMIT top_k``.

Search is exact (every visible row's vector is read); ``docs/postgres.md`` has the measured
latencies and why no approximate index is used. The statement returns the best rows with the
parts of their scores, and :func:`app.domain.ranking.why_of` explains them as ``rank`` does.
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

import psycopg

from app.domain.lexical import K1, B, tokenize
from app.domain.ranking import (
    CONFIDENCE_CODE,
    SCOPE_RANK,
    Ranked,
    applicability,
    normalise_key,
    why_of,
)
from app.domain.records import APPLIES_TO_KEYS, Kind
from app.embeddings.port import Vector
from app.trigraph.port import CandidateFilter, NearMatch, RankedPage, RecallRequest

Conn = psycopg.Connection[tuple[Any, ...]]

_MEMORULE: Final = Kind.MEMORULE.value
_PROJECT_BRANCH: Final = "r.tenant_id = %(t)s AND r.active AND r.project_id = %(p)s"
_SHARED_BRANCH: Final = (
    "r.tenant_id = %(t)s AND r.active AND r.scope IN ('global', 'org') AND r.project_id <> %(p)s"
)
# In its own project a row is seen unless it is another persona's rule.
_OWN_VISIBLE: Final = "(r.scope IS DISTINCT FROM 'persona' OR r.a_persona = %(viewer)s)"
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
), ceiling AS (
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
    "c.conf_w * (%(w_relevance)s * ((1.0::float8 - c.alpha) * c.cos + c.alpha * c.lex) "
    "+ (%(w_overlap)s * c.matches + %(w_scope)s * c.scope_rank + %(w_prior)s))"
)
_OUT: Final = (
    "memory_id, kind, scope, confidence, a_persona, a_surface, a_specialization, "
    "cos, lex, applicable, score"
)


def recall(conn: Conn, tenant_id: UUID, req: RecallRequest) -> RankedPage:
    """``RecallStore.recall`` in one statement (see the module's docstring)."""
    args = _filter_args(tenant_id, req.filter)
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
        args.update(terms=terms, k1=K1, k1_1=K1 + 1.0, b=B)
    if req.vector is not None:
        args.update(q=req.vector, model=req.model, dim=int(req.vector.shape[0]))
    matches, conflicts = _applicability_sql(req, args)
    cosine = _COSINE if req.vector is not None else "0.0::float8"
    lexical = _LEXICAL_SHARE if terms else "0.0::float8"
    keep = "" if req.include_inapplicable else f" AND NOT {conflicts}"
    columns = (
        "r.memory_id, r.kind, r.scope, r.confidence, r.a_persona, r.a_surface, "
        f"r.a_specialization, r.written_at, {cosine} AS cos, {lexical} AS lex, "
        f"({matches})::float8 AS matches, NOT {conflicts} AS applicable, "
        f"({_SCOPE_RANK})::float8 AS scope_rank, {_CONF_W} AS conf_w, "
        f"CASE WHEN r.kind = '{_MEMORULE}' THEN %(w_lexical)s ELSE %(w_lexical_note)s END "
        "AS alpha"
    )
    joined = "recall_index r"
    if terms:
        joined += " CROSS JOIN ceiling ce LEFT JOIN bm ON bm.memory_id = r.memory_id"
    selected_own, selected_shared = _selected(req.filter)
    candidates = (
        f"SELECT {columns} FROM {joined} WHERE {_PROJECT_BRANCH} AND {selected_own}{keep} "
        f"UNION ALL SELECT {columns} FROM {joined} "
        f"WHERE {_SHARED_BRANCH} AND {selected_shared}{keep}"
    )
    query = (
        f"{_stats_cte(req.filter)}{_LEXICAL_CTES if terms else ''} "
        f"SELECT s.selected, top.* FROM stats s LEFT JOIN LATERAL ("
        f"SELECT {_OUT} FROM (SELECT c.*, {_SCORE} AS score FROM ({candidates}) c) sc "
        "ORDER BY sc.applicable DESC, round(sc.score * 1e9::float8) DESC, "
        "sc.written_at DESC, sc.memory_id DESC LIMIT %(k)s) top ON true"
    )
    found = conn.execute(query, args, binary=True).fetchall()
    total = int(found[0][0]) if found else 0
    ranked = [_ranked(i, row[1:], req) for i, row in enumerate(found) if row[1] is not None]
    return RankedPage(ranked, total)


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
    args = _filter_args(tenant_id, flt)
    args.update(q=vector, model=model, dim=int(vector.shape[0]), th=float(threshold), lim=limit)
    columns = (
        "r.memory_id, (r.vector <#> %(q)b::vector) * -1 AS sim, "
        "r.a_persona, r.a_surface, r.a_specialization"
    )
    same_model = "r.model = %(model)s AND vector_dims(r.vector) = %(dim)s"
    own, shared = _selected(flt)
    query = (
        f"SELECT * FROM (SELECT {columns} FROM recall_index r WHERE {_PROJECT_BRANCH} "
        f"AND {own} AND {same_model} UNION ALL SELECT {columns} FROM recall_index r "
        f"WHERE {_SHARED_BRANCH} AND {shared} AND {same_model}) x "
        "WHERE sim >= %(th)s ORDER BY sim DESC, memory_id LIMIT %(lim)s"
    )
    found = conn.execute(query, args, binary=True).fetchall()
    return [
        NearMatch(r[0], float(r[1]), dict(zip(APPLIES_TO_KEYS, r[2:5], strict=True))) for r in found
    ]


def _filter_args(tenant_id: UUID, flt: CandidateFilter) -> dict[str, Any]:
    args: dict[str, Any] = {
        "t": tenant_id,
        "p": flt.project_id,
        "viewer": normalise_key(flt.persona),
        "ns": flt.namespace,
        "kinds": [k.value for k in flt.memorule_kinds],
        "confidences": [c.value for c in flt.confidences],
    }
    for key, value in flt.exclude_conflicts.items():
        args[f"x_{_key(key)}"] = value
    return args


def _selected(flt: CandidateFilter) -> tuple[str, str]:
    """The filter's conditions for the project branch and for the shared branch."""
    parts = []
    if flt.memorules_only:
        parts.append(f"r.kind = '{_MEMORULE}'")
    if flt.namespace is not None:
        parts.append("r.namespace = %(ns)s")
    if flt.memorule_kinds:
        parts.append("r.memorule_kind = ANY(%(kinds)s)")
    if flt.confidences:
        parts.append("r.confidence = ANY(%(confidences)s)")
    for key in flt.exclude_conflicts:
        column = _key(key)
        parts.append(f"(r.a_{column} IS NULL OR r.a_{column} = %(x_{column})s)")
    common = " AND ".join(parts) if parts else "true"
    return f"{_OWN_VISIBLE} AND {common}", common


def _stats_cte(flt: CandidateFilter) -> str:
    """N and the total length of the live visible rows (BM25), and how many pass the filter."""
    own, shared = _selected(flt)
    return (
        "WITH stats AS MATERIALIZED (SELECT n, len, selected, "
        "CASE WHEN len > 0 THEN len / n ELSE 1.0::float8 END AS avgdl FROM ("
        "SELECT count(*)::float8 AS n, coalesce(sum(doc_len), 0)::float8 AS len, "
        "count(*) FILTER (WHERE sel) AS selected FROM ("
        f"SELECT r.doc_len, ({own}) AS sel FROM recall_index r WHERE {_PROJECT_BRANCH} "
        f"UNION ALL SELECT r.doc_len, ({shared}) AS sel FROM recall_index r "
        f"WHERE {_SHARED_BRANCH}) x) y)"
    )


def _applicability_sql(req: RecallRequest, args: dict[str, Any]) -> tuple[str, str]:
    """SQL counting the applies_to keys a row matches, and SQL true when one conflicts."""
    matches, conflicts = [], []
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(req.context.value(key))
        if wanted is None:
            continue
        column = _key(key)
        args[f"c_{column}"] = wanted
        matches.append(f"(r.a_{column} = %(c_{column})s)::int")
        conflicts.append(f"r.a_{column} <> %(c_{column})s")
    if not matches:
        return "0", "false"
    memorule = f"r.kind = '{_MEMORULE}'"
    # A NULL a_* (the rule names no value) neither matches nor conflicts.
    matched = " + ".join(f"coalesce({m}, 0)" for m in matches)
    count = f"CASE WHEN {memorule} THEN {matched} ELSE 0 END"
    conflict = f"({memorule} AND coalesce({' OR '.join(conflicts)}, false))"
    return count, conflict


def _key(key: str) -> str:
    """An applies_to key as a column suffix; only the three known keys pass."""
    if key not in APPLIES_TO_KEYS:
        raise ValueError(f"unknown applies_to key {key!r}")
    return key


def _ranked(position: int, row: tuple[Any, ...], req: RecallRequest) -> Ranked:
    memory_id, kind, scope, confidence, persona, surface, specialization = row[:7]
    cos, lex, applicable, score = row[7:]
    applies = {"persona": persona, "surface": surface, "specialization": specialization}
    matched, conflicts = applicability(req.context, kind == _MEMORULE, applies)
    why = why_of(
        req.weights,
        relevance=float(cos),
        lexical=float(lex),
        matched=matched,
        conflicts=conflicts,
        scope_rank=SCOPE_RANK.get(scope, 2),
        confidence_code=CONFIDENCE_CODE.get(confidence, 3),
        score=float(score),
    )
    return Ranked(position, str(memory_id), float(score), bool(applicable), why)
