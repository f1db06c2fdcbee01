"""LoCoMo evidence recall@k: every dialogue turn a note, every question a recall.

One project (Prism) / user (mem0) / namespace (LangGraph) / index (BM25) per conversation.
Questions are recalled with ``source_type='memory'`` and the ranked turn ids are scored by
the shipped ``locomo_retrieval_eval.py --pred`` (its own turn loader builds the texts, so
every system stores exactly the text its BM25 reference run ranks).

    python bench/locomo.py --out /tmp/locomo_pred.jsonl
    python bench/locomo.py --system mem0 --out /tmp/locomo_mem0.jsonl   # peers' venv
    python bench/locomo.py --half tune --out /tmp/new.jsonl --baseline /tmp/old.jsonl  # paired
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import lib.common as common

K = 50  # the evaluator reports up to recall@50


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    shared = common.shared_bench_dir() / "locomo"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zip", type=Path, default=shared / "locomo10.zip", help="locomo10.zip")
    p.add_argument("--data", type=Path, default=None, help="unzipped conversations folder")
    p.add_argument("--eval", type=Path, default=shared / "locomo_retrieval_eval.py")
    p.add_argument("--out", type=Path, required=True, help="PRED.jsonl to write")
    p.add_argument("--system", default="prism", help="prism, mem0, langgraph-memory, ...")
    p.add_argument("--model", default="minilm", choices=["minilm", "fake"], help="embedder")
    p.add_argument(
        "--engine",
        default="sqlite",
        choices=["sqlite", "postgres"],
        help="Prism's engine (postgres: a throwaway PostgreSQL unless --database-url)",
    )
    p.add_argument("--database-url", default="", help="postgres: an empty database to use")
    p.add_argument("--limit-conversations", type=int, default=None, help="first N only")
    p.add_argument(
        "--half",
        choices=["tune", "held-out"],
        default=None,
        help="the first (tune) or second (held-out) half of the conversations, sorted by id",
    )
    p.add_argument("--weights", default=None, help='rank_* settings as JSON: {"rank_lexical": 0.3}')
    p.add_argument("--no-vector-cache", action="store_true", help="embed without the disk cache")
    p.add_argument("--json-out", type=Path, default=None, help="also write a summary JSON here")
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="an earlier PRED.jsonl of the same questions: report the paired difference",
    )
    return p.parse_args(argv)


def recall_at(convs: dict[str, Any], samples: list[str], pred: Path, k: int) -> dict[str, float]:
    """Evidence recall@k per question of ``pred``, as the shipped evaluator counts it (the
    evidence ids split on ``;``, ``,`` and spaces, kept if they are turns; none: skipped)."""
    ranked = {(p["sample"], p["qa_index"]): p["ranked"] for p in common.load_jsonl(pred)}
    out: dict[str, float] = {}
    for sample in samples:
        turns, qa = convs[sample]
        valid = {did for did, _, _ in turns}
        for i, q in enumerate(qa):
            evidence = {x for e in q.get("evidence", []) for x in re.split(r"[;,\s]+", e) if x}
            evidence &= valid
            if evidence:
                top = set(ranked.get((sample, i), [])[:k])
                out[f"{sample}/{i}"] = len(top & evidence) / len(evidence)
    return out


def data_dir(args: argparse.Namespace) -> Path:
    """The conversations folder: --data, or locomo10.zip unpacked under bench/.cache."""
    if args.data:
        return Path(args.data)
    target = common.CACHE / "locomo"
    folder = target / "data" / "multimodal_dialog" / "locomo10_v2"
    if not folder.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(args.zip) as archive:
            archive.extractall(target)
    return folder


def evaluator(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("locomo_retrieval_eval", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def select(samples: list[str], args: argparse.Namespace) -> list[str]:
    """The conversations to run: a half (tuning happens on ``tune`` only), then the first N."""
    middle = len(samples) // 2
    if args.half == "tune":
        samples = samples[:middle]
    elif args.half == "held-out":
        samples = samples[middle:]
    return samples[: args.limit_conversations]


def make_system(args: argparse.Namespace, embedder: Any, workdir: Path) -> Any:
    if args.system == "prism":
        from lib.prism_system import PrismNotes

        weights = json.loads(args.weights) if args.weights else None
        db = workdir / "prism-locomo.db"
        return PrismNotes(db, args.model, embedder, weights, args.database_url)
    from lib.peers import make_peer

    return make_peer(args.system, embedder)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.system != "prism":
        common.install_offline_guard()
    folder = data_dir(args)
    convs = evaluator(args.eval).load(str(folder))
    samples = select(sorted(convs), args)
    base = common.make_embedder(args.model)
    embedder = base if args.no_vector_cache else common.CachedEmbedder(base)
    workdir = Path(tempfile.mkdtemp(prefix="bench-locomo-"))
    with common.postgres_for(args):
        return run(args, folder, convs, samples, embedder, workdir)


def run(
    args: argparse.Namespace,
    folder: Path,
    convs: dict[str, Any],
    samples: list[str],
    embedder: Any,
    workdir: Path,
) -> dict[str, Any]:
    system = make_system(args, embedder, workdir)
    add_s, seconds, lines = 0.0, [], []
    for sample in samples:
        turns, qa = convs[sample]
        items = [(did, text, {"sample": sample}) for did, text, _ in turns]
        started = time.perf_counter()
        system.add(sample, items)
        add_s += time.perf_counter() - started
        common.progress(f"{system.name}: {sample}: {len(items)} turns, {len(qa)} questions")
        for i, q in enumerate(qa):
            started = time.perf_counter()
            ranked = system.search(sample, str(q["question"]), K)
            seconds.append(time.perf_counter() - started)
            lines.append({"sample": sample, "qa_index": i, "ranked": ranked})
    system.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    eval_dir = folder
    if len(samples) < len(convs):
        eval_dir = workdir / "subset"
        eval_dir.mkdir()
        for sample in samples:
            (eval_dir / f"{sample}.json").symlink_to(folder / f"{sample}.json")
    cmd = [
        sys.executable,
        str(args.eval),
        "--data",
        str(eval_dir),
        "--pred",
        str(args.out),
    ]
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    result = {
        "system": system.name,
        "engine": args.engine,
        "model": args.model,
        "conversations": len(samples),
        "turns": sum(len(convs[s][0]) for s in samples),
        "questions": len(lines),
        "add_seconds": round(add_s, 2),
        "query_latency": common.summary_ms(seconds),
        "eval": report,
        "network_attempts": list(common.ATTEMPTS),
    }
    headline = {k: report["all"][k] for k in ("n", "recall@1", "recall@5", "recall@10")}
    print(json.dumps(headline, indent=1))
    if args.baseline:
        from lib.paired import paired

        result["vs_baseline"] = {"baseline": str(args.baseline)}
        for k in (1, 5, 10):
            new, old = (recall_at(convs, samples, p, k) for p in (args.out, args.baseline))
            result["vs_baseline"][f"recall@{k}"] = paired(new, old)
        print(json.dumps({"vs_baseline": result["vs_baseline"]}, indent=1))
    common.save_report(result, args.json_out, echo=False)
    return result


if __name__ == "__main__":
    main()
