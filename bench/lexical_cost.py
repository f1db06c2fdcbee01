"""What hybrid (BM25 + cosine) relevance costs at scale: the cold cache and each query.

Builds once (cached under ``bench/.cache``) a SQLite store of N memorules in one project
whose bodies are real rule texts (``rules.jsonl``, cycled) and whose vectors are synthetic,
then, ``--repeat`` times on a fresh store object (a cold recall cache; the OS page cache
is warm for every variant alike), times:

- ``load_sql_*``: the cache's first-load statement with and without the text column;
- ``cold_recall``: the first recall (cache load, and with a lexical weight, tokenising);
- ``tokenise``: the first BM25 search alone (every row tokenised and indexed);
- ``warm_recall_*``: recall p50/p99 of the dev task texts, lexical weight 0 vs ``--lexical``,
  excluding query embedding (a synthetic embedder).

    python bench/lexical_cost.py --n 100000 --json-out /tmp/lexical_cost.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import lib.common as common
from lib.prism_system import build, context, settings_for
from lib.rules_data import rule_text
from lib.speed_fixtures import prism_load

MODEL = "all-MiniLM-L6-v2-int8-onnx"  # impersonated: stored vectors count as current


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    data = common.shared_bench_dir() / "rules"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000, help="memories in the project")
    p.add_argument("--rules", type=Path, default=data / "rules.jsonl")
    p.add_argument("--queries", type=Path, default=data / "recall_bench_dev.jsonl")
    p.add_argument("--lexical", type=float, default=0.5, help="rank_lexical to compare")
    p.add_argument("--repeat", type=int, default=3, help="cold measurements")
    p.add_argument("--json-out", type=Path, default=None)
    return p.parse_args(argv)


def store_for(args: argparse.Namespace, embedder: Any) -> Path:
    db = common.CACHE / f"prism-lexical-cost-{args.n}.db"
    if db.exists():
        return db
    tmp = db.with_suffix(".building.db")
    tmp.unlink(missing_ok=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    texts = [rule_text(r, "plain") for r in common.load_jsonl(args.rules)]  # as measured
    bodies = [f"{texts[i % len(texts)]} ({i})" for i in range(args.n)]
    svc = build(settings_for(tmp, "fake"), embedder)
    ctx = context("lexical-cost")
    for start in range(0, args.n, 10_000):
        part = bodies[start : start + 10_000]
        prism_load(svc, ctx, start, part, common.synthetic_matrix(len(part), seed=start))
        common.progress(f"lexical-cost store: {start + len(part)}/{args.n}")
    svc.close()
    tmp.rename(db)
    return db


def load_sql(svc: Any, ctx: Any, with_text: bool) -> float:
    """The first-load statement of the SQLite cache, fetched whole."""
    cols = "memory_id, project_id, active, kind, namespace, vector"
    if with_text:
        cols += (
            ", (SELECT coalesce(s.subject || char(10), '') || s.body FROM memory m "
            "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
            "AND s.version = m.current_version "
            "WHERE m.tenant_id = recall_index.tenant_id AND m.id = recall_index.memory_id)"
        )
    conn = svc.store.file.connection()
    started = time.perf_counter()
    conn.execute(
        f"SELECT {cols} FROM recall_index WHERE tenant_id = ? AND project_id = ?",
        (str(ctx.tenant_id), str(ctx.project_id)),
    ).fetchall()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from prism_memory.domain.contract.recall import validate_recall

    args = parse_args(argv)
    embedder = common.SyntheticEmbedder(MODEL)
    db = store_for(args, embedder)
    ctx = context("lexical-cost")
    tasks = [q["task"] for q in common.load_jsonl(args.queries)]
    runs: dict[str, list[float]] = {}

    def note(name: str, seconds: float) -> None:
        runs.setdefault(name, []).append(seconds)

    for _ in range(args.repeat):
        for lexical in (0.0, args.lexical):
            svc = build(settings_for(db, "fake", {"rank_lexical": lexical}), embedder)
            try:
                note("load_sql_with_text", load_sql(svc, ctx, True))
                note("load_sql_without_text", load_sql(svc, ctx, False))
                started = time.perf_counter()
                svc.memory.recalls.recall(ctx, validate_recall({"query": tasks[0], "top_k": 10}))
                note(f"cold_recall_lexical_{lexical}", time.perf_counter() - started)
                if lexical == 0.0:  # the index is still untouched: time tokenising alone
                    cands = svc.store.candidates(
                        ctx.tenant_id, _filter(ctx), svc.memory.deps.embedder.model_id
                    )
                    started = time.perf_counter()
                    cands.lexical_hits(tasks[0])
                    note("tokenise", time.perf_counter() - started)
                for task in tasks:
                    started = time.perf_counter()
                    svc.memory.recalls.recall(ctx, validate_recall({"query": task, "top_k": 10}))
                    note(f"warm_recall_lexical_{lexical}", time.perf_counter() - started)
            finally:
                svc.close()
        common.progress(f"lexical-cost: {json.dumps(_summary(runs))}")
    result = {"n": args.n, "queries": len(tasks), "lexical": args.lexical, **_summary(runs)}
    common.save_report(result, args.json_out)
    return result


def _filter(ctx: Any) -> Any:
    from prism_memory.trigraph.port import CandidateFilter

    return CandidateFilter(project_id=ctx.project_id, persona=None)


def _summary(runs: dict[str, list[float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, seconds in runs.items():
        if name.startswith("warm"):
            out[name] = common.summary_ms(seconds)
        else:
            out[name + "_s"] = round(statistics.median(seconds), 3)
    return out


if __name__ == "__main__":
    main()
