"""What a hook derives from the project: the session a client's session maps to, and the
surface its marker files name."""

from __future__ import annotations

import uuid
from pathlib import Path
from uuid import UUID

import pytest

from prism_memory.services.project_config import (
    CLIENT_SESSION_NAMESPACE,
    find_project_config,
    session_uuid,
    uuid5,
)

CLAUDE_SESSION = "00893aaf-19fa-41d2-8238-13269b9b3ca0"


def test_a_session_id_that_is_not_a_uuid_maps_to_the_same_session_every_time() -> None:
    first = session_uuid("claude-code", "abc123")
    assert first == session_uuid("claude-code", "abc123")
    assert first != session_uuid("claude-code", "abc124")
    assert session_uuid("claude-code", CLAUDE_SESSION) == UUID(CLAUDE_SESSION)
    # the documented mapping, uuid5 of "client:id" (computed without hashlib, as uuid5 does)
    assert first == uuid.uuid5(CLIENT_SESSION_NAMESPACE, "claude-code:abc123")


@pytest.mark.parametrize("name", ["", "a", "claude-code:s1/subagent/agent-1", "é" * 500])
def test_uuid5_is_the_standard_librarys(name: str) -> None:
    for namespace in (CLIENT_SESSION_NAMESPACE, uuid.NAMESPACE_DNS):
        assert uuid5(namespace, name) == uuid.uuid5(namespace, name)


@pytest.mark.parametrize(
    ("markers", "surface"),
    [
        (["pyproject.toml"], "python"),
        (["package.json"], "javascript"),
        (["package.json", "tsconfig.json"], "typescript"),
        (["go.mod"], "go"),
        (["pyproject.toml", "go.mod"], None),
        ([], None),
    ],
)
def test_the_surface_is_derived_only_when_the_marker_files_name_one(
    tmp_path: Path, markers: list[str], surface: str | None
) -> None:
    (tmp_path / ".git").mkdir()
    for name in markers:
        (tmp_path / name).write_text("")
    assert find_project_config(tmp_path).derived_surface() == surface
