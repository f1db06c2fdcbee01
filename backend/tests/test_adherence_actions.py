"""The client-neutral session shape every door takes: read back as given, and every bad
field reported at once."""

from __future__ import annotations

from typing import Any

import pytest

from prism_memory.domain.adherence.actions import ACTIONS_MAX, parse_session
from prism_memory.errors import InvalidInput

GOOD = {
    "session": "run-1",
    "cwd": "/srv/agent",
    "actions": [
        {"type": "command", "command": "make test && git commit -m x"},
        {
            "type": "edit",
            "path": "src/a.py",
            "ran": False,
            "at": "2026-12-05T10:00:00Z",
            "tool": "Edit",
            "id": "toolu_1",
            "sidechain": True,
            "refusal": "user_rejected",
        },
    ],
}


def codes(raw: Any) -> dict[str, str]:
    with pytest.raises(InvalidInput) as err:
        parse_session(raw)
    return {e.field: e.code for e in err.value.errors}


def test_a_good_session_reads_back_as_given() -> None:
    session = parse_session(GOOD)
    assert session.to_json()["actions"][1] == {
        **GOOD["actions"][1],
        "at": "2026-12-05T10:00:00.000000Z",
    }
    assert [a.ran for a in session.actions] == [True, False]
    assert session.attempts == (session.actions[1],)


def test_every_bad_field_at_once() -> None:
    raw = {
        "session": "",
        "cwd": "relative/path",
        "more": 1,
        "actions": [
            {"type": "shell", "command": "x"},
            {"type": "command"},
            {"type": "edit", "path": "a", "ran": "yes", "sidechain": 1, "at": "yesterday"},
            {"type": "command", "command": "x", "tool": 5, "colour": "red"},
            {"type": "command", "command": "x", "at": "9999-12-31T23:59:59-01:00"},
            "not an object",
        ],
    }
    assert codes(raw) == {
        "more": "unknown_field",
        "session": "invalid_session",
        "cwd": "invalid_cwd",
        "actions[0].type": "invalid_choice",
        "actions[1].command": "missing",
        "actions[2].ran": "invalid_type",
        "actions[2].sidechain": "invalid_type",
        "actions[2].at": "invalid_time",
        "actions[3].colour": "unknown_field",
        "actions[3].tool": "invalid_type",
        "actions[4].at": "invalid_time",
        "actions[5]": "invalid_type",
    }


@pytest.mark.parametrize("raw", [None, [], "session", 3])
def test_a_session_that_is_not_an_object_is_refused(raw: Any) -> None:
    assert list(codes(raw).values()) == ["invalid_type"]


def test_a_command_names_no_path_and_an_edit_no_command() -> None:
    raw = {
        "session": "s",
        "actions": [
            {"type": "command", "command": "ls", "path": "a"},
            {"type": "edit", "path": "a", "command": "ls"},
        ],
    }
    assert codes(raw) == {"actions[0].path": "unknown_field", "actions[1].command": "unknown_field"}


@pytest.mark.parametrize(
    ("field", "action"),
    [
        ("actions[0].command", {"type": "command", "command": "echo \x00"}),
        ("actions[0].command", {"type": "command", "command": "echo \ud800"}),
        ("actions[0].path", {"type": "edit", "path": "a\x07b"}),
        ("actions[0].tool", {"type": "command", "command": "ls", "tool": "B\x1bash"}),
    ],
)
def test_characters_no_store_keeps_are_refused(field: str, action: dict[str, Any]) -> None:
    assert codes({"session": "s", "actions": [action]}) == {field: "invalid_characters"}
    assert codes({"session": "s\x00", "actions": []}) == {"session": "invalid_characters"}


def test_a_command_keeps_tabs_newlines_and_escapes() -> None:
    command = "printf '\\033[1m'\tx\r\nmake test\x1b"
    (action,) = parse_session(
        {"session": "s", "actions": [{"type": "command", "command": command}]}
    ).actions
    assert action.text == command


@pytest.mark.parametrize(
    "at",
    [
        "2026-12-05T10:00:00Z",
        "2026-12-05t10:00:00z",
        "2026-12-05T10:00:60Z",
        "2026-12-05T10:00:00.123456789+02:00",
        "2026-12-05 10:00:00",
        "2026-12-05",
    ],
)
def test_times_as_clients_write_them_are_read(at: str) -> None:
    raw = {"session": "s", "actions": [{"type": "command", "command": "ls", "at": at}]}
    (action,) = parse_session(raw).actions
    assert action.at is not None and action.at.tzinfo is not None


def test_too_many_actions_are_refused() -> None:
    raw = {"session": "s", "actions": [{"type": "command", "command": "ls"}] * (ACTIONS_MAX + 1)}
    assert codes(raw) == {"actions": "too_many"}


def test_a_command_too_long_is_refused() -> None:
    raw = {"session": "s", "actions": [{"type": "command", "command": "x" * 100_001}]}
    assert codes(raw) == {"actions[0].command": "too_long"}
