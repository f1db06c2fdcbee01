"""BM25 postings on PostgreSQL: the lexical half of recall, kept at write time.

Recall computes BM25 in SQL (:mod:`~prism_memory.trigraph.postgres.ranking`) from ``recall_term``:
one
row per (memory, term) of the memory's current text, tokenised in Python by the same
:func:`prism_memory.domain.lexical.tokenize` the embedded engine uses, so both engines see the same
words (PostgreSQL's ``tsvector`` would stem and drop different ones). Each posting repeats the
columns recall filters it by — the memory's project, whether its scope is tenant-wide
(``shared``: ``global`` / ``org``), whether it is live — so df and the postings of a query's
terms are read from one index per visibility branch without touching ``recall_index``.
``recall_index.doc_len`` holds the document's length (its token count) for N and avgdl.

Every write path keeps them right: a new state rewrites the memory's postings (text, scope
or project may have changed), a status change flips ``active``, a load inserts them, and
migration 3 backfills existing rows (:func:`backfill`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

import psycopg

from prism_memory.domain.lexical import tokenize
from prism_memory.domain.records import MemoryState, Scope

Conn = psycopg.Connection[tuple[Any, ...]]

SHARED_SCOPES: Final = (Scope.GLOBAL.value, Scope.ORG.value)

INSERT_TERMS: Final = (
    "INSERT INTO recall_term (tenant_id, memory_id, term, tf, doc_len, project_id, shared, "
    "active) SELECT %s, %s, t.term, t.tf, %s, %s, %s, %s "
    "FROM unnest(%s::text[], %s::integer[]) AS t(term, tf)"
)
DELETE_TERMS: Final = "DELETE FROM recall_term WHERE tenant_id = %s AND memory_id = %s"
SET_TERMS_ACTIVE: Final = (
    "UPDATE recall_term SET active = %s WHERE tenant_id = %s AND memory_id = %s"
)
BACKFILL_PAGE: Final = 1000


@dataclass(frozen=True)
class Postings:
    """A document's index terms: its length and each distinct term's frequency."""

    doc_len: int
    terms: list[str]
    tf: list[int]

    @classmethod
    def of_text(cls, text: str) -> Postings:
        tokens = tokenize(text)
        counts = Counter(tokens)
        terms = sorted(counts)
        return cls(len(tokens), terms, [counts[t] for t in terms])

    @classmethod
    def of_state(cls, s: MemoryState) -> Postings:
        """The postings of a state's text: subject and body, as recall indexes them."""
        return cls.of_text(f"{s.subject}\n{s.body}" if s.subject else s.body)


def is_shared(scope: str | None) -> bool:
    """True for the scopes every project of the tenant sees (``global``, ``org``)."""
    return scope in SHARED_SCOPES


def insert_params(
    tenant_id: UUID,
    memory_id: UUID,
    project_id: UUID,
    scope: str | None,
    active: bool,
    p: Postings,
) -> tuple[Any, ...] | None:
    """Parameters of :data:`INSERT_TERMS` for one memory, or None when it has no terms."""
    if not p.terms:
        return None
    shared = is_shared(scope)
    return (tenant_id, memory_id, p.doc_len, project_id, shared, active, p.terms, p.tf)


def backfill(conn: Conn) -> None:
    """Migration 3's data step: postings and ``doc_len`` for rows written before it.

    Pages through ``recall_index`` by key, tokenising each page's current texts; a row is
    done once its ``doc_len`` is set, and postings already present are left alone, so a
    re-run does only what is missing.
    """
    after: tuple[UUID, UUID] = (UUID(int=0), UUID(int=0))
    while True:
        page = conn.execute(
            "SELECT r.tenant_id, r.memory_id, r.project_id, r.scope, r.active, s.subject, "
            "s.body FROM recall_index r JOIN memory m ON m.tenant_id = r.tenant_id "
            "AND m.id = r.memory_id JOIN memory_state s ON s.tenant_id = m.tenant_id "
            "AND s.memory_id = m.id AND s.version = m.current_version "
            "WHERE (r.tenant_id, r.memory_id) > (%s, %s) AND r.doc_len IS NULL "
            "ORDER BY r.tenant_id, r.memory_id LIMIT %s",
            (*after, BACKFILL_PAGE),
        ).fetchall()
        if not page:
            return
        terms, lengths = [], []
        for tenant, memory_id, project, scope, active, subject, body in page:
            p = Postings.of_text(f"{subject}\n{body}" if subject else body)
            params = insert_params(tenant, memory_id, project, scope, active, p)
            if params is not None:
                terms.append(params)
            lengths.append((p.doc_len, tenant, memory_id))
        with conn.cursor() as cur:
            if terms:
                cur.executemany(INSERT_TERMS + " ON CONFLICT DO NOTHING", terms)
            cur.executemany(
                "UPDATE recall_index SET doc_len = %s WHERE tenant_id = %s AND memory_id = %s",
                lengths,
            )
        after = (page[-1][0], page[-1][1])
