"""Recall quality on real agent rules ("recall on task start"), scored by the shipped scorer.

Loads ``rules.jsonl`` as memorules (mapping in ``bench/lib/rules_data.py``), runs every query
of ``--queries`` through ``semantic_recall(source_type='memorule', query=<task>)`` in the
query's session context (persona, surface, specialization), writes PRED.jsonl in the
scorer's format and prints the scorer's metrics.

    python bench/rules_quality.py --out /tmp/pred.jsonl            # Prism, real model
    python bench/rules_quality.py --system mem0 --out /tmp/m.jsonl  # a peer (peers' venv)
    python bench/rules_quality.py --tune --out /tmp/pred.jsonl      # grid over PRISM_RANK_*
    python bench/rules_quality.py --out /tmp/new.jsonl --baseline /tmp/pred.jsonl  # paired SE

Ranking weights come from settings: PRISM_RANK_* in the environment or ``--weights``.
``--tune`` searches them on the query file, which must be the dev split.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lib.common as common
from lib.rules_data import DEFAULT_SUBJECTS, SUBJECTS, applies, is_rule, rule_text

TOP_K = 10
# The grid --tune searches (relevance stays 1.0: it sets the scale). Confidence weights
# cannot matter here: every benchmark rule has the default confidence.
GRID = {
    "rank_overlap": [0.0, 0.1, 0.2, 0.3, 0.5, 1.0],
    "rank_scope": [0.0, 0.03, 0.1],
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    data = common.shared_bench_dir() / "rules"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", type=Path, default=data / "rules.jsonl", help="rules.jsonl")
    p.add_argument(
        "--queries",
        type=Path,
        default=data / "recall_bench_dev.jsonl",
        help="query file",
    )
    p.add_argument("--out", type=Path, required=True, help="PRED.jsonl to write")
    p.add_argument("--scorer", type=Path, default=data / "score_recall_bench.py")
    p.add_argument("--split", default="auto", help="scorer split (auto: the queries' split)")
    p.add_argument("--system", default="prism", help="prism, mem0, langgraph-memory, ...")
    p.add_argument(
        "--engine",
        default="sqlite",
        choices=["sqlite", "postgres"],
        help="Prism's engine (postgres: a throwaway PostgreSQL unless --database-url)",
    )
    p.add_argument("--database-url", default="", help="postgres: an empty database to use")
    p.add_argument("--model", default="minilm", choices=["minilm", "fake"], help="embedder")
    p.add_argument("--context", default="skip", choices=["skip", "notes"], help="context recs")
    p.add_argument(
        "--subjects",
        default=DEFAULT_SUBJECTS,
        choices=SUBJECTS,
        help="rule subjects: as prism import-rules writes them (importer), the dataset's "
        "(plain), or variants (bench/lib/rules_data.py); the same text for every system",
    )
    p.add_argument("--limit-rules", type=int, default=None, help="only the first N rules")
    p.add_argument("--limit-queries", type=int, default=None, help="only the first N queries")
    p.add_argument("--weights", default=None, help='rank_* settings as JSON: {"rank_overlap": 0.2}')
    p.add_argument("--tune", action="store_true", help="grid-search rank_* on the (dev) queries")
    p.add_argument("--no-vector-cache", action="store_true", help="embed without the disk cache")
    p.add_argument("--json-out", type=Path, default=None, help="also write a summary JSON here")
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="an earlier PRED.jsonl of the same queries: report the paired difference",
    )
    return p.parse_args(argv)


def per_query_metrics(
    args: argparse.Namespace, queries: list[dict[str, Any]], pred: Path
) -> dict[str, dict[str, float]]:
    """The shipped scorer's ``score_query`` for each query of ``pred`` (missing: empty)."""
    scorer = shipped_scorer(args.scorer)
    rules = {r["id"]: r for r in common.load_jsonl(args.rules)}
    ranked = {p["qid"]: p.get("ranked", []) for p in common.load_jsonl(pred)}
    return {q["qid"]: scorer.score_query(q, ranked.get(q["qid"], []), rules, 10) for q in queries}


def compare(args: argparse.Namespace, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """This run against ``--baseline``, paired over the queries (``bench/lib/paired.py``)."""
    from lib.paired import paired

    new = per_query_metrics(args, queries, args.out)
    old = per_query_metrics(args, queries, args.baseline)
    return {
        metric: paired(
            {q: m[metric] for q, m in new.items()},
            {q: m[metric] for q, m in old.items()},
        )
        for metric in ("ndcg@10", "recall@5")
    }


def load_inputs(
    args: argparse.Namespace,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rules = common.load_jsonl(args.rules)
    if args.limit_rules:
        rules = rules[: args.limit_rules]
    queries = common.load_jsonl(args.queries)
    if args.limit_queries:
        queries = queries[: args.limit_queries]
    return rules, queries


def split_of(args: argparse.Namespace, queries: list[dict[str, Any]]) -> str:
    if args.split != "auto":
        return str(args.split)
    splits = {q.get("split") for q in queries}
    return str(splits.pop()) if len(splits) == 1 and None not in splits else "all"


def score(args: argparse.Namespace, pred: Path, split: str) -> dict[str, Any]:
    """Run the shipped scorer on ``pred``; its JSON report."""
    cmd = [sys.executable, str(args.scorer), str(pred), "--bench", str(args.queries)]
    cmd += ["--rules", str(args.rules), "--split", split]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def write_pred(path: Path, runs: list[tuple[str, list[str]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for qid, ranked in runs:
            handle.write(json.dumps({"qid": qid, "ranked": ranked}) + "\n")


def run_queries(system: Any, queries: list[dict[str, Any]]) -> tuple[list, list[float]]:
    runs, seconds = [], []
    for q in queries:
        started = time.perf_counter()
        ranked = system.search(q["context"], q["task"], TOP_K)
        seconds.append(time.perf_counter() - started)
        runs.append((q["qid"], ranked))
    return runs, seconds


class PeerRules:
    """A peer holding the rules, searched with its own context filtering."""

    def __init__(self, peer: Any, subjects: str = DEFAULT_SUBJECTS) -> None:
        self.peer = peer
        self.subjects = subjects
        self.name = peer.name
        self.load_seconds = 0.0

    def load(self, rules: list[dict[str, Any]]) -> None:
        items = [
            (
                r["id"],
                rule_text(r, self.subjects),
                {
                    "scope": r["scope"],
                    "surface": r["surface"],
                    "persona": r.get("persona"),
                },
            )
            for r in rules
            if is_rule(r)
        ]
        common.progress(f"{self.name}: loading {len(items)} rules")
        started = time.perf_counter()
        for n, part in enumerate(common.chunks(items, 2000)):
            self.peer.add("rules", part)
            common.progress(f"{self.name}: {min((n + 1) * 2000, len(items))}/{len(items)}")
        self.load_seconds = time.perf_counter() - started

    def search(self, ctx: dict[str, Any], task: str, k: int) -> list[str]:
        return list(self.peer.search("rules", task, k, self.peer.rules_filter(ctx)))

    def close(self) -> None:
        self.peer.close()


def make_system(args: argparse.Namespace, embedder: Any, weights: dict[str, float]) -> Any:
    if args.system == "prism":
        from lib.prism_system import PrismRules

        return PrismRules(
            args.rules,
            args.model,
            embedder,
            weights,
            args.context,
            args.limit_rules,
            database_url=args.database_url,
            subjects=args.subjects,
        )
    from lib.peers import make_peer

    return PeerRules(make_peer(args.system, embedder), args.subjects)


def shipped_scorer(path: Path) -> Any:
    """The shipped scorer as a module (tuning calls its ``score_query`` in-process)."""
    spec = importlib.util.spec_from_file_location("score_recall_bench", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tune(args: argparse.Namespace, system: Any, queries: list, split: str) -> dict[str, Any]:
    """Grid-search rank_* settings on the queries; the best by nDCG@10 (then recall@5).

    Each trial's metrics come from the shipped scorer's own ``score_query``, averaged over
    the queries exactly as its report does; the final run is scored by the script itself.
    """
    from lib.prism_system import build, settings_for

    if split != "dev":
        raise SystemExit("--tune runs on the dev split only")
    scorer = shipped_scorer(args.scorer)
    rules = {r["id"]: r for r in common.load_jsonl(args.rules)}
    trials = []
    base = system.svc
    for values in itertools.product(*GRID.values()):
        weights = dict(zip(GRID, values, strict=True))
        settings = settings_for(system.db_path(), args.model, weights)
        system.svc = build(settings, system.embedder)
        runs, _ = run_queries(system, queries)
        system.svc.close()
        per_q = [
            scorer.score_query(q, r, rules, 10) for q, (_, r) in zip(queries, runs, strict=True)
        ]
        report = {
            k: round(sum(m[k] for m in per_q) / len(per_q), 4)
            for k in ("recall@5", "ndcg@10", "hit@5", "mrr@10")
        }
        trials.append({"weights": weights, **report})
        common.progress(f"tune {weights}: nDCG@10 {report['ndcg@10']}")
    system.svc = base
    best = max(trials, key=lambda t: (t["ndcg@10"], t["recall@5"]))
    return {"grid": GRID, "best": best, "trials": trials}


def no_leak_check(rules: list[dict[str, Any]], queries: list, runs: list) -> int:
    """How many returned rules do not apply to their context (should be 0 for Prism)."""
    by_id = {r["id"]: r for r in rules}
    ctx = {q["qid"]: q["context"] for q in queries}
    return sum(
        1
        for qid, ranked in runs
        for rid in ranked
        if rid in by_id and not applies(by_id[rid], ctx[qid])
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.system != "prism":
        common.install_offline_guard()
    rules, queries = load_inputs(args)
    if args.limit_queries:  # the scorer scores every query of its file: give it the subset
        subset = args.out.with_name(args.out.stem + ".queries.jsonl")
        subset.parent.mkdir(parents=True, exist_ok=True)
        subset.write_text("".join(json.dumps(q) + "\n" for q in queries))
        args.queries = subset
    split = split_of(args, queries)
    weights = json.loads(args.weights) if args.weights else {}
    base = common.make_embedder(args.model)
    embedder = base if args.no_vector_cache else common.CachedEmbedder(base)
    with common.postgres_for(args):
        return run(args, rules, queries, split, weights, embedder)


def run(
    args: argparse.Namespace,
    rules: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    split: str,
    weights: dict[str, float],
    embedder: Any,
) -> dict[str, Any]:
    system = make_system(args, embedder, weights)
    common.progress(f"{system.name}: loading {len(rules)} rules from {args.rules}")
    started = time.perf_counter()
    system.load(rules)
    load_s = time.perf_counter() - started
    result: dict[str, Any] = {
        "system": system.name,
        "engine": args.engine,
        "model": args.model,
        "split": split,
        "subjects": args.subjects,
    }
    if args.tune:
        result["tuning"] = tune(args, system, queries, split)
        print(json.dumps({"best": result["tuning"]["best"]}, indent=1))
    # Warm-up (the model's first run, caches), then the scored pass.
    run_queries(system, queries[:3])
    runs, seconds = run_queries(system, queries)
    write_pred(args.out, runs)
    report = score(args, args.out, split)
    result.update(
        {
            "rules_file": str(args.rules),
            "queries_file": str(args.queries),
            "n_rules_loaded": sum(1 for r in rules if is_rule(r)),
            "context_records": args.context,
            "weights": weights,
            "load_seconds": round(load_s, 2),
            "store_built_now": bool(getattr(system, "built", True)),
            "query_latency": common.summary_ms(seconds),
            "not_applicable_returned": no_leak_check(rules, queries, runs),
            "scorer": report,
            "network_attempts": list(common.ATTEMPTS),
        }
    )
    system.close()
    print(json.dumps(report["groups"]["all"], indent=1))
    if args.baseline:
        result["vs_baseline"] = {
            "baseline": str(args.baseline),
            **compare(args, queries),
        }
        print(json.dumps({"vs_baseline": result["vs_baseline"]}, indent=1))
    common.save_report(result, args.json_out, echo=False)
    return result


if __name__ == "__main__":
    main()
