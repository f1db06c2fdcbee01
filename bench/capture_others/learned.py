"""Can a small learned detector read what the cue detector misses? Cross-validated, dev parts only.

    .venv/bin/python bench/capture_others/learned.py                 # ~2 min on 2 cores
    .venv/bin/python bench/capture_others/learned.py --json results_learned.json

The candidates the issue proposed, each scored by grouped 5-fold cross-validation over the
parts tuning may look at — ``bench/capture/tune.jsonl`` (ours), ``dev.jsonl`` and
``dev2.jsonl`` (other people's) — never the set-aside parts, which this script does not open:

- ``cues``: logistic regression over the cue detector's features (each cue anywhere in the
  message, how many sentences state something, whether and as what ``detect`` fires,
  ``after_action``, length);
- ``embedding``: logistic regression over the shipped MiniLM vector of the cleaned message;
- ``both``: the two together;
- ``knn``: nearest labelled exemplars (mean cosine of the 3 nearest lasting minus the 3 nearest
  other messages).

Folds are grouped by source file (a session's messages never straddle train and test; each of
our own messages is its own group) and seeded. Reported per part: average precision, recall at
precision >= 0.90 (the target), and precision at the cue detector's own recall (is anything
better than the cues at their operating point?).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from prism_memory.capture import detector
from prism_memory.capture.detector import clean, detect
from prism_memory.embeddings.minilm import MiniLMEmbedder

HERE = Path(__file__).resolve().parent
PARTS = {
    "tune": HERE.parent / "capture" / "tune.jsonl",
    "dev": HERE / "dev.jsonl",
    "dev2": HERE / "dev2.jsonl",
}
KINDS = ("correction", "feedback", "preference", "convention", "behavioral_rule")
SEED = 20261206
FOLDS = 5
Array = npt.NDArray[np.float64]


def load() -> list[dict[str, Any]]:
    items = []
    for part, path in PARTS.items():
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    item = json.loads(line)
                    item["part"] = part
                    # our own messages are independent phrasings; others' share a session file
                    item["group"] = item.get("source") or f"ours:{item['id']}"
                    items.append(item)
    return items


def cue_features(text: str, after_action: bool) -> list[float]:
    sentences = detector._sentences(clean(text))
    names = (*detector._CUE_NAMES, "specific_object")
    out = [float(any(name in s.cues for s in sentences)) for name in names]
    stating = [s for s in sentences if detector._states_something(s)]
    out += [float(bool(stating)), len(stating) / max(1, len(sentences))]
    found = detect(text, after_action)
    out.append(float(found is not None))
    out += [float(found is not None and found.kind.value == k) for k in KINDS]
    out += [float(after_action), math.log1p(len(text)) / 6, min(len(sentences), 10) / 10]
    return out


def fit(x: Array, y: Array, lam: float) -> tuple[Array, float]:
    """L2-regularised, class-balanced logistic regression by Newton's method."""
    n, k = x.shape
    w, b = np.zeros(k), 0.0
    weight = np.where(y == 1, (n - y.sum()) / max(1.0, y.sum()), 1.0)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        grad = np.append(x.T @ (weight * (p - y)) + lam * w, np.sum(weight * (p - y)))
        curv = weight * p * (1 - p)
        hess = np.zeros((k + 1, k + 1))
        hess[:k, :k] = (x.T * curv) @ x + lam * np.eye(k)
        hess[:k, k] = hess[k, :k] = x.T @ curv
        hess[k, k] = curv.sum() + 1e-9
        step = np.linalg.solve(hess, grad)
        w, b = w - step[:k], b - step[k]
        if np.abs(step).max() < 1e-8:
            break
    return w, b


def folds(groups: list[str]) -> Array:
    names = sorted(set(groups))
    np.random.RandomState(SEED).shuffle(names)
    fold_of = {g: i % FOLDS for i, g in enumerate(names)}
    return np.array([fold_of[g] for g in groups])


def logistic_oof(x: Array, y: Array, fold: Array, lam: float) -> Array:
    score = np.zeros(len(y))
    for i in range(FOLDS):
        train, test = fold != i, fold == i
        mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
        w, b = fit((x[train] - mu) / sd, y[train], lam)
        score[test] = ((x[test] - mu) / sd) @ w + b
    return score


def knn_oof(emb: Array, y: Array, fold: Array, k: int = 3) -> Array:
    score = np.zeros(len(y))
    for i in range(FOLDS):
        train, test = fold != i, fold == i
        cos = emb[test] @ emb[train].T
        near_pos = np.sort(cos[:, y[train] == 1], axis=1)[:, -k:].mean(1)
        near_neg = np.sort(cos[:, y[train] == 0], axis=1)[:, -k:].mean(1)
        score[test] = near_pos - near_neg
    return score


def average_precision(score: Array, y: Array) -> float:
    hits, total = 0, 0.0
    for rank, i in enumerate(np.argsort(-score), 1):
        if y[i]:
            hits += 1
            total += hits / rank
    return total / max(1, int(y.sum()))


def recall_at_precision(score: Array, y: Array, floor: float) -> float:
    tp = fp = 0
    best = 0.0
    for i in np.argsort(-score):
        tp, fp = tp + int(y[i]), fp + int(not y[i])
        if tp / (tp + fp) >= floor:
            best = max(best, tp / max(1.0, y.sum()))
    return best


def precision_at_recall(score: Array, y: Array, floor: float) -> float:
    tp = fp = 0
    for i in np.argsort(-score):
        tp, fp = tp + int(y[i]), fp + int(not y[i])
        if tp / y.sum() >= floor - 1e-9:
            return tp / (tp + fp)
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    items = load()
    y = np.array([float(it["lasting"]) for it in items])
    part = np.array([it["part"] for it in items])
    fold = folds([it["group"] for it in items])
    cues = np.array([cue_features(it["text"], it["after_action"]) for it in items])
    started = time.perf_counter()
    emb = MiniLMEmbedder().embed([clean(it["text"]) for it in items]).astype(np.float64)
    ms_per_message = 1000 * (time.perf_counter() - started) / len(items)
    print(f"embedding: {ms_per_message:.1f} ms per message (model load included)")
    fired = cues[:, len(detector._CUE_NAMES) + 3]
    scores = {
        "cues": logistic_oof(cues, y, fold, 10.0),
        "embedding": logistic_oof(emb, y, fold, 100.0),
        "both": logistic_oof(np.hstack([emb, cues]), y, fold, 100.0),
        "knn": knn_oof(emb, y, fold),
    }
    figures: dict[str, Any] = {"ms_per_message_embedding": round(ms_per_message, 1)}
    for name in PARTS:
        m = part == name
        tp = int((fired[m] * y[m]).sum())
        proposed, lasting = int(fired[m].sum()), int(y[m].sum())
        base_p, base_r = tp / max(1, proposed), tp / max(1, lasting)
        row: dict[str, Any] = {
            "messages": int(m.sum()),
            "lasting": lasting,
            "cue_detector": {"precision": round(base_p, 3), "recall": round(base_r, 3)},
        }
        print(
            f"{name:5} {int(m.sum()):5} messages, {lasting:3} lasting; cue detector "
            f"P {base_p:.3f} R {base_r:.3f}"
        )
        for model, s in scores.items():
            ap = average_precision(s[m], y[m])
            r90 = recall_at_precision(s[m], y[m], 0.90)
            p_at = precision_at_recall(s[m], y[m], base_r)
            row[model] = {
                "average_precision": round(ap, 3),
                "recall_at_precision_0.90": round(r90, 3),
                "precision_at_cue_recall": round(p_at, 3),
            }
            print(
                f"      {model:9} AP {ap:.3f}  recall@P>=0.90 {r90:.3f}  "
                f"P at the cues' recall {p_at:.3f}"
            )
        figures[name] = row
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
