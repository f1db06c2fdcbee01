"""Recall in one large project on PostgreSQL: exact scoring against the HNSW pre-selection.

Not a test. From the repository root (starts a throwaway PostgreSQL 18 + pgvector)::

    python bench/pg_large.py --sizes 2000,10000,30000,100000 --queries 200
    python bench/pg_large.py --sizes 10000 --explain     # EXPLAIN (ANALYZE, BUFFERS) only

One tenant, one project of N memorules per size, each in its own database, loaded through
the storage port. The rows are mixed the way a team's store is: every scope (project,
global, org, persona), every confidence, a third naming a persona, surface or
specialization, a tenth notes; texts of 6-14 words drawn from a Zipf vocabulary of 20,000
words less its 100 commonest (so a query word is in a handful to ~2% of the rows). Vectors
MiniLM-like (``many_projects.py``: a Gaussian with real MiniLM embeddings' mean and covariance) or
random unit vectors (``--vectors random``). Queries: ``--queries`` different ones, each a
vector of the same distribution, 1-4 words of the vocabulary and a random session context
(persona, surface, specialization, each set or not), ``source_type`` memorule or memory.

For each size, in one loop where the systems take turns query by query (so load moves them
alike; query embedding excluded):

- ``exact``: ``PostgresStore.recall`` scoring every visible row (``index_above`` above N);
- ``index``: ``PostgresStore.recall`` through the pre-selection (``index_above`` 0), and its
  recall@10 against ``exact`` (the share of exact's top-10 ids it returns, over all queries)
  and how many queries returned exactly the same ids in the same order;
- ``plain pgvector exact`` and ``plain pgvector HNSW``: what an application that only sorts
  by the vector would run (``WHERE tenant_id, project_id ORDER BY vector <#> q LIMIT 10``,
  without and with the index), no records fetched.

``--others M``: the tenant also holds M memories in 10 other projects, in the same tables
and the same HNSW index (the index scan then skips other projects' rows). ``write``: one
memorule per transaction with the HNSW index, then without it (``--writes`` of each).

The HNSW index is dropped before a size is loaded and built again after (loading through
it costs ~9 ms a row here; ``hnsw_build_s`` is the build). Medians and p99 in ms, and the
load average at start and end of each size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lib.common as common
import numpy as np

TOP_K = 10
PERSONAS = ("ana", "bo", "cy", "dee", "eli")
SURFACES = ("cli", "web", "api", "mobile", "infra", "docs")
SPECIALIZATIONS = ("backend", "frontend", "security", "data")
SCOPES = (("project", 0.6), ("global", 0.1), ("org", 0.1), ("persona", 0.05), (None, 0.15))
CONFIDENCES = (("observed", 0.3), ("inferred", 0.4), ("asserted", 0.3))
KINDS = ("behavioral_rule", "feedback", "preference", "correction", "convention")
VOCABULARY = 20000


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="2000,10000,30000,100000")
    p.add_argument("--queries", type=int, default=200, help="timed recalls per system and size")
    p.add_argument("--vectors", choices=("minilm-like", "random"), default="minilm-like")
    p.add_argument("--explain", action="store_true", help="print query plans, time nothing")
    p.add_argument(
        "--baseline-ranking",
        type=Path,
        help="also time this postgres_ranking.py (another version's) on the same data",
    )
    p.add_argument("--writes", type=int, default=40, help="timed writes with and without HNSW")
    p.add_argument(
        "--others",
        type=int,
        default=0,
        help="memories in 10 other projects of the tenant, in the same tables and index",
    )
    p.add_argument(
        "--variants",
        default="",
        help="';'-separated index-path settings to compare, each NAME=value,... of "
        "postgres_preselect's constants (empty: as shipped)",
    )
    p.add_argument("--json-out", type=Path)
    return p.parse_args(argv)


def word(rng: random.Random) -> str:
    """A word of a Zipf vocabulary (P(rank r) ~ 1/r), its 100 most frequent ranks left out
    as the stopwords the tokenizer drops: the commonest word is in ~2% of the texts."""
    return f"w{int(100 * (VOCABULARY / 100) ** rng.random())}x"


def pick(rng: random.Random, weighted: tuple[tuple[Any, float], ...]) -> Any:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def load(store: Any, ctx: Any, n: int, matrix: np.ndarray, model: str, seed: int) -> None:
    """``n`` mixed memories into the context's project, 1,000 per transaction."""
    from prism_memory.domain.ids import new_id
    from prism_memory.domain.records import (
        AppliesTo,
        AuditEventType,
        Confidence,
        Kind,
        MemoruleKind,
        Memory,
        MemoryState,
        Scope,
        Status,
        utcnow,
    )
    from prism_memory.services.memorule_service import MemoruleService
    from prism_memory.trigraph.port import StateWrite, WriteBatch

    rng = random.Random(seed)
    auditor = MemoruleService(store, None)  # its audit drafts hash the rule's project
    for lo in range(0, n, 1000):
        batch = WriteBatch(tenant_id=ctx.tenant_id)
        for j in range(lo, min(n, lo + 1000)):
            now = utcnow()
            note = rng.random() < 0.1
            kind = Kind.NOTE if note else Kind.MEMORULE
            memory = Memory(
                id=new_id(),
                tenant_id=ctx.tenant_id,
                project_id=ctx.project_id,
                namespace="default",
                kind=kind,
                status=Status.ACTIVE,
                created_at=now,
            )
            body = " ".join(word(rng) for _ in range(rng.randint(6, 14)))
            extra: dict[str, Any] = {}
            if not note:
                scope = pick(rng, SCOPES)
                persona = (
                    rng.choice(PERSONAS) if scope == "persona" or rng.random() < 0.15 else None
                )
                extra = {
                    "memorule_kind": MemoruleKind(rng.choice(KINDS)),
                    "confidence": Confidence(pick(rng, CONFIDENCES)),
                    "applies_to": AppliesTo(
                        persona=persona,
                        surface=rng.choice(SURFACES) if rng.random() < 0.15 else None,
                        specialization=rng.choice(SPECIALIZATIONS) if rng.random() < 0.1 else None,
                        scope=Scope(scope) if scope else None,
                    ),
                }
            state = MemoryState(
                id=new_id(),
                memory_id=memory.id,
                version=1,
                body=body,
                subject=f"rule {j}" if not note else None,
                written_by_session_id=ctx.session_id,
                written_by_persona=None,
                written_at=now,
                embedding_model=model,
                **extra,
            )
            batch.new_memories.append(memory)
            batch.states.append(StateWrite(state, matrix[j]))
            if not note:
                batch.audits.append(
                    auditor.audit_draft(ctx, memory, state, AuditEventType.CREATED, None, now)
                )
        store.write(batch)


def queries(n: int, qmatrix: np.ndarray, ctx: Any, seed: int) -> list[Any]:
    """``n`` recall requests as the service builds them (the port's RecallRequest)."""
    from prism_memory.domain.ranking import RankingWeights, normalise_key
    from prism_memory.domain.records import SessionContext
    from prism_memory.trigraph.port import CandidateFilter, RecallRequest

    rng = random.Random(seed)
    out = []
    for i in range(n):
        persona = rng.choice((*PERSONAS, None))
        qctx = SessionContext(
            tenant_id=ctx.tenant_id,
            project_id=ctx.project_id,
            session_id=ctx.session_id,
            persona=persona,
            surface=rng.choice((*SURFACES, None)),
            specialization=rng.choice((*SPECIALIZATIONS, None)),
        )
        flt = CandidateFilter(
            ctx.project_id, persona=normalise_key(persona), memorules_only=rng.random() < 0.7
        )
        text = " ".join(word(rng) for _ in range(rng.randint(1, 4)))
        out.append(RecallRequest(flt, qctx, text, qmatrix[i], MODEL[0], RankingWeights(), TOP_K))
    return out


MODEL = ["all-MiniLM-L6-v2-int8-onnx"]
HNSW_INDEX = "recall_index_by_vector_384"


def hnsw_ddl() -> str:
    """The CREATE INDEX of the opt-in HNSW index, as ``prism migrate --vector-index`` runs it
    (the same statement for a PRISM_BACKEND from before it, for plain pgvector's queries)."""
    try:
        from prism_memory.trigraph.postgres.schema import VECTOR_INDEX_DDL
    except ImportError:  # a backend from before the index path
        return (
            f"CREATE INDEX {HNSW_INDEX} ON recall_index USING hnsw ((vector::vector(384)) "
            "vector_ip_ops) WHERE active AND vector_dims(vector) = 384"
        )
    return str(VECTOR_INDEX_DDL)


def plain(conn: Any, ctx: Any, q: np.ndarray, hnsw: bool) -> list[Any]:
    """Plain pgvector: the project's top 10 by inner product, exact or through the index."""
    dim = int(q.shape[0])
    if hnsw:
        conn.execute("BEGIN")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        order = f"vector::vector({dim}) <#> %s::vector({dim})"
        extra = f" AND vector_dims(vector) = {dim}"
    else:
        order, extra = "vector <#> %s::vector", ""
    found = conn.execute(
        "SELECT memory_id FROM recall_index WHERE tenant_id = %s AND project_id = %s "
        f"AND active{extra} ORDER BY {order} LIMIT %s",
        (ctx.tenant_id, ctx.project_id, q, TOP_K),
        binary=True,
    ).fetchall()
    if hnsw:
        conn.execute("COMMIT")
    return found


def baseline(store: Any, ctx: Any, path: Path) -> Any:
    """``recall`` of the postgres_ranking module at ``path`` (e.g. from ``git show
    REV:backend/prism_memory/trigraph/postgres/ranking.py``), on ``store``'s connections."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("baseline_ranking", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def run(req: Any) -> Any:
        with store.pool.connection() as conn:
            return module.recall(conn, ctx.tenant_id, req)

    return run


def tuned(store: Any, ctx: Any, variant: str) -> Any:
    """``store.recall`` with the index path's constants (``postgres_preselect``'s, also
    where ``postgres_ranking`` reads them) set from ``variant`` (``NAME=value,...``; empty:
    the shipped ones) for the call."""
    from prism_memory.trigraph.postgres import preselect as pp
    from prism_memory.trigraph.postgres import ranking as pr

    changes = {}
    for part in filter(None, (p.strip() for p in variant.split(","))):
        name, value = part.split("=")
        changes[name] = type(getattr(pp, name))(value if value != "False" else "")
    where = [(m, name) for name in changes for m in (pp, pr) if hasattr(m, name)]

    def run(req: Any) -> Any:
        saved = {(m, name): getattr(m, name) for m, name in where}
        for m, name in where:
            setattr(m, name, changes[name])
        try:
            return store.recall(ctx.tenant_id, req)
        finally:
            for (m, name), value in saved.items():
                setattr(m, name, value)

    return run


def explain(store: Any, ctx: Any, reqs: list[Any]) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of the recall statement, exact and through the index."""
    from prism_memory.trigraph.postgres import preselect as pp
    from prism_memory.trigraph.postgres import ranking as pr

    with store.pool.connection() as conn:
        for label, above in (("exact", None), ("index", 0)):
            for req in reqs[:2]:
                sql, args = pr.recall_sql(ctx.tenant_id, req, above)
                conn.execute("BEGIN")
                for setting in pp.session_settings(above is not None):
                    conn.execute(setting)
                plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, args).fetchall()
                conn.execute("ROLLBACK")
                print(f"--- {label}: {req.query!r}", file=sys.stderr)
                print("\n".join(r[0] for r in plan), file=sys.stderr)


def one_size(server: Any, n: int, args: argparse.Namespace, moments: Any) -> dict[str, Any]:
    import psycopg

    from prism_memory.domain.ids import uuid_for
    from prism_memory.domain.records import SessionContext
    from prism_memory.trigraph.postgres.conn import _configure  # numpy vectors as pgvector
    from prism_memory.trigraph.postgres.store import PostgresStore

    url = server.create_database(f"large_{n}_{args.others}")
    ctx = SessionContext(
        uuid_for("tenant", "bench"), uuid_for("project", "big"), uuid_for("s", "b")
    )
    try:
        exact = PostgresStore(url, index_above=10**9)
    except TypeError:  # PRISM_BACKEND: a backend from before the index path (exact only)
        exact = PostgresStore(url)
        args.variants = None
    exact.migrate()
    index = PostgresStore(url, index_above=0) if args.variants is not None else exact
    matrix = vectors(n, moments, seed=n)
    common.progress(f"size {n}: loading")
    with psycopg.connect(url, autocommit=True) as conn:  # built once after the load
        conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    started = time.perf_counter()
    load(exact, ctx, n, matrix, MODEL[0], seed=n)
    for k in range(10 if args.others else 0):  # other projects, same tenant, same index
        other = SessionContext(ctx.tenant_id, uuid_for("project", f"other{k}"), ctx.session_id)
        rows = args.others // 10
        load(exact, other, rows, vectors(rows, moments, seed=n + 10 + k), MODEL[0], seed=k)
    load_s = time.perf_counter() - started
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(hnsw_ddl())
        build_s = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE")
    reqs = queries(args.queries, vectors(args.queries, moments, seed=n + 1), ctx, seed=n + 2)
    if args.explain:
        explain(exact, ctx, reqs)
        exact.close()
        if index is not exact:
            index.close()
        return {}
    conn = psycopg.connect(url, autocommit=True)
    _configure(conn)
    systems: dict[str, Any] = {"exact": lambda r: exact.recall(ctx.tenant_id, r)}
    if args.baseline_ranking:  # another version's postgres_ranking.py, on the same data
        systems["exact (baseline ranking)"] = baseline(exact, ctx, args.baseline_ranking)
    for variant in args.variants.split(";") if args.variants is not None else []:
        systems[f"index {variant}".strip()] = tuned(index, ctx, variant)
    systems.update(
        {
            "plain pgvector exact": lambda r: plain(conn, ctx, r.vector, hnsw=False),
            "plain pgvector HNSW": lambda r: plain(conn, ctx, r.vector, hnsw=True),
        }
    )
    for fn in systems.values():  # untimed warm-up: the server's caches
        for r in reqs[:5]:
            fn(r)
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in systems}
    found: dict[str, list[Any]] = {name: [] for name in systems}
    order = list(systems.items())
    for i, req in enumerate(reqs):
        for name, fn in order if i % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            page = fn(req)
            times[name].append(time.perf_counter() - t0)
            found[name].append(page)
    out: dict[str, Any] = {
        "load_s": round(load_s, 1),
        "hnsw_build_s": round(build_s, 1),
        "loadavg_start": load_start,
    }
    for name, samples in times.items():
        out[name] = common.summary_ms(samples)
    for name in systems:
        if not name.startswith("index"):
            continue
        hits = total = same = 0
        for e, x in zip(found["exact"], found[name], strict=True):
            want, got = [r.memory_id for r in e.ranked], [r.memory_id for r in x.ranked]
            hits += len(set(want) & set(got))
            total += len(want)
            same += want == got and [r.score for r in e.ranked] == [r.score for r in x.ranked]
        out[name]["recall_at_10"] = round(hits / max(total, 1), 4)
        out[name]["identical_top10"] = f"{same}/{len(reqs)}"
    ph = pt = 0
    for e, x in zip(found["plain pgvector exact"], found["plain pgvector HNSW"], strict=True):
        ph += len({r[0] for r in e} & {r[0] for r in x})
        pt += len(e)
    out["plain_hnsw_recall_at_10"] = round(ph / max(pt, 1), 4)
    out["write_one_memorule"] = write_cost(exact, ctx, conn, moments, args.writes)
    out["loadavg_end"] = os.getloadavg()
    conn.close()
    exact.close()
    if index is not exact:
        index.close()
    return out


def write_cost(store: Any, ctx: Any, conn: Any, moments: Any, n: int) -> dict[str, Any]:
    """One memorule per transaction (the storage port's write), with the HNSW index and
    then after dropping it (the database is not used after)."""
    if not n:
        return {}
    matrix = vectors(2 * n, moments, seed=77)
    times: dict[str, list[float]] = {"with HNSW": [], "without": []}
    for part in ("with HNSW", "without"):
        if part == "without":
            conn.execute(f"DROP INDEX {HNSW_INDEX}")
        for i in range(n):
            j = i + (n if part == "without" else 0)
            t0 = time.perf_counter()
            load(store, ctx, 1, matrix[j : j + 1], MODEL[0], seed=1000 + j)
            times[part].append(time.perf_counter() - t0)
    return {k: common.summary_ms(v) for k, v in times.items()}


def vectors(n: int, moments: Any, seed: int) -> np.ndarray:
    if moments is None:
        return common.synthetic_matrix(n, seed=seed)
    return common.minilm_like_matrix(n, moments, seed=seed)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.install_offline_guard()
    from engines import throwaway_postgres

    moments = None
    if args.vectors == "minilm-like":
        from lib.speed_fixtures import rule_texts

        real = common.make_embedder("minilm")
        MODEL[0], moments = real.model_id, common.minilm_moments(real, rule_texts(2000))
    server = throwaway_postgres()
    server.start()
    common.progress(f"PostgreSQL up in {server.startup_seconds:.2f} s")
    result: dict[str, Any] = {
        "bench": "pg_large",
        "settings": {k: str(v) for k, v in vars(args).items()},
        "machine": common.machine_info(),
        "loadavg_start": os.getloadavg(),
        "sizes": {},
    }
    work = Path(tempfile.mkdtemp(prefix="bench-pglarge-"))
    try:
        for n in (int(s) for s in args.sizes.split(",") if s):
            result["sizes"][str(n)] = one_size(server, n, args, moments)
            common.progress(f"size {n}: {json.dumps(result['sizes'][str(n)])}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    common.save_report(result, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
