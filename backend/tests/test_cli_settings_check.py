"""Every CLI flag and ``PRISM_*`` variable is judged at start (issue #32, D9).

With the API's field errors (its codes), each naming the flag or variable the value came
from; nothing echoes the value itself. Undecodable bytes (which Python turns into lone
surrogates), C1 controls and U+001C–U+001F are refused in persona, surface and
specialization, as the API refuses them in its ``X-Prism-*`` headers. ``prism mcp`` with a
bad ``PRISM_PERSONA`` exits at start instead of serving (and hanging).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import BACKEND, run_prism

BAD = {
    "undecodable": b"don\xffna",
    "C1": "don\u0085na".encode(),
    "U+001C": b"don\x1cna",
}


def environ(db: Path, **extra: bytes) -> dict[bytes, bytes]:
    env = {
        os.fsencode(k): os.fsencode(v) for k, v in os.environ.items() if not k.startswith("PRISM_")
    }
    env[b"PRISM_DB"] = os.fsencode(db)
    env[b"PRISM_EMBEDDER"] = b"fake"
    env[b"PYTHONPATH"] = os.fsencode(BACKEND)
    env.update({k.encode(): v for k, v in extra.items()})
    return env


def prism(db: Path, *args: bytes, **env: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"prism_memory", *args],
        env=environ(db, **env),
        capture_output=True,
        timeout=120,
        check=False,
    )


def field_of(output: bytes) -> dict[str, object]:
    fields = json.loads(output)["error"]["fields"]
    assert len(fields) == 1, fields
    return dict(fields[0])


@pytest.mark.parametrize("flag", ["persona", "surface", "specialization"])
@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_context_flag_is_refused_naming_the_flag(db_path: Path, flag: str, bad: str) -> None:
    proc = prism(db_path, b"brief", b"--json", f"--{flag}".encode(), BAD[bad])
    assert proc.returncode == 2, proc
    field = field_of(proc.stdout)
    assert (field["field"], field["setting"]) == (flag, f"--{flag}")
    assert field["code"] in ("invalid_characters", "invalid_format")
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_context_variable_is_refused_naming_the_variable(db_path: Path, bad: str) -> None:
    proc = prism(db_path, b"recall", b"--json", PRISM_SURFACE=BAD[bad])
    assert proc.returncode == 2, proc
    field = field_of(proc.stdout)
    assert (field["field"], field["setting"]) == ("surface", "PRISM_SURFACE")
    assert str(field["message"]).startswith("PRISM_SURFACE: ")


def test_a_variable_that_no_command_reads_first_is_still_judged_at_start(db_path: Path) -> None:
    proc = run_prism(db_path, "recall", "--json", PRISM_PORT="not-a-port")
    assert proc.returncode == 2, proc.stdout
    assert json.loads(proc.stdout)["error"]["fields"][0]["setting"] == "PRISM_PORT"


@pytest.mark.parametrize("bad", list(BAD))
def test_prism_mcp_with_a_bad_persona_variable_refuses_at_start(db_path: Path, bad: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "prism_memory", "mcp"],
        env=environ(db_path, PRISM_PERSONA=BAD[bad]),
        stdin=subprocess.PIPE,  # left open: a server that started would wait on it
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 2 and out == b"", err
    field = field_of(err.strip().splitlines()[-1])
    assert (field["field"], field["setting"]) == ("persona", "PRISM_PERSONA")
