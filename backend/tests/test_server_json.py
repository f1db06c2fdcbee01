"""The MCP registry entry (``server.json`` at the repository's root) is valid against the
registry's published schema (a copy beside this test) and says what the package really is."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

import prism_memory

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).parent / "golden" / "mcp_registry" / "server.schema.2025-12-11.json"


def server() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "server.json").read_text())
    return loaded


def test_server_json_is_valid_against_the_registrys_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    entry = server()
    assert entry["$schema"] == schema["$id"]
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    assert [e.message for e in validator.iter_errors(entry)] == []


def test_a_broken_entry_is_refused_by_the_same_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    broken = server() | {"name": "no slash here", "description": "x" * 101}
    errors = {e.validator for e in Draft7Validator(schema).iter_errors(broken)}
    assert {"pattern", "maxLength"} <= errors


def test_the_entry_names_this_package_its_version_and_a_command_it_has() -> None:
    entry = server()
    project = tomllib.loads((ROOT / "backend" / "pyproject.toml").read_text())["project"]
    (package,) = entry["packages"]
    assert entry["version"] == package["version"] == prism_memory.__version__
    assert package["identifier"] == project["name"]
    # uvx runs the command named like the package: prism-memory, with `mcp` after it.
    assert package["runtimeHint"] == "uvx" and project["name"] in project["scripts"]
    assert [a["value"] for a in package["packageArguments"]] == ["mcp"]
    assert entry["repository"]["url"] == project["urls"]["Repository"]
    # PyPI packages prove ownership by naming the server in their README.
    assert f"mcp-name: {entry['name']}" in (ROOT / "README.md").read_text()
