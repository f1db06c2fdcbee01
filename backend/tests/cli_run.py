"""Run the ``prism`` CLI as a user does: a real subprocess, with a clean ``PRISM_*`` environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[1]


def run_prism(
    db: Path,
    *args: str,
    cwd: Path | None = None,
    fake: bool = True,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``python -m app ARGS`` on database ``db`` (the fake embedder unless ``fake=False``).

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
        [sys.executable, "-m", "app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        input=stdin,
        timeout=300,
        check=False,
    )
