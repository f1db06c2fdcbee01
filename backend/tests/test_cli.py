"""The CLI as a user runs it: a real subprocess on a temp database.

Includes SPEC-094 acceptance criterion 7 (the end-to-end smoke) with the real model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_prism

BACKEND = Path(__file__).resolve().parents[1]


def prism(
    db: Path, *args: str, fake: bool = True, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return run_prism(db, *args, fake=fake, stdin=stdin, **env)


def ok_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.real_model
def test_spec_smoke_write_a_memorule_recall_it_and_check_its_audit_event(db_path: Path) -> None:
    written = ok_json(
        prism(
            db_path,
            "remember",
            "--json",
            "--persona",
            "donna",
            "--session-id",
            "01a229b4-a49e-7000-9034-7cd031eb148e",
            "--kind",
            "memorule",
            "--memorule-kind",
            "feedback",
            "--subject",
            "Cite the spec section",
            "--body",
            "When proposing a design change, cite the spec section it touches.",
            "--for-persona",
            "donna",
            "--confidence",
            "observed",
            "--evidence",
            "8ac87b0d",
            fake=False,
        )
    )
    assert written["ok"] is True and written["kind"] == "memorule"
    recalled = ok_json(
        prism(
            db_path,
            "recall",
            "which spec section should I reference?",
            "--source-type",
            "memorule",
            "--persona",
            "donna",
            "--json",
            fake=False,
        )
    )
    (match,) = recalled["matches"]
    assert match["id"] == written["id"]
    assert match["memorule_kind"] == "feedback"
    assert match["applies_to"] == {"persona": "donna"}
    assert match["confidence"] == "observed"
    assert match["evidence_signal_id"] == "8ac87b0d"
    assert match["why"]["relevance"] > 0.3
    assert recalled["embedding_model"] == "all-MiniLM-L6-v2-int8-onnx"
    events = ok_json(prism(db_path, "audit", "--json", "--memorule", written["id"]))["events"]
    assert len(events) == 1
    event = events[0]
    assert event["memorule_id"] == written["id"]
    assert event["written_by_session_id"] == "01a229b4-a49e-7000-9034-7cd031eb148e"
    assert event["written_by_persona"] == "donna"
    assert event["evidence_signal_id"] == "8ac87b0d"
    assert event["written_at"] == written["written_at"]
    assert event["event"] == "created"
    verified = ok_json(prism(db_path, "audit", "verify", "--json"))
    assert verified["ok"] is True and verified["events"] == 1


def test_a_validation_error_prints_the_structured_error_and_exits_2(db_path: Path) -> None:
    proc = prism(db_path, "remember", "--json", "--kind", "memorule", "--subject", "ab")
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "validation_failed"
    assert {f["field"] for f in error["fields"]} == {
        "memorule_kind",
        "subject",
        "body",
        "applies_to",
    }
    human = prism(db_path, "remember", "--kind", "memorule", "--subject", "ab")
    assert human.returncode == 2
    assert "subject: too_short" in human.stderr
    assert '"validation_failed"' in human.stderr


def test_remember_takes_the_whole_write_as_json_on_stdin(db_path: Path) -> None:
    raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "Use UTC timestamps",
        "body": "Store and log every timestamp in UTC with an offset.",
        "applies_to": {"scope": "org"},
    }
    written = ok_json(prism(db_path, "remember", "--input", "-", "--json", stdin=json.dumps(raw)))
    shown = ok_json(prism(db_path, "show", written["id"], "--json"))
    assert shown["state"]["applies_to"] == {"scope": "org"}
    mixed = prism(db_path, "remember", "--input", "-", "--subject", "x", stdin=json.dumps(raw))
    assert mixed.returncode == 2
    broken = prism(db_path, "remember", "--input", "-", "--json", stdin="{not json")
    assert broken.returncode == 2
    assert json.loads(broken.stdout)["error"]["fields"][0]["code"] == "invalid_json"


def test_context_comes_from_prism_environment_variables(db_path: Path) -> None:
    prism(db_path, "remember", "--body", "tenant a note", PRISM_TENANT="a")
    assert ok_json(prism(db_path, "recall", "--json", PRISM_TENANT="a"))["count"] == 1
    assert ok_json(prism(db_path, "recall", "--json", PRISM_TENANT="b"))["count"] == 0
    bad = prism(db_path, "recall", "--json", "--tenant", "no spaces allowed")
    assert bad.returncode == 2


def test_lifecycle_commands_round_trip(db_path: Path) -> None:
    written = ok_json(
        prism(
            db_path,
            "remember",
            "--json",
            "--kind",
            "memorule",
            "--memorule-kind",
            "preference",
            "--subject",
            "Prefer pathlib",
            "--body",
            "Use pathlib.Path rather than os.path joins.",
            "--for-surface",
            "python",
        )
    )
    mid = written["id"]
    updated = ok_json(
        prism(
            db_path,
            "update",
            mid,
            "--json",
            "--body",
            "Use pathlib.Path for every file path.",
            "--reason",
            "clearer",
        )
    )
    assert updated["version"] == 2
    ok_json(prism(db_path, "retire", mid, "--reason", "superseded by lint rule", "--json"))
    assert ok_json(prism(db_path, "recall", "--json"))["count"] == 0
    ok_json(prism(db_path, "restore", mid, "--reason", "lint rule dropped", "--json"))
    history = ok_json(prism(db_path, "history", mid, "--json"))
    assert [v["version"] for v in history["versions"]] == [1, 2]
    assert [e["event"] for e in history["audit"]] == [
        "restored",
        "retired",
        "superseded",
        "created",
    ]
    text = prism(db_path, "history", mid)
    assert "version 2" in text.stdout and "reason: clearer" in text.stdout
    missing = prism(db_path, "show", "01a229b4-a695-7000-a801-29b40e2e11e3", "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"


def test_every_command_has_help_text(db_path: Path) -> None:
    from app.cli.main import cli

    for name, command in cli.all_commands():
        assert command.help or command.short_help, name
        proc = prism(db_path, name, "--help")
        assert proc.returncode == 0, (name, proc.stderr)
        assert "Usage:" in proc.stdout


def test_context_values_with_control_characters_are_refused(db_path: Path) -> None:
    proc = prism(db_path, "recall", "--json", "--persona", "don\x01na")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["fields"][0]["field"] == "persona"
