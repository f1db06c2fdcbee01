"""Subject and body as two fields in relevance, measured before building it.

A negative result, kept so it can be re-run: nothing of it is in the product
(``results/studies/subject_field.json``, bench/README "Studies"). Today a memory's subject and
body are one text to both sides of relevance (``subject + "\\n" + body``: embedded once, and
tokenised once for BM25). The hypothesis: a rule's subject (``prism import-rules`` writes
``"<heading>: <first sentence>"``) names its topic more precisely than its body, so it should
count for more:

- lexical (``w_s``): BM25F-style field weighting. Per term, ``tf' = w_s·tf(subject) +
  tf(body)``, and the length normalisation runs over the weighted length ``w_s·|subject| +
  |body|`` (with the default b 0 it plays no part). idf, the ceiling the score is divided
  by, k1 and b are the product's (from settings). ``w_s`` 1 is today's BM25 exactly.
- dense (``gamma``): a second cosine, against an embedding of the subject alone, made
  with the product's own embedder (cached in the bench cache like every other vector):
  ``cosine' = (1 − gamma)·clip(cos(q, subject + body)) + gamma·clip(cos(q, subject))``.
  A row without a subject (a note) keeps its one cosine, so neither variant moves a note.

Each query still goes through the product's own recall (``semantic_recall``: validation,
the restated words dropped, the query embedded); only the store's ``recall`` is replaced
by the same steps as ``recall_snapshot.rank_snapshot``, with these two relevance terms
swapped in, and the product's ``prism_memory.domain.ranking.rank`` doing the rest (weights from
settings). With ``w_s`` 1 and ``gamma`` 0 it must write the shipped PRED.jsonl byte for byte
(checked on every run against the product's own pass, and against ``--reference``, a
``rules_quality.py --out`` file). Cells with ``gamma`` > 0 score every row (no sketch
pruning: its bound does not know the second cosine), which is what pruning is exact to.

    python bench/rules_quality.py --out /tmp/default.jsonl
    python bench/studies/subject_field.py rules --reference /tmp/default.jsonl \
        --json-out /tmp/fields.json
    python bench/studies/subject_field.py locomo --cells 1:0,5:0.5 --json-out /tmp/fl.json

Rules: the dev split. The cells (``--ws`` x ``--gamma`` by default: the full cross, of which
the row ``gamma`` 0 and the column ``w_s`` 1 are the two one-field grids) are paired over
queries against the defaults (``bench/lib/paired.py``). LoCoMo: the tuning half, ``--cells``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import numpy as np
from variants import LocomoTune, load_average, ranked_page, topic_mean

# (w_s, gamma) of the current run; None: the store's own recall, untouched.
# prune False: score every row even at gamma 0 (a check that pruning is exact here).
PARAMS: dict[str, Any] = {"cell": None, "prune": True}


@dataclass
class Fields:
    """Per row of one cache snapshot: each field's postings and lengths, the subject vectors.

    ``postings[term] = (rows ascending, tf in the subject, tf in the body)``.
    """

    ids: list[str]
    postings: dict[str, tuple[Any, Any, Any]]
    len_subject: Any
    len_body: Any
    subject_matrix: Any  # unit vectors of the subjects; zero rows where there is none
    has_subject: Any


def stored_texts(store: Any, tenant_id: UUID, ids: list[str]) -> tuple[list[str | None], list[str]]:
    """Each row's stored subject (None: none) and body, in the order of ``ids``."""
    subjects: list[str | None] = []
    bodies: list[str] = []
    for start in range(0, len(ids), 500):
        part = [UUID(i) for i in ids[start : start + 500]]
        found = store.get_many(tenant_id, part)
        for mid in part:
            pair = found.get(mid)  # every cached row is a stored memory; None: no text
            subjects.append(pair[1].subject or None if pair else None)
            bodies.append(pair[1].body if pair else "")
    return subjects, bodies


def build_fields(store: Any, tenant_id: UUID, ids: list[str], embedder: Any) -> Fields:
    """Read each row's stored subject and body and index them as two fields."""
    from prism_memory.domain.lexical import tokenize

    subjects, bodies = stored_texts(store, tenant_id, ids)
    n = len(ids)
    acc: dict[str, tuple[list[int], list[int], list[int]]] = {}
    len_s = np.zeros(n, dtype=np.int64)
    len_b = np.zeros(n, dtype=np.int64)
    for row, (subject, body) in enumerate(zip(subjects, bodies, strict=True)):
        s_terms = tokenize(subject) if subject else []
        b_terms = tokenize(body)
        len_s[row], len_b[row] = len(s_terms), len(b_terms)
        counts: dict[str, list[int]] = {}
        for t in s_terms:
            counts.setdefault(t, [0, 0])[0] += 1
        for t in b_terms:
            counts.setdefault(t, [0, 0])[1] += 1
        for t, (fs, fb) in counts.items():
            rows, tfs, tfb = acc.setdefault(t, ([], [], []))
            rows.append(row)
            tfs.append(fs)
            tfb.append(fb)
    postings = {
        t: (np.array(r, dtype=np.int64), np.array(s, dtype=np.int64), np.array(b, dtype=np.int64))
        for t, (r, s, b) in acc.items()
    }
    has = np.array([s is not None for s in subjects], dtype=bool)
    matrix = np.zeros((n, embedder.dim), dtype=np.float32)
    with_subject = [i for i in range(n) if has[i]]
    if with_subject:
        vecs = embedder.embed([str(subjects[i]) for i in with_subject])
        matrix[with_subject] = np.asarray(vecs, dtype=np.float32)
    return Fields(ids, postings, len_s, len_b, matrix, has)


def bm25f(
    f: Fields, query: str, n: int, live: Any, w_s: int, k1: float, b: float
) -> Any:  # -> LexicalHits
    """``LexicalIndex.search`` with the subject's term frequencies (and length) times ``w_s``.

    The same steps and float operations in the same order, so ``w_s`` 1 gives the
    product's scores bit for bit (``tf`` stays an integer array: ``w_s`` is an integer).
    """
    from prism_memory.domain.lexical import LexicalHits, tokenize

    terms = set(tokenize(query))
    if not terms:
        return LexicalHits.empty()
    alive = live[:n]
    total = int(alive.sum())
    if total == 0:
        return LexicalHits.empty()
    lengths = (w_s * f.len_subject + f.len_body)[:n]
    avgdl = float(lengths[alive].sum()) / total or 1.0
    scores = np.zeros(n)
    ceiling = 0.0
    for term in sorted(terms):
        found = f.postings.get(term)
        if found is None:
            continue
        rows, tfs, tfb = found
        keep = rows < n
        rows, tfs, tfb = rows[keep], tfs[keep], tfb[keep]
        on = alive[rows]
        rows, tfs, tfb = rows[on], tfs[on], tfb[on]
        if rows.size == 0:
            continue
        tf = w_s * tfs + tfb
        df = rows.size
        idf = np.log(1.0 + (total - df + 0.5) / (df + 0.5))
        ceiling += idf
        norm = k1 * (1.0 - b + b * lengths[rows] / avgdl)
        scores[rows] += idf * tf * (k1 + 1.0) / (tf + norm)
    hit = np.flatnonzero(scores > 0)
    return LexicalHits(hit, scores[hit], ceiling)


@contextmanager
def subject_cosine(f: Fields, gamma: float) -> Iterator[None]:
    """Within: ``ranking.rank``'s cosine is mixed with the subject's (rows with a subject)."""
    from prism_memory.domain import ranking
    from prism_memory.domain.ranking_bounds import dots

    original: Callable[..., Any] = ranking.relevance
    if gamma <= 0:
        yield
        return

    def mixed(c: Any, q: Any, idx: Any, *args: Any, **kwargs: Any) -> Any:
        idx, cosine = original(c, q, idx, *args, **kwargs)
        if q is None or not idx.size:
            return idx, cosine
        subj = np.clip(dots(f.subject_matrix[idx], q), 0.0, 1.0).astype(np.float64)
        out = np.where(f.has_subject[idx], (1.0 - gamma) * cosine + gamma * subj, cosine)
        return idx, out

    ranking.relevance = mixed
    try:
        yield
    finally:
        ranking.relevance = original


def hook(store: Any, embedder: Any) -> None:
    """Replace ``store.recall`` (SQLite) by ``rank_snapshot`` with the two fields' terms."""

    own = store.recall
    built: dict[tuple[str, str], Fields] = {}

    def fields_for(tenant_id: UUID, project: str, cands: Any) -> Fields:
        ids = [str(i) for i in cands.ids]
        f = built.get((str(tenant_id), project))
        if f is None or f.ids != ids:
            f = build_fields(store, tenant_id, ids, embedder)
            built[(str(tenant_id), project)] = f
        return f

    def recall(tenant_id: UUID, req: Any) -> Any:
        cell = PARAMS["cell"]
        if cell is None:
            return own(tenant_id, req)
        w_s, gamma = cell
        cands = store.candidates(tenant_id, req.filter, req.model)
        f = fields_for(tenant_id, str(req.filter.project_id), cands)
        w = req.weights
        hits = None
        if (w.lexical or w.lexical_note) and len(cands) and req.query.strip():
            live = cands.live if cands.live is not None else np.ones(len(cands.ids), dtype=bool)
            hits = bm25f(f, req.query, len(cands.ids), live, w_s, w.bm25_k1, w.bm25_b)
        preselect = req.preselect_above if gamma <= 0 and PARAMS["prune"] else 0
        with subject_cosine(f, gamma):
            return ranked_page(cands, req, preselect, hits)

    store.recall = recall


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", choices=["rules", "locomo"])
    p.add_argument("--ws", default="1,2,3,5", help="subject term-frequency weights (integers)")
    p.add_argument("--gamma", default="0,0.2,0.35,0.5", help="subject cosine shares")
    p.add_argument("--cells", default="", help="explicit w_s:gamma cells (overrides the grid)")
    p.add_argument("--reference", type=Path, default=None, help="rules_quality.py's PRED.jsonl")
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--pred-dir", type=Path, default=None, help="keep every cell's PRED.jsonl")
    return p.parse_args(argv)


def cells(args: argparse.Namespace) -> list[tuple[int, float]]:
    if args.cells:
        found = [(int(a), float(g)) for a, g in (c.split(":") for c in args.cells.split(","))]
    else:
        found = [(int(w), float(g)) for g in args.gamma.split(",") for w in args.ws.split(",")]
    return [(1, 0.0)] + [c for c in found if c != (1, 0.0)]


def name(cell: tuple[int, float]) -> str:
    return f"ws{cell[0]}_g{cell[1]}"


def run_rules(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    import rules_quality as rq
    from lib.paired import paired

    rargs = rq.parse_args(["--out", str(out_dir / "cell.jsonl")])
    rules, queries = rq.load_inputs(rargs)
    embedder = common.CachedEmbedder(common.make_embedder("minilm"))
    system = rq.make_system(rargs, embedder, {})
    system.load(rules)
    hook(system.svc.store, embedder)
    PARAMS["cell"] = None
    shipped = out_dir / "rules-shipped.jsonl"
    rq.write_pred(shipped, rq.run_queries(system, queries)[0])
    checks: dict[str, Any] = {}
    results: dict[str, Any] = {}
    base: dict[str, dict[str, float]] = {}
    for cell in cells(args):
        PARAMS["cell"] = cell
        runs, _ = rq.run_queries(system, queries)
        pred = out_dir / f"rules-{name(cell)}.jsonl"
        rq.write_pred(pred, runs)
        if cell == (1, 0.0):
            checks["ws1_g0_equals_product_recall"] = pred.read_bytes() == shipped.read_bytes()
            if args.reference:
                same = pred.read_bytes() == args.reference.read_bytes()
                checks["ws1_g0_equals_reference"] = same
                checks["reference"] = str(args.reference)
            PARAMS["prune"] = False
            unpruned = out_dir / "rules-ws1_g0-unpruned.jsonl"
            rq.write_pred(unpruned, rq.run_queries(system, queries)[0])
            PARAMS["prune"] = True
            checks["ws1_g0_unpruned_equals_pruned"] = unpruned.read_bytes() == pred.read_bytes()
            if not all(v for k, v in checks.items() if k != "reference"):
                raise SystemExit(f"w_s 1, gamma 0 does not reproduce the product: {checks}")
        report = rq.score(rargs, pred, "dev")["groups"]
        per_q = rq.per_query_metrics(rargs, queries, pred)
        result: dict[str, Any] = {
            "w_s": cell[0],
            "gamma": cell[1],
            "all": report["all"],
            "general_guidelines_ndcg@10": topic_mean(queries, per_q, "general-guidelines"),
            "not_applicable_returned": rq.no_leak_check(rules, queries, runs),
            "load_average": load_average(),
        }
        if cell == (1, 0.0):
            base = per_q
        else:
            for metric in ("ndcg@10", "recall@5"):
                result[f"vs_default_{metric}"] = paired(
                    {q: v[metric] for q, v in per_q.items()},
                    {q: v[metric] for q, v in base.items()},
                )
            gg = [q["qid"] for q in queries if q.get("topic") == "general-guidelines"]
            result["vs_default_general_guidelines_ndcg@10"] = paired(
                {q: per_q[q]["ndcg@10"] for q in gg}, {q: base[q]["ndcg@10"] for q in gg}
            )
        results[name(cell)] = result
        common.progress(f"rules {name(cell)}: {json.dumps(result)}")
    system.close()
    return {"reproduction": checks, "cells": results}


def run_locomo(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    from lib.paired import paired

    half = LocomoTune.load(out_dir, "bench-fields-", hook)
    results: dict[str, Any] = {}
    base: dict[int, dict[str, float]] = {}
    preds: dict[str, bytes] = {}
    for cell in [None, *cells(args)]:
        PARAMS["cell"] = cell
        label = "shipped" if cell is None else name(cell)
        pred = half.predict(out_dir / f"locomo-{label}.jsonl")
        preds[label] = pred.read_bytes()
        result: dict[str, Any] = {"load_average": load_average()}
        if cell is not None:
            result.update(w_s=cell[0], gamma=cell[1])
            result["identical_to_shipped"] = preds[label] == preds["shipped"]
        for k in (1, 5, 10):
            per_q = half.recall_at(pred, k)
            result[f"recall@{k}"] = round(sum(per_q.values()) / len(per_q), 4)
            result["n"] = len(per_q)
            if cell is None:
                base[k] = per_q
            else:
                result[f"vs_default_recall@{k}"] = paired(per_q, base[k])
        results[label] = result
        common.progress(f"locomo {label}: {json.dumps(result)}")
    half.system.close()
    return {"cells": results}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = args.pred_dir or Path(tempfile.mkdtemp(prefix="bench-fields-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = load_average()
    run = run_rules if args.bench == "rules" else run_locomo
    results = run(args, out_dir)
    summary = {
        "bench": args.bench,
        "load_average_start_end": [started, load_average()],
        **results,
    }
    common.save_report(summary, args.json_out, echo=False)


if __name__ == "__main__":
    main()
