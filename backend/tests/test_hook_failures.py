"""Client hooks' failures counted in the store they read, shown by the server's ``/metrics``
(issue 29): hooks are processes of their own, so the failing process adds one to its hook's
count in the store (``hook_failure``), and a server on that store reads it at each scrape.
On both engines, with real hook processes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from prism_memory.bootstrap import build_store
from prism_memory.cli.hook_failures import count_failure
from prism_memory.settings import Settings, load_settings
from tests.api_world import ENGINES, World, world_on
from tests.cli_run import run_prism
from tests.test_domain_metrics import samples


def flags(settings: Settings) -> dict[str, str]:
    if settings.database_url:
        return {"database_url": settings.database_url}
    return {"db": str(settings.db_path())}


def migrated(settings: Settings) -> None:
    store = build_store(settings)
    try:
        store.migrate()
    finally:
        store.close()


def counts(settings: Settings) -> dict[str, int]:
    store = build_store(settings)
    try:
        return store.hook_failures().counts()
    finally:
        store.close()


def test_a_failure_is_counted_per_hook_in_the_store(engine_settings: Settings) -> None:
    store = build_store(engine_settings)
    try:
        store.migrate()
        assert store.hook_failures().counts() == {}
    finally:
        store.close()
    assert count_failure(flags(engine_settings), "guard")
    assert count_failure(flags(engine_settings), "guard")
    assert count_failure(flags(engine_settings), "brief")
    assert counts(engine_settings) == {"brief": 1, "guard": 2}


def test_what_cannot_reach_a_store_is_not_counted_and_makes_none(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    assert not count_failure({"db": str(missing)}, "brief")
    assert not missing.exists()  # no store is made to say that there was none
    unreachable = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1"
    assert not count_failure({"database_url": unreachable}, "brief")


def test_a_store_older_than_the_table_is_not_counted(tmp_path: Path) -> None:
    import sqlite3

    old = tmp_path / "old.db"
    sqlite3.connect(old).close()  # a file without Prism's schema: the hook says why on stderr
    assert not count_failure({"db": str(old)}, "guard")


def test_a_failing_background_capture_is_logged_and_counted(
    engine_settings: Settings, tmp_path: Path
) -> None:
    migrated(engine_settings)
    log = tmp_path / "capture.log"
    gone = tmp_path / "removed-before-the-run.jsonl"  # Claude Code removed the session file
    # the hook's background run, as `capture claude-code --hook` starts it
    args = ["capture", "claude-code", "--transcript", str(gone), "--log", str(log)]
    if engine_settings.database_url:
        args += ["--database-url", engine_settings.database_url]
    done = run_prism(engine_settings.db_path(), *args)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert "capture failed" in log.read_text()
    assert counts(engine_settings) == {"capture": 1}


def test_a_guard_that_fails_open_counts_its_failure(db_path: Path) -> None:
    settings = load_settings(db=db_path, embedder="fake", database_url="")
    migrated(settings)
    # a check the guard cannot judge: its stored JSON is not a list of checks
    rule = run_prism(
        db_path, "remember", "--kind", "memorule", "--memorule-kind", "behavioral_rule",
        "--subject", "No force pushes", "--body", "Never force-push to main.", "--scope",
        "project", "--json",
    )  # fmt: skip
    assert rule.returncode == 0, rule.stderr
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        conn.execute('UPDATE memory_state SET checks = \'{"not": "checks"}\'')
    hook_input = {
        "hook_event_name": "PreToolUse",
        "session_id": "5c1d7a2e-0b4f-4c8e-9a61-3f2e8d7c6b50",
        "cwd": str(db_path.parent),
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
    }
    guard = run_prism(db_path, "guard", "claude-code", stdin=json.dumps(hook_input))
    assert guard.returncode == 0 and guard.stdout == ""
    assert "failed open" in guard.stderr
    assert counts(settings) == {"guard": 1}


def test_a_brief_hook_that_fails_open_counts_its_failure(db_path: Path) -> None:
    settings = load_settings(db=db_path, embedder="fake", database_url="")
    migrated(settings)
    hook_input = {
        "hook_event_name": "SessionStart",
        "session_id": "5c1d7a2e-0b4f-4c8e-9a61-3f2e8d7c6b50",
        "cwd": str(db_path.parent),
        "source": "startup",
    }
    # a tenant setting that is not a slug: every session would start without its rules
    brief = run_prism(
        db_path, "brief", "--hook", "claude-code", stdin=json.dumps(hook_input),
        PRISM_TENANT="not a slug!",
    )  # fmt: skip
    assert brief.returncode == 0 and brief.stdout == ""
    assert "PRISM_TENANT" in brief.stderr
    assert counts(settings) == {"brief": 1}


@pytest.fixture(params=ENGINES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_on(request, tmp_path) as w:
        yield w


def test_metrics_show_every_hooks_failures_from_the_store(world: World) -> None:
    found = samples(world)
    for hook in ("brief", "guard", "capture", "adherence"):
        assert found[("prism_hook_failures_total", (("hook", hook),))] == 0
    assert count_failure(flags(world.settings), "capture")
    found = samples(world)
    assert found[("prism_hook_failures_total", (("hook", "capture"),))] == 1
    assert found[("prism_hook_failures_total", (("hook", "brief"),))] == 0


def test_metrics_answer_without_the_series_when_the_store_cannot_say(world: World) -> None:
    from tests.conftest import raw_sql

    raw_sql(world.services, "DROP TABLE hook_failure")  # as a store the counts cannot be read from
    response = world.client.get("/metrics")
    assert response.status_code == 200
    assert "prism_hook_failures" not in response.text
    assert "prism_served_receipts_pending" in response.text
