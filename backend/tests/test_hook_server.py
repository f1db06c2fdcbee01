"""The Claude Code hooks ask the store's running ``prism serve`` instead of loading the model.

Real things only: a real SQLite file, ``prism serve`` as a subprocess, and the hook command
``prism hooks install`` writes (``python -P -m prism_memory brief --hook claude-code``) as a
subprocess fed the hook input Claude Code documents. The server's ``/metrics`` says whether
it answered a hook; the served receipts are read back from the store.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from prism_memory.bootstrap import build_services, context_of
from prism_memory.cli.claude_subagent import subagent_session
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.services import local_serve
from prism_memory.services.project_config import session_uuid
from prism_memory.settings import load_settings
from prism_memory.trigraph.ledger import ServedFilter
from tests.cli_run import BACKEND
from tests.test_api_server import Server, create_key, free_port
from tests.test_brief_hook import hook_input, rule

ROUTE = "/v1/hooks/claude-code"
PROMPT = "review the schema migration and its downgrade"
RULES = [
    ("Run the tests before pushing", "Always run make test before you push a branch."),
    ("Migrations are reversible", "Every schema migration ships with its downgrade."),
    ("Type hints everywhere", "Every public function has type hints."),
    ("No print in library code", "Use the logger, never print, in library modules."),
]


def write_rules(db: Path, rules: list[tuple[str, str]]) -> list[str]:
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        ctx = context_of("default", "default", persona="donna")
        return [
            str(
                services.memory.writes.remember(
                    ctx, validate_remember(rule(s, b, {"scope": "project"}))
                ).id
            )
            for s, b in rules
        ]
    finally:
        services.close()


def hook_env(db: Path, state: Path, **env: str) -> dict[str, str]:
    """The environment a hook runs in here: this store, the fake model, no other PRISM_*."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    environ.update(
        PRISM_DB=str(db),
        PRISM_EMBEDDER="fake",
        PRISM_PERSONA="donna",
        PRISM_HOOK_STATE_DIR=str(state),
        PYTHONPATH=str(BACKEND),
        HF_HUB_OFFLINE="1",
    )
    environ.update(env)
    return environ


def hook(
    db: Path, stdin: str, state: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """The installed hook command, as Claude Code runs it."""
    environ = hook_env(db, state, **env)
    return subprocess.run(
        [sys.executable, "-P", "-m", "prism_memory", "brief", "--hook", "claude-code", *args],
        input=stdin,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def hook_hits(server: Server, status: int = 200) -> int:
    """How many hook calls the server answered with ``status`` (its Prometheus counter)."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    pattern = (
        rf'prism_http_requests_total\{{[^}}]*route="{ROUTE}"[^}}]*status="{status}"[^}}]*\}} (\S+)'
    )
    found = re.findall(pattern, text)
    return int(sum(float(x) for x in found))


def calls(session: str) -> list[tuple[str, str]]:
    """The three hook calls, (event, stdin), each in its own Claude session (``session``
    with ``-start``, ``-prompt``, ``-sub``): a prompt in a session already briefed would
    add nothing."""
    sub = {"agent_id": "a1", "agent_type": "reviewer"}
    return [
        ("SessionStart", hook_input(session_id=f"{session}-start")),
        (
            "UserPromptSubmit",
            hook_input("UserPromptSubmit", session_id=f"{session}-prompt", prompt=PROMPT),
        ),
        ("SubagentStart", hook_input("SubagentStart", session_id=f"{session}-sub", **sub)),
    ]


def state_files(folder: Path) -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, list[str]]]:
    db = tmp_path_factory.mktemp("hookserve") / "prism.db"
    ids = write_rules(db, RULES)
    server = Server(db)
    try:
        yield server, db, ids
    finally:
        assert server.stop() == 0, server.log.read_text()


def test_serve_writes_a_private_discovery_file_naming_its_store(
    served: tuple[Server, Path, list[str]],
) -> None:
    server, db, _ = served
    path = local_serve.discovery_path(db, None)
    assert path == db.with_name("prism.db.serve.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    found = local_serve.discover(db, None)
    assert found is not None
    assert (found.host, found.port, found.pid) == ("127.0.0.1", server.port, server.proc.pid)
    assert found.store == str(db.resolve())
    assert found.token.startswith(local_serve.TOKEN_PREFIX)


def test_the_server_answers_as_the_hook_would_in_process(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, _ = served
    # In-process: the same store with the discovery file out of the way (the server's token
    # kept aside), so the hook finds no server.
    path = local_serve.discovery_path(db, None)
    aside = tmp_path / "aside.json"
    path.rename(aside)
    try:
        alone = [hook(db, stdin, tmp_path / "alone") for _, stdin in calls("alone-session")]
    finally:
        aside.rename(path)
    before = hook_hits(server)
    asked = [hook(db, stdin, tmp_path / "asked") for _, stdin in calls("alone-session")]
    assert hook_hits(server) == before + 3  # the server answered all three
    for (event, _), here, there in zip(calls("x"), alone, asked, strict=True):
        assert here.returncode == there.returncode == 0
        assert there.stderr == "", there.stderr
        assert json.loads(there.stdout)["hookSpecificOutput"]["hookEventName"] == event
        assert there.stdout == here.stdout
    # the briefed state (what the prompt hook will not repeat) is the same too
    assert state_files(tmp_path / "alone") == state_files(tmp_path / "asked")


def test_the_prompt_hook_skips_what_the_session_was_given_through_the_server(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, _ = served
    state = tmp_path / "state"
    start = hook(db, hook_input(session_id="given"), state)
    assert start.returncode == 0 and start.stdout, start.stderr
    before = hook_hits(server)
    prompt = hook(db, hook_input("UserPromptSubmit", session_id="given", prompt=PROMPT), state)
    assert hook_hits(server) == before + 1
    assert (prompt.returncode, prompt.stdout) == (0, "")
    assert "already given in this session" in prompt.stderr


def test_served_receipts_are_recorded_by_the_server_under_the_session(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, ids = served
    claude = "receipts-session"
    before = hook_hits(server)
    for _, stdin in calls(claude):
        assert hook(db, stdin, tmp_path / "state").returncode == 0
    assert hook_hits(server) == before + 3
    start = session_uuid("claude-code", f"{claude}-start")
    prompt = session_uuid("claude-code", f"{claude}-prompt")
    subagent = subagent_session("claude-code", f"{claude}-sub", "a1")
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        ctx = context_of("default", "default", persona="donna")
        found: dict[UUID, set[tuple[str, str]]] = {}
        for _ in range(300):  # the server writes receipts in the background: wait for them
            for sid in (start, prompt, subagent):
                page = services.ledger.served(ctx, ServedFilter(session_id=sid))
                found[sid] = {(r.tool, str(r.memorule_id)) for r in page.receipts}
            if all(found.values()):
                break
            time.sleep(0.1)
    finally:
        services.close()
    assert found[start] == {("memorule_brief", i) for i in ids}
    assert {t for t, _ in found[prompt]} == {"semantic_recall"}
    assert {m for _, m in found[prompt]} <= set(ids)
    assert {t for t, _ in found[subagent]} == {"memorule_brief"}
    assert {m for _, m in found[subagent]} == set(ids)  # four rules fit the subagent's budget


def touch_input(session: str, path: str = "/repo/db/migrations/0042_downgrade.py") -> str:
    return hook_input(
        "PreToolUse",
        session_id=session,
        cwd="/repo",
        tool_name="Read",
        tool_input={"file_path": path},
    )


def test_a_first_touch_is_answered_by_the_server_and_a_repeat_asks_nobody(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, ids = served
    args = ("--touch-relevance", "0")  # the fake embedder: rank, do not judge
    path = local_serve.discovery_path(db, None)
    aside = tmp_path / "aside.json"
    path.rename(aside)
    try:
        alone = hook(db, touch_input("touching"), tmp_path / "alone", *args)
    finally:
        aside.rename(path)
    before = hook_hits(server)
    asked = hook(db, touch_input("touching"), tmp_path / "asked", *args)
    assert hook_hits(server) == before + 1
    assert asked.stderr == "" and asked.stdout == alone.stdout
    out = json.loads(asked.stdout)["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "additionalContext"}  # no permission decision
    assert out["additionalContext"].startswith("## Memorules for db/migrations/0042_downgrade.py")
    assert state_files(tmp_path / "alone") == state_files(tmp_path / "asked")
    (state,) = state_files(tmp_path / "asked").values()
    assert state["touched"] == ["db/migrations/0042_downgrade.py"]
    assert len(state["briefed"]) == 2 and set(state["briefed"]) <= set(ids)
    # the same file again: known from the state, the server is not asked
    again = hook(db, touch_input("touching"), tmp_path / "asked", *args)
    assert hook_hits(server) == before + 1
    assert again.stdout == "" and "touched before" in again.stderr
    # the receipts are the server's, under the session
    session = session_uuid("claude-code", "touching")
    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        ctx = context_of("default", "default", persona="donna")
        tools: set[str] = set()
        for _ in range(300):  # written in the background
            page = services.ledger.served(ctx, ServedFilter(session_id=session))
            tools = {r.tool for r in page.receipts}
            if tools:
                break
            time.sleep(0.1)
    finally:
        services.close()
    assert tools == {"semantic_recall"}


def test_the_hook_route_refuses_a_missing_or_wrong_token_and_api_keys(
    served: tuple[Server, Path, list[str]],
) -> None:
    server, db, _ = served
    found = local_serve.discover(db, None)
    assert found is not None
    body = {
        "event": "SessionStart",
        "store": found.store,
        "context": {"session_id": str(UUID(int=1))},
    }
    key = create_key(db, "--tenant", "default", "--role", "admin")
    for headers in (
        {},
        {"Authorization": "Bearer prism_hook_wrong"},
        {"Authorization": f"Bearer {key}"},
    ):
        answer = httpx.post(f"{server.url}{ROUTE}", json=body, headers=headers, timeout=30)
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "unauthenticated"
    # ...and the token opens nothing else
    whoami = httpx.get(
        f"{server.url}/v1/whoami", headers={"Authorization": f"Bearer {found.token}"}, timeout=30
    )
    assert whoami.status_code == 401
    ok = httpx.post(
        f"{server.url}{ROUTE}",
        json=body,
        headers={"Authorization": f"Bearer {found.token}"},
        timeout=30,
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["answer"]["context"].startswith("# Memorules that apply")


def test_a_bad_hook_request_gets_every_field_error(served: tuple[Server, Path, list[str]]) -> None:
    server, db, _ = served
    found = local_serve.discover(db, None)
    assert found is not None
    body = {
        "event": "Stop",
        "store": found.store,
        "context": {"session_id": "s", "tenant": ""},
        "options": {
            "top_k": 0,
            "min_relevance": 2,
            "colour": "red",
            "touch_rules": 11,
            "touch_relevance": True,
        },
        "briefed": "all",
        "extra": 1,
    }
    answer = httpx.post(
        f"{server.url}{ROUTE}",
        json=body,
        headers={"Authorization": f"Bearer {found.token}"},
        timeout=30,
    )
    assert answer.status_code == 422, answer.text
    fields = {(f["field"], f["code"]) for f in answer.json()["error"]["fields"]}
    assert fields == {
        ("extra", "unknown_field"),
        ("event", "invalid_choice"),
        ("context.tenant", "invalid_format"),
        ("options.colour", "unknown_field"),
        ("options.top_k", "out_of_range"),
        ("options.min_relevance", "out_of_range"),
        ("options.touch_rules", "out_of_range"),
        ("options.touch_relevance", "out_of_range"),
        ("briefed", "invalid_format"),
    }
    bad_session = httpx.post(
        f"{server.url}{ROUTE}",
        json={**body, "event": "SessionStart", "options": {}, "briefed": [], "extra": None}
        | {"context": {"session_id": "not-a-uuid"}},
        headers={"Authorization": f"Bearer {found.token}"},
        timeout=30,
    )
    assert bad_session.status_code == 422


def test_a_wrong_token_in_the_file_falls_back_to_the_same_answer(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, _ = served
    path = local_serve.discovery_path(db, None)
    original = path.read_text()
    expected = [hook(db, stdin, tmp_path / "a") for _, stdin in calls("wrong-token")]
    forged = json.loads(original) | {"token": "prism_hook_not-the-one"}
    path.write_text(json.dumps(forged))
    try:
        before = hook_hits(server, 401)
        got = [hook(db, stdin, tmp_path / "b") for _, stdin in calls("wrong-token")]
        assert hook_hits(server, 401) == before + 3
    finally:
        path.write_text(original)
    for here, there in zip(expected, got, strict=True):
        assert there.returncode == 0
        assert "the server refused: 401 unauthenticated; answering in-process" in there.stderr
        assert there.stdout == here.stdout


def test_a_server_of_another_store_is_not_used(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, other_db, _ = served
    db = tmp_path / "mine" / "prism.db"
    db.parent.mkdir()
    mine = write_rules(db, [("Only in my store", "A rule the other store does not hold.")])
    expected = hook(db, hook_input(session_id="mine"), tmp_path / "a")
    assert mine[0] in expected.stdout
    # A discovery file beside my store naming the other store's server, its token, and my
    # store: the server knows it serves another store and refuses.
    theirs = json.loads(local_serve.discovery_path(other_db, None).read_text())
    planted = local_serve.discovery_path(db, None)
    planted.write_text(json.dumps(theirs | {"store": str(db.resolve())}))
    planted.chmod(0o600)
    before = hook_hits(server, 409)
    got = hook(db, hook_input(session_id="mine"), tmp_path / "b")
    assert hook_hits(server, 409) == before + 1
    assert "the server refused: 409 conflict; answering in-process" in got.stderr
    assert got.stdout == expected.stdout
    # Naming the other store as it is: the hook does not even ask.
    planted.write_text(json.dumps(theirs))
    before = hook_hits(server)
    again = hook(db, hook_input(session_id="mine"), tmp_path / "c")
    assert hook_hits(server) == before
    assert again.stdout == expected.stdout and again.stderr == ""


def test_a_file_others_may_read_is_not_trusted(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    server, db, _ = served
    path = local_serve.discovery_path(db, None)
    path.chmod(0o644)
    try:
        assert local_serve.discover(db, None) is None
        before = hook_hits(server)
        proc = hook(db, hook_input(session_id="readable"), tmp_path / "state")
        assert hook_hits(server) == before
        assert proc.returncode == 0 and proc.stdout.startswith('{"hookSpecificOutput"')
    finally:
        path.chmod(0o600)


def test_nothing_listening_falls_back_in_process(tmp_path: Path) -> None:
    db = tmp_path / "prism.db"
    write_rules(db, RULES)
    expected = hook(db, hook_input(session_id="down"), tmp_path / "a")
    # A file of a live process of ours (this test) whose port nobody listens on.
    port = free_port()
    published = local_serve.publish(db, None, "127.0.0.1", port)
    assert published.pid == os.getpid()
    got = hook(db, hook_input(session_id="down"), tmp_path / "b")
    assert got.returncode == 0
    assert f"cannot reach the server at 127.0.0.1:{port}" in got.stderr
    assert got.stdout == expected.stdout


def test_a_stopped_server_removes_its_file_and_a_killed_one_is_not_asked(
    tmp_path: Path,
) -> None:
    db = tmp_path / "prism.db"
    write_rules(db, RULES)
    path = local_serve.discovery_path(db, None)
    server = Server(db)
    assert path.is_file()
    assert server.stop() == 0
    assert not path.exists()  # SIGTERM: removed at exit
    server = Server(db)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=60)
    server.stop()
    assert path.is_file()  # left behind; its process is gone
    assert local_serve.discover(db, None) is None
    got = hook(db, hook_input(session_id="killed"), tmp_path / "b")
    assert got.returncode == 0 and got.stderr == "" and got.stdout.startswith("{")


def test_no_hook_file_writes_none(tmp_path: Path) -> None:
    db = tmp_path / "prism.db"
    write_rules(db, RULES)
    server = Server(db, "--no-hook-file")
    try:
        assert not local_serve.discovery_path(db, None).exists()
    finally:
        assert server.stop() == 0


@pytest.mark.postgres
def test_a_postgresql_store_is_served_too(pg_url: str, tmp_path: Path) -> None:
    """The discovery file of a PostgreSQL store is in the user data directory, named by the
    URL's digest (the URL, which may hold a password, is not written)."""
    services = build_services(load_settings(database_url=pg_url, embedder="fake"))
    try:
        ctx = context_of("default", "default", persona="donna")
        for subject, body in RULES:
            services.memory.writes.remember(
                ctx, validate_remember(rule(subject, body, {"scope": "project"}))
            )
    finally:
        services.close()
    db = tmp_path / "unused.db"
    env = {"PRISM_DATABASE_URL": pg_url, "XDG_DATA_HOME": str(tmp_path / "data")}
    expected = [hook(db, stdin, tmp_path / "a", **env) for _, stdin in calls("pg")]
    server = Server(db, "--database-url", pg_url, XDG_DATA_HOME=env["XDG_DATA_HOME"])
    try:
        files = list((tmp_path / "data" / "prism-memory").glob("serve-*.json"))
        assert len(files) == 1 and pg_url not in files[0].read_text()
        before = hook_hits(server)
        got = [hook(db, stdin, tmp_path / "b", **env) for _, stdin in calls("pg")]
        assert hook_hits(server) == before + 3
    finally:
        assert server.stop() == 0, server.log.read_text()
    assert not files[0].exists()
    for here, there in zip(expected, got, strict=True):
        assert there.stderr == "" and there.stdout.startswith('{"hookSpecificOutput"')
        assert there.stdout == here.stdout


def test_the_fast_path_reads_the_brief_flags_and_leaves_the_rest_to_the_cli() -> None:
    from prism_memory.cli.claude_hook_fast import parse_flags

    assert parse_flags([]) == {}
    assert parse_flags(
        ["--db", "x.db", "--persona=donna", "--min-relevance", "0.3", "--prompt-rules", "2"]
    ) == {"db": "x.db", "persona": "donna", "min_relevance": 0.3, "prompt_rules": 2}
    assert parse_flags(["--touch-rules", "0", "--touch-relevance=0.4"]) == {
        "touch_rules": 0,
        "touch_relevance": 0.4,
    }
    for argv in (
        ["--no-such-flag", "1"],  # unknown
        ["--prompt-rules", "11"],  # out of range
        ["--touch-rules", "11"],
        ["--touch-relevance", "1.5"],
        ["--top-k", "many"],  # not a number
        ["--persona"],  # no value
        ["--json"],  # a CLI flag the hook does not take
    ):
        assert parse_flags(argv) is None, argv


def test_install_writes_the_fast_form_for_every_brief_hook(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from prism_memory.cli.main import cli

    args = ["hooks", "install", "claude-code", "--project-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, [*args, "--on-prompt", "--on-subagent", "--on-touch"])
    assert result.exit_code == 0, result.output
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    fast = f"{sys.executable} -P -m prism_memory brief --hook claude-code"
    for event in ("SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse"):
        assert [h["command"] for g in hooks[event] for h in g["hooks"]] == [fast]
    # --prism names the executable: the brief runs it, as before (updated in place)
    result = CliRunner().invoke(cli, [*args, "--on-prompt", "--prism", "prism"])
    assert result.exit_code == 0, result.output
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert [h["command"] for g in hooks["UserPromptSubmit"] for h in g["hooks"]] == [
        "prism brief --hook claude-code"
    ]


def test_context_values_are_judged_as_the_settings_judge_them(
    served: tuple[Server, Path, list[str]], tmp_path: Path
) -> None:
    """A persona with blanks around it is the trimmed persona on both paths (the brief names
    it); one with a control character is refused by the server, and the in-process hook then
    says why, as it always did."""
    server, db, _ = served
    path = local_serve.discovery_path(db, None)
    stdin = hook_input(session_id="blanks")
    aside = tmp_path / "aside.json"
    path.rename(aside)
    try:
        alone = hook(db, stdin, tmp_path / "a", PRISM_PERSONA="  donna ")
    finally:
        aside.rename(path)
    assert "persona donna" in alone.stdout
    before = hook_hits(server)
    asked = hook(db, stdin, tmp_path / "b", PRISM_PERSONA="  donna ")
    assert hook_hits(server) == before + 1
    assert (asked.stdout, asked.stderr) == (alone.stdout, "")
    before = hook_hits(server, 422)
    bad = hook(db, stdin, tmp_path / "c", PRISM_PERSONA="don\x07na")
    assert hook_hits(server, 422) == before + 1
    assert bad.stdout == ""
    assert "the server refused: 422 validation_failed; answering in-process" in bad.stderr
    assert "skipped:" in bad.stderr
