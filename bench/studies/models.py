"""Stronger local embedding models against the shipped MiniLM.

Per candidate (``bench/studies/model_embedders.py``): the rule benchmark's dev split (nDCG@10,
recall@5, leakage; the product's ranking with its default weights, one recall per query in
its context) and LoCoMo evidence recall on the TUNING half only (conversations 26, 30, 41,
42, 43), each per query so that differences against MiniLM get paired standard errors;
then load time, embedding speed on one thread and what the model adds to an install.

    V=bench/.venv-models/bin/python
    $V bench/studies/models.py quality --model minilm       # then e5-small-q4, mpnet, sre-minilm
    $V bench/studies/models.py speed --model minilm
    $V bench/studies/models.py report                       # bench/results/studies/models.md

One model per process, one at a time (2 shared cores). Vectors are cached on disk per model
(and per side for asymmetric ones) in ``bench/.cache``; rule stores per model under
``bench/.cache/models/<name>``. Results: ``bench/results/studies/models/<name>.json``. Held-out
data (the rules' test split, LoCoMo's second half) is never read here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import locomo
import model_embedders
import rules_quality
from embed_speed import SENTENCES
from lib.prism_system import PrismNotes, PrismRules

OUT = common.RESULTS / "studies" / "models"
PRODUCT_ROOTS = ["prism-memory"]
REPEATS = 3
# The lexical shares off: relevance is the cosine alone (a control; not the product default).
DENSE = {"rank_lexical": 0.0, "rank_lexical_note": 0.0}


def queries_of(embedder: Any) -> Any:
    """The query side of an asymmetric embedder, or nothing to do."""
    enter = getattr(embedder, "queries", None)
    return enter() if enter else contextlib.nullcontext()


# -- quality ---------------------------------------------------------------------------------


def rules_dev(name: str, embedder: Any, weights: dict[str, float], stem: str) -> dict[str, Any]:
    """The rule benchmark's dev split: the scorer's report and per-query metrics
    (predictions in ``<stem>.rules-dev.pred.jsonl``)."""
    data = common.shared_bench_dir() / "rules"
    ns = argparse.Namespace(
        rules=data / "rules.jsonl",
        queries=data / "recall_bench_dev.jsonl",
        scorer=data / "score_recall_bench.py",
        limit_rules=None,
        limit_queries=None,
    )
    rules, queries = rules_quality.load_inputs(ns)
    if {q.get("split") for q in queries} != {"dev"}:
        raise SystemExit("the model comparison runs on the dev split only")
    system = PrismRules(
        ns.rules,
        "minilm",
        embedder,
        weights,
        "skip",
        None,
        common.CACHE / "models" / name,
    )
    started = time.perf_counter()
    system.load(rules)
    common.progress(f"{name}: rule store ready in {time.perf_counter() - started:.0f} s")
    runs = []
    for q in queries:
        with queries_of(embedder):
            runs.append((q["qid"], system.search(q["context"], q["task"], rules_quality.TOP_K)))
    system.close()
    pred = OUT / f"{stem}.rules-dev.pred.jsonl"
    rules_quality.write_pred(pred, runs)
    report = rules_quality.score(ns, pred, "dev")
    scorer = rules_quality.shipped_scorer(ns.scorer)
    by_id = {r["id"]: r for r in rules}
    per_q = {
        qid: {
            k: v for k, v in scorer.score_query(q, ranked, by_id, 10).items() if k != "unknown_ids"
        }
        for q, (qid, ranked) in zip(queries, runs, strict=True)
    }
    return {
        "report": report["groups"]["all"],
        "not_applicable_returned": rules_quality.no_leak_check(rules, queries, runs),
        "per_query": per_q,
    }


def evidence(q: dict[str, Any], valid: set[str]) -> set[str]:
    """The evaluator's evidence set of a question (same parsing as its ``main``)."""
    ev: set[str] = set()
    for e in q.get("evidence", []):
        ev.update(x for x in re.split(r"[;,\s]+", e) if x)
    return ev & valid


def locomo_tune(name: str, embedder: Any, weights: dict[str, float], stem: str) -> dict[str, Any]:
    """LoCoMo evidence recall on the tuning half: the evaluator's report and per question
    (predictions in ``<stem>.locomo-tune.pred.jsonl``)."""
    shared = common.shared_bench_dir() / "locomo"
    ns = argparse.Namespace(
        zip=shared / "locomo10.zip",
        data=None,
        eval=shared / "locomo_retrieval_eval.py",
        half="tune",
        limit_conversations=None,
    )
    folder = locomo.data_dir(ns)
    convs = locomo.evaluator(ns.eval).load(str(folder))
    samples = locomo.select(sorted(convs), ns)
    workdir = Path(tempfile.mkdtemp(prefix="bench-models-locomo-"))
    system = PrismNotes(workdir / "locomo.db", "minilm", embedder, weights)
    lines, per_q = [], {}
    for sample in samples:
        turns, qa = convs[sample]
        system.add(sample, [(did, text, {}) for did, text, _ in turns])
        valid = {did for did, _, _ in turns}
        for i, q in enumerate(qa):
            with queries_of(embedder):
                ranked = system.search(sample, str(q["question"]), locomo.K)
            lines.append({"sample": sample, "qa_index": i, "ranked": ranked})
            ev = evidence(q, valid)
            if ev:
                per_q[f"{sample}/{i}"] = {
                    f"recall@{k}": len(set(ranked[:k]) & ev) / len(ev) for k in (1, 5, 10)
                }
    system.close()
    pred = OUT / f"{stem}.locomo-tune.pred.jsonl"
    pred.write_text("".join(json.dumps(line) + "\n" for line in lines))
    subset = workdir / "subset"
    subset.mkdir()
    for sample in samples:
        (subset / f"{sample}.json").symlink_to(folder / f"{sample}.json")
    cmd = [sys.executable, str(ns.eval), "--data", str(subset), "--pred", str(pred)]
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    mine = statistics.fmean(m["recall@5"] for m in per_q.values())
    if abs(mine - report["all"]["recall@5"]) > 1e-3:  # same questions, same formula
        raise SystemExit(f"per-question recall@5 {mine} != evaluator {report['all']['recall@5']}")
    return {"conversations": samples, "report": report["all"], "per_query": per_q}


def quality(
    name: str, parts: list[str], weights: dict[str, float], tag: str | None = None
) -> dict[str, Any]:
    common.install_offline_guard()
    stem = f"{name}.{tag}" if tag else name
    embedder = model_embedders.build(name)
    started = time.process_time()
    result: dict[str, Any] = {}
    if "rules" in parts:
        result["rules_dev"] = rules_dev(name, embedder, weights, stem)
    if "locomo" in parts:
        result["locomo_tune"] = locomo_tune(name, embedder, weights, stem)
    result |= {
        "cpu_seconds": round(time.process_time() - started, 1),
        "network_attempts": list(common.ATTEMPTS),
        "model_id": embedder.model_id,
        "prism": common.backend_info(),
        "loadavg": os.getloadavg(),
    }
    return result


# -- cost ------------------------------------------------------------------------------------

_CHILD = """
import json, socket, sys, time
t0 = time.perf_counter()
def refuse(*a, **k): raise SystemExit(f"network access attempted: {{a!r}}")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
sys.path[:0] = [{bench!r}, {studies!r}]
import lib.common, model_embedders
embedder = model_embedders.bare({name!r})
t1 = time.perf_counter()
vec = embedder.embed([{text!r}])
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "load_and_first_embed_s": t2 - t1,
                  "cold_total_s": t2 - t0, "dim": int(vec.shape[1])}}))
"""


def cold(name: str) -> dict[str, float]:
    """Fresh processes with sockets refused: imports, then loading plus the first embed."""
    code = _CHILD.format(
        bench=str(common.BENCH), studies=str(common.BENCH / "studies"), name=name, text=SENTENCES[0]
    )
    rows = []
    for _ in range(REPEATS):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise SystemExit(f"{name} failed to load offline: {done.stderr[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}


def throughput(name: str) -> dict[str, float]:
    """Sentences per second on one thread: one text per call (queries), 64 per call.

    Per wall second and per CPU second of this process: on shared cores the CPU rate is
    the steadier figure (the wall rate follows the other processes' load).
    """
    embedder = model_embedders.bare(name)
    embedder.embed(SENTENCES)  # load, warm up
    rows: dict[str, list[float]] = {k: [] for k in ("single", "batch", "single_cpu", "batch_cpu")}
    for _ in range(REPEATS):
        wall, cpu = time.perf_counter(), time.process_time()
        with queries_of(embedder):
            for text in SENTENCES:
                embedder.embed([text])
        rows["single"].append(len(SENTENCES) / (time.perf_counter() - wall))
        rows["single_cpu"].append(len(SENTENCES) / (time.process_time() - cpu))
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.embed(SENTENCES)
        rows["batch"].append(len(SENTENCES) / (time.perf_counter() - wall))
        rows["batch_cpu"].append(len(SENTENCES) / (time.process_time() - cpu))
    med = {k: round(statistics.median(v), 1) for k, v in rows.items()}
    return {
        "single_per_s": med["single"],
        "batch_64_per_s": med["batch"],
        "single_per_cpu_s": med["single_cpu"],
        "batch_64_per_cpu_s": med["batch_cpu"],
    }


def added_install(name: str) -> dict[str, Any]:
    """Bytes the candidate's packages and their dependencies add to the product's install."""
    product = installed_closure(PRODUCT_ROOTS) if _has("prism-memory") else {"packages_mb": {}}
    base = set(product["packages_mb"])
    mine = installed_closure(model_embedders.CANDIDATES[name].packages)["packages_mb"]
    added = {k: v for k, v in mine.items() if k not in base}
    return {"added_mb": round(sum(added.values()), 1), "packages_mb": added}


def installed_closure(roots: list[str]) -> dict[str, Any]:
    """Bytes on disk of ``roots`` and their installed dependencies (from each RECORD).

    As ``embed_speed.installed_closure``, but a declared dependency that is not installed is
    listed, not fatal (the mpnet parts declare an unrelated package, installed --no-deps).
    """
    import importlib.metadata as md

    from packaging.requirements import Requirement

    seen: dict[str, int] = {}
    missing: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            missing.append(name)
            continue
        key = dist.metadata["Name"].lower()
        if key in seen:
            continue
        seen[key] = sum(
            path.stat().st_size
            for f in dist.files or []
            if (path := Path(str(dist.locate_file(f)))).is_file()
        )
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return {
        "packages_mb": {k: round(v / 1e6, 1) for k, v in sorted(seen.items())},
        "not_installed": sorted(set(missing)),
    }


def _has(dist: str) -> bool:
    import importlib.metadata as md

    try:
        md.distribution(dist)
    except md.PackageNotFoundError:
        return False
    return True


def speed(name: str) -> dict[str, Any]:
    return {
        "cold": cold(name),
        "throughput": throughput(name),
        "install": added_install(name) if name != "minilm" else {"added_mb": 0.0},
        "loadavg": os.getloadavg(),
    }


# -- report ----------------------------------------------------------------------------------


def paired(base: dict[str, dict], other: dict[str, dict], metric: str) -> tuple[float, float, int]:
    """Mean difference (other - base) over the shared queries and its standard error."""
    keys = sorted(set(base) & set(other))
    diffs = [other[k].get(metric, 0.0) - base[k].get(metric, 0.0) for k in keys]
    n = len(diffs)
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else float("nan")
    return mean, se, n


def load_results() -> dict[str, dict[str, Any]]:
    found = {}
    for name in model_embedders.CANDIDATES:
        path = OUT / f"{name}.json"
        if path.exists():
            found[name] = json.loads(path.read_text())
    return found


def fmt_diff(mean: float, se: float) -> str:
    z = mean / se if se > 0 else 0.0
    return f"{mean:+.4f} ± {se:.4f} ({z:+.1f} SE)"


def quality_row(name: str, q: dict[str, Any], base: dict[str, Any]) -> list[str]:
    """One row of the quality table; a benchmark not run for this model reads "not run"."""
    row = [name]
    rd = q.get("rules_dev")
    if rd is None:
        row += ["not run"] * 5
    else:
        for metric in ("ndcg@10", "recall@5"):
            row.append(f"{rd['report'][metric]:.4f}")
            if name == "minilm":
                row.append("—")
            else:
                mean, se, _ = paired(base["rules_dev"]["per_query"], rd["per_query"], metric)
                row.append(fmt_diff(mean, se))
        leak = rd["report"].get("leakage@10", "?")
        row.append(f"{leak} ({rd['not_applicable_returned']} rules)")
    lt = q.get("locomo_tune")
    if lt is None:
        return row + ["not run"] * 3
    row.append(f"{lt['report']['recall@5']:.4f}")
    if name == "minilm":
        row.append("—")
    else:
        mean, se, _ = paired(base["locomo_tune"]["per_query"], lt["per_query"], "recall@5")
        row.append(fmt_diff(mean, se))
    row.append(f"{lt['report']['recall@10']:.4f}")
    return row


def report() -> str:
    res = load_results()
    if "minilm" not in res or "quality" not in res["minilm"]:
        raise SystemExit("run `studies/models.py quality --model minilm` first")
    base = res["minilm"]["quality"]
    lines = [
        "# Embedding models against the shipped MiniLM",
        "",
        "Written by `bench/studies/models.py report` from `bench/results/studies/models/*.json`.",
        "Rule benchmark: dev split (107 queries), the product's ranking with default weights.",
        "LoCoMo: evidence recall, tuning half only (conversations 26, 30, 41, 42, 43).",
        "Differences are candidate − MiniLM over the same queries; ± is the paired standard",
        "error (sd of the per-query differences / √n).",
        "",
        "## Quality",
        "",
        (
            "| model | rules nDCG@10 | Δ vs MiniLM | recall@5 | Δ vs MiniLM | leakage | "
            "LoCoMo R@5 | Δ vs MiniLM | R@10 |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in res.items():
        if "quality" in r:
            lines.append("| " + " | ".join(quality_row(name, r["quality"], base)) + " |")
    header = lines[10:12]

    def table(caption: str, runs: dict[str, dict[str, Any]]) -> list[str]:
        """Another quality table: ``runs`` per model, paired with MiniLM's of the same kind."""
        rows = [
            "| " + " | ".join(quality_row(n, q, runs["minilm"])) + " |" for n, q in runs.items()
        ]
        return ["", caption, "", *header, *rows]

    dense = {name: r["quality_dense"] for name, r in res.items() if "quality_dense" in r}
    if "minilm" in dense:
        lines += table(
            "Control, the embedding alone: the same runs with the lexical shares off\n"
            "(`--dense`: `rank_lexical` 0, `rank_lexical_note` 0; not the product's setting).",
            dense,
        )
    for key in sorted(k for k in res["minilm"] if k.startswith("quality@")):
        tagged = {name: r[key] for name, r in res.items() if key in r}
        commit = tagged["minilm"].get("prism", {}).get("repo_commit", "?")
        lines += table(
            f"Again with the product's ranking at {commit} (`--tag {key.split('@', 1)[1]}`; "
            "the same queries, paired with MiniLM's run of the same tag):",
            tagged,
        )
    lines += [
        "",
        "## Cost (one intra-op thread)",
        "",
        (
            "| model | cold: imports | load + first embed | process start to first vector | "
            "sentences/s single · batch 64 (per wall s; per CPU s) | dim | adds to the install |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in res.items():
        if "speed" not in r:
            continue
        s = r["speed"]
        c, t = s["cold"], s["throughput"]
        lines.append(
            f"| {name} | {c['import_s']:.2f} s | {c['load_and_first_embed_s']:.2f} s | "
            f"{c['cold_total_s']:.2f} s | {t['single_per_s']} · {t['batch_64_per_s']}; "
            f"{t.get('single_per_cpu_s', '?')} · {t.get('batch_64_per_cpu_s', '?')} | "
            f"{c['dim']} | {s['install']['added_mb']} MB |"
        )
    head = "| name | model | package licence | weights licence | conventions | install |"
    lines += ["", "## The models", "", head, "|---|---|---|---|---|---|"]
    for name in res:
        c = model_embedders.CANDIDATES[name]
        lines.append(
            f"| {name} | {c.model} | {c.package_licence} | {c.weights_licence} | "
            f"{c.conventions} | `{c.install}` |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=["quality", "speed", "report"])
    p.add_argument("--model", choices=sorted(model_embedders.CANDIDATES), default=None)
    p.add_argument(
        "--dense",
        action="store_true",
        help="quality with no lexical share (the embedding alone; the ranking's other terms stay)",
    )
    p.add_argument(
        "--tag",
        default=None,
        help="quality: keep this run beside the earlier ones (key quality@TAG, its own "
        "prediction files), e.g. to compare the models again after the ranking changed",
    )
    p.add_argument(
        "--only",
        choices=["rules", "locomo"],
        default=None,
        help="quality: one benchmark only",
    )
    args = p.parse_args(argv)
    if args.step == "report":
        text = report()
        target = common.RESULTS / "studies" / "models.md"
        tail = ""
        if target.exists() and "\n## Findings" in target.read_text():
            tail = target.read_text().split("\n## Findings", 1)[1]
            tail = "\n## Findings" + tail
        target.write_text(text + tail)
        print(text)
        return
    if not args.model:
        raise SystemExit("--model is required")
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.model}.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    key = "speed"
    if args.step == "quality":
        parts = [args.only] if args.only else ["rules", "locomo"]
        key = "quality_dense" if args.dense else "quality"
        key += f"@{args.tag}" if args.tag else ""
        weights = DENSE if args.dense else {}
        saved[key] = saved.get(key, {}) | quality(args.model, parts, weights, args.tag)
    else:
        saved["speed"] = speed(args.model)
    saved["machine"] = {"cpu": common.machine_info()["cpu"], "loadavg": os.getloadavg()}
    path.write_text(json.dumps(common.jsonable(saved), indent=1))
    done = saved[key] if args.step == "quality" else saved["speed"]
    summary = {k: v for k, v in done.items() if k not in ("rules_dev", "locomo_tune")}
    for part in ("rules_dev", "locomo_tune"):
        if part in done:
            summary[part] = done[part]["report"]
    print(json.dumps(common.jsonable(summary), indent=1))


if __name__ == "__main__":
    socket.setdefaulttimeout(30)
    main()
