"""``prism adherence``: judging a real-format Claude Code transcript from the command line
(in process), the client-neutral ``judge --actions``, the report, the ``Stop`` hook entry as
a real subprocess that prints nothing and judges in the background (failing open), and its
install with ``prism hooks install claude-code --adherence``."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

from tests.claude_transcripts import Transcript
from tests.cli_run import invoke_prism, run_prism

SECRET = "ghp_" + "K9x" * 12
NO_NPM = json.dumps([{"forbid_command": r"(?:^|[\s;&|(])npm\b"}])
TESTS_FIRST = json.dumps([{"require_before": {"command": "make test", "before": "git commit"}}])


def ok(db: Path, *args: str, stdin: str | None = None) -> Any:
    result = invoke_prism(db, *args, "--json", stdin=stdin)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def write_rules(db: Path, project: str = "shop") -> dict[str, str]:
    ids = {}
    for name, subject, checks in (
        ("npm", "Use pnpm, never npm", NO_NPM),
        ("tests", "Run the tests before committing", TESTS_FIRST),
    ):
        written = ok(
            db,
            "remember",
            "--kind",
            "memorule",
            "--memorule-kind",
            "convention",
            "--subject",
            subject,
            "--body",
            f"{subject}: the rule, in full.",
            "--scope",
            "project",
            "--checks",
            checks,
            "--project",
            project,
        )
        ids[name] = written["id"]
    return ids


def transcript(tmp_path: Path) -> Path:
    t = Transcript(cwd="/home/dev/shop")
    t.say("Install and commit")
    t.bash(f"export NPM_TOKEN={SECRET} && npm install")
    t.edit("src/cart.py")
    t.bash("make test && git commit -m cart")
    t.reject("Bash", {"command": "git push --force origin main"})
    return t.write(tmp_path / "projects" / f"{t.session}.jsonl")


def test_judging_a_transcript_prints_the_verdicts_and_records_them(
    db_path: Path, tmp_path: Path
) -> None:
    ids = write_rules(db_path)
    path = transcript(tmp_path)
    out = ok(db_path, "adherence", "claude-code", "--transcript", str(path))
    assert out["session"] == Transcript().session and out["dry_run"] is False
    verdicts = {v["memorule_id"]: v for v in out["verdicts"]}
    assert verdicts[ids["npm"]]["verdict"] == "violated"
    assert verdicts[ids["tests"]]["verdict"] == "violated"  # the test run does not precede itself
    assert {"memorule_id", "subject", "verdict", "evidence", "served_before"} <= set(
        verdicts[ids["npm"]]
    )
    assert out["attempts"] == [
        {
            "type": "command",
            "command": "git push --force origin main",
            "ran": False,
            "at": out["attempts"][0]["at"],
            "tool": "Bash",
            "id": out["attempts"][0]["id"],
            "refusal": "user_rejected",
        }
    ]
    assert out["recorded"] == 2
    assert SECRET not in json.dumps(out)
    events = ok(db_path, "audit", "--project", "shop", "--limit", "10")
    assert {e["event"] for e in events["events"]} >= {"violated"}
    assert ok(db_path, "audit", "verify")["ok"] is True


def test_a_dry_run_records_nothing_and_text_output_reads(db_path: Path, tmp_path: Path) -> None:
    write_rules(db_path)
    path = transcript(tmp_path)
    out = ok(db_path, "adherence", "claude-code", "--transcript", str(path), "--dry-run")
    assert out["dry_run"] is True and out["recorded"] == 0
    text = invoke_prism(db_path, "adherence", "claude-code", "--transcript", str(path), "--dry-run")
    assert text.returncode == 0
    assert "violated  Use pnpm, never npm" in text.stdout
    assert "attempt   'git push --force origin main' (user_rejected)" in text.stdout
    assert SECRET not in text.stdout
    report = ok(db_path, "adherence", "report", "--project", "shop")
    assert all(r["exercised_sessions"] == 0 for r in report["rules"])


def test_the_client_neutral_actions_are_judged_too(db_path: Path) -> None:
    ids = write_rules(db_path)
    actions = {
        "session": "run-42",
        "cwd": "/srv/agent",
        "actions": [
            {"type": "command", "command": "make test"},
            {"type": "command", "command": "git commit -m x"},
            {"type": "command", "command": "npm ci", "ran": False, "refusal": "denied"},
        ],
    }
    out = ok(
        db_path,
        "adherence",
        "judge",
        "--actions",
        "-",
        "--client",
        "my-agent",
        "--project",
        "shop",
        stdin=json.dumps(actions),
    )
    verdicts = {v["memorule_id"]: v["verdict"] for v in out["verdicts"]}
    assert verdicts == {ids["npm"]: "not_exercised", ids["tests"]: "followed"}
    assert [a["command"] for a in out["attempts"]] == ["npm ci"]


def test_bad_actions_are_field_errors_and_write_nothing(db_path: Path) -> None:
    write_rules(db_path)
    bad = {"session": "", "actions": [{"type": "shell", "command": "x"}, {"type": "command"}]}
    result = invoke_prism(
        db_path, "adherence", "judge", "--actions", "-", "--json", stdin=json.dumps(bad)
    )
    assert result.returncode == 2
    fields = {e["field"] for e in json.loads(result.stdout)["error"]["fields"]}
    assert fields == {"session", "actions[0].type", "actions[1].command"}
    assert ok(db_path, "adherence", "report", "--project", "shop")["verdict_events"] == 0


def test_the_report_after_judging(db_path: Path, tmp_path: Path) -> None:
    ids = write_rules(db_path)
    ok(db_path, "adherence", "claude-code", "--transcript", str(transcript(tmp_path)))
    report = ok(db_path, "adherence", "report", "--project", "shop")
    figures = {r["memorule_id"]: r for r in report["rules"]}
    assert figures[ids["npm"]]["violated_sessions"] == 1
    assert figures[ids["npm"]]["last_violation"]["evidence"][0]["action"]["command"] == (
        "export NPM_TOKEN=[REDACTED] && npm install"
    )
    assert len(report["sessions_with_violations"]) == 1
    text = invoke_prism(db_path, "adherence", "report", "--project", "shop").stdout
    assert "Use pnpm, never npm" in text and "last violated by" in text


def test_a_file_that_is_not_a_transcript_exits_2(db_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("hello\n")
    result = invoke_prism(db_path, "adherence", "claude-code", "--transcript", str(bad), "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["fields"][0]["code"] == "not_a_transcript"


def wait_for(log: Path, text: str) -> str:
    for _ in range(600):  # the detached run finishes on its own time; wait for its line
        if log.exists() and text in log.read_text():
            break
        time.sleep(0.1)
    return log.read_text()


def test_the_stop_hook_prints_nothing_and_judges_in_the_background(
    db_path: Path, tmp_path: Path
) -> None:
    write_rules(db_path)
    path = transcript(tmp_path)
    data_home = tmp_path / "data"
    hook_input = json.dumps(
        {"session_id": "s", "transcript_path": str(path), "hook_event_name": "Stop"}
    )
    proc = run_prism(
        db_path,
        "adherence",
        "claude-code",
        "--hook",
        "--project",
        "shop",
        stdin=hook_input,
        XDG_DATA_HOME=str(data_home),
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = wait_for(data_home / "prism-memory" / "adherence.log", "recorded")
    assert "2 recorded" in log
    assert ok(db_path, "adherence", "report", "--project", "shop")["sessions_with_violations"]


def test_the_stop_hook_fails_open(db_path: Path, tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    for stdin, expected in (
        ("{not json", "hook failed"),
        ("{}", "no transcript_path"),
        (json.dumps({"transcript_path": str(tmp_path / "gone.jsonl")}), "judging failed"),
    ):
        proc = run_prism(
            db_path, "adherence", "claude-code", "--hook", stdin=stdin, XDG_DATA_HOME=str(data_home)
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
        assert expected in wait_for(data_home / "prism-memory" / "adherence.log", expected)


def test_hooks_install_adds_the_adherence_stop_hook(db_path: Path, tmp_path: Path) -> None:
    from prism_memory.services.claude_settings import handler_kind

    settings = tmp_path / "settings.json"
    result = invoke_prism(
        db_path,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        str(settings),
        "--adherence",
        "--prism",
        "prism",
        "--project",
        "shop",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    (handler,) = [h for group in stop for h in group["hooks"]]
    assert handler_kind(handler) == "adherence"
    argv = shlex.split(handler["command"])
    assert argv == ["prism", "adherence", "claude-code", "--hook", "--project", "shop"]
    again = invoke_prism(
        db_path,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        str(settings),
        "--adherence",
        "--prism",
        "prism",
        "--project",
        "shop",
    )
    assert "no change" in again.stdout
    both = invoke_prism(
        db_path,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        str(settings),
        "--adherence",
        "--capture",
        "--prism",
        "prism",
    )
    assert both.returncode == 0
    kinds = sorted(
        handler_kind(h) or ""
        for group in json.loads(settings.read_text())["hooks"]["Stop"]
        for h in group["hooks"]
    )
    assert kinds == ["adherence", "capture"]
    gone = invoke_prism(db_path, "hooks", "uninstall", "claude-code", "--settings", str(settings))
    assert gone.returncode == 0 and not settings.exists()  # nothing else was in it


def test_context_options_without_a_stop_hook_are_refused(db_path: Path, tmp_path: Path) -> None:
    result = invoke_prism(
        db_path,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        str(tmp_path / "s.json"),
        "--project",
        "shop",
        "--prism",
        "prism",
    )
    assert result.returncode == 2
    assert "goes with --capture, --adherence" in result.stderr
