"""Prism's git ``pre-commit`` hook: refuse a commit while a checked-in rule file (AGENTS.md,
CLAUDE.md, ``.cursor/rules/prism-*.mdc``) no longer matches what ``prism export-rules``
would write, for clients that read rule files and have no hooks (Cursor, Codex, Aider).

An existing ``pre-commit`` that is not Prism's is never overwritten: it is renamed to
``pre-commit.before-prism`` and Prism's hook runs it first (its failure stops the commit).
Uninstall removes Prism's hook and puts the original back.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from prism_memory.errors import FieldError, InvalidInput
from prism_memory.services.atomic_file import write_atomically

MARKER: Final = "# prism-memory pre-commit hook (prism hooks install git)"
CHAINED_NAME: Final = "pre-commit.before-prism"
# `prism export-rules --check` exits with this when it cannot check (no store): the hook
# warns and lets the commit through, so a teammate without Prism can still commit.
EXIT_CANNOT_CHECK: Final = 3


@dataclass(frozen=True)
class Check:
    """One rule file set the hook checks: ``prism export-rules --check`` with these args."""

    fmt: str
    out: str
    context: tuple[str, ...] = ()  # e.g. ("--persona", "donna", "--project", "x")

    def args(self) -> list[str]:
        return ["export-rules", "--check", "--format", self.fmt, "--out", self.out, *self.context]


@dataclass(frozen=True)
class GitHookChange:
    """What install/uninstall did: the hook path, and what happened to an existing hook."""

    path: Path
    action: str  # installed | updated | unchanged | removed | absent
    chained: Path | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "path": str(self.path),
            "action": self.action,
            "chained": str(self.chained) if self.chained else None,
        }


def hooks_dir(repo: Path) -> Path:
    """The repository's hooks folder (honours ``core.hooksPath``).

    Raises:
        InvalidInput: ``repo`` is not inside a git work tree, or git is not installed.
    """
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--git-path", "hooks"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except OSError as exc:
        raise InvalidInput(
            [FieldError("repo", "git_unavailable", f"cannot run git: {exc}")]
        ) from None
    if proc.returncode != 0:
        raise InvalidInput(
            [FieldError("repo", "not_a_git_repository", f"{repo}: {proc.stderr.strip()}")]
        )
    path = Path(proc.stdout.strip())
    return path if path.is_absolute() else (repo / path)


def script(prism: str, checks: Sequence[Check]) -> str:
    """The hook's text: run the chained hook, then each check; any failure stops the commit."""
    lines = [
        "#!/bin/sh",
        MARKER,
        "# Remove with: prism hooks uninstall git",
        'here=$(dirname "$0")',
        f'if [ -x "$here/{CHAINED_NAME}" ]; then',
        f'  "$here/{CHAINED_NAME}" "$@" || exit $?',
        "fi",
        f"prism={shlex.quote(prism)}",
        'if ! command -v "$prism" >/dev/null 2>&1; then',
        '  echo "prism pre-commit: $prism not found; rule files not checked" >&2',
        "  exit 0",
        "fi",
        "status=0",
    ]
    for check in checks:
        args = " ".join(shlex.quote(a) for a in check.args())
        lines += [
            f'"$prism" {args}',
            "code=$?",
            f'if [ "$code" -eq {EXIT_CANNOT_CHECK} ]; then',
            '  echo "prism pre-commit: could not check (see above); commit allowed" >&2',
            'elif [ "$code" -ne 0 ]; then',
            "  status=1",
            "fi",
        ]
    lines += [
        'if [ "$status" -ne 0 ]; then',
        '  echo "prism pre-commit: rule files are stale. Re-export them (prism export-rules'
        ' --format F --out DIR) and git add them, or commit with --no-verify." >&2',
        "fi",
        'exit "$status"',
    ]
    return "\n".join(lines) + "\n"


def is_ours(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return MARKER in handle.read(4096)
    except OSError:
        return False


def install(repo: Path, prism: str, checks: Sequence[Check]) -> GitHookChange:
    """Install (or update) Prism's ``pre-commit`` hook in ``repo``.

    Raises:
        InvalidInput: not a git repository; no checks; or a chained hook already exists
            beside a hook that is not Prism's (nothing is written then).
    """
    if not checks:
        raise InvalidInput([FieldError("format", "missing", "give at least one --format")])
    folder = hooks_dir(repo)
    hook = folder / "pre-commit"
    chained = folder / CHAINED_NAME
    text = script(prism, checks)
    if hook.exists() and is_ours(hook):
        if hook.read_text(encoding="utf-8") == text:
            return GitHookChange(hook, "unchanged", chained if chained.exists() else None)
        write_atomically(hook, text, executable=True, field="hook")
        return GitHookChange(hook, "updated", chained if chained.exists() else None)
    moved = None
    if hook.exists() or hook.is_symlink():
        if chained.exists() or chained.is_symlink():
            raise InvalidInput(
                [
                    FieldError(
                        "hook",
                        "chain_occupied",
                        f"{hook} is not Prism's and {chained} already exists; "
                        "move one of them first",
                    )
                ]
            )
        os.replace(hook, chained)
        moved = chained
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(hook, text, executable=True, field="hook", like=moved)
    return GitHookChange(hook, "installed", moved)


def uninstall(repo: Path) -> GitHookChange:
    """Remove Prism's ``pre-commit`` hook from ``repo`` and restore the hook it chained to.

    A ``pre-commit`` that is not Prism's is left alone (``absent``).

    Raises:
        InvalidInput: not a git repository.
    """
    folder = hooks_dir(repo)
    hook = folder / "pre-commit"
    chained = folder / CHAINED_NAME
    if not hook.exists() or not is_ours(hook):
        return GitHookChange(hook, "absent")
    hook.unlink()
    if chained.exists() or chained.is_symlink():
        os.replace(chained, hook)
        return GitHookChange(hook, "removed", chained)
    return GitHookChange(hook, "removed")
