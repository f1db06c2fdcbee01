"""The dev2 rule-file scorer's subject check (bench/rules_files/dev2/score.py): a subject
counts as "not in the source" for a doubled label colon or a part the file does not hold,
not for a "::" the file itself writes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bench_scripts import load_script

score = load_script("bench/rules_files/dev2/score.py", "dev2_score")


def request(subject: str) -> dict[str, Any]:
    return {"subject": subject, "body": subject, "memorule_kind": "convention"}


@pytest.mark.parametrize(
    ("source", "subject", "bad"),
    [
        ("## Testing:\n\n- Run make test\n", "Testing:: Run make test", 1),  # a join's "::"
        ("## Testing\n\n- Run make test\n", "Testing: Run pytest", 1),  # a part not in it
        ("## Testing\n\n- Run make test\n", "Testing: Run make test", 0),
        ('- `p`: a prefix, e.g. "bab3:d3ad::/64"\n', '`p`: a prefix, e.g. "bab3:d3ad::/64"', 0),
        ("- Prefer `std::vector` to arrays\n", "Prefer `std::vector` to arrays", 0),
        # a Markdown escape is the character it escapes: the heading reads 'applyTo: "**"'
        ('## applyTo: "\\*\\*"\n\n- Name things well\n', 'applyTo: "**": Name things well', 0),
        ('## applyTo: "\\*\\*"\n\n- Name things well\n', 'applyTo: "*.py": Name things well', 1),
    ],
)
def test_a_subject_is_out_of_the_source_only_for_what_the_file_does_not_write(
    source: str, subject: str, bad: int
) -> None:
    scored = score.score_labels([], [request(subject)], source)
    assert scored.bad_subjects == bad
    assert scored.subjects == ([subject] if bad else [])


def test_a_label_merged_into_a_coarser_rule_is_covered_but_not_found() -> None:
    labels = [
        {"text": "类名: PascalCase", "kind": "convention"},
        {"text": "常量: UPPER_SNAKE_CASE", "kind": "convention"},
        {"text": "Run make test", "kind": "behavioral_rule"},
    ]
    merged = "命名规范:\n- 类名: PascalCase\n- 常量: UPPER_SNAKE_CASE"
    scored = score.score_labels(labels, [request(merged)], merged)
    assert (scored.found, scored.covered, scored.labels) == (1, 2, 3)


def test_a_json_files_label_keeps_its_quotes_and_still_finds_its_rule() -> None:
    labels = [{"text": '"use": "for all code"', "kind": "convention"}]
    scored = score.score_labels(labels, [request("use: for all code")], '"use": "for all code"')
    assert (scored.found, scored.labels, scored.bad_subjects) == (1, 1, 0)


earlier = load_script("bench/rules_files.py", "rules_files_earlier")


def test_the_earlier_corpus_keeps_its_figures() -> None:
    """The 30 labelled files of bench/rules_files/ (docs/rules-files.md quotes their figures):
    a reading that splits their rules apart or loses them shows here first. (The twenty-eighth
    round's margin reading cut one file's "Do:" / "Do not:" lines from their entries, 12
    extras, and no test saw it.)"""
    _, total = earlier.run("all")
    assert total.garbled == 0
    assert total.found / total.labels >= 0.95
    assert total.found / total.imported >= 0.95
