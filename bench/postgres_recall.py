"""Recall ranked in PostgreSQL: latency by project size, and over many projects at once.

Not a test. From the repository root (starts a throwaway PostgreSQL 18 + pgvector)::

    python bench/postgres_recall.py --sizes 2000,10000,100000 --projects 200 --per-project 2000

What is measured (synthetic 384-d unit vectors, query embedding excluded; medians of
``--repeats`` recalls through ``RecallService.recall``, top 10 memorules, including fetching
the 10 records):

- ``sizes``: one project holding N memorules (all N are candidates): a query with words
  (BM25 over the postings and the cosine), an empty query ("what applies now"), and the
  floor: plain pgvector's exact top 10 of the project by the vector alone, plus the records.
- ``projects``: P projects × M memorules in one tenant; recalls that stay in one project
  against recalls spread uniformly over all P (the server holds no per-project state, so
  they should cost the same), and a write into a project nothing recalled recently.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx

MODEL = "all-MiniLM-L6-v2-int8-onnx"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="2000,10000,100000", help="one-project sizes")
    p.add_argument("--projects", type=int, default=200)
    p.add_argument("--per-project", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=40)
    p.add_argument("--json-out", type=Path)
    return p.parse_args(argv)


def services(url: str, table: fx.VectorTable) -> Any:
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings

    svc = build_services(load_settings(database_url=url, embedder="fake"))
    svc.embedder = svc.memory.deps.embedder = svc.memorules.embedder = table
    return svc


def context(project: str) -> Any:
    from prism_memory.domain.ids import uuid_for
    from prism_memory.domain.records import SessionContext

    return SessionContext(
        uuid_for("tenant", "bench"), uuid_for("project", project), uuid_for("s", "b")
    )


def timed(fn: Any, *args: Any) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def by_size(server: Any, n: int, args: argparse.Namespace) -> dict[str, Any]:
    table = fx.VectorTable(MODEL)
    queries = [f"the team rule about {fx.TOPICS[i % len(fx.TOPICS)]} #{i}" for i in range(50)]
    table.register(queries, common.synthetic_matrix(len(queries), seed=n + 1))
    svc = services(server.create_database(f"size_{n}"), table)
    ctx = context("p0")
    load_s = timed(
        lambda: fx.prism_load(
            svc, ctx, 0, [fx.text_of(i) for i in range(n)], common.synthetic_matrix(n)
        )
    )
    words, empty, plain = [], [], []
    for i in range(args.repeats + 2):
        req = {"query": queries[i % len(queries)], "top_k": 10, "source_type": "memorule"}
        t_words = timed(svc.memory.recalls.recall, ctx, req)
        t_empty = timed(svc.memory.recalls.recall, ctx, {**req, "query": ""})
        t_plain = timed(plain_pgvector, svc, ctx, table.embed([req["query"]])[0])
        if i >= 2:  # the first ones warm PostgreSQL's buffers
            words.append(t_words)
            empty.append(t_empty)
            plain.append(t_plain)
    svc.close()
    return {
        "size": n,
        "load_s": round(load_s, 1),
        "recall_query": common.summary_ms(words),
        "recall_empty_query": common.summary_ms(empty),
        "plain_pgvector": common.summary_ms(plain),
    }


def plain_pgvector(svc: Any, ctx: Any, vector: Any) -> None:
    """The floor: an exact pgvector top 10 of the project, then its records (no ranking)."""
    with svc.store.pool.connection() as conn:
        found = conn.execute(
            "SELECT memory_id FROM recall_index WHERE tenant_id = %s AND project_id = %s "
            "AND active ORDER BY vector <#> %b::vector LIMIT 10",
            (ctx.tenant_id, ctx.project_id, vector),
        ).fetchall()
    svc.store.get_many(ctx.tenant_id, [r[0] for r in found])


def many_projects(server: Any, args: argparse.Namespace) -> dict[str, Any]:
    from prism_memory.domain.contract.remember import validate_remember

    table = fx.VectorTable(MODEL)
    svc = services(server.create_database("projects"), table)
    per, names = args.per_project, [f"p{i}" for i in range(args.projects)]
    matrix = common.synthetic_matrix(per * len(names))
    started = time.perf_counter()
    for k, name in enumerate(names):
        lo = k * per
        fx.prism_load(
            svc,
            context(name),
            lo,
            [fx.text_of(i) for i in range(lo, lo + per)],
            matrix[lo : lo + per],
        )
    load_s = time.perf_counter() - started
    rng = random.Random(1)
    queries = [f"the team rule about {fx.TOPICS[i % len(fx.TOPICS)]}" for i in range(50)]
    table.register(queries, common.synthetic_matrix(len(queries), seed=3))
    one, spread, writes = [], [], []
    home = context(names[0])
    for i in range(args.repeats * 2):  # alternate the two, so load hits both alike
        req = {"query": queries[i % len(queries)], "top_k": 10, "source_type": "memorule"}
        one.append(timed(svc.memory.recalls.recall, home, req))
        away = context(rng.choice(names))
        spread.append(timed(svc.memory.recalls.recall, away, req))
    for i in range(args.repeats // 2):
        cold = context(rng.choice(names[1:]))
        body = f"written during the bench {i}: always check the deploy checklist"
        write = {
            "kind": "memorule",
            "memorule_kind": "convention",
            "subject": f"bench {i}",
            "body": body,
            "applies_to": {"scope": "project"},
        }
        writes.append(timed(svc.memory.writes.remember, cold, validate_remember(write)))
    svc.close()
    return {
        "projects": args.projects,
        "per_project": per,
        "load_s": round(load_s, 1),
        "recall_one_project": common.summary_ms(one),
        "recall_random_projects": common.summary_ms(spread),
        "write_cold_project": common.summary_ms(writes),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = common.throwaway_postgres()
    server.start()
    report: dict[str, Any] = {"bench": "postgres_recall", "loadavg_start": os.getloadavg()}
    try:
        report["sizes"] = []
        for n in (int(s) for s in args.sizes.split(",") if s):
            report["sizes"].append(by_size(server, n, args))
            common.progress(json.dumps(report["sizes"][-1]))
        if args.projects:
            report["many_projects"] = many_projects(server, args)
            common.progress(json.dumps(report["many_projects"]))
    finally:
        server.stop()
    common.save_report(report, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
