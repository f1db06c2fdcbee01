"""Section smoothing: the grid ``PRISM_RANK_SECTION`` and its window came from.

Recall interpolates each memory's relevance with the mean relevance of the recall window's
memories under the same subject heading (``prism_memory/domain/sections.py``, README "Ranking").
This
runs the rule benchmark's dev split through the product (``rules_quality.py``, one store,
every cell a setting) at λ = 0 (off: the baseline) and every cell of the grid, pairs each
cell's per-query metrics with the baseline's (``lib/paired.py``), and runs LoCoMo's tuning half
off and at the shipped default (its turns are notes without subjects: nothing may move).
``--cost`` times recall off and on alternately, query by query, on the same store: all
18,700 rules on SQLite, and their first 2,000 on SQLite and on PostgreSQL.

The pick, fixed before the grid was run: the cell with the best nDCG@10 among λ ≤ 0.5 (a
rule's own text weighs at least as much as its section's) and a window of at most 100 (the
most one recall returns, ``TOP_K_MAX``); larger windows are timed to show the cost curve.

    R=bench/results/studies
    python bench/studies/section_smoothing.py --json-out $R/section_smoothing.json
    python bench/studies/section_smoothing.py --cost-only --json-out $R/section_smoothing_cost.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean
from typing import Any

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import locomo
import rules_quality
from lib.paired import paired
from variants import load_average

LAMBDAS = (0.1, 0.2, 0.3, 0.4, 0.5)
WINDOWS = (25, 50, 100)
COST = ((200, 0.3), (200, 0.5), (400, 0.3), (400, 0.5))  # beyond the pick's bounds: cost only
LAMBDA_MAX, WINDOW_MAX = 0.5, 100
METRICS = ("ndcg@10", "recall@5", "hit@5", "mrr@10")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--skip-locomo", action="store_true", help="only the rule benchmark")
    p.add_argument("--cost-only", action="store_true", help="only time recall off against on")
    p.add_argument("--rounds", type=int, default=5, help="--cost: passes over the queries")
    return p.parse_args(argv)


def rules_cell(work: Path, name: str, weights: dict[str, Any], engine: str) -> dict[str, Any]:
    out = work / f"{name}.jsonl"
    argv = ["--out", str(out), "--weights", json.dumps(weights), "--engine", engine]
    result = rules_quality.main(argv)
    args = rules_quality.parse_args(argv)
    queries = common.load_jsonl(args.queries)
    per_q = rules_quality.per_query_metrics(args, queries, out)
    return {
        "weights": weights,
        "pred": out,
        "per_query": per_q,
        "all": result["scorer"]["groups"]["all"],
        "p50_ms": result["query_latency"]["p50_ms"],
        "queries": queries,
    }


def summary(cell: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"weights": cell["weights"], "p50_ms": cell["p50_ms"]}
    for metric in METRICS:
        row[metric] = cell["all"][metric]
        row[f"{metric} vs off"] = paired(
            {q: m[metric] for q, m in cell["per_query"].items()},
            {q: m[metric] for q, m in base["per_query"].items()},
        )
    row["leakage@10"] = cell["all"]["leakage@10"]
    return row


def by_topic(cell: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """nDCG@10 per topic and per "the task names its surface", off → on, paired."""
    groups: dict[str, list[str]] = {}
    for q in cell["queries"]:
        groups.setdefault(f"topic={q['topic']}", []).append(q["qid"])
        groups.setdefault(f"names its surface={q['task_mentions_surface']}", []).append(q["qid"])
    out = {}
    for name, qids in sorted(groups.items()):
        new = {q: cell["per_query"][q]["ndcg@10"] for q in qids}
        old = {q: base["per_query"][q]["ndcg@10"] for q in qids}
        row: dict[str, Any] = {"n": len(qids), "off": round(mean(old.values()), 4)}
        row["on"] = round(mean(new.values()), 4)
        if len(qids) > 1:
            row["paired"] = paired(new, old)
        out[name] = row
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.cost_only:
        return write(args, cost(args.rounds))
    work = Path(tempfile.mkdtemp(prefix="bench-sections-"))
    started_load = load_average()
    base = rules_cell(work, "off", {"rank_section": 0}, args.engine)
    cells = {}
    for window in WINDOWS:
        for lam in LAMBDAS:
            weights = {"rank_section": lam, "rank_section_window": window}
            cells[f"{window}/{lam}"] = rules_cell(work, f"w{window}-l{lam}", weights, args.engine)
    for window, lam in COST:
        weights = {"rank_section": lam, "rank_section_window": window}
        cells[f"{window}/{lam}"] = rules_cell(work, f"w{window}-l{lam}", weights, args.engine)
    eligible = {
        k: c
        for k, c in cells.items()
        if c["weights"]["rank_section"] <= LAMBDA_MAX
        and c["weights"]["rank_section_window"] <= WINDOW_MAX
    }
    pick = max(eligible, key=lambda k: eligible[k]["all"]["ndcg@10"])
    default = rules_cell(work, "default", {}, args.engine)  # the shipped settings
    same = default["pred"].read_bytes() == cells[pick]["pred"].read_bytes()
    result: dict[str, Any] = {
        "engine": args.engine,
        "split": "dev",
        "load_average": {"start": started_load, "end": load_average()},
        "rule": f"best nDCG@10 with rank_section <= {LAMBDA_MAX}, window <= {WINDOW_MAX}",
        "off": summary(base, base),
        "grid": {k: summary(c, base) for k, c in cells.items()},
        "pick": pick,
        "shipped_default_is_the_pick": same,
        "pick_by_topic": by_topic(cells[pick], base),
    }
    if not args.skip_locomo:
        result["locomo_tune"] = locomo_check(work)
    print(json.dumps({"pick": pick, **result["grid"][pick], "default_is_pick": same}, indent=1))
    return write(args, result)


def write(args: argparse.Namespace, result: dict[str, Any]) -> dict[str, Any]:
    common.save_report(result, args.json_out, echo=False)
    return result


def cost(rounds: int) -> dict[str, Any]:
    """Recall p50/p99 (top 10, query vectors cached: no embedding timed) with smoothing off
    and on, the two services on one store taking turns query by query."""
    from lib.prism_system import PrismRules

    rules_args = rules_quality.parse_args(["--out", "/dev/null"])
    rules = common.load_jsonl(rules_args.rules)
    queries = common.load_jsonl(rules_args.queries)
    embedder = common.CachedEmbedder(common.make_embedder("minilm"))
    out: dict[str, Any] = {"load_average": {"start": load_average()}, "rounds": rounds}
    for label, engine, limit in (
        ("sqlite, 18,700 rules", "sqlite", None),
        ("sqlite, 2,000 rules", "sqlite", 2000),
        ("postgres, 2,000 rules", "postgres", 2000),
    ):
        pg = argparse.Namespace(engine=engine, database_url="")
        with common.postgres_for(pg):
            systems = {}
            for name, weights in (("off", {"rank_section": 0}), ("on", {})):
                url = pg.database_url
                if url and systems:  # a second database for the second copy
                    url = url.rsplit("/", 1)[0] + "/bench_quality_on"
                    _create_database(pg.database_url, "bench_quality_on")
                system = PrismRules(
                    rules_args.rules, "minilm", embedder, weights, limit=limit, database_url=url
                )
                system.load(rules[:limit] if limit else rules)
                systems[name] = system
            times: dict[str, list[float]] = {name: [] for name in systems}
            for q in queries[:5]:  # warm-up
                for system in systems.values():
                    system.search(q["context"], q["task"], 10)
            for r in range(rounds):
                for i, q in enumerate(queries):
                    order = list(systems) if (r + i) % 2 == 0 else list(reversed(systems))
                    for name in order:
                        started = time.perf_counter()
                        systems[name].search(q["context"], q["task"], 10)
                        times[name].append(time.perf_counter() - started)
            for system in systems.values():
                system.close()
        out[label] = {name: common.summary_ms(t) for name, t in times.items()}
        common.progress(f"{label}: {out[label]}")
    out["load_average"]["end"] = load_average()
    print(json.dumps(out, indent=1))
    return out


def _create_database(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")


def locomo_check(work: Path) -> dict[str, Any]:
    """LoCoMo's tuning half off and at the shipped default: recall@k and byte identity."""
    off, on = work / "locomo-off.jsonl", work / "locomo-on.jsonl"
    a = locomo.main(["--half", "tune", "--out", str(off), "--weights", '{"rank_section": 0}'])
    b = locomo.main(["--half", "tune", "--out", str(on), "--baseline", str(off)])
    keys = ("recall@1", "recall@5", "recall@10")
    return {
        "off": {k: a["eval"]["all"][k] for k in keys},
        "on": {k: b["eval"]["all"][k] for k in keys},
        "vs_off": b.get("vs_baseline"),
        "byte_identical": off.read_bytes() == on.read_bytes(),
    }


if __name__ == "__main__":
    main()
