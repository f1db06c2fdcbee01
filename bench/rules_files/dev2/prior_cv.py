"""Choose the importer's structural prior by leave-one-language-out over the tuning parts.

    python bench/rules_files/dev2/prior_cv.py [--json FILE]

The prior (:data:`prism_memory.formats.rules_io.kinds.STRUCTURE`) is what a list entry
under a section that neither names rules nor describes adds to the base score when it does
not read as a description. For each language of the tuning parts (``dev``, ``dev3``,
``dev5``, ``holdout6``, ``holdout7``), the value with the best F1 on the files of the
*other* languages is chosen from a grid and the held-out language is scored with it; the
pooled figure over the held-out languages is the leave-one-language-out estimate. The
same is done grouped by file (five folds of files, a seeded draw). Never run on any other
split: they are set aside.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "backend"))

import score  # noqa: E402

from prism_memory.formats.rules_io import kinds  # noqa: E402

TUNING = ("dev", "dev3", "dev5", "holdout6", "holdout7")
GRID = (0.15, 0.2, 0.25, 0.3, 0.35)
FOLDS = 5
SEED = 8

SHIPPED = kinds.STRUCTURE

# per file: (language, labels, found, imported); a rule finds at most one label, so the
# rules that found one are as many as the labels found
Row = tuple[str, int, int, int]


def rows_at(prior: float) -> dict[str, Row]:
    kinds.STRUCTURE = prior  # type: ignore[misc]
    out: dict[str, Row] = {}
    for split in TUNING:
        for name, (entry, s) in score.run(split, with_round_trip=False).items():
            out[f"{split}/{name}"] = (entry["language"], s.labels, s.found, s.imported)
    return out


def f1(rows: list[Row]) -> tuple[float, float, float]:
    labels = sum(r[1] for r in rows)
    found = sum(r[2] for r in rows)
    imported = sum(r[3] for r in rows)
    recall = found / labels if labels else 0.0
    precision = found / imported if imported else 0.0
    both = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return recall, precision, both


def cross_validate(
    by_prior: dict[float, dict[str, Row]], fold_of: Callable[[str], str]
) -> dict[str, object]:
    files = sorted(next(iter(by_prior.values())))
    folds = sorted({fold_of(f) for f in files})
    held: list[Row] = []
    chosen: dict[str, float] = {}
    for fold in folds:
        train = [f for f in files if fold_of(f) != fold]
        best = max(GRID, key=lambda p: (f1([by_prior[p][f] for f in train])[2], -abs(p - 0.15)))
        chosen[fold] = best
        held += [by_prior[best][f] for f in files if fold_of(f) == fold]
    recall, precision, both = f1(held)
    return {"chosen": chosen, "recall": recall, "precision": precision, "f1": both}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    with ProcessPoolExecutor(max_workers=2) as pool:
        by_prior = dict(zip(GRID, pool.map(rows_at, GRID), strict=True))
    for prior in GRID:
        recall, precision, both = f1(list(by_prior[prior].values()))
        print(f"prior {prior}: recall {recall:.3f} precision {precision:.3f} F1 {both:.3f}")
    files = sorted(by_prior[GRID[0]])
    language = {f: by_prior[GRID[0]][f][0] for f in files}
    shuffled = files[:]
    random.Random(SEED).shuffle(shuffled)
    fold = {f: str(i % FOLDS) for i, f in enumerate(shuffled)}
    report = {
        "grid": {
            str(p): dict(
                zip(("recall", "precision", "f1"), f1(list(by_prior[p].values())), strict=True)
            )
            for p in GRID
        },
        "leave_one_language_out": cross_validate(by_prior, language.__getitem__),
        "grouped_by_file": cross_validate(by_prior, fold.__getitem__),
    }
    per_language: dict[str, dict[str, float]] = defaultdict(dict)
    for lang in sorted(set(language.values())):
        for p_ in (GRID[0], SHIPPED):
            r, pr, _ = f1([by_prior[p_][f] for f in files if language[f] == lang])
            per_language[lang][f"{p_}"] = round(r, 3)
            per_language[lang][f"{p_} precision"] = round(pr, 3)
    report["per_language"] = per_language
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
