"""A rule's first sentence indexed once, not twice, measured before building it.

A negative result, kept so it can be re-run: nothing of it is in the product
(``results/studies/first_sentence_once.json``, bench/README "Studies"; both halves together:
+0.0035 ± 0.0079 nDCG@10 with ``prefix``, −0.0011 ± 0.0088 with ``sentence``, paired over the
dev split).
``prism import-rules`` writes a rule's subject as ``"<innermost heading>: <first
sentence>"``, and the text Prism indexes is ``subject + "\\n" + body`` (embedded once,
tokenised once for BM25), so an imported rule's first sentence is in that text twice. The
variant indexes ``"<heading>: " + body`` instead, when the subject repeats the body's start;
rows without such an overlap (and notes, which have no subject) keep today's text. Two ways
to tell the overlap (``--rules``):

- ``prefix`` (what a product could do for any subject): the body starts with the part of
  the subject after its last ``": "`` (the whole subject when it has none); the text is the
  subject without that part, then the body.
- ``sentence``: the subject ends with the importer's ``first_sentence(body)`` (after
  ``": "`` or as the whole subject); the same text. Unlike ``prefix`` it also catches a
  first sentence holding ``": "`` itself, or one the importer shortened or unbolded.
- ``none``: no row changes; with both halves on it runs the whole machinery (a fresh BM25
  index of the texts, the matrix rebuilt from the vector cache) and must reproduce the
  product: the reproduction check.

Each cell is (``lexical``, ``dense``): BM25 over the de-duplicated texts (the product's own
``LexicalIndex``, k1 and b from settings), and/or the cosine against their embeddings (the
product's MiniLM through the bench vector cache, changed rows only). As in
``subject_field.py``, each query goes through the product's ``semantic_recall``; only the SQLite
store's ``recall`` is replaced by ``rank_snapshot``'s steps with the two swapped in, and
``prism_memory.domain.ranking.rank`` does the rest. A dense cell scores every row (the sketch
that prunes was fitted to the stored vectors), which pruning is exact to (``subject_field.py``
checks it).

    python bench/rules_quality.py --out /tmp/default.jsonl
    python bench/studies/first_sentence_once.py rules --reference /tmp/default.jsonl \
        --json-out /tmp/dedupe.json
    python bench/studies/first_sentence_once.py locomo --json-out /tmp/dedupe_locomo.json
    # (LoCoMo's notes have no subject: nothing moves)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import numpy as np
from subject_field import stored_texts
from variants import LocomoTune, load_average, ranked_page, topic_mean

SEP = ": "
# (lexical, dense) of the current run; None: the store's own recall, untouched.
PARAMS: dict[str, Any] = {"cell": None, "rule": "prefix"}
CELLS = {"both": (True, True), "lexical": (True, False), "dense": (False, True)}


def deduplicated(subject: str | None, body: str, rule: str) -> str | None:
    """The text to index instead of ``subject + "\\n" + body``; None: keep that text."""
    if not subject or rule == "none":
        return None
    if rule == "prefix":
        tail = subject.rsplit(SEP, 1)[-1]
        if tail and body.startswith(tail):
            return subject[: len(subject) - len(tail)] + body
        return None
    if rule == "sentence":
        from prism_memory.formats.rules_io.requests import first_sentence

        sentence = first_sentence(body)
        head = subject[: len(subject) - len(sentence)]
        if sentence and subject.endswith(sentence) and (not head or head.endswith(SEP)):
            return head + body
        return None
    raise ValueError(f"unknown rule {rule!r}")


@dataclass
class Texts:
    """One cache snapshot's rows: the text each is indexed by under the rule, its vectors."""

    ids: list[str]
    texts: list[str]
    changed: Any  # bool per row: the text differs from today's
    to_body: Any  # bool per row: changed to the body alone (the subject had no heading)
    lexicon: Any  # prism_memory.trigraph.sqlite.lexical_index.LexicalIndex over ``texts``
    matrix: Any  # unit vectors of ``texts`` (today's stored vector where unchanged)
    same_vectors: bool  # the matrix equals the stored one bit for bit


def build_texts(
    store: Any, tenant_id: UUID, ids: list[str], stored: Any, embedder: Any, rule: str
) -> Texts:
    from prism_memory.services.memory_deps import text_of
    from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex

    subjects, bodies = stored_texts(store, tenant_id, ids)
    before = [text_of(s, b) for s, b in zip(subjects, bodies, strict=True)]
    found = [deduplicated(s, b, rule) for s, b in zip(subjects, bodies, strict=True)]
    texts = [old if new is None else new for old, new in zip(before, found, strict=True)]
    mask = np.array([new is not None for new in found], dtype=bool)
    to_body = mask & np.array([t == b for t, b in zip(texts, bodies, strict=True)], dtype=bool)
    lexicon = LexicalIndex()
    lexicon.add(texts)
    matrix = np.array(stored, dtype=np.float32, copy=True)
    # Changed rows: the new text's embedding. rule "none": every row re-read from the
    # vector cache (the same vectors the store holds, or the check fails).
    redo = np.flatnonzero(mask) if rule != "none" else np.arange(len(ids))
    if redo.size:
        matrix[redo] = np.asarray(embedder.embed([texts[i] for i in redo]), dtype=np.float32)
    same = bool(np.array_equal(matrix, stored))
    return Texts(ids, texts, mask, to_body, lexicon, matrix, same)


def hook(store: Any, embedder: Any) -> dict[tuple[str, str, str], Texts]:
    """Replace ``store.recall`` (SQLite) by ``rank_snapshot`` with the swapped-in halves."""

    own = store.recall
    built: dict[tuple[str, str, str], Texts] = {}

    def texts_for(tenant_id: UUID, project: str, cands: Any) -> Texts:
        ids = [str(i) for i in cands.ids]
        key = (str(tenant_id), project, PARAMS["rule"])
        t = built.get(key)
        if t is None or t.ids != ids:
            t = build_texts(store, tenant_id, ids, cands.matrix, embedder, PARAMS["rule"])
            built[key] = t
        return t

    def recall(tenant_id: UUID, req: Any) -> Any:
        cell = PARAMS["cell"]
        if cell is None:
            return own(tenant_id, req)
        lexical, dense = cell
        cands = store.candidates(tenant_id, req.filter, req.model)
        t = texts_for(tenant_id, str(req.filter.project_id), cands)
        w = req.weights
        preselect = req.preselect_above
        if dense:
            sketch = {"coarse": None, "projection": None, "residual": None}
            cands = dataclasses.replace(cands, matrix=t.matrix, **sketch)
            preselect = 0
        hits = None
        if (w.lexical or w.lexical_note) and len(cands) and req.query.strip():
            if lexical:
                live = cands.live if cands.live is not None else np.ones(len(cands.ids), bool)
                hits = t.lexicon.search(req.query, len(cands.ids), live, w.bm25_k1, w.bm25_b)
            else:
                hits = cands.lexical_hits(req.query, w)
        return ranked_page(cands, req, preselect, hits)

    store.recall = recall
    return built


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", choices=["rules", "locomo"])
    p.add_argument("--rules", default="prefix,sentence", help="overlap rules to measure")
    p.add_argument("--reference", type=Path, default=None, help="rules_quality.py's PRED.jsonl")
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--pred-dir", type=Path, default=None, help="keep every cell's PRED.jsonl")
    return p.parse_args(argv)


def changed_counts(t: Texts) -> dict[str, Any]:
    """How many stored rows the rule changes, with and without a heading left in front."""
    changed = np.flatnonzero(t.changed)
    return {
        "rows": len(t.ids),
        "changed": int(changed.size),
        "changed_to_body_alone": int(t.to_body.sum()),
        "changed_to_heading_and_body": int(changed.size - t.to_body.sum()),
    }


def run_rules(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    import rules_quality as rq
    from lib.paired import paired

    rargs = rq.parse_args(["--out", str(out_dir / "cell.jsonl")])
    rules, queries = rq.load_inputs(rargs)
    embedder = common.CachedEmbedder(common.make_embedder("minilm"))
    system = rq.make_system(rargs, embedder, {})
    system.load(rules)
    built = hook(system.svc.store, embedder)
    PARAMS["cell"] = None
    shipped = out_dir / "rules-shipped.jsonl"
    rq.write_pred(shipped, rq.run_queries(system, queries)[0])
    base = rq.per_query_metrics(rargs, queries, shipped)
    gg = [q["qid"] for q in queries if q.get("topic") == "general-guidelines"]
    checks: dict[str, Any] = {}
    if args.reference:
        checks["reference"] = str(args.reference)
        checks["shipped_equals_reference"] = shipped.read_bytes() == args.reference.read_bytes()
    results: dict[str, Any] = {}
    counts: dict[str, Any] = {}

    def measure(label: str, runs: list[Any]) -> dict[str, Any]:
        pred = out_dir / f"rules-{label}.jsonl"
        rq.write_pred(pred, runs)
        per_q = rq.per_query_metrics(rargs, queries, pred)
        result: dict[str, Any] = {
            "all": rq.score(rargs, pred, "dev")["groups"]["all"],
            "general_guidelines_ndcg@10": topic_mean(queries, per_q, "general-guidelines"),
            "not_applicable_returned": rq.no_leak_check(rules, queries, runs),
            "identical_to_shipped": pred.read_bytes() == shipped.read_bytes(),
            "load_average": load_average(),
        }
        for metric in ("ndcg@10", "recall@5"):
            result[f"vs_default_{metric}"] = paired(
                {q: v[metric] for q, v in per_q.items()},
                {q: v[metric] for q, v in base.items()},
            )
        result["vs_default_general_guidelines_ndcg@10"] = paired(
            {q: per_q[q]["ndcg@10"] for q in gg}, {q: base[q]["ndcg@10"] for q in gg}
        )
        diffs = [per_q[q]["ndcg@10"] - base[q]["ndcg@10"] for q in base]
        result["ndcg@10_queries_up_down_same"] = [
            sum(d > 0 for d in diffs),
            sum(d < 0 for d in diffs),
            sum(d == 0 for d in diffs),
        ]
        common.progress(f"rules {label}: {json.dumps(result)}")
        return result

    for rule in ["none", *(r for r in args.rules.split(",") if r != "none")]:
        PARAMS["rule"] = rule
        for cell_name, cell in CELLS.items():
            if rule == "none" and cell_name != "both":
                continue
            PARAMS["cell"] = cell
            label = f"{rule}-{cell_name}"
            results[label] = {"rule": rule, "lexical": cell[0], "dense": cell[1]}
            results[label].update(measure(label, rq.run_queries(system, queries)[0]))
            if rule == "none":
                same = results[label]["identical_to_shipped"]
                checks["none_both_equals_product_recall"] = same
                checks["none_vectors_equal_stored"] = all(
                    t.same_vectors for k, t in built.items() if k[2] == "none"
                )
                same = same and checks["none_vectors_equal_stored"]
                if not same or not checks.get("shipped_equals_reference", True):
                    raise SystemExit(f"the neutral rule does not reproduce the product: {checks}")
        for key, t in built.items():
            if key[2] == rule:
                counts[rule] = changed_counts(t)
                common.progress(f"rule {rule}: {json.dumps(counts[rule])}")
    system.close()
    return {"reproduction": checks, "rows_changed": counts, "cells": results}


def run_locomo(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    """LoCoMo's turns are notes without a subject: the variant changes none of them."""
    half = LocomoTune.load(out_dir, "bench-dedupe-", hook)
    built = half.installed
    results: dict[str, Any] = {}
    preds: dict[str, bytes] = {}
    cells = [("shipped", None)] + [(f"{r}-both", r) for r in args.rules.split(",") if r != "none"]
    for label, rule in cells:
        PARAMS["cell"] = None if rule is None else CELLS["both"]
        PARAMS["rule"] = rule or "none"
        pred = half.predict(out_dir / f"locomo-{label}.jsonl")
        preds[label] = pred.read_bytes()
        result: dict[str, Any] = {"load_average": load_average()}
        if rule is not None:
            result["identical_to_shipped"] = preds[label] == preds["shipped"]
            result["rows_changed"] = sum(
                int(t.changed.sum()) for k, t in built.items() if k[2] == rule
            )
        per_q = half.recall_at(pred, 5)
        result["recall@5"] = round(sum(per_q.values()) / len(per_q), 4)
        result["n"] = len(per_q)
        results[label] = result
        common.progress(f"locomo {label}: {json.dumps(result)}")
    half.system.close()
    return {"cells": results}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = args.pred_dir or Path(tempfile.mkdtemp(prefix="bench-dedupe-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = load_average()
    run = run_rules if args.bench == "rules" else run_locomo
    results = run(args, out_dir)
    summary = {"bench": args.bench, "load_average_start_end": [started, load_average()], **results}
    common.save_report(summary, args.json_out, echo=False)


if __name__ == "__main__":
    main()
