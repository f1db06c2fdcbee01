"""Recall at scale on REAL MiniLM embeddings: exact scoring of every row against sketch pruning.

The speed run's stores hold synthetic vectors (embedding 100k texts takes ~20 minutes here).
This script builds one real corpus instead, from the shipped data: every record of
rules.jsonl (subject and body), every sentence of their bodies, and every LoCoMo turn —
about 97k distinct texts — embedded once with MiniLM through the bench's vector cache. It
loads them as memorules of one project and times ``semantic_recall`` with the dev tasks and
the LoCoMo questions (really embedded) as queries, with pruning on (the default) and off
(``PRISM_RECALL_PRESELECT_ABOVE=0``), alternating, and checks both return the same ids.

    python bench/real_vectors.py --json-out /tmp/real.json           # ~20 min the first time
    python bench/real_vectors.py --sizes 25000,50000,100000 --repeats 100
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import lib.common as common
import lib.speed_fixtures as fx
import numpy as np
from lib.peers import SwitchEmbedder
from lib.rules_data import rule_text

SENTENCE = re.compile(r"(?<=[.!?])\s+")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--sizes", default="10000,25000,100000", help="store sizes (capped by the corpus)"
    )
    p.add_argument("--repeats", type=int, default=100, help="recalls per mode and size")
    p.add_argument("--json-out", type=Path, default=None, help="write the results here")
    return p.parse_args(argv)


def corpus() -> tuple[list[str], list[str]]:
    """Distinct real texts (rules, their sentences, LoCoMo turns) and real queries."""
    data = common.shared_bench_dir()
    texts: dict[str, None] = {}
    for rule in common.load_jsonl(data / "rules" / "rules.jsonl"):
        texts[rule_text(rule, "plain")] = None  # the cached texts its figures used
        for sentence in SENTENCE.split(str(rule.get("body") or "")):
            if len(sentence.strip()) > 25:
                texts[sentence.strip()] = None
    import locomo

    largs = locomo.parse_args(["--out", "/dev/null"])
    conversations = locomo.evaluator(largs.eval).load(str(locomo.data_dir(largs)))
    questions: list[str] = []
    for turns, qa in conversations.values():
        for _, text, _ in turns:
            texts[text] = None
        questions += [str(q["question"]) for q in qa]
    tasks = [q["task"] for q in common.load_jsonl(data / "rules" / "recall_bench_dev.jsonl")]
    queries = tasks + questions[:: max(1, len(questions) // 200)]
    for q in queries:
        texts.pop(q, None)
    return list(texts), queries


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from prism_memory.domain.contract.recall import validate_recall

    args = parse_args(argv)
    common.install_offline_guard()
    from lib.prism_system import build, context, settings_for

    texts, queries = corpus()
    real = common.CachedEmbedder(common.make_embedder("minilm"))
    common.progress(f"real corpus: {len(texts)} texts, {len(queries)} queries")
    matrix = np.concatenate(
        [real.embed(texts[lo : lo + 2000]) for lo in range(0, len(texts), 2000)]
    )
    qvecs = real.embed(queries)
    table = fx.VectorTable(real.model_id)
    table.register(queries, qvecs)
    order = np.random.default_rng(0).permutation(len(texts))  # sizes sample the corpus
    result: dict[str, Any] = {
        "corpus": len(texts),
        "queries": len(queries),
        "model": real.model_id,
        "sizes": {},
    }
    work = Path(tempfile.mkdtemp(prefix="bench-real-"))
    loaded = 0
    pruned = build(settings_for(work / "p.db", "minilm"), SwitchEmbedder(table))
    exact = build(settings_for(work / "p.db", "minilm"), SwitchEmbedder(table))
    exact.memory.deps.preselect_above = 0
    ctx = context("real")
    request = {"top_k": 10, "source_type": "memorule"}
    for size in (min(int(s), len(texts)) for s in args.sizes.split(",") if s):
        rows = order[loaded:size]
        fx.prism_load(pruned, ctx, loaded, [texts[i] for i in rows], matrix[rows])
        loaded = size
        timings: dict[str, list[float]] = {"pruned": [], "exact": []}
        same = 0
        for svc in (pruned, exact):  # warm-up: caches, sketch, lexical index
            svc.memory.recalls.recall(ctx, validate_recall({**request, "query": queries[0]}))
        for i in range(args.repeats):
            q = queries[i % len(queries)]
            got = {}
            for name, svc in (("pruned", pruned), ("exact", exact))[:: 1 if i % 2 else -1]:
                started = time.perf_counter()
                found = svc.memory.recalls.recall(ctx, validate_recall({**request, "query": q}))
                timings[name].append(time.perf_counter() - started)
                got[name] = [m.memory.id for m in found.matches]
            same += got["pruned"] == got["exact"]
        result["sizes"][str(size)] = {
            "recall_no_embed_pruned": common.summary_ms(timings["pruned"]),
            "recall_no_embed_exact": common.summary_ms(timings["exact"]),
            "identical_results": f"{same}/{args.repeats}",
        }
        common.progress(f"real {size}: {json.dumps(result['sizes'][str(size)])}")
    pruned.close()
    exact.close()
    common.save_report(result, args.json_out)
    return result


if __name__ == "__main__":
    main()
