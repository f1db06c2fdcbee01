"""The capture set written by other people (``bench/capture_others/``) is well formed and
split as its README says, and its score script runs the real reader and detector on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench_scripts import load_script

REPO = Path(__file__).resolve().parents[2]
SET = REPO / "bench" / "capture_others"


def _part(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (SET / f"{name}.jsonl").read_text().splitlines()]


COLLECTIONS = [("dev", "setaside", 300, 8), ("dev2", "setaside2", 1500, 15)]


@pytest.mark.parametrize(("dev_name", "aside_name", "at_least", "lasting_aside"), COLLECTIONS)
def test_every_message_has_a_source_a_label_and_one_part(
    dev_name: str, aside_name: str, at_least: int, lasting_aside: int
) -> None:
    dev, aside = _part(dev_name), _part(aside_name)
    rows = dev + aside
    assert len(rows) >= at_least
    assert len({r["id"] for r in rows}) == len(rows)
    assert 0.30 <= len(aside) / len(rows) <= 0.36  # a third, drawn per label
    for r in rows:
        assert isinstance(r["lasting"], bool) and isinstance(r["after_action"], bool)
        assert str(r["text"]).strip()
        assert str(r["source"]).startswith("https://github.com/"), r
    assert sum(bool(r["lasting"]) for r in aside) >= lasting_aside


def test_the_second_collection_shares_no_source_id_or_message_with_the_first() -> None:
    first = _part("dev") + _part("setaside")
    second = _part("dev2") + _part("setaside2")

    def repo(r: dict[str, object]) -> str:
        return "/".join(str(r["source"]).split("/")[3:5])

    assert not {repo(r) for r in first} & {repo(r) for r in second}
    assert not {r["id"] for r in first} & {r["id"] for r in second}
    # a one-word reply ("continue") may be typed by anyone; anything longer is not shared
    shared = {r["text"] for r in first} & {r["text"] for r in second}
    assert all(len(str(text)) <= 20 for text in shared), shared


def test_the_score_script_counts_every_message_of_every_part(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(SET / "score.py"), "--json", str(out)],
        check=True,
        capture_output=True,
    )
    figures = json.loads(out.read_text())
    for name in ("dev", "setaside", "dev2", "setaside2"):
        f = figures[name]
        rows = _part(name)
        assert f["messages"] == len(rows)
        assert f["true_positives"] + f["misses"] == sum(bool(r["lasting"]) for r in rows)
        assert 0.0 <= f["precision"] <= 1.0 and 0.0 <= f["recall"] <= 1.0


def _score_module() -> ModuleType:
    return load_script("bench/capture_others/score.py", "capture_others_score")


@pytest.mark.parametrize("name", ["dev", "setaside", "setaside2"])
def test_adjudicated_labels_are_the_agreed_label_or_the_third_call(name: str) -> None:
    score = _score_module()
    first = _part(name)
    second = {
        row["id"]: row["lasting"]
        for row in map(json.loads, (SET / "agreement" / "second.jsonl").read_text().splitlines())
        if row["part"] == name
    }
    calls = {
        row["id"]: row["lasting"]
        for row in map(
            json.loads, (SET / "agreement" / "adjudicated.jsonl").read_text().splitlines()
        )
        if row["part"] == name
    }
    adjudicated = {r["id"]: r["lasting"] for r in score.load(name, "adjudicated")}
    assert set(adjudicated) == {r["id"] for r in first}
    disagreed = {r["id"] for r in first if r["lasting"] != second[r["id"]]}
    assert set(calls) == disagreed and disagreed
    for r in first:
        expected = calls[r["id"]] if r["id"] in disagreed else r["lasting"]
        assert adjudicated[r["id"]] is expected, r["id"]


def test_adjudicated_refuses_calls_that_do_not_cover_the_disagreements(tmp_path: Path) -> None:
    score = _score_module()
    rows = (SET / "agreement" / "adjudicated.jsonl").read_text().splitlines()
    setaside = [line for line in rows if json.loads(line)["part"] == "setaside"]
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(setaside[1:]) + "\n")
    score.ADJUDICATED = short
    with pytest.raises(score.AdjudicationMismatchError, match="without a call"):
        score.load("setaside", "adjudicated")
