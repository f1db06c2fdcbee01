"""Reading Claude Code transcripts: only what the operator typed, with the turn it answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prism_memory.capture.proposals import candidates, project_slug
from prism_memory.capture.transcript import read_file, read_lines
from prism_memory.errors import InvalidInput

GOLDEN = Path(__file__).parent / "golden" / "claude_code_session.jsonl"
SESSION = "5c1d7a2e-0b4f-4c8e-9a61-3f2e8d7c6b50"


def test_only_operator_typed_text_is_read_from_string_and_block_content() -> None:
    texts = [m.text for m in read_file(GOLDEN)]
    assert texts == [
        "Please add a --json flag to the export command.",
        "No, don't use pip here — this project uses uv.",
        "I prefer small commits.",
        "Looks good.",
        "Don't worry about the docs for now.",
        "No, don't use pip here — this project uses uv.",
        "Never force-push to main.",
    ]


def test_tool_results_assistant_text_sidechains_and_client_text_are_never_read() -> None:
    texts = " ".join(m.text for m in read_file(GOLDEN))
    for rule_like in (
        "Always run make lint",  # a tool result (string content)
        "Never skip the lockfile",  # assistant text
        "always use pip",  # assistant text
        "Always write a failing test",  # a sidechain (sub-agent) message
        "Caveat",  # isMeta client text
        "command-name",  # a slash-command echo
        "Request interrupted",
    ):
        assert rule_like not in texts


def test_a_message_answering_a_tool_call_is_after_an_action() -> None:
    by_text = {(m.text, m.uuid): m.after_action for m in read_file(GOLDEN)}
    actions = [after for (text, _), after in by_text.items() if text.startswith("No, don't")]
    assert actions == [True, True]
    # the turn before it read CLAUDE.md (a tool call), even with a sidechain in between
    assert by_text[next(k for k in by_text if k[0] == "I prefer small commits.")] is True
    # the turn before it only wrote text
    assert by_text[next(k for k in by_text if k[0] == "Looks good.")] is False
    assert by_text[next(k for k in by_text if k[0] == "Never force-push to main.")] is False


def test_each_message_names_its_evidence_and_session_context() -> None:
    first = read_file(GOLDEN)[1]
    assert first.evidence_signal_id == f"claude-code:{SESSION}/{first.uuid}"
    assert first.cwd == "/home/frank/prism-app"
    assert project_slug(read_file(GOLDEN)) == "prism-app"


def test_the_golden_session_proposes_the_rules_and_nothing_else() -> None:
    found = candidates(read_file(GOLDEN), persona="donna")
    got = [(c.write.memorule_kind.value, c.message.text) for c in found]
    assert got == [
        ("correction", "No, don't use pip here — this project uses uv."),
        ("preference", "I prefer small commits."),
        ("correction", "No, don't use pip here — this project uses uv."),
        ("behavioral_rule", "Never force-push to main."),
    ]
    for c in found:
        assert c.write.confidence.value == "observed"
        assert c.write.applies_to.to_dict() == {"persona": "donna", "scope": "project"}
        assert c.write.evidence_signal_id == c.message.evidence_signal_id
        assert c.write.subject and len(c.write.body) >= 10


def test_a_convention_binds_the_project_not_the_persona() -> None:
    line = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s",
        "message": {"role": "user", "content": "We use conventional commits here."},
    }
    (found,) = candidates(read_lines([json.dumps(line)]), persona="donna")
    assert found.write.memorule_kind.value == "convention"
    assert found.write.applies_to.to_dict() == {"scope": "project"}


@pytest.mark.parametrize(
    "content",
    [b"", b"not json\n", b'{"hello": "world"}\n', b"[1, 2, 3]\n"],
    ids=["empty", "not-json", "no-entries", "not-objects"],
)
def test_a_file_that_is_not_a_transcript_is_refused_precisely(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as err:
        read_file(path)
    assert err.value.errors[0].code == "not_a_transcript"


def test_a_missing_file_is_refused_precisely(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        read_file(tmp_path / "absent.jsonl")
    assert err.value.errors[0].code == "unreadable"


def test_broken_lines_are_skipped_and_the_rest_is_read() -> None:
    good = {
        "type": "user",
        "uuid": "u2",
        "sessionId": "s",
        "message": {"role": "user", "content": "Never commit .env files."},
    }
    messages = read_lines(["{broken", json.dumps(good), '"a string"'])
    assert [m.text for m in messages] == ["Never commit .env files."]
