"""The rough edges a new user met on the command line (issue 29), each pinned: before the fix
the assertion here failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_run import invoke_prism

UNREACHABLE = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"


def rule_args(*extra: str) -> list[str]:
    return [
        *("remember", "--kind", "memorule", "--memorule-kind", "convention"),
        *("--subject", "Migrations are reversible"),
        *("--body", "Every schema migration ships with its downgrade."),
        *extra,
    ]


@pytest.mark.parametrize(
    "command",
    [("keys", "list"), ("keys", "create", "--tenant", "acme", "--role", "reader"), ("mcp",)],
)
def test_keys_and_mcp_take_database_url_and_use_it(db_path: Path, command: tuple[str]) -> None:
    proc = invoke_prism(db_path, *command, "--database-url", UNREACHABLE)
    assert proc.returncode == 1
    error = json.loads(proc.stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == "storage_error" and "127.0.0.1" in error["message"]
    assert not db_path.exists()  # the SQLite default was not touched


def test_serve_takes_database_url_and_uses_it(db_path: Path) -> None:
    proc = invoke_prism(db_path, "serve", "--port", "1", "--database-url", UNREACHABLE)
    assert proc.returncode == 1
    assert '"storage_error"' in proc.stderr and "127.0.0.1" in proc.stderr


@pytest.mark.postgres
def test_keys_created_on_postgresql_are_listed_there(db_path: Path, pg_url: str) -> None:
    created = invoke_prism(
        db_path, "keys", "create", "--tenant", "acme", "--role", "reader", "--json",
        "--database-url", pg_url,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    key_id = json.loads(created.stdout)["key_id"]
    listed = invoke_prism(db_path, "keys", "list", "--json", "--database-url", pg_url)
    assert key_id in {k["key_id"] for k in json.loads(listed.stdout)["keys"]}
    assert not db_path.exists()


def test_brief_and_recall_by_hand_read_the_folders_prism_toml(
    db_path: Path, tmp_path: Path
) -> None:
    project = tmp_path / "web-app"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".prism.toml").write_text('persona = "donna"\nproject = "web"\n')
    wrote = invoke_prism(
        db_path, *rule_args("--for-persona", "donna", "--project", "web", "--json")
    )
    assert wrote.returncode == 0, wrote.stderr
    rule_id = json.loads(wrote.stdout)["id"]
    inside = project / "src"
    recalled = invoke_prism(db_path, "recall", "migration", "--json", cwd=inside)
    assert [m["id"] for m in json.loads(recalled.stdout)["matches"]] == [rule_id]
    brief = invoke_prism(db_path, "brief", "--json", cwd=inside)
    assert rule_id in json.loads(brief.stdout)["markdown"]
    # Outside the project: the default project and no persona, so nothing applies.
    elsewhere = invoke_prism(db_path, "recall", "migration", "--json", cwd=tmp_path)
    assert json.loads(elsewhere.stdout)["matches"] == []
    # A flag still wins over the file.
    other = invoke_prism(db_path, "recall", "migration", "--json", "--project", "api", cwd=inside)
    assert json.loads(other.stdout)["matches"] == []


def test_text_output_prints_whole_session_ids(db_path: Path) -> None:
    sessions = [f"01a24946-d6f6-7000-b205-6854657d9b{n:02d}" for n in range(3)]
    for n, session in enumerate(sessions):
        args = rule_args("--scope", "project", "--session-id", session)
        args[args.index("Migrations are reversible")] = f"Rule number {n}"
        assert invoke_prism(db_path, *args).returncode == 0
    audit = invoke_prism(db_path, "audit").stdout
    for session in sessions:  # time-ordered ids share their first 8 characters
        assert f"(session {session})" in audit


def test_an_error_is_printed_once_and_names_the_commands_flags(db_path: Path) -> None:
    proc = invoke_prism(db_path, "remember", "--kind", "memorule", "--subject", "ab")
    assert proc.returncode == 2
    assert proc.stderr.count("validation_failed") == 1 and "{" not in proc.stderr
    assert "a memorule needs at least one of --for-persona, --for-surface" in proc.stderr
    assert "--memorule-kind: missing" in proc.stderr and "--subject: too_short" in proc.stderr
    assert "applies_to" not in proc.stderr and "memorule_kind" not in proc.stderr
    bad = invoke_prism(db_path, *rule_args("--scope", "galaxy", "--for-surface", ""))
    assert "--scope: invalid_choice: --scope must be one of" in bad.stderr
    assert "--for-surface: " in bad.stderr
    # --json keeps the API's field names: scripts read the contract, people read flags.
    as_json = invoke_prism(db_path, *rule_args("--json"))
    assert json.loads(as_json.stdout)["error"]["fields"][0]["field"] == "applies_to"


def test_scope_help_says_it_has_no_default_and_what_is_required(db_path: Path) -> None:
    text = " ".join(invoke_prism(db_path, "remember", "--help").stdout.split())
    assert "(default project)" not in text
    assert "A memorule needs --scope or at least one --for-* option (no default)" in text


def test_dump_says_it_does_not_carry_api_keys(db_path: Path) -> None:
    text = " ".join(invoke_prism(db_path, "dump", "--help").stdout.split())
    assert "API keys are not written" in text


def test_keys_show_the_slugs_the_user_typed_beside_their_ids(db_path: Path) -> None:
    created = invoke_prism(
        db_path, "keys", "create", "--tenant", "acme", "--role", "writer", "--project", "web"
    )
    assert created.returncode == 0, created.stderr
    assert "for tenant acme (" in created.stdout and "projects web (" in created.stdout
    listed = invoke_prism(db_path, "keys", "list", "--tenant", "acme").stdout
    assert "tenant acme (" in listed
