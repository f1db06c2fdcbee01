"""The benchmark runner still runs end to end (tiny, fake embedder, offline).

Not a benchmark: it only guards ``bench/rules_quality.py`` against rot. Skipped when the
shared benchmark data (``../shared/bench`` beside the repository) is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("PRISM_BENCH_DATA", REPO.parent / "shared" / "bench"))
RULES = DATA / "rules"

pytestmark = pytest.mark.skipif(
    not (RULES / "rules.jsonl").exists(), reason="shared benchmark data not present"
)


def test_rules_quality_scores_a_small_run_with_the_fake_embedder(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    summary = tmp_path / "summary.json"
    env = {**os.environ, "PRISM_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "rules_quality.py"),
            "--model",
            "fake",
            "--limit-rules",
            "50",
            "--limit-queries",
            "3",
            "--no-vector-cache",
            "--out",
            str(pred),
            "--json-out",
            str(summary),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    assert [line["qid"] for line in lines] == [
        json.loads(line)["qid"]
        for line in (RULES / "recall_bench_dev.jsonl").read_text().splitlines()[:3]
    ]
    report = json.loads(summary.read_text())
    assert report["scorer"]["groups"]["all"]["n"] == 3
    assert report["not_applicable_returned"] == 0
    assert report["n_rules_loaded"] > 0


def _study_module(name: str):  # type: ignore[no-untyped-def]
    """A module of ``bench/studies/``, imported as the study scripts import each other."""
    paths = [str(REPO / "bench"), str(REPO / "bench" / "studies")]
    sys.path[:0] = paths
    try:
        return __import__(name)
    finally:
        for path in paths:
            sys.path.remove(path)


def test_model_comparison_pairs_differences_by_query() -> None:
    models = _study_module("models")
    base = {"a": {"m": 0.5}, "b": {"m": 0.2}, "c": {"m": 0.0}, "only-base": {"m": 1.0}}
    other = {"a": {"m": 0.7}, "b": {"m": 0.2}, "c": {"m": 0.4}}
    mean, se, n = models.paired(base, other, "m")
    # differences 0.2, 0.0, 0.4: mean 0.2, sd 0.2, se 0.2 / sqrt(3)
    assert n == 3
    assert mean == pytest.approx(0.2)
    assert se == pytest.approx(0.2 / 3**0.5)


def test_asymmetric_embedder_gives_recall_queries_the_query_side() -> None:
    from prism_memory.embeddings.fake import FakeEmbedder

    embedders = _study_module("model_embedders")
    passages, queries = FakeEmbedder(), FakeEmbedder(dim=16)
    both = embedders.Asymmetric(passages, queries)
    assert both.embed(["Use UTC timestamps."]).shape[1] == passages.dim
    with both.queries():
        assert both.embed(["Use UTC timestamps."]).shape[1] == 16
    assert both.embed(["Use UTC timestamps."]).shape[1] == passages.dim


def test_rule_subjects_are_what_the_importer_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    from lib.rules_data import rule_text, rule_to_request, subject_of

    from prism_memory.formats.rules_io.records import Location, Unit
    from prism_memory.formats.rules_io.requests import subject_for

    rule = {
        "subject": "Lazy-load images...",
        "section": "Shopify Theme Best Practices > Performance Optimization",
        "body": "Lazy-load images below the fold. It saves bandwidth.",
        "source_path": "rules/shopify.mdc",
        "line_start": 3,
        "line_end": 3,
        "kind_guess": "behavioral_rule",
        "scope": "global",
        "surface": "shopify",
    }
    expected = "Performance Optimization: Lazy-load images below the fold"
    assert subject_of(rule) == expected
    unit = Unit(
        rule["body"],
        Location("x", 1, 1),
        ("Shopify Theme Best Practices", "Performance Optimization"),
    )
    assert subject_of(rule) == subject_for(unit)
    assert subject_of(rule, "plain") == "Lazy-load images..."
    assert subject_of(rule, "path").startswith("Shopify Theme Best Practices > Performance")
    assert rule_text(rule) == f"{expected}\n{rule['body']}"
    request = rule_to_request(rule)
    assert request is not None and request["subject"] == expected
    # a sentence that starts with its heading keeps it once, as the importer does
    said = {**rule, "body": "Performance Optimization: cache the theme's assets."}
    assert subject_of(said) == "Performance Optimization: cache the theme's assets"
    assert subject_of({**said, "section": None}) == subject_of(said)


def test_fields_bm25f_at_weight_one_is_the_products_bm25() -> None:
    import numpy as np

    from prism_memory.domain.lexical import tokenize
    from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex

    subject_field = _study_module("subject_field")
    rows = [
        ("Testing: write tests first", "Write tests first, then the code."),
        (None, "Use the logger, never print."),
        ("Performance: cache", "Cache the results of slow calls; tests cover the cache."),
    ]
    index = LexicalIndex(k1=1.2, b=0.75)
    index.add([f"{s}\n{b}" if s else b for s, b in rows])
    postings: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for row, (s, b) in enumerate(rows):
        for t in sorted(set(tokenize(s or "")) | set(tokenize(b))):
            rs, fs, fb = postings.setdefault(t, ([], [], []))
            rs.append(row)
            fs.append(tokenize(s or "").count(t))
            fb.append(tokenize(b).count(t))
    f = subject_field.Fields(
        ids=["a", "b", "c"],
        postings={t: tuple(np.array(x, dtype=np.int64) for x in v) for t, v in postings.items()},
        len_subject=np.array([len(tokenize(s or "")) for s, _ in rows], dtype=np.int64),
        len_body=np.array([len(tokenize(b)) for _, b in rows], dtype=np.int64),
        subject_matrix=np.zeros((3, 4), dtype=np.float32),
        has_subject=np.array([s is not None for s, _ in rows]),
    )
    live = np.ones(3, dtype=bool)
    want = index.search("tests cache logger", 3, live)
    got = subject_field.bm25f(f, "tests cache logger", 3, live, 1, 1.2, 0.75)
    assert got.rows.tolist() == want.rows.tolist()
    assert got.scores.tolist() == want.scores.tolist()  # bit for bit
    assert got.ceiling == want.ceiling
    heavier = subject_field.bm25f(f, "tests", 3, live, 3, 1.2, 0.0)
    plain = subject_field.bm25f(f, "tests", 3, live, 1, 1.2, 0.0)
    # row 0 holds "tests" in its subject, row 2 only in its body
    assert heavier.scores[0] > plain.scores[0]
    assert heavier.scores[1] == plain.scores[1]


def test_dedupe_indexes_the_first_sentence_once() -> None:
    once = _study_module("first_sentence_once")
    body = "Use lazy loading for images. It keeps the first paint fast."
    subject = "Performance: Use lazy loading for images"  # as subject_for writes it
    want = "Performance: " + body
    assert once.deduplicated(subject, body, "prefix") == want
    assert once.deduplicated(subject, body, "sentence") == want
    # no heading: the subject is the first sentence alone, so the body alone is indexed
    assert once.deduplicated("Use lazy loading for images", body, "prefix") == body
    # the importer unbolds the sentence: only "sentence" sees the overlap
    bold = "**Use** lazy loading for images. It keeps the first paint fast."
    assert once.deduplicated(subject, bold, "prefix") is None
    assert once.deduplicated(subject, bold, "sentence") == "Performance: " + bold
    # no overlap, no subject, or the neutral rule: today's text
    assert once.deduplicated("Performance: cache", body, "prefix") is None
    assert once.deduplicated(None, body, "prefix") is None
    assert once.deduplicated(subject, body, "none") is None
