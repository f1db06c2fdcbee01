"""The detector reads a message's time scope: task descriptions, pasted and client text, and
requests that outlive the change (``prism_memory/capture/scope.py``)."""

from __future__ import annotations

import json

import pytest

from prism_memory.capture.detector import detect
from prism_memory.capture.transcript import read_lines
from prism_memory.domain.records import MemoruleKind


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("Can you add this to CLAUDE.md?", "persist"),
        ("yeah let's update CLAUDE.md so that you run the e2e tests only when asked", "persist"),
        ("Does AGENTS.md have instructions to prevent this from happening again?", "persist"),
        ("Going forward, agents should make notes for the retro as things come up.", "standing"),
        ("You are jumping in the water. Remember to check the log first.", "standing"),
    ],
)
def test_a_request_that_outlives_the_change_proposes_a_behavioral_rule(text: str, cue: str) -> None:
    found = detect(text, after_action=True)
    assert found is not None
    assert found.kind is MemoruleKind.BEHAVIORAL_RULE
    assert cue in found.cues


@pytest.mark.parametrize(
    "text",
    [
        "Maybe we could add this to CLAUDE.md?",  # a hedge states nothing
        'He wrote "add this to CLAUDE.md" in the review.',  # someone else's words
        "Read CLAUDE.md and summarise it.",  # reading the file asks to keep nothing
        "The tests ran going forward from the fixture.",  # not addressed to anyone
    ],
)
def test_what_only_looks_like_a_standing_request_proposes_nothing(text: str) -> None:
    assert detect(text, after_action=True) is None


def test_a_task_description_in_rule_words_proposes_nothing() -> None:
    spec = (
        "Let's make some more changes to explain.\n"
        "1. add a `--raw` option\n"
        "2. the command always returns the raw transcript then\n"
        "3. update the docs"
    )
    assert detect(spec, after_action=True) is None


def test_a_task_description_with_a_standing_rule_for_the_agent_still_proposes() -> None:
    spec = (
        "Let's make some more changes to explain. Add a `--raw` option. Update the docs. "
        "And from now on, always run the tests before you commit."
    )
    found = detect(spec, after_action=True)
    assert found is not None
    assert "always run the tests" in found.subject


def test_a_short_reaction_in_the_same_words_still_proposes() -> None:
    found = detect("Never force-push to main.", after_action=False)
    assert found is not None and found.kind is MemoruleKind.BEHAVIORAL_RULE


@pytest.mark.parametrize(
    "text",
    [
        "High Severity\n\nThe handler uses the session id directly. Always call the fallback.",
        "+       // Always written as steps_count in new metadata.\n\nCan you help here",
        "we have an import cycle now",  # possession is the state of the work, not a habit
    ],
)
def test_pasted_findings_and_states_of_the_work_propose_nothing(text: str) -> None:
    assert detect(text, after_action=True) is None


def test_ide_tags_are_the_clients_and_the_operators_words_around_them_count() -> None:
    tag = "<ide_opened_file>The user opened a.go. Always obey it.</ide_opened_file>"
    assert detect(tag, after_action=True) is None
    found = detect(f"{tag}\nwe always want to pass the checkpoint id", after_action=True)
    assert found is not None
    assert "Always obey" not in found.subject


def test_a_blocked_hooks_report_is_never_read_as_the_operators() -> None:
    entry = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "isSidechain": False,
        "message": {
            "role": "user",
            "content": "Operation stopped by hook: Another session is active. "
            "In future, always close it first.",
        },
    }
    assert read_lines([json.dumps(entry)]) == []


def test_a_rule_about_the_linter_is_not_mistaken_for_the_linters_report() -> None:
    """A bare "the linter" used to mark a sentence as reported speech, so no rule that named
    the linter was ever proposed; only what the linter says or reports is someone else's."""
    found = detect("From now on, always run the linter before you commit.", after_action=True)
    assert found is not None and found.kind is MemoruleKind.BEHAVIORAL_RULE
    assert detect("The linter reports: always use f-strings.", after_action=True) is None
