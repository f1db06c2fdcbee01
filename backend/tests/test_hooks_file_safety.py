"""Files ``prism hooks install`` writes are written safely (issue #32, D5/D6; DESIGN §10).

A link planted at the old predictable temporary name never redirects the write; a 0600
settings file stays 0600; a symlinked settings file is written through to its target only
when that is a regular file the user owns (and the output says so), else refused with
nothing written; git hooks likewise. Real files in a temp folder, the CLI in process.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from prism_memory.errors import InvalidInput
from prism_memory.services import atomic_file
from tests.test_client_hooks import CHAINED_NAME, GOLDEN, PRISM, git, invoke

OLD_TEMP = ".settings.json.prism-tmp"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "p" / ".claude").mkdir(parents=True)
    settings = tmp_path / "p" / ".claude" / "settings.json"
    settings.write_text((GOLDEN / "before.json").read_text())
    return tmp_path / "p"


def install(project: Path, *extra: str) -> tuple[int, str]:
    result = invoke("hooks", "install", "claude-code", "--prism", PRISM, *extra, cwd=project)
    return result.exit_code, result.output


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_link_planted_at_the_temporary_name_is_never_followed(project: Path) -> None:
    victim = project.parent / "outside.txt"
    victim.write_text("not Prism's\n")
    (project / ".claude" / OLD_TEMP).symlink_to(victim)
    code, output = install(project)
    assert code == 0, output
    assert victim.read_text() == "not Prism's\n"
    assert json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    leftovers = [p.name for p in (project / ".claude").iterdir() if "prism-tmp" in p.name]
    assert leftovers == [OLD_TEMP]  # the planted link, untouched; no temporary file left


def test_the_settings_files_mode_is_kept(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.chmod(0o600)
    assert install(project)[0] == 0
    assert mode(settings) == 0o600


def test_a_symlinked_settings_file_is_written_through_to_the_users_own_file(
    project: Path,
) -> None:
    shared = project.parent / "dotfiles" / "claude-settings.json"
    shared.parent.mkdir()
    settings = project / ".claude" / "settings.json"
    shared.write_text(settings.read_text())
    shared.chmod(0o640)
    settings.unlink()
    settings.symlink_to(shared)
    code, output = install(project)
    assert code == 0, output
    assert settings.is_symlink() and settings.resolve() == shared.resolve()
    assert "wrote through it to" in output and str(shared.resolve()) in output
    assert json.loads(shared.read_text())["hooks"]
    assert mode(shared) == 0o640


@pytest.mark.parametrize("target", ["missing", "folder", "device"])
def test_a_settings_link_to_anything_but_a_regular_file_is_refused(
    project: Path, target: str
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.unlink()
    pointed = {
        "missing": project.parent / "nowhere.json",
        "folder": project.parent,
        "device": Path("/dev/null"),
    }[target]
    settings.symlink_to(pointed)
    code, output = install(project, "--json")
    assert code != 0
    error = json.loads(output)["error"]
    assert error["fields"][0]["field"] == "settings"
    if target != "folder":  # a link to a folder is already refused when it is read
        assert error["fields"][0]["code"] == "unsafe_link"
    assert settings.is_symlink() and Path(os.readlink(settings)) == pointed
    assert not (project.parent / "nowhere.json").exists()


def test_a_link_to_another_users_file_is_refused(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to make a file owned by another user")
    other = tmp_path / "other.json"
    other.write_text("{}")
    os.chown(other, 65534, 65534)
    link = tmp_path / "settings.json"
    link.symlink_to(other)
    with pytest.raises(InvalidInput) as refused:
        atomic_file.write_atomically(link, '{"hooks": {}}\n')
    assert "another user owns" in refused.value.errors[0].message
    assert other.read_text() == "{}"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    assert git(path, "init", "-q").returncode == 0
    return path


def test_git_install_never_follows_a_planted_temporary_link(repo: Path, tmp_path: Path) -> None:
    hooks = repo / ".git" / "hooks"
    victim = tmp_path / "victim.sh"
    victim.write_text("#!/bin/sh\nexit 0\n")
    victim.chmod(0o600)
    (hooks / ".pre-commit.prism-tmp").symlink_to(victim)
    result = invoke("hooks", "install", "git", "--repo", str(repo), "--prism", PRISM)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "#!/bin/sh\nexit 0\n" and mode(victim) == 0o600
    assert "export-rules" in (hooks / "pre-commit").read_text()


def test_git_install_keeps_the_replaced_hooks_mode_and_stays_executable(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit").chmod(0o700)
    assert invoke("hooks", "install", "git", "--repo", str(repo), "--prism", PRISM).exit_code == 0
    assert mode(hooks / "pre-commit") == 0o700
    assert mode(hooks / CHAINED_NAME) == 0o700
