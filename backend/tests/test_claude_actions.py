"""The Claude Code actions reader on real-format transcripts: commands and edits in order,
sidechains in both of Claude Code's layouts, and refusals in Claude Code's own words as
attempts while every other error means the tool ran."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from prism_memory.capture.claude_actions import read_lines, read_session
from prism_memory.domain.adherence.actions import parse_session
from prism_memory.errors import InvalidInput
from tests.claude_transcripts import (
    USER_REJECTED,
    Transcript,
    hook_blocked,
    permission_denied,
)


def actions_of(t: Transcript) -> list[tuple[str, str, bool, str | None]]:
    found = read_lines(t.text().splitlines())
    return [(a.type, a.text, a.ran, a.refusal) for a in found.actions]


def test_commands_and_edits_in_order_with_session_and_cwd() -> None:
    t = Transcript()
    t.say("Add a discount field and commit")
    t.tool("Read", {"file_path": "/home/dev/shop/src/cart.py"}, result="...")
    t.edit("/home/dev/shop/src/cart.py")
    t.edit("src/new.py", tool="Write")
    t.edit("src/x.py", tool="MultiEdit")
    t.edit("notebooks/a.ipynb", tool="NotebookEdit")
    t.tool("Grep", {"pattern": "npm"}, result="")
    t.bash("make test && git commit -m 'discount'\necho done")
    found = read_lines(t.text().splitlines())
    assert found.session == t.session and found.cwd == "/home/dev/shop"
    assert [(a.type, a.text, a.tool) for a in found.actions] == [
        ("edit", "/home/dev/shop/src/cart.py", "Edit"),
        ("edit", "src/new.py", "Write"),
        ("edit", "src/x.py", "MultiEdit"),
        ("edit", "notebooks/a.ipynb", "NotebookEdit"),
        ("command", "make test && git commit -m 'discount'\necho done", "Bash"),
    ]
    assert all(a.ran and a.at is not None and a.id for a in found.actions)


def test_the_shape_is_the_client_neutral_one() -> None:
    t = Transcript()
    t.bash("ls")
    t.reject("Bash", {"command": "rm -rf /"})
    shape = read_lines(t.text().splitlines()).to_json()
    again = parse_session(json.loads(json.dumps(shape)))
    assert again.to_json() == shape
    assert shape["actions"][1]["ran"] is False
    assert shape["actions"][1]["refusal"] == "user_rejected"


def test_the_first_cwd_is_the_sessions() -> None:
    t = Transcript(cwd="/home/dev/shop")
    t.bash("cd web")
    t.cwd = "/home/dev/shop/web"
    t.bash("ls")
    assert read_lines(t.text().splitlines()).cwd == "/home/dev/shop"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (USER_REJECTED, "user_rejected"),
        ("The user doesn't want to proceed with this tool use.", "user_rejected"),
        (
            USER_REJECTED + " To tell you how to proceed, the user said:\nuse pnpm instead",
            "user_rejected",
        ),
        (
            "The user doesn't want to take this action right now. STOP what you are doing and "
            "wait for the user to tell you how to proceed.",
            "user_rejected",
        ),
        ("User rejected tool use", "user_rejected"),
        (hook_blocked("Bash"), "hook_blocked"),
        ("PreToolUse:Bash hook error: refusing", "hook_blocked"),
        ("PreToolUse:Bash hook stopped continuation: guard said no", "hook_blocked"),
        (permission_denied(), "denied"),
        ("Permission to use Bash with command rm -rf\n/tmp/x has been denied.", "denied"),
        (
            "Permission to use Bash has been denied because Claude Code is running in don't ask "
            "mode. IMPORTANT: You *may* attempt to accomplish this action using other tools.",
            "denied",
        ),
        ("Claude requested permissions to use Bash, but you haven't granted it yet.", "denied"),
        (
            "Claude requested permissions to write to /home/dev/shop/.env, but you haven't "
            "granted it yet.",
            "denied",
        ),
    ],
)
def test_a_refusal_in_claude_codes_words_is_an_attempt(text: str, kind: str) -> None:
    t = Transcript()
    t.refuse("Bash", {"command": "git push --force"}, text)
    assert actions_of(t) == [("command", "git push --force", False, kind)]


def test_a_rejected_edit_with_the_entry_markers_is_an_attempt() -> None:
    t = Transcript()
    t.reject("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"})
    assert actions_of(t) == [("edit", "src/a.py", False, "user_rejected")]


def test_the_entry_marker_alone_is_enough() -> None:
    t = Transcript()
    t.tool(
        "Bash",
        {"command": "git push"},
        result="This Bash command contains multiple operations. The following part requires "
        "approval: git push",
        is_error=True,
        denial="permission-rule",
    )
    t.tool("Bash", {"command": "ls"}, result="x", tool_use_result="User rejected tool use")
    assert actions_of(t) == [
        ("command", "git push", False, "denied"),
        ("command", "ls", False, "user_rejected"),
    ]


def test_a_pretooluse_blocking_attachment_is_an_attempt_and_a_posttooluse_one_is_not() -> None:
    t = Transcript()
    first = t.tool("Bash", {"command": "git push"}, result="", answered=False)
    t.hook_attachment(first, "PreToolUse")
    second = t.bash("npm publish")
    t.hook_attachment(second, "PostToolUse")
    assert actions_of(t) == [
        ("command", "git push", False, "hook_blocked"),
        ("command", "npm publish", True, None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Exit code 2\nFAILED tests/test_cart.py::test_total - assert 3 == 4",
        "Exit code 1\nremote: error: hook declined to update refs/heads/main\n"
        "! [remote rejected] main -> main (hook declined)",
        "Exit code 1\nrm: cannot remove '/etc/hosts': Permission denied",
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        "Exit code 128\nfatal: Authentication failed; permission denied (publickey)",
        "Exit code 1\nError: The user doesn't want to proceed with this tool use",  # quoted later
    ],
)
def test_every_other_error_means_the_tool_ran(text: str) -> None:
    t = Transcript()
    t.refuse("Bash", {"command": "make test"}, text)
    assert actions_of(t) == [("command", "make test", True, None)]


def test_refusal_words_in_a_successful_result_mean_it_ran() -> None:
    t = Transcript()
    t.tool("Bash", {"command": "grep -r proceed docs"}, result=USER_REJECTED, is_error=False)
    t.tool("Bash", {"command": "cat log"}, result=hook_blocked(), is_error=False)
    assert [ran for _, _, ran, _ in actions_of(t)] == [True, True]


def test_a_tool_use_without_a_result_counts_as_run() -> None:
    t = Transcript()
    t.tool("Bash", {"command": "sleep 1000"}, answered=False)
    assert actions_of(t) == [("command", "sleep 1000", True, None)]


def test_in_file_sidechain_entries_are_actions_marked_sidechain() -> None:
    t = Transcript()
    t.bash("git status")
    t.sidechain = True
    t.edit("src/generated/api.ts")
    t.sidechain = False
    t.bash("git commit -m x")
    found = read_lines(t.text().splitlines())
    assert [(a.text, a.sidechain) for a in found.actions] == [
        ("git status", False),
        ("src/generated/api.ts", True),
        ("git commit -m x", False),
    ]


def test_subagent_files_are_read_and_merged_in_time_order(tmp_path: Path) -> None:
    main = Transcript()
    main.say("Refactor with a subagent, then commit")
    main.tool("Task", {"description": "refactor", "prompt": "do it"}, answered=False)
    sub = main.subagent("a1b2c3d4e5f6a7b8")
    sub.edit("src/cart.py")
    sub.bash("make test")
    sub.reject("Edit", {"file_path": "src/secrets.py", "old_string": "a", "new_string": "b"})
    main._tick += 10  # the main chain resumes after the subagent's work
    main.bash("git commit -m refactor")
    path = main.write(tmp_path / "proj" / f"{main.session}.jsonl")
    sub.write(path.with_suffix("") / "subagents" / "agent-a1b2c3d4e5f6a7b8.jsonl")
    found = read_session(path)
    assert [(a.text, a.sidechain, a.ran) for a in found.actions] == [
        ("src/cart.py", True, True),
        ("make test", True, True),
        ("src/secrets.py", True, False),
        ("git commit -m refactor", False, True),
    ]
    alone = read_session(path, subagents=False)
    assert [a.text for a in alone.actions] == ["git commit -m refactor"]
    times = [a.at for a in found.actions]
    assert times == sorted(t for t in times if t is not None)
    assert found.actions[0].at is not None and found.actions[0].at > main.start + timedelta(0)


def test_a_re_logged_tool_use_counts_once() -> None:
    t = Transcript()
    t.bash("npm install")
    text = t.text()
    lines = text.splitlines()
    found = read_lines([*lines, *lines])
    assert [a.text for a in found.actions] == ["npm install"]


def test_junk_lines_are_skipped_and_a_file_of_junk_is_refused(tmp_path: Path) -> None:
    t = Transcript()
    t.bash("ls")
    found = read_lines(["not json", "[1,2]", '{"no":"type"}', *t.text().splitlines()])
    assert [a.text for a in found.actions] == ["ls"]
    with pytest.raises(InvalidInput) as err:
        read_lines(["nothing here", "{}"])
    assert err.value.errors[0].code == "not_a_transcript"
    with pytest.raises(InvalidInput) as missing:
        read_session(tmp_path / "absent.jsonl")
    assert missing.value.errors[0].code == "unreadable"


def test_malformed_tool_uses_are_not_actions() -> None:
    t = Transcript()
    t.tool("Bash", {"command": ""})
    t.tool("Bash", {"cmd": "ls"})
    t.tool("Edit", {"file_path": 42})
    t.tool("Write", {"path": "x"})
    assert actions_of(t) == []


def test_a_session_without_a_session_id_takes_the_files_name(tmp_path: Path) -> None:
    t = Transcript()
    t.bash("ls")
    for line in t.lines:
        del line["sessionId"]
    path = t.write(tmp_path / "abc-123.jsonl")
    assert read_session(path).session == "abc-123"
