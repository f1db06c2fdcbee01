"""``prism capture codex``: the Codex CLI session reader on a rollout file written in the format
Codex records (openai/codex ``codex-rs/protocol/src/protocol.rs``: ``RolloutLine`` =
``timestamp`` + ``type``/``payload``), and the command end to end on a real SQLite file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from prism_memory.capture.codex import read_codex, read_codex_lines
from prism_memory.capture.proposals import candidates
from prism_memory.cli.main import cli
from prism_memory.domain.ids import uuid_for
from prism_memory.errors import InvalidInput

ROLLOUT = Path(__file__).parent / "golden" / "codex_rollout.jsonl"
SESSION = "0199a3f0-7c1e-7d42-9b1a-5e2f8c4d6a10"


def _lines(path: Path = ROLLOUT) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    out = tmp_path / "rollout-2026-11-30T09-00-00-x.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


def test_only_what_the_operator_typed_is_read_with_whether_the_agent_had_acted() -> None:
    messages = read_codex(ROLLOUT).messages
    assert [(m.text, m.after_action) for m in messages] == [
        ("Add a --json flag to the export command.", False),
        ("No, don't use argparse here. This project uses click.", True),  # after apply_patch
        ("Yes please.", False),  # the agent only answered in text
        ("From now on, run the tests before you commit.", True),  # after local_shell_call
    ]
    assert {m.session_id for m in messages} == {SESSION}
    assert {m.cwd for m in messages} == {"/home/me/exporter"}
    assert messages[1].evidence_signal_id == f"codex:{SESSION}/line-15"


def test_injected_context_tool_output_and_agent_text_propose_nothing() -> None:
    found = candidates(read_codex(ROLLOUT).messages, "donna")
    assert [(c.write.memorule_kind.value, c.write.subject) for c in found] == [
        ("correction", "This project uses click"),
        ("behavioral_rule", "From now on, run the tests before you commit"),
    ]
    # AGENTS.md ("Always use uv"), tool output ("Never commit to main"), the agent's "I will
    # always run the tests" and the compaction summary are all in the file, none is proposed
    assert all("uv" not in c.write.body and "main" not in c.write.body for c in found)


def test_a_file_without_user_message_events_falls_back_to_user_items(tmp_path: Path) -> None:
    rows = [r for r in _lines() if r["payload"].get("type") != "user_message"]
    messages = read_codex(_write(tmp_path, rows)).messages
    assert [m.text for m in messages] == [
        "Add a --json flag to the export command.",
        "No, don't use argparse here. This project uses click.",
        "Yes please.",
        "From now on, run the tests before you commit.",
    ]
    assert [m.after_action for m in messages] == [False, True, False, True]


def test_a_sub_agents_session_yields_nothing(tmp_path: Path) -> None:
    rows = _lines()
    rows[0]["payload"]["source"] = {"subagent": "review"}
    assert read_codex(_write(tmp_path, rows)).messages == []


@pytest.mark.parametrize(
    ("rows", "code"),
    [
        ([], "not_a_transcript"),
        (
            [{"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": "hi"}}],
            "not_a_transcript",
        ),  # a Claude Code transcript
        (
            [{"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message"}}],
            "no_session",
        ),
    ],
    ids=["empty", "claude-code", "no-session-meta"],
)
def test_what_is_not_a_codex_session_is_refused_precisely(
    tmp_path: Path, rows: list[dict[str, Any]], code: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        read_codex(_write(tmp_path, rows))
    assert err.value.errors[0].code == code


def test_too_long_and_broken_lines_are_skipped_and_counted() -> None:
    good = ROLLOUT.read_bytes().splitlines(keepends=True)
    lines = [good[0], b"{not json\n", b"x" * 8_000_001 + b"\n", *good[1:]]
    read_back = read_codex_lines(lines)
    assert len(read_back.messages) == 4
    assert read_back.skipped == {"too_long": 1}


def _run(db: Path, *args: str) -> Result:
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PRISM_")}
    env.update({"PRISM_DB": str(db), "PRISM_EMBEDDER": "fake", "PRISM_DATABASE_URL": ""})
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def _ok(db: Path, *args: str) -> Any:
    result = _run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_command_proposes_into_the_review_queue_once(db_path: Path) -> None:
    dry = _ok(db_path, "capture", "codex", "--transcript", str(ROLLOUT), "--dry-run")
    assert (dry["messages"], dry["proposed"]) == (4, 2)
    assert dry["project"] == str(uuid_for("project", "exporter"))  # from session_meta.cwd
    assert _ok(db_path, "proposals", "--project", "exporter")["count"] == 0
    done = _ok(db_path, "capture", "codex", "--transcript", str(ROLLOUT), "--persona", "donna")
    assert done["proposed"] == 2
    again = _ok(db_path, "capture", "codex", "--transcript", str(ROLLOUT))
    assert (again["proposed"], again["already_captured"]) == (0, 2)
    listed = _ok(db_path, "proposals", "--project", "exporter")
    assert {p["memorule_kind"] for p in listed["proposals"]} == {"correction", "behavioral_rule"}
    evidence = {e["evidence_signal_id"] for p in listed["proposals"] for e in p["evidence"]}
    assert evidence == {f"codex:{SESSION}/line-15", f"codex:{SESSION}/line-23"}


def test_a_claude_code_file_given_to_codex_exits_2(db_path: Path) -> None:
    golden = Path(__file__).parent / "golden" / "claude_code_session.jsonl"
    result = _run(db_path, "capture", "codex", "--transcript", str(golden), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["fields"][0]["code"] == "not_a_transcript"
