"""``prism capture claude-code`` and ``prism proposals``: in process (click's runner), plus
the hook entry as a real subprocess that must print nothing and return at once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from prism_memory.cli.main import cli
from prism_memory.domain.ids import uuid_for
from tests.cli_run import run_prism

GOLDEN = Path(__file__).parent / "golden" / "claude_code_session.jsonl"


def run(db: Path, *args: str) -> Result:
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PRISM_")}
    env.update({"PRISM_DB": str(db), "PRISM_EMBEDDER": "fake", "PRISM_DATABASE_URL": ""})
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def ok(db: Path, *args: str) -> Any:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_dry_run_shows_what_would_be_proposed_and_writes_nothing(db_path: Path) -> None:
    report = ok(db_path, "capture", "claude-code", "--transcript", str(GOLDEN), "--dry-run")
    assert (report["messages"], report["proposed"], report["evidence"]) == (7, 3, 1)
    assert report["project"] == str(uuid_for("project", "prism-app"))  # from the cwd
    listed = ok(db_path, "proposals", "--project", "prism-app")
    assert listed["count"] == 0


def test_capture_then_review_from_the_command_line(db_path: Path) -> None:
    report = ok(
        db_path, "capture", "claude-code", "--transcript", str(GOLDEN), "--persona", "donna"
    )
    assert (report["proposed"], report["evidence"]) == (3, 1)
    again = ok(db_path, "capture", "claude-code", "--transcript", str(GOLDEN))
    assert (again["proposed"], again["already_captured"]) == (0, 4)
    listed = ok(db_path, "proposals", "--project", "prism-app")
    assert listed["count"] == 3
    by_kind = {p["memorule_kind"]: p for p in listed["proposals"]}
    assert by_kind["correction"]["applies_to"] == {"persona": "donna", "scope": "project"}
    assert len(by_kind["correction"]["evidence"]) == 2
    rule = by_kind["behavioral_rule"]["id"]
    approved = ok(db_path, "proposals", "approve", rule, "--project", "prism-app")
    assert approved["decision"] == "approve"
    recalled = ok(db_path, "recall", "force-push", "--project", "prism-app", "--persona", "donna")
    assert [m["id"] for m in recalled["matches"]] == [rule]
    refused = run(
        db_path,
        "proposals",
        "reject",
        by_kind["preference"]["id"],
        "--json",
        "--project",
        "prism-app",
    )
    assert refused.exit_code == 2
    assert json.loads(refused.output)["error"]["fields"][0]["field"] == "reason"
    ok(
        db_path,
        "proposals",
        "reject",
        by_kind["preference"]["id"],
        "--reason",
        "taste",
        "--project",
        "prism-app",
    )
    evidence = ok(
        db_path, "proposals", "evidence", by_kind["correction"]["id"], "--project", "prism-app"
    )
    assert [e["event"] for e in evidence["evidence"]] == ["proposed", "evidence"]
    audit = ok(db_path, "audit", "--project", "prism-app", "--event", "rejected")
    assert len(audit["events"]) == 1


def test_human_output_names_each_outcome(db_path: Path) -> None:
    result = run(db_path, "capture", "claude-code", "--transcript", str(GOLDEN))
    assert result.exit_code == 0
    assert "3 proposed, 1 as evidence" in result.output
    assert "prism proposals" in result.output


@pytest.mark.parametrize("content", ["", "not a transcript\n"], ids=["empty", "text"])
def test_a_file_that_is_not_a_transcript_exits_2_with_the_error(
    db_path: Path, tmp_path: Path, content: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    result = run(db_path, "capture", "claude-code", "--transcript", str(bad), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["fields"][0]["code"] == "not_a_transcript"


def test_the_hook_entry_prints_nothing_and_captures_in_the_background(
    db_path: Path, tmp_path: Path
) -> None:
    data_home = tmp_path / "data"
    hook_input = json.dumps(
        {"session_id": "s", "transcript_path": str(GOLDEN), "hook_event_name": "Stop"}
    )
    proc = run_prism(
        db_path,
        "capture",
        "claude-code",
        "--hook",
        stdin=hook_input,
        XDG_DATA_HOME=str(data_home),
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = data_home / "prism-memory" / "capture.log"
    for _ in range(600):  # the detached capture finishes on its own time; wait for its line
        if log.exists() and "proposed" in log.read_text():
            break
        time.sleep(0.1)
    assert "3 proposed, 1 evidence" in log.read_text()
    assert ok(db_path, "proposals", "--project", "prism-app")["count"] == 3


def test_a_bad_hook_input_is_logged_not_shown(db_path: Path, tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    proc = run_prism(
        db_path,
        "capture",
        "claude-code",
        "--hook",
        stdin="{not json",
        XDG_DATA_HOME=str(data_home),
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert "hook failed" in (data_home / "prism-memory" / "capture.log").read_text()


def test_the_capture_command_for_settings_json_runs_the_hook_entry(
    db_path: Path, tmp_path: Path
) -> None:
    import shlex

    from prism_memory.services.claude_settings import capture_command, handler_kind

    command = capture_command("prism", ["--persona", "donna o'hara", "--project", "my repo"])
    assert handler_kind({"type": "command", "command": command}) == "capture"
    argv = shlex.split(command)
    assert argv[:4] == ["prism", "capture", "claude-code", "--hook"]
    assert argv[4:] == ["--persona", "donna o'hara", "--project", "my repo"]
    data_home = tmp_path / "data"
    proc = run_prism(db_path, *argv[1:], stdin="{}", XDG_DATA_HOME=str(data_home))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert "no transcript_path" in (data_home / "prism-memory" / "capture.log").read_text()
