"""``prism keys create|list|revoke`` as a user runs them: a real subprocess on a temp database."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from prism_memory.cli.main import cli
from prism_memory.domain.ids import uuid_for
from tests.cli_run import invoke_prism

BACKEND = Path(__file__).resolve().parents[1]


def prism(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return invoke_prism(db, *args)


def test_a_key_is_printed_once_listed_without_its_secret_and_revoked(db_path: Path) -> None:
    created = prism(
        db_path, "keys", "create", "--tenant", "acme", "--role", "writer", "--project", "api",
        "--persona", "donna", "--label", "ci bot",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    secret = created.stdout.splitlines()[0]
    assert secret.startswith("prism_") and "only time" in created.stdout
    listed = prism(db_path, "keys", "list", "--json")
    keys = json.loads(listed.stdout)["keys"]
    assert secret not in listed.stdout
    assert len(keys) == 1
    key = keys[0]
    assert key["tenant_id"] == str(uuid_for("tenant", "acme"))
    assert key["projects"] == [str(uuid_for("project", "api"))]
    assert (key["role"], key["persona"], key["label"]) == ("writer", "donna", "ci bot")
    assert key["prefix"] == secret[:10] and key["revoked_at"] is None
    revoked = prism(db_path, "keys", "revoke", key["key_id"], "--json")
    assert revoked.returncode == 0 and json.loads(revoked.stdout)["revoked_at"]
    assert "REVOKED" in prism(db_path, "keys", "list").stdout


def test_create_prints_json_with_the_key_when_asked(db_path: Path) -> None:
    out = prism(db_path, "keys", "create", "--tenant", "t1", "--role", "admin", "--json")
    data = json.loads(out.stdout)
    assert data["ok"] and data["key"].startswith("prism_") and data["role"] == "admin"
    listed = json.loads(prism(db_path, "keys", "list", "--tenant", "t2", "--json").stdout)
    assert listed["keys"] == []


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (("create", "--tenant", "acme", "--role", "owner"), 2, "owner"),
        (("create", "--tenant", "bad slug!", "--role", "reader"), 2, "validation_failed"),
        (("create", "--role", "reader"), 2, "--tenant"),
        (("revoke", "key_000000000000"), 1, "not_found"),
    ],
)
def test_bad_key_commands_exit_non_zero_with_a_clear_error(
    db_path: Path, args: tuple[str, ...], code: int, text: str
) -> None:
    out = prism(db_path, "keys", *args)
    assert out.returncode == code
    assert text in out.stderr


@pytest.mark.parametrize("command", ["keys", "keys create", "keys list", "keys revoke", "serve"])
def test_every_new_command_has_help_text(command: str) -> None:
    result = CliRunner().invoke(cli, [*command.split(), "--help"])
    assert result.exit_code == 0
    body = result.output.split("Options:")[0]
    assert len(body.strip().splitlines()) >= 3
