"""The release: ``python -m build`` makes an sdist and a wheel that ``twine check`` passes and
that carry the licences; the wheel installs into a fresh virtual environment (the core, then
``[server,postgres]``) and runs there as a user runs it; ``uvx --from WHEEL prism`` works.

The fresh environments are made with uv, which installs from its cache without the network
when it already holds every wheel (``--offline``) and downloads only what it lacks otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

import prism_memory
from prism_memory.cli.main import cli
from tests.test_api_server import free_port

BACKEND = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def test_the_version_lives_in_one_place_and_prism_version_prints_it() -> None:
    project = tomllib.loads((BACKEND / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "prism_memory.version.VERSION"}
    result = CliRunner().invoke(cli, ["--version"])
    assert result.output == f"prism, version {prism_memory.__version__}\n"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` (no isolation: the dev environment's setuptools, no network)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(BACKEND)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("prism_memory-*.whl")
    return wheel


@pytest.mark.slow
def test_the_sdist_and_wheel_pass_twine_check_and_carry_the_licences(dist: Path) -> None:
    files = sorted(dist.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"]
    checked = subprocess.run(
        [str(BIN / "twine"), "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    version = prism_memory.__version__
    with zipfile.ZipFile(wheel_of(dist)) as wheel:
        names = set(wheel.namelist())
        meta = wheel.read(f"prism_memory-{version}.dist-info/METADATA").decode()
        licence = wheel.read(f"prism_memory-{version}.dist-info/licenses/LICENSE").decode()
    assert "Apache License" in licence and "Version 2.0" in licence
    info = f"prism_memory-{version}.dist-info/licenses/"
    assert {info + "NOTICE", info + "THIRD_PARTY_NOTICES.md"} <= names
    assert "prism_memory/embeddings/data/all-MiniLM-L6-v2/tokenizer.json" in names
    assert "prism_memory/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "app/"))]
    for line in (
        "License-Expression: Apache-2.0",
        "Description-Content-Type: text/markdown",
        "Project-URL: Repository,",
        "Classifier: Programming Language :: Python :: 3.11",
        "Provides-Extra: server",
        "Provides-Extra: postgres",
    ):
        assert line in meta, line


def uv(*args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    """uv from the dev environment: offline first (its cache), the index when that fails."""
    for network in ("--offline", None):
        argv = [str(BIN / "uv"), *args] + ([network] if network else [])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode == 0:
            return proc
    raise AssertionError(proc.stderr)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No ``PRISM_*`` and no ``PYTHONPATH``: only what the fresh environment installed."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PRISM_", "VIRTUAL_ENV")) and k != "PYTHONPATH"
    }
    env.update(XDG_DATA_HOME=str(home / "data"), HF_HUB_OFFLINE="1", **extra)
    return env


def prism(venv: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "prism"), *args],
        env=env,
        cwd=venv.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def remember_and_recall(venv: Path, env: dict[str, str], *where: str) -> None:
    """With the real model from the installed wheels: write a rule, find it by meaning."""
    written = prism(
        venv, env, "remember", *where, "--kind", "memorule",
        "--memorule-kind", "behavioral_rule", "--subject", "Run the tests before pushing",
        "--body", "Always run the full test suite locally before pushing a branch.",
        "--for-persona", "donna", "--persona", "frank", "--json",
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    rule_id = json.loads(written.stdout)["id"]
    recalled = prism(
        venv, env, "recall", "about to push my branch", *where, "--persona", "donna", "--json"
    )
    assert recalled.returncode == 0, recalled.stderr
    assert json.loads(recalled.stdout)["matches"][0]["id"] == rule_id


def mcp_tools(venv: Path, env: dict[str, str]) -> set[str]:
    async def listed() -> set[str]:
        params = StdioServerParameters(command=str(venv / "bin" / "prism"), args=["mcp"], env=env)
        async with Client(params) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    return anyio.run(listed)


def serve_until_ready(venv: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    port = free_port()
    log = venv.parent / f"serve-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(venv / "bin" / "prism"), "serve", "--insecure-local", "--port", str(port), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(1200):  # bounded tries: a cold start loads the model
                assert proc.poll() is None, log.read_text()
                try:
                    ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1)
                    if ready.status_code == 200:
                        health: dict[str, object] = ready.json()
                        return health
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            raise AssertionError("prism serve did not become ready:\n" + log.read_text())
        finally:
            proc.terminate()
            proc.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.postgres
def test_the_wheel_installs_in_a_fresh_venv_core_then_server_and_postgres(
    dist: Path, tmp_path: Path, pg_url: str
) -> None:
    wheel = wheel_of(dist)
    venv = tmp_path / "venv"
    uv("venv", "--quiet", "--python", sys.executable, str(venv))
    python = ["--python", str(venv / "bin" / "python")]
    uv("pip", "install", "--quiet", *python, str(wheel))
    env = clean_env(tmp_path)

    version = prism(venv, env, "--version")
    assert version.stdout == f"prism, version {prism_memory.__version__}\n"
    remember_and_recall(venv, env)
    assert {"prism_remember", "semantic_recall", "memorule_brief"} <= mcp_tools(venv, env)
    no_server = prism(venv, env, "serve", "--insecure-local")
    assert no_server.returncode != 0
    assert "pip install 'prism-memory[server]'" in no_server.stderr

    uv("pip", "install", "--quiet", *python, f"{wheel}[server,postgres]")
    assert serve_until_ready(venv, env)["ready"] is True
    remember_and_recall(venv, env, "--database-url", pg_url)


@pytest.mark.slow
def test_uvx_runs_prism_from_the_wheel(dist: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path, UV_TOOL_DIR=str(tmp_path / "tools"))
    for network in ("--offline", None):
        argv = [str(BIN / "uvx"), *([network] if network else []), "--from", str(wheel_of(dist))]
        proc = subprocess.run(
            [*argv, "prism", "remember", "--body", "uvx works", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if proc.returncode == 0:
            break
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "note"
    # The command named like the package, which `uvx prism-memory mcp` (server.json) runs.
    alias = subprocess.run(
        [*argv, "prism-memory", "--version"], env=env, capture_output=True, text=True, timeout=900
    )
    assert alias.stdout == f"prism, version {prism_memory.__version__}\n", alias.stderr
