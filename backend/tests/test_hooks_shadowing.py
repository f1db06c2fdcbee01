"""Every hook Prism installs runs Prism, even from a project folder whose own packages are
named like Prism's (``prism_memory/``) or like Prism's old name (``app/`` with a
``__main__.py``, as in a FastAPI project).

The hooks are installed as a user installs them (``prism hooks install``, the ``prism``
script beside this interpreter) and run as Claude Code and git run them: by a shell, in the
project folder, with no ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from prism_memory.bootstrap import build_services, context_from
from prism_memory.cli.main import cli
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.settings import load_settings
from tests.test_brief_hook import context_of, hook_input, rule
from tests.test_capture_cli import GOLDEN as TRANSCRIPT
from tests.test_capture_cli import ok

PRISM_SCRIPT = Path(sys.executable).with_name("prism")
IMPOSTOR = """import pathlib, sys
pathlib.Path({marker!r}).open("a").write({name!r} + " ran: " + " ".join(sys.argv) + "\\n")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with its own ``app`` package (a ``__main__``) and a ``prism_memory``
    folder; each writes to ``shadowed.log`` if Python ever imports it."""
    folder = tmp_path / "fastapi-project"
    marker = str(tmp_path / "shadowed.log")
    for name in ("app", "prism_memory"):
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(IMPOSTOR.format(marker=marker, name=name))
        (package / "__main__.py").write_text(IMPOSTOR.format(marker=marker, name=name))
        (package / "cli").mkdir()
        (package / "cli" / "__init__.py").write_text("")
        (package / "cli" / "main.py").write_text(
            IMPOSTOR.format(marker=marker, name=name) + "def main():\n    pass\n"
        )
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    for key, value in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        subprocess.run(["git", "-C", str(folder), "config", key, value], check=True)
    return folder


def hook_env(tmp_path: Path, db: Path, project: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PRISM_") and k not in ("PYTHONPATH", "PYTHONSAFEPATH")
    }
    env.update(
        PRISM_DB=str(db),
        PRISM_EMBEDDER="fake",
        PRISM_HOOK_STATE_DIR=str(tmp_path / "state"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        CLAUDE_PROJECT_DIR=str(project),
    )
    return env


def run_in(
    project: Path, command: str, stdin: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,  # a hang guard, not a latency claim: the machine may be loaded
        check=False,
    )


def test_every_hook_runs_prism_not_the_project_folders_app_or_prism_memory(
    project: Path, tmp_path: Path
) -> None:
    assert PRISM_SCRIPT.is_file(), "the prism script is installed beside the interpreter"
    db = tmp_path / "prism.db"
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    ctx = context_from(services.settings)
    written = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Review every migration", "A second person reviews it.", {"scope": "project"})
        ),
    )
    services.close()
    runner = CliRunner()
    installed = runner.invoke(
        cli,
        [
            *("hooks", "install", "claude-code", "--project-dir", str(project)),
            *("--on-prompt", "--capture", "--db", str(db), "--persona", "donna"),
        ],
        catch_exceptions=False,
    )
    assert installed.exit_code == 0, installed.output
    git_installed = runner.invoke(
        cli, ["hooks", "install", "git", "--repo", str(project)], catch_exceptions=False
    )
    assert git_installed.exit_code == 0, git_installed.output
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    env = hook_env(tmp_path, db, project)

    start = hooks["SessionStart"][-1]["hooks"][0]
    # the brief's fast path (python -P: the project folder is not on sys.path)
    assert start["command"].startswith(f"{sys.executable} -P -m prism_memory brief")
    proc = run_in(project, start["command"], hook_input(cwd=str(project)), env)
    assert str(written.id) in context_of(proc, "SessionStart")

    prompt = hooks["UserPromptSubmit"][-1]["hooks"][0]
    stdin = hook_input("UserPromptSubmit", cwd=str(project), prompt="review the migration")
    proc = run_in(project, prompt["command"], stdin, env)
    assert proc.returncode == 0, proc.stderr

    stop = hooks["Stop"][-1]["hooks"][0]
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    stdin = json.dumps(
        {"session_id": "s", "transcript_path": str(transcript), "cwd": str(project)}
        | {"hook_event_name": "Stop", "stop_hook_active": False}
    )
    proc = run_in(project, stop["command"], stdin, env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = tmp_path / "data" / "prism-memory" / "capture.log"
    for _ in range(600):  # the detached capture (a child of the hook) finishes on its own time
        if log.exists() and str(transcript) in log.read_text():
            break
        if (tmp_path / "shadowed.log").exists():
            break
        time.sleep(0.1)
    shadowed = tmp_path / "shadowed.log"
    assert not shadowed.exists(), shadowed.read_text()
    assert f"{transcript}: 3 proposed" in log.read_text()
    assert ok(db, "proposals", "--project", "prism-app")["count"] == 3

    (project / "notes.txt").write_text("a change\n")
    subprocess.run(["git", "-C", str(project), "add", "notes.txt"], check=True)
    commit = subprocess.run(
        ["git", "commit", "-qm", "notes"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    # Prism's check ran: no AGENTS.md exported yet, but the store has a rule for it.
    assert commit.returncode != 0
    assert "prism pre-commit: rule files are stale" in commit.stderr

    assert not shadowed.exists(), shadowed.read_text()
