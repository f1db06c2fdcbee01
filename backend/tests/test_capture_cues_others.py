"""Cues added for operators who write unlike the team (issue 31, part 5): phrases that carry a
standing rule without an imperative, and task wording that looks like a rule but is not.
Sentences here are written for the test, not taken from ``bench/capture_others/``."""

from __future__ import annotations

import pytest

from prism_memory.capture.detector import detect


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Going forward, we'll keep the changelog in step with every release.", "behavioral_rule"),
        ("Remember to bump the lockfile before you push.", "behavioral_rule"),
        ("If you hit a possibly-undefined value, you can use the assert helper.", "behavioral_rule"),
        ("When you hand work back, describe how to try it.", "behavioral_rule"),
        ("We want every public function documented from now on.", "behavioral_rule"),
        ("The fixture files cannot be changed; they mirror the vendor's schema.", "convention"),
        ("I like tests to be parametrised.", "preference"),
        ("You should have run the tests before pushing.", "correction"),
        ("No, don't use pip here, use uv.", "correction"),
    ],
)
def test_standing_rules_in_other_words_are_found(text: str, kind: str) -> None:
    found = detect(text, after_action=True)
    assert found is not None and found.kind.value == kind, found


@pytest.mark.parametrize(
    "text",
    [
        "Can you move the helper into utils instead of duplicating it",  # a request
        "Let's use the new parser instead.",  # a proposal for the task
        "It never saw the server start.",  # what happened, not what should
        "The build always failed on the old runner.",
        "Commit any changes.",  # "any" is no lasting marker
        "Make sure it runs without any errors.",
        "Look at the settings files in this project.",  # a task step that names a place
        "I like the new progress bar.",  # approval of a thing, not a preference
        "Do not reply now.",  # a one-off
        "Stop everything.",  # about the thing at hand
        "Write a parser for the log files. Keep the output small. Do not print to stdout. "
        "Put it under tools.",  # a "do not" inside a task description
    ],
)
def test_task_wording_that_looks_like_a_rule_proposes_nothing(text: str) -> None:
    assert detect(text, after_action=True) is None
