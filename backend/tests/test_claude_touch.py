"""``prism brief --hook claude-code`` at Claude Code's ``PreToolUse``: a session's first touch of
a file gives the rules for its path, once.

The hook runs as Claude Code runs it: a real subprocess of the installed command fed the hook
input Claude Code documents, on a real SQLite file; the served receipts are read back from
the store, the briefed state from its files.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import build_services
from prism_memory.cli.claude_touch import NotATouch, relative_path, touched_file
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.services.briefed_state import BriefedState
from prism_memory.services.claude_settings import TOUCH_MATCHER
from prism_memory.services.hook_answers import path_query
from prism_memory.settings import load_settings
from tests.cli_run import invoke_prism
from tests.test_brief_hook import CLAUDE_SESSION, hook_input, ids_in, rule
from tests.test_hook_server import hook as installed_hook
from tests.test_hook_server import hook_env

ContextFactory = Callable[..., SessionContext]
REPO = "/home/dev/shop"
TRACING_FILE = f"{REPO}/packages/core/src/tracing/langgraph/index.ts"
SESSION = UUID(CLAUDE_SESSION)
HEAVY = (
    "sqlite3",
    "click",
    "numpy",
    "pydantic",
    "onnxruntime",
    "prism_memory.bootstrap",
    "prism_memory.locations",
    "prism_memory.services.local_serve",
)


@pytest.fixture
def rules(db_path: Path, make_ctx: ContextFactory) -> dict[str, str]:
    """Rules in the CLI's default tenant and project, one about the tracing code's files."""
    services = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    ctx = make_ctx(tenant="default", project="default", persona="donna")
    written = {
        "tracing": ("LangGraph tracing", "Code under tracing/langgraph opens one span per node."),
        "migrations": ("Migrations are reversible", "Every migration ships with its downgrade."),
        "release": ("Release notes", "Every release note names the version it ships."),
    }
    try:
        return {
            key: str(
                services.memory.writes.remember(
                    ctx, validate_remember(rule(subject, body, {"scope": "project"}))
                ).id
            )
            for key, (subject, body) in written.items()
        }
    finally:
        services.close()


def touch(tool: str = "Read", path: str = TRACING_FILE, **fields: Any) -> str:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    tool_input = fields.pop("tool_input", {key: path})
    return hook_input(
        "PreToolUse",
        cwd=fields.pop("cwd", REPO),
        tool_name=tool,
        tool_input=tool_input,
        tool_use_id="toolu_01",
        **fields,
    )


def hook(
    db: Path, stdin: str, state: Path, *args: str, probe: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    """The installed command (``python -P -m prism_memory brief --hook claude-code``); with
    ``probe`` the same entry run by a script that then lists the heavy modules it loaded."""
    if not probe:
        return installed_hook(db, stdin, state, *args, **env)
    script = (
        "import sys\n"
        "from prism_memory.cli.claude_hook_fast import main_fast\n"
        "main_fast(sys.argv[1:])\n"
        f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-P", "-c", script, *args],
        input=stdin,
        env=hook_env(db, state, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def added(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # additionalContext and nothing else: no permission decision, the usual flow goes on
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": out["hookSpecificOutput"]["additionalContext"],
        }
    }
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def served(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT session_id, memorule_id, tool FROM served_receipt ORDER BY seq")
        return [(str(s), str(m), str(t)) for s, m, t in rows]


def test_the_path_in_words_is_the_query() -> None:
    assert path_query("packages/core/src/tracing/langgraph/index.ts") == (
        "packages core src tracing langgraph index ts"
    )
    assert path_query("backend/prism_memory/cli/claude-hook.py") == (
        "backend prism memory cli claude hook py"
    )
    assert path_query("./.github/") == "github"


@pytest.mark.parametrize(
    ("path", "folder", "relative"),
    [
        ("/home/dev/shop/src/app.py", "/home/dev/shop", "src/app.py"),
        ("src/app.py", "/home/dev/shop", "src/app.py"),
        ("/home/dev/shop/src/../lib/x.py", "/home/dev/shop/", "lib/x.py"),
        ("/etc/hosts", "/home/dev/shop", "/etc/hosts"),  # outside: as given
        ("../other/x.py", "/home/dev/shop", "../other/x.py"),
    ],
)
def test_a_touched_path_is_named_relative_to_the_session_s_folder(
    path: str, folder: str, relative: str
) -> None:
    assert relative_path(path, folder) == relative


def test_a_file_keeps_its_name_when_the_agent_changes_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Claude Code sets CLAUDE_PROJECT_DIR for its hooks; the input's cwd follows the agent's
    # `cd`. Named from the project, one file is one file whichever folder the agent is in.
    name = "packages/core/src/tracing/langgraph/index.ts"
    inside = {"tool_name": "Edit", "cwd": f"{REPO}/packages/core"}
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", REPO)
    assert touched_file({**inside, "tool_input": {"file_path": TRACING_FILE}}) == name
    relative = {"file_path": "src/tracing/langgraph/index.ts"}
    assert touched_file({**inside, "tool_input": relative}) == name
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert touched_file({**inside, "tool_input": relative}) == "src/tracing/langgraph/index.ts"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"tool_name": "Bash", "tool_input": {"command": "ls"}}, "tool 'Bash' touches no file"),
        ({"tool_name": "Read", "tool_input": {}}, "Read input has no tool_input.file_path"),
        ({"tool_name": "Write", "tool_input": {"file_path": " "}}, "no tool_input.file_path"),
        ({"tool_name": "NotebookEdit", "tool_input": {"file_path": "a.ipynb"}}, "notebook_path"),
        ({"tool_name": "Edit", "tool_input": "a.py"}, "Edit input has no tool_input.file_path"),
        ({"tool_name": "Read", "tool_input": {"file_path": "x" * 5000}}, "over 4096"),
    ],
)
def test_a_tool_call_that_touches_no_file_is_refused_with_why(
    data: dict[str, Any], reason: str
) -> None:
    with pytest.raises(NotATouch, match=reason):
        touched_file({"cwd": REPO, **data})


def test_a_subagent_s_first_touch_is_its_own_whatever_its_parent_touched(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    # A tool call inside a subagent carries agent_id; the subagent's context window is fresh,
    # so the parent's touch of the file must not keep the file's rules from it.
    from prism_memory.cli.claude_subagent import subagent_session

    state = tmp_path / "state"
    assert ids_in(added(hook(db_path, touch("Edit"), state))) == {rules["tracing"]}
    inside = touch("Edit", agent_id="agent-7f3a", agent_type="code-reviewer")
    assert ids_in(added(hook(db_path, inside, state))) == {rules["tracing"]}
    own = subagent_session("claude-code", CLAUDE_SESSION, "agent-7f3a")
    assert BriefedState(state).touched(own) == {"packages/core/src/tracing/langgraph/index.ts"}
    assert (str(own), rules["tracing"], "semantic_recall") in served(db_path)
    again = hook(db_path, inside, state)
    assert again.returncode == 0 and again.stdout == ""
    assert "was touched before in this session" in again.stderr
    # the parent's own state is its own: one touch, one rule
    assert BriefedState(state).briefed(SESSION) == {rules["tracing"]}


def test_a_first_touch_gives_the_rules_for_the_file_s_path_once(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    first = hook(db_path, touch(), state)
    text = added(first)
    assert text.startswith("## Memorules for packages/core/src/tracing/langgraph/index.ts\n")
    assert ids_in(text) == {rules["tracing"]}
    assert BriefedState(state).touched(SESSION) == {"packages/core/src/tracing/langgraph/index.ts"}
    assert BriefedState(state).briefed(SESSION) == {rules["tracing"]}
    receipts = served(db_path)
    assert receipts and {(s, t) for s, _, t in receipts} == {(CLAUDE_SESSION, "semantic_recall")}
    assert rules["tracing"] in {m for _, m, _ in receipts}
    # The same file again, by another tool and a relative path: nothing, and nothing loaded
    # (no store, no model, no server looked for); the store is not even asked.
    again = hook(db_path, touch("Edit", "packages/core/src/tracing/langgraph/index.ts"), state)
    assert (again.returncode, again.stdout) == (0, "")
    assert "was touched before in this session" in again.stderr
    probed = hook(db_path, touch(), state, probe=True)
    assert (probed.returncode, probed.stdout) == (0, "")
    assert "touched before" in probed.stderr and "LOADED []" in probed.stderr
    assert served(db_path) == receipts


def test_a_tool_that_touches_no_file_adds_nothing_and_records_nothing(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    bash = hook_input(
        "PreToolUse", cwd=REPO, tool_name="Bash", tool_input={"command": "ls tracing"}
    )
    proc = hook(db_path, bash, state, probe=True)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "tool 'Bash' touches no file" in proc.stderr and "LOADED []" in proc.stderr
    assert not state.exists() and served(db_path) == []


def test_a_notebook_edit_touches_its_notebook_path(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    notebook = f"{REPO}/notebooks/tracing/langgraph.ipynb"
    text = added(hook(db_path, touch("NotebookEdit", notebook), tmp_path / "state"))
    assert text.startswith("## Memorules for notebooks/tracing/langgraph.ipynb\n")
    assert rules["tracing"] in ids_in(text)


def test_touch_rules_0_turns_it_off_before_anything_is_loaded(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    proc = hook(db_path, touch(), state, "--touch-rules", "0", probe=True)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "--touch-rules is 0" in proc.stderr and "LOADED []" in proc.stderr
    assert not state.exists() and served(db_path) == []
    # ...and so does the full CLI's path (a flag the fast path leaves to it)
    cli = hook(db_path, touch(), state, "--touch-rules", "0", "--json")
    assert (cli.returncode, cli.stdout) == (0, "") and "--touch-rules is 0" in cli.stderr


def test_touch_relevance_is_the_bar_and_a_miss_still_records_the_file(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    proc = hook(db_path, touch(), state, "--touch-relevance", "1")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "no rule reaches relevance 1 to this file's path" in proc.stderr
    assert "--touch-relevance lowers the bar" in proc.stderr
    assert BriefedState(state).touched(SESSION) == {"packages/core/src/tracing/langgraph/index.ts"}
    again = hook(db_path, touch(), state)  # a lower bar does not bring a touched file back
    assert again.stdout == "" and "touched before" in again.stderr


def test_touch_rules_bounds_how_many_rules_a_touch_adds(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    args = ("--touch-relevance", "0")
    two = added(hook(db_path, touch(), tmp_path / "two", *args))
    assert len(ids_in(two)) == 2  # the default
    one = added(hook(db_path, touch(), tmp_path / "one", *args, "--touch-rules", "1"))
    assert ids_in(one) == {rules["tracing"]}
    assert len(one) <= 300 * 4  # within the touch's token budget


def test_a_rule_the_session_was_given_is_not_repeated_at_a_touch(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    start = hook(db_path, hook_input(), state)
    assert rules["tracing"] in ids_in(
        json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    )
    proc = hook(db_path, touch(), state)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "already given in this session" in proc.stderr
    # recorded as touched all the same, and the brief's ids kept (updated, not replaced)
    assert BriefedState(state).touched(SESSION) == {"packages/core/src/tracing/langgraph/index.ts"}
    assert rules["tracing"] in BriefedState(state).briefed(SESSION)


def test_after_compaction_a_file_s_rules_come_again_at_its_next_touch(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    small = ("--token-budget", "100")  # a brief too small to hold the tracing rule
    start = hook(db_path, hook_input(), state, *small)
    assert rules["tracing"] not in ids_in(start.stdout)
    assert rules["tracing"] in ids_in(added(hook(db_path, touch(), state)))
    assert "touched before" in hook(db_path, touch(), state).stderr
    # Claude Code compacts: SessionStart (compact) sends the brief again and the session's
    # state starts again from it; the file's rules left the context with the conversation.
    hook(db_path, hook_input(source="compact"), state, *small)
    assert BriefedState(state).touched(SESSION) == set()
    assert rules["tracing"] in ids_in(added(hook(db_path, touch(), state)))


def test_a_file_outside_the_session_s_folder_is_named_as_given(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    text = added(
        hook(
            db_path,
            touch(path="/opt/tracing/langgraph/index.ts"),
            tmp_path / "s",
            "--touch-relevance",
            "0",
        )
    )
    assert text.startswith("## Memorules for /opt/tracing/langgraph/index.ts\n")


def test_parallel_touches_of_one_session_lose_no_file(tmp_path: Path) -> None:
    """Claude Code runs the hooks of parallel tool calls at once: each read-and-rewrite of the
    session's state is under the folder's lock."""
    state = BriefedState(tmp_path / "state")
    files = [f"src/file_{i}.py" for i in range(24)]

    def record(path: str) -> None:
        state.record(SESSION, [f"id-{path}"], touched=[path])

    threads = [threading.Thread(target=record, args=(f,)) for f in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state.touched(SESSION) == set(files)
    assert state.briefed(SESSION) == {f"id-{f}" for f in files}


def test_install_on_touch_adds_a_pretooluse_group_beside_the_guard_s_and_the_user_s(
    db_path: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.json"
    user_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./block-rm.sh"}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [user_hook]}}))
    args = ("hooks", "install", "claude-code", "--settings", str(settings))
    done = invoke_prism(db_path, *args, "--on-touch", "--guard")
    assert done.returncode == 0, done.stdout + done.stderr
    groups = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    assert [g["matcher"] for g in groups] == [
        "Bash",
        TOUCH_MATCHER,
        "Bash|Edit|MultiEdit|Write|NotebookEdit",  # the guard's
    ]
    assert TOUCH_MATCHER == "Edit|MultiEdit|Write|NotebookEdit"
    (touch_handler,) = groups[1]["hooks"]
    assert (
        touch_handler["command"] == f"{sys.executable} -P -m prism_memory brief --hook claude-code"
    )
    assert touch_handler["timeout"] == 10
    before = settings.read_text()
    again = invoke_prism(db_path, *args, "--on-touch", "--guard")
    assert "no change" in again.stdout and settings.read_text() == before
    # installing without --guard keeps the guard (as without --on-prompt keeps the prompt's)
    invoke_prism(db_path, *args, "--on-touch")
    assert settings.read_text() == before
    done = invoke_prism(db_path, "hooks", "uninstall", "claude-code", "--settings", str(settings))
    assert done.returncode == 0 and done.stdout.count("removed PreToolUse") == 2
    assert json.loads(settings.read_text()) == {"hooks": {"PreToolUse": [user_hook]}}
    help_text = invoke_prism(db_path, "hooks", "install", "--help").stdout
    assert "--on-touch" in help_text
