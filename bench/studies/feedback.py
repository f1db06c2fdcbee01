"""Pseudo-relevance feedback (Rocchio) on the dense side, measured before building it.

A negative result, kept so it can be re-run: nothing of it is in the product
(``results/studies/feedback.json``, bench/README "Studies"). After the product's own
first ranking, the query vector moves towards the mean of the top ``m`` results' stored
vectors, ``q' = normalise(q + beta * mean(v_1..v_m))``, and the same recall runs again
with ``q'`` (only when the query is non-empty). The hook wraps the SQLite store's ``recall`` (the
engine that ranks in process), so both passes are the product's ranking, unchanged;
the vectors are the stored rows of the candidates the first pass ranked.

Variants (``--variant``):

- ``dense``: the lexical side unchanged (BM25 of the query as sent);
- ``matched``: feedback only from the top ``m`` results that match a context key;
- ``lexical``: ``dense``, plus the top ``m`` results' texts appended to the query the
  lexical side reads (a crude expansion: the BM25 ceiling grows with every added term).

    python bench/studies/feedback.py rules --json-out /tmp/fb_rules.json --pred-dir /tmp/fb
    python bench/studies/feedback.py locomo --cells 0:0,5:0.5 --json-out /tmp/fb_locomo.json

Rules: the dev split, every cell of ``--m`` x ``--beta`` against feedback off, paired over
queries (``bench/lib/paired.py``). LoCoMo: the tuning half, the same cells (``--cells`` to pick).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import numpy as np
from variants import LocomoTune, load_average, topic_mean

# (m, beta, variant) of the current run; m 0 = feedback off.
PARAMS: dict[str, Any] = {"m": 0, "beta": 0.0, "variant": "dense"}


def hook(store: Any) -> None:
    """Wrap ``store.recall`` (SQLite) with the feedback pass ``PARAMS`` describes."""
    first_pass = store.recall

    def recall(tenant_id: UUID, request: Any) -> Any:
        m, beta, variant = PARAMS["m"], PARAMS["beta"], PARAMS["variant"]
        if m <= 0 or beta <= 0 or request.vector is None:
            return first_pass(tenant_id, request)
        top = first_pass(tenant_id, replace(request, top_k=m)).ranked
        if variant == "matched":
            top = [r for r in top if r.why.get("matched")]
        if not top:
            return first_pass(tenant_id, request)
        cands = store.candidates(tenant_id, request.filter, request.model)
        assert all(str(cands.ids[r.index]) == r.memory_id for r in top)
        mean = cands.matrix[[r.index for r in top]].astype(np.float32).mean(axis=0)
        moved = np.asarray(request.vector, dtype=np.float32) + np.float32(beta) * mean
        moved = (moved / np.linalg.norm(moved)).astype(np.float32)
        query = request.query
        if variant == "lexical":
            found = store.get_many(tenant_id, [UUID(r.memory_id) for r in top])
            texts = [s.embedding_text() for _, s in found.values()]
            query = " ".join([query, *texts])
        return first_pass(tenant_id, replace(request, vector=moved, query=query))

    store.recall = recall


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", choices=["rules", "locomo"])
    p.add_argument("--m", default="3,5,10", help="feedback depths")
    p.add_argument("--beta", default="0.25,0.5,1.0", help="feedback weights")
    p.add_argument("--cells", default="", help="explicit m:beta cells (overrides the grid)")
    p.add_argument("--variant", default="dense", choices=["dense", "matched", "lexical"])
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--pred-dir", type=Path, default=None, help="keep every cell's PRED.jsonl")
    return p.parse_args(argv)


def cells(args: argparse.Namespace) -> list[tuple[int, float]]:
    if args.cells:
        return [(int(a), float(b)) for a, b in (c.split(":") for c in args.cells.split(","))]
    ms = [int(x) for x in args.m.split(",")]
    betas = [float(x) for x in args.beta.split(",")]
    return [(0, 0.0)] + [(m, b) for m in ms for b in betas]


def run_rules(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    import rules_quality as rq
    from lib.paired import paired

    rargs = rq.parse_args(["--out", str(out_dir / "cell.jsonl")])
    rules, queries = rq.load_inputs(rargs)
    system = rq.make_system(rargs, common.CachedEmbedder(common.make_embedder("minilm")), {})
    system.load(rules)
    hook(system.svc.store)
    results: dict[str, Any] = {}
    base: dict[str, dict[str, float]] = {}
    for m, beta in cells(args):
        PARAMS.update(m=m, beta=beta, variant=args.variant)
        runs, _ = rq.run_queries(system, queries)
        pred = out_dir / f"rules-{args.variant}-m{m}-b{beta}.jsonl"
        rq.write_pred(pred, runs)
        report = rq.score(rargs, pred, "dev")["groups"]
        per_q = rq.per_query_metrics(rargs, queries, pred)
        cell: dict[str, Any] = {
            "m": m,
            "beta": beta,
            "all": report["all"],
            "general_guidelines_ndcg@10": topic_mean(queries, per_q, "general-guidelines"),
            "not_applicable_returned": rq.no_leak_check(rules, queries, runs),
            "load_average": load_average(),
        }
        if m == 0:
            base = per_q
        else:
            for metric in ("ndcg@10", "recall@5"):
                cell[f"vs_off_{metric}"] = paired(
                    {q: v[metric] for q, v in per_q.items()},
                    {q: v[metric] for q, v in base.items()},
                )
        results[f"m{m}_b{beta}"] = cell
        common.progress(f"rules {args.variant} m {m} beta {beta}: {json.dumps(cell)}")
    system.close()
    return results


def run_locomo(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    from lib.paired import paired

    half = LocomoTune.load(out_dir, "bench-fb-", lambda store, _embedder: hook(store))
    results: dict[str, Any] = {}
    base: dict[int, dict[str, float]] = {}
    for m, beta in cells(args):
        PARAMS.update(m=m, beta=beta, variant=args.variant)
        pred = half.predict(out_dir / f"locomo-{args.variant}-m{m}-b{beta}.jsonl")
        cell: dict[str, Any] = {"m": m, "beta": beta, "load_average": load_average()}
        per_k = {k: half.recall_at(pred, k) for k in (1, 5, 10)}
        for k, per_q in per_k.items():
            cell[f"recall@{k}"] = round(sum(per_q.values()) / len(per_q), 4)
            cell["n"] = len(per_q)
            if m == 0:
                base[k] = per_q
            else:
                cell[f"vs_off_recall@{k}"] = paired(per_q, base[k])
        results[f"m{m}_b{beta}"] = cell
        common.progress(f"locomo {args.variant} m {m} beta {beta}: {json.dumps(cell)}")
    half.system.close()
    return results


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = args.pred_dir or Path(tempfile.mkdtemp(prefix="bench-feedback-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = load_average()
    run = run_rules if args.bench == "rules" else run_locomo
    results = run(args, out_dir)
    summary = {
        "bench": args.bench,
        "variant": args.variant,
        "load_average_start_end": [started, load_average()],
        "cells": results,
    }
    common.save_report(summary, args.json_out, echo=False)


if __name__ == "__main__":
    main()
