"""Run the ``prism`` CLI with a clean ``PRISM_*`` environment: as a user does (a real
subprocess, :func:`run_prism`) or in this process with click's runner (:func:`invoke_prism`,
for argument and output tests: no interpreter start per call)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

BACKEND = Path(__file__).resolve().parents[1]


def run_prism(
    db: Path,
    *args: str,
    cwd: Path | None = None,
    fake: bool = True,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``python -m prism_memory ARGS`` on database ``db`` (the fake embedder unless ``fake=False``).

    The caller's ``PRISM_*`` variables are dropped so a developer's settings never leak in;
    ``env`` adds variables on top.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    environ.update(
        {
            "PRISM_DB": str(db),
            "PYTHONPATH": os.pathsep.join([str(BACKEND), environ.get("PYTHONPATH", "")]),
            "HF_HUB_OFFLINE": "1",
        }
    )
    if fake:
        environ["PRISM_EMBEDDER"] = "fake"
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "prism_memory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        input=stdin,
        timeout=300,
        check=False,
    )


def invoke_prism(
    db: Path,
    *args: str,
    cwd: Path | None = None,
    fake: bool = True,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``prism ARGS`` on database ``db`` in this process, with what :func:`run_prism` sets.

    The result has a subprocess's shape (``returncode``, ``stdout``, ``stderr``), so a test
    reads the same either way. Exceptions other than ``SystemExit`` propagate. ``cwd``: the
    working directory while it runs (restored after; each xdist worker is its own process).
    """
    from prism_memory.cli.main import cli

    environ: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PRISM_")}
    environ.update({"PRISM_DB": str(db), "HF_HUB_OFFLINE": "1"})
    if fake:
        environ["PRISM_EMBEDDER"] = "fake"
    environ.update(env)
    with contextlib.chdir(cwd or Path.cwd()):
        result = CliRunner().invoke(
            cli, list(args), input=stdin, env=environ, prog_name="prism", catch_exceptions=False
        )
    return subprocess.CompletedProcess(
        ["prism", *args], result.exit_code, result.stdout, result.stderr
    )
