"""The CLI on a temp database: arguments, output and exit codes in this process (click's
runner); as a user runs it (a real subprocess) for SPEC-094 acceptance criterion 7 (the
end-to-end smoke, with the real model), for what ``prism --help`` imports, and for the core
install's paths with the extras' modules blocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from tests.cli_run import invoke_prism, run_prism

BACKEND = Path(__file__).resolve().parents[1]


def prism(
    db: Path, *args: str, fake: bool = True, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """In this process; the real-model smoke test runs a subprocess (``fake=False``)."""
    if not fake:
        return run_prism(db, *args, fake=False, stdin=stdin, **env)
    return invoke_prism(db, *args, stdin=stdin, **env)


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
    assert "--subject: too_short: --subject must be at least 4 characters" in human.stderr
    assert "{" not in human.stderr  # once, for people: the JSON is for --json


def test_audit_times_follow_the_one_time_rule_of_every_door(db_path: Path) -> None:
    write = ["remember", "--json", "--kind", "memorule", "--memorule-kind", "preference"]
    write += [
        "--subject",
        "Audit times",
        "--body",
        "A rule whose event has a time.",
        "--for-surface",
        "x",
    ]
    written = ok_json(prism(db_path, *write))
    day = written["written_at"][:10]
    for since in (day, f"{day}T00:00:00", f"{day} 02:00:00+02:00", f"{day}T00:00:00Z"):
        events = ok_json(prism(db_path, "audit", "--json", "--since", since))["events"]
        assert [e["memorule_id"] for e in events] == [written["id"]], since
    assert ok_json(prism(db_path, "audit", "--json", "--until", day))["events"] == []
    refused = prism(db_path, "audit", "--json", "--since", "yesterday", "--limit", "0")
    assert refused.returncode == 2
    fields = json.loads(refused.stdout)["error"]["fields"]
    assert [(f["field"], f["code"]) for f in fields] == [
        ("since", "invalid_format"),
        ("limit", "out_of_range"),
    ]


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
    from prism_memory.cli.main import cli

    for name, command in cli.all_commands():
        assert command.help or command.short_help, name
        proc = prism(db_path, name, "--help")
        assert proc.returncode == 0, (name, proc.stderr)
        assert proc.stdout.startswith(f"Usage: prism {name} ")


def test_the_command_list_of_help_is_each_commands_own_first_line() -> None:
    """``prism --help`` lists registered lines (nothing imported): they match the commands."""
    from prism_memory.cli.main import COMMANDS, cli

    built = dict(cli.all_commands())
    assert sorted(built) == sorted(name for name, _, _ in COMMANDS)
    for name, _, line in COMMANDS:
        for limit in (45, 70, 200):
            registered = click.Command(name, help=line).get_short_help_str(limit)
            assert registered == built[name].get_short_help_str(limit), name


def _python(code: str, *args: str, stdin: str | None = None, **env: str) -> Any:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    environ.update({"PYTHONPATH": str(BACKEND), "PRISM_EMBEDDER": "fake", **env})
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=environ,
        timeout=300,
        check=False,
    )


def test_prism_help_imports_click_and_the_command_list_only(db_path: Path) -> None:
    probe = (
        "import sys\n"
        "from prism_memory.cli.main import main\n"
        "sys.argv = ['prism', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('PRISM', sorted(m for m in sys.modules if m.startswith('prism_memory')),"
        " file=sys.stderr)\n"
        "print('OTHER', sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'numpy',"
        " 'platformdirs', 'markdown_it', 'mcp', 'onnxruntime'}), file=sys.stderr)\n"
    )
    proc = _python(probe, PRISM_DB=str(db_path))
    assert proc.returncode == 0, proc.stderr
    assert "remember " in proc.stdout and "serve " in proc.stdout
    assert (
        "PRISM ['prism_memory', 'prism_memory.cli', 'prism_memory.cli.lazy',"
        " 'prism_memory.cli.main', 'prism_memory.version']" in proc.stderr
    )
    assert "OTHER []" in proc.stderr


# A core install (pip install prism-memory, no extras) has none of these. Importing one of
# them from this wrapper fails as it would there; the wrapper reports which of the extras'
# and front doors' modules the command loaded.
CORE_ONLY = """
import sys
for name in ("fastapi", "uvicorn", "psycopg", "psycopg_pool", "jinja2", "prometheus_client",
             "limits", "fastapi_offline"):
    sys.modules[name] = None  # `import fastapi` raises ModuleNotFoundError, find_spec is None
sys.argv = ["prism", *sys.argv[1:]]
from prism_memory.cli.main import main
try:
    main()
finally:
    watched = {"fastapi", "uvicorn", "psycopg", "jinja2", "starlette", "httpx", "mcp"}
    loaded = {m.split(".")[0] for m, mod in sys.modules.items() if mod is not None}
    print("LOADED", sorted(loaded & watched), file=sys.stderr)
"""


def test_the_core_commands_never_import_the_server_or_postgres_extras(db_path: Path) -> None:
    env = {"PRISM_DB": str(db_path)}
    help_ = _python(CORE_ONLY, "--help", **env)
    assert help_.returncode == 0 and "LOADED []" in help_.stderr, help_.stderr
    wrote = _python(CORE_ONLY, "remember", "--json", "--body", "Deploys run on Tuesdays.", **env)
    assert wrote.returncode == 0 and "LOADED []" in wrote.stderr, wrote.stderr
    found = _python(CORE_ONLY, "recall", "--json", "when do deploys run", **env)
    assert found.returncode == 0 and "LOADED []" in found.stderr, found.stderr
    assert json.loads(found.stdout)["matches"][0]["id"] == json.loads(wrote.stdout)["id"]
    brief = _python(CORE_ONLY, "brief", **env)
    assert brief.returncode == 0 and "LOADED []" in brief.stderr, brief.stderr


def test_prism_mcp_starts_and_answers_without_the_extras(db_path: Path) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "core-test", "version": "1"},
        },
    }
    lines = [
        hello,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    proc = _python(CORE_ONLY, "mcp", stdin=stdin, PRISM_DB=str(db_path))
    assert proc.returncode == 0, proc.stderr
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"]
    assert "prism_remember" in {tool["name"] for tool in answers[2]["result"]["tools"]}
    # The MCP SDK brings starlette, but nothing of the server extra or the PostgreSQL driver.
    assert "LOADED ['mcp', 'starlette']" in proc.stderr


def test_what_needs_an_extra_says_which_to_install_instead_of_a_traceback(
    db_path: Path,
) -> None:
    serve = _python(CORE_ONLY, "serve", "--insecure-local", PRISM_DB=str(db_path))
    assert serve.returncode == 1
    assert "pip install 'prism-memory[server]'" in serve.stderr
    assert "Traceback" not in serve.stderr
    url = "postgresql://prism@127.0.0.1:9/prism"
    pg = _python(CORE_ONLY, "recall", "--json", "--database-url", url, PRISM_DB=str(db_path))
    assert pg.returncode == 1 and "Traceback" not in pg.stderr
    error = json.loads(pg.stdout)["error"]
    assert error["code"] == "storage_error"
    assert "pip install 'prism-memory[postgres]'" in error["message"]
    migrate = _python(CORE_ONLY, "migrate", "--database-url", url, PRISM_DB=str(db_path))
    assert migrate.returncode == 1 and "prism-memory[postgres]" in migrate.stderr
    assert "Traceback" not in migrate.stderr


def test_context_values_with_control_characters_are_refused(db_path: Path) -> None:
    proc = prism(db_path, "recall", "--json", "--persona", "don\x01na")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["fields"][0]["field"] == "persona"
