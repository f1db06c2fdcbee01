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


def _bench_module(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO / "bench"))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(REPO / "bench"))


def test_model_comparison_pairs_differences_by_query() -> None:
    models = _bench_module("models")
    base = {"a": {"m": 0.5}, "b": {"m": 0.2}, "c": {"m": 0.0}, "only-base": {"m": 1.0}}
    other = {"a": {"m": 0.7}, "b": {"m": 0.2}, "c": {"m": 0.4}}
    mean, se, n = models.paired(base, other, "m")
    # differences 0.2, 0.0, 0.4: mean 0.2, sd 0.2, se 0.2 / sqrt(3)
    assert n == 3
    assert mean == pytest.approx(0.2)
    assert se == pytest.approx(0.2 / 3**0.5)


def test_asymmetric_embedder_gives_recall_queries_the_query_side() -> None:
    from app.embeddings.fake import FakeEmbedder

    embedders = _bench_module("model_embedders")
    passages, queries = FakeEmbedder(), FakeEmbedder(dim=16)
    both = embedders.Asymmetric(passages, queries)
    assert both.embed(["Use UTC timestamps."]).shape[1] == passages.dim
    with both.queries():
        assert both.embed(["Use UTC timestamps."]).shape[1] == 16
    assert both.embed(["Use UTC timestamps."]).shape[1] == passages.dim


def test_rule_subjects_are_what_the_importer_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    from rules_data import rule_text, rule_to_request, subject_of

    from app.formats.rules_io.records import Location, Unit
    from app.formats.rules_io.requests import subject_for

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
