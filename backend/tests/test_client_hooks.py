"""``prism hooks install|uninstall``: Claude Code's settings.json (golden files beside this
test) and git's pre-commit hook, each beside hooks that are not Prism's."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prism_memory.bootstrap import build_services
from prism_memory.cli.main import cli
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.services.claude_settings import handler_kind
from prism_memory.services.git_hooks import CHAINED_NAME
from prism_memory.settings import load_settings
from tests.cli_run import BACKEND
from tests.test_brief_hook import context_of, hook_input, rule
from tests.test_capture_cli import GOLDEN as TRANSCRIPT
from tests.test_capture_cli import ok

GOLDEN = Path(__file__).parent / "golden" / "claude_settings"
PRISM = "/opt/prism/bin/prism"


def invoke(*args: str, cwd: Path | None = None) -> Result:
    runner = CliRunner()
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose .claude/settings.json already has the user's own hooks."""
    (tmp_path / ".claude").mkdir()
    shutil.copy(GOLDEN / "before.json", tmp_path / ".claude" / "settings.json")
    return tmp_path


def settings_text(project: Path) -> str:
    return (project / ".claude" / "settings.json").read_text()


def test_install_adds_the_session_start_hook_beside_the_users_hooks(project: Path) -> None:
    result = invoke(
        "hooks", "install", "claude-code", "--project-dir", str(project), "--prism", PRISM
    )
    assert result.exit_code == 0, result.output
    assert settings_text(project) == (GOLDEN / "after_install.json").read_text()
    again = invoke(
        "hooks", "install", "claude-code", "--project-dir", str(project), "--prism", PRISM
    )
    assert again.exit_code == 0 and "no change" in again.output
    assert settings_text(project) == (GOLDEN / "after_install.json").read_text()


def test_install_on_prompt_adds_the_prompt_hook_once(project: Path) -> None:
    for _ in range(2):
        result = invoke(
            "hooks",
            "install",
            "claude-code",
            "--project-dir",
            str(project),
            "--prism",
            PRISM,
            "--on-prompt",
        )
        assert result.exit_code == 0, result.output
    assert settings_text(project) == (GOLDEN / "after_install_on_prompt.json").read_text()


def test_uninstall_removes_exactly_what_install_added(project: Path) -> None:
    invoke(
        "hooks",
        "install",
        "claude-code",
        "--project-dir",
        str(project),
        "--prism",
        PRISM,
        "--on-prompt",
    )
    result = invoke("hooks", "uninstall", "claude-code", "--project-dir", str(project))
    assert result.exit_code == 0, result.output
    assert result.output.count("removed ") == 2
    assert settings_text(project) == (GOLDEN / "before.json").read_text()
    again = invoke("hooks", "uninstall", "claude-code", "--project-dir", str(project))
    assert "no change" in again.output


def test_dry_run_prints_a_unified_diff_and_writes_nothing(project: Path) -> None:
    result = invoke(
        "hooks",
        "install",
        "claude-code",
        "--project-dir",
        str(project),
        "--prism",
        PRISM,
        "--dry-run",
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("--- ")
    assert (
        '+            "command": "/opt/prism/bin/prism brief --hook claude-code",' in result.output
    )
    assert settings_text(project) == (GOLDEN / "before.json").read_text()


def test_a_new_install_is_removed_without_a_trace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    env_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        assert invoke("hooks", "install", "claude-code", "--user", "--prism", PRISM).exit_code == 0
        data = json.loads(settings.read_text())
        assert list(data["hooks"]) == ["SessionStart"]
        assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
        assert invoke("hooks", "uninstall", "claude-code", "--user").exit_code == 0
    finally:
        if env_home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = env_home
    assert not settings.exists()


def test_an_older_install_with_another_prism_path_is_updated_not_doubled(project: Path) -> None:
    invoke(
        "hooks", "install", "claude-code", "--project-dir", str(project), "--prism", "/old/prism"
    )
    invoke("hooks", "install", "claude-code", "--project-dir", str(project), "--prism", PRISM)
    assert settings_text(project) == (GOLDEN / "after_install.json").read_text()


@pytest.mark.parametrize(
    ("text", "code"),
    [("{not json", "invalid_json"), ("[]", "not_an_object"), ('{"hooks": []}', "wrong_type")],
)
def test_a_settings_file_prism_cannot_read_is_refused_and_left_alone(
    project: Path, text: str, code: str
) -> None:
    (project / ".claude" / "settings.json").write_text(text)
    result = CliRunner().invoke(
        cli, ["hooks", "install", "claude-code", "--project-dir", str(project), "--prism", PRISM]
    )
    assert result.exit_code == 2
    assert json.loads(result.stderr)["error"]["fields"][0]["code"] == code
    assert settings_text(project) == text


def test_the_installed_command_answers_claude_codes_hook_input(
    project: Path, db_path: Path, tmp_path: Path
) -> None:
    """The command written into settings.json, run by a shell as Claude Code runs it."""
    services = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    from prism_memory.bootstrap import context_from

    ctx = context_from(services.settings)
    written = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Keep hooks fast", "A session-start hook must answer quickly.", {"scope": "project"}
            )
        ),
    )
    services.close()
    wrapper = tmp_path / "bin" / "prism"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prism_memory "$@"\n')
    wrapper.chmod(0o755)
    invoke(
        "hooks", "install", "claude-code", "--project-dir", str(project), "--prism", str(wrapper)
    )
    settings = json.loads(settings_text(project))
    ours = settings["hooks"]["SessionStart"][-1]["hooks"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_DB=str(db_path),
        PRISM_EMBEDDER="fake",
        PRISM_HOOK_STATE_DIR=str(tmp_path / "state"),
        PYTHONPATH=str(BACKEND),
        CLAUDE_PROJECT_DIR=str(project),
    )
    proc = subprocess.run(
        ["bash", "-c", ours["command"]],
        input=hook_input(cwd=str(project)),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,  # a hang guard, not the entry's timeout: the machine may be loaded
        check=False,
    )
    assert str(written.id) in context_of(proc, "SessionStart")


# -- the capture hook (--capture) ------------------------------------------------------


@pytest.fixture
def with_stop(tmp_path: Path) -> Path:
    """A project whose settings already have the user's own Stop hook besides the others."""
    (tmp_path / ".claude").mkdir()
    shutil.copy(GOLDEN / "before_capture.json", tmp_path / ".claude" / "settings.json")
    return tmp_path


def install_capture(project: Path, *more: str) -> Result:
    return invoke(
        "hooks",
        "install",
        "claude-code",
        "--project-dir",
        str(project),
        "--prism",
        PRISM,
        "--capture",
        "--persona",
        "donna o'hara",
        "--project",
        "prism-app",
        *more,
    )


def test_install_capture_adds_the_stop_hook_beside_the_users_stop_hook(with_stop: Path) -> None:
    result = install_capture(with_stop)
    assert result.exit_code == 0, result.output
    assert "added Stop: /opt/prism/bin/prism capture claude-code --hook" in result.output
    assert settings_text(with_stop) == (GOLDEN / "after_install_capture.json").read_text()
    again = install_capture(with_stop)
    assert again.exit_code == 0 and again.output.startswith("no change")
    assert settings_text(with_stop) == (GOLDEN / "after_install_capture.json").read_text()


def test_install_capture_dry_run_shows_the_stop_hook_and_writes_nothing(with_stop: Path) -> None:
    result = install_capture(with_stop, "--dry-run")
    assert result.exit_code == 0, result.output
    assert '+    "Stop": [' not in result.output, "the user's Stop list is extended, not replaced"
    assert (
        '+            "command": "/opt/prism/bin/prism capture claude-code --hook --project '
        "prism-app --persona 'donna o'\\\"'\\\"'hara'\","
    ) in result.output
    assert settings_text(with_stop) == (GOLDEN / "before_capture.json").read_text()


def test_uninstall_removes_the_capture_hook_and_leaves_the_users_stop_hook(with_stop: Path) -> None:
    install_capture(with_stop, "--on-prompt")
    result = invoke("hooks", "uninstall", "claude-code", "--project-dir", str(with_stop))
    assert result.exit_code == 0, result.output
    assert result.output.count("removed ") == 3 and "removed Stop: " in result.output
    assert settings_text(with_stop) == (GOLDEN / "before_capture.json").read_text()


def test_new_capture_options_update_the_stop_hook_not_double_it(with_stop: Path) -> None:
    install_capture(with_stop)
    invoke(
        "hooks", "install", "claude-code", "--project-dir", str(with_stop), "--prism", PRISM,
        "--capture", "--persona", "aria",
    )  # fmt: skip
    stop = json.loads(settings_text(with_stop))["hooks"]["Stop"]
    ours = [h for group in stop for h in group["hooks"] if handler_kind(h) == "capture"]
    assert [h["command"] for h in ours] == [f"{PRISM} capture claude-code --hook --persona aria"]
    assert stop[0] == json.loads((GOLDEN / "before_capture.json").read_text())["hooks"]["Stop"][0]


def test_one_recogniser_knows_both_of_prisms_handlers_and_no_other() -> None:
    def cmd(command: str) -> dict[str, str]:
        return {"type": "command", "command": command}

    assert handler_kind(cmd("'/a b/prism' brief --hook claude-code")) == "brief"
    assert handler_kind(cmd("prism capture claude-code --hook --persona donna")) == "capture"
    assert handler_kind(cmd("/x/prism capture claude-code --hook")) == "capture"
    for theirs in (
        "notify-send 'Claude is done'",
        "prism capture claude-code --transcript t.jsonl",
        "echo prism capture claude-code --hook",
        "prism brief --hook claude-code --extra",
        "unbalanced 'quote",
    ):
        assert handler_kind(cmd(theirs)) is None, theirs
    assert handler_kind({"type": "prompt", "command": "prism brief --hook claude-code"}) is None


def test_the_installed_capture_command_captures_a_real_hook_input(
    with_stop: Path, db_path: Path, tmp_path: Path
) -> None:
    """The Stop command written into settings.json, run by a shell as Claude Code runs it,
    prints nothing and exits 0; the proposals then turn up in the store."""
    wrapper = tmp_path / "bin" / "prism"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prism_memory "$@"\n')
    wrapper.chmod(0o755)
    installed = invoke(
        "hooks", "install", "claude-code", "--project-dir", str(with_stop), "--prism",
        str(wrapper), "--capture", "--db", str(db_path), "--persona", "donna",
    )  # fmt: skip
    assert installed.exit_code == 0, installed.output
    stop = json.loads(settings_text(with_stop))["hooks"]["Stop"]
    ours = stop[-1]["hooks"][0]
    assert handler_kind(ours) == "capture"
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    data_home = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_EMBEDDER="fake",
        PYTHONPATH=str(BACKEND),
        XDG_DATA_HOME=str(data_home),
        CLAUDE_PROJECT_DIR=str(with_stop),
    )
    stdin = json.dumps(
        {
            "session_id": "3c07f08f-e544-47b9-898a-f169f651788c",
            "transcript_path": str(transcript),
            "cwd": str(with_stop),
            "permission_mode": "default",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
    )
    proc = subprocess.run(
        ["bash", "-c", ours["command"]],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=with_stop,
        timeout=120,  # a hang guard, not the entry's timeout: the machine may be loaded
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = data_home / "prism-memory" / "capture.log"
    for _ in range(600):  # the detached capture finishes on its own time: bounded tries
        if log.exists() and str(transcript) in log.read_text():
            break
        time.sleep(0.1)
    assert f"{transcript}: 3 proposed, 1 evidence" in log.read_text()
    listed = ok(db_path, "proposals", "--project", "prism-app")
    assert listed["count"] == 3
    assert {p["applies_to"].get("persona") for p in listed["proposals"]} == {"donna"}
    assert {p["confidence"] for p in listed["proposals"]} == {"observed"}


# -- git ---------------------------------------------------------------------------------


def git(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    assert git(path, "init", "-q").returncode == 0
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    return path


def test_git_install_chains_to_an_existing_hook_and_uninstall_restores_it(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    original = '#!/bin/sh\necho theirs > "$(git rev-parse --show-toplevel)/ran-theirs"\n'
    (hooks / "pre-commit").write_text(original)
    (hooks / "pre-commit").chmod(0o755)
    result = invoke("hooks", "install", "git", "--repo", str(repo), "--prism", PRISM)
    assert result.exit_code == 0, result.output
    assert "installed" in result.output and CHAINED_NAME in result.output
    assert (hooks / CHAINED_NAME).read_text() == original
    ours = (hooks / "pre-commit").read_text()
    assert "export-rules --check --format agents-md --out ." in ours
    assert (hooks / "pre-commit").stat().st_mode & stat.S_IXUSR
    again = invoke("hooks", "install", "git", "--repo", str(repo), "--prism", PRISM)
    assert "unchanged" in again.output
    removed = invoke("hooks", "uninstall", "git", "--repo", str(repo))
    assert removed.exit_code == 0 and "removed" in removed.output
    assert (hooks / "pre-commit").read_text() == original
    assert not (hooks / CHAINED_NAME).exists()
    assert "absent" in invoke("hooks", "uninstall", "git", "--repo", str(repo)).output
    assert (hooks / "pre-commit").read_text() == original, "a hook that is not ours stays"


@pytest.mark.parametrize(
    ("fmt", "folder"),
    [
        ("copilot-instructions", ".github/instructions"),
        ("copilot", ".github"),
        ("windsurf-rules", ".windsurf/rules"),
        ("cline-rules", ".clinerules"),
        ("claude-rules", ".claude/rules"),
        ("gemini-md", "."),
        ("cursor", ".cursor/rules"),
    ],
)
def test_git_install_checks_each_tools_files_where_the_tool_reads_them(
    repo: Path, fmt: str, folder: str
) -> None:
    result = invoke(
        "hooks", "install", "git", "--repo", str(repo), "--prism", PRISM, "--format", fmt
    )
    assert result.exit_code == 0, result.output
    ours = (repo / ".git" / "hooks" / "pre-commit").read_text()
    assert f"export-rules --check --format {fmt} --out {folder}" in ours


def test_the_pre_commit_hook_blocks_a_commit_while_agents_md_is_stale(
    repo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "prism.db"
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    from prism_memory.bootstrap import context_from

    ctx = context_from(services.settings)
    rid = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Review every migration",
                "A second person reviews each migration.",
                {"scope": "project"},
            )
        ),
    ).id
    wrapper = tmp_path / "bin" / "prism"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prism_memory "$@"\n')
    wrapper.chmod(0o755)
    assert (
        invoke("hooks", "install", "git", "--repo", str(repo), "--prism", str(wrapper)).exit_code
        == 0
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(PRISM_DB=str(db), PRISM_EMBEDDER="fake", PYTHONPATH=str(BACKEND))
    exported = subprocess.run(
        [str(wrapper), "export-rules", "--format", "agents-md", "--out", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    git(repo, "add", "AGENTS.md")
    first = git(repo, "commit", "-qm", "rules", env=env)
    assert first.returncode == 0, first.stderr
    services.memory.lifecycle.update(ctx, rid, {"body": "Two people review each schema migration."})
    services.close()
    (repo / "notes.txt").write_text("unrelated change\n")
    git(repo, "add", "notes.txt")
    blocked = git(repo, "commit", "-qm", "notes", env=env)
    assert blocked.returncode != 0
    assert "stale: " in blocked.stderr and "AGENTS.md" in blocked.stderr
    assert "+- Two people review each schema migration." in blocked.stderr


def test_options_of_the_other_client_are_refused_all_at_once(project: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["hooks", "install", "git", "--project-dir", str(project), "--on-prompt", "--prism", PRISM],
    )
    assert result.exit_code == 2
    fields = [f["field"] for f in json.loads(result.stderr)["error"]["fields"]]
    assert fields == ["project_dir", "on_prompt"]
    wrong = CliRunner().invoke(
        cli,
        [
            *("hooks", "install", "claude-code", "--persona", "donna", "--surface", "x"),
            *("--project-dir", str(project), "--prism", PRISM),
        ],
    )
    assert wrong.exit_code == 2
    codes = {f["field"]: f["code"] for f in json.loads(wrong.stderr)["error"]["fields"]}
    assert codes == {"surface": "not_for_client", "persona": "needs_capture"}
    on_git = CliRunner().invoke(cli, ["hooks", "install", "git", "--capture", "--prism", PRISM])
    assert json.loads(on_git.stderr)["error"]["fields"][0]["code"] == "not_for_client"
    assert settings_text(project) == (GOLDEN / "before.json").read_text()


def test_a_bare_prism_name_is_written_as_it_is_for_shared_settings(project: Path) -> None:
    result = invoke(
        "hooks", "install", "claude-code", "--project-dir", str(project), "--prism", "prism"
    )
    assert result.exit_code == 0, result.output
    ours = json.loads(settings_text(project))["hooks"]["SessionStart"][-1]["hooks"][0]
    assert ours["command"] == "prism brief --hook claude-code"
