"""``prism export-rules --check``: passes on a fresh export, fails (with a diff) once a rule
changes, and says when there is nothing to check against."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prism_memory.bootstrap import Services, build_services, context_from
from prism_memory.cli.main import cli
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.settings import load_settings
from tests.test_brief_hook import rule


@pytest.fixture
def store(db_path: Path) -> Iterator[tuple[Services, SessionContext]]:
    svc = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    try:
        yield svc, context_from(svc.settings)
    finally:
        svc.close()


def prism(db: Path, *args: str) -> Result:
    env = {"PRISM_DB": str(db), "PRISM_EMBEDDER": "fake", "PRISM_PERSONA": None}
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.mark.parametrize(
    ("fmt", "folder"), [("agents-md", "."), ("claude-md", "."), ("cursor", ".cursor/rules")]
)
def test_a_fresh_export_passes_and_a_changed_rule_fails(
    store: tuple[Services, SessionContext], db_path: Path, tmp_path: Path, fmt: str, folder: str
) -> None:
    services, ctx = store
    first = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Name tests as sentences", "Test names read as sentences.", {"scope": "project"})
        ),
    ).id
    services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Python uses ruff", "Format Python with ruff.", {"surface": "python"})
        ),
    )
    out = str(tmp_path / folder)
    assert prism(db_path, "export-rules", "--format", fmt, "--out", out).exit_code == 0
    ok = prism(db_path, "export-rules", "--format", fmt, "--out", out, "--check")
    assert ok.exit_code == 0, ok.output
    assert "rule files current" in ok.output
    services.memory.lifecycle.update(ctx, first, {"body": "Every test name reads as a sentence."})
    stale = prism(db_path, "export-rules", "--format", fmt, "--out", out, "--check")
    assert stale.exit_code == 1
    assert "stale: " in stale.output and "rule files stale" in stale.output
    assert "+- Every test name reads as a sentence." in stale.output
    report = json.loads(
        prism(db_path, "export-rules", "--format", fmt, "--out", out, "--check", "--json").output
    )
    assert report["ok"] is False
    states = sorted(f["state"] for f in report["files"])
    # cursor writes one file per applies_to group: the python group did not change
    assert states == (["current", "stale"] if fmt == "cursor" else ["stale"])


def test_a_missing_file_and_a_file_the_export_no_longer_writes_both_fail(
    store: tuple[Services, SessionContext], db_path: Path, tmp_path: Path
) -> None:
    services, ctx = store
    python = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Python uses ruff", "Format Python with ruff.", {"surface": "python"})
        ),
    ).id
    services.memory.writes.remember(
        ctx, validate_remember(rule("Go uses gofmt", "Format Go with gofmt.", {"surface": "go"}))
    )
    out = tmp_path / ".cursor" / "rules"
    assert prism(db_path, "export-rules", "--format", "cursor", "--out", str(out)).exit_code == 0
    services.memory.lifecycle.retire(ctx, python, "we moved to black")
    report = json.loads(
        prism(
            db_path, "export-rules", "--format", "cursor", "--out", str(out), "--check", "--json"
        ).output
    )
    states = {Path(f["path"]).name: f["state"] for f in report["files"]}
    assert states == {"prism-project-go.mdc": "current", "prism-project-python.mdc": "orphaned"}
    missing = prism(
        db_path, "export-rules", "--format", "agents-md", "--out", str(tmp_path / "x"), "--check"
    )
    assert missing.exit_code == 1 and "missing: " in missing.output


def test_no_store_means_nothing_to_check_and_creates_none(tmp_path: Path) -> None:
    db = tmp_path / "absent.db"
    result = prism(db, "export-rules", "--format", "agents-md", "--out", str(tmp_path), "--check")
    assert result.exit_code == 3
    assert "no Prism store" in result.stderr
    assert not db.exists()


def test_check_needs_a_folder(store: tuple[Services, SessionContext], db_path: Path) -> None:
    result = prism(db_path, "export-rules", "--format", "agents-md", "--check", "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["fields"][0]["field"] == "out"
