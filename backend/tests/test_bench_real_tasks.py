"""The real-task benchmark's scoring (``bench/tasks/run.py``): how delivered rule ids become
labelled keys, and what precision counts. Not a benchmark: it guards the scoring against the
bug that overstated precision (several unlabelled rules counted as one)."""

from __future__ import annotations

import json
from types import ModuleType

from tests.bench_scripts import load_script


def load_runner() -> ModuleType:
    return load_script("bench/tasks/run.py", "real_tasks_run")


def test_each_unlabelled_rule_counts_on_its_own() -> None:
    run = load_runner()
    key_of = {"id-1": ["r001"], "id-2": ["r002", "r003"]}
    keys = run.as_keys(["id-1", "id-x", "id-2", "id-y"], key_of)
    assert keys == ["r001", "?id-x", "r002", "r003", "?id-y"]
    delivered = set(keys)
    relevant = {"r001", "r002"}
    # five delivered keys, two of them relevant: two unlabelled rules are two irrelevant ones
    assert len(delivered & relevant) / len(delivered) == 2 / 5


def test_every_label_names_a_rule_of_its_repositorys_file() -> None:
    run = load_runner()
    labels = run.load_labels()
    assert len(labels) == 105  # 21 repositories x 5 tasks (bench/tasks/README.md)
    assert sum(1 for label in labels.values() if label["must"]) == 99
    for ref, label in labels.items():
        repo = ref.split("#")[0]
        rules = json.loads((run.HERE / "rules" / f"{run.slug(repo)}.json").read_text())["rules"]
        known = {rule["key"] for rule in rules}
        assert set(label["must"]) | label["useful"] <= known, ref


def test_a_labelled_rule_the_importer_now_cuts_passes_its_key_to_every_piece() -> None:
    run = load_runner()
    rules = [
        {"key": "r010", "lines": [40, 42], "subject": "Build: npm run build"},
        {"key": "r011", "lines": [44, 56], "subject": "Testing: Test Commands: …"},
    ]
    items = [
        {"id": "id-a", "lines": [40, 42], "subject": "Build: npm run build"},
        {"id": "id-b", "lines": [45, 45], "subject": "Test Commands: Unit (All): npm run test"},
        {"id": "id-c", "lines": [47, 49], "subject": "Test Commands: NOTE: run memory tests …"},
        {"id": "id-d", "lines": [60, 61], "subject": "Other: something else"},
    ]
    ids = run.labelled_ids(rules, items)
    assert ids == {"r010": ["id-a"], "r011": ["id-b", "id-c"]}
    key_of = run.keys_of(ids)
    # a key stands once, where its first piece does; an unlabelled rule still counts alone
    assert run.as_keys(["id-c", "id-d", "id-b", "id-a"], key_of) == ["r011", "?id-d", "r010"]
