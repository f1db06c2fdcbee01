"""``prism brief`` and ``prism brief --hook claude-code``: what the agent is given at session
start and on a prompt, and that the hook fails open.

The hook runs as Claude Code runs it: a real ``prism`` subprocess fed the hook input JSON
Claude Code documents, on a real SQLite file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner

from prism_memory.bootstrap import Services, build_services
from prism_memory.cli.brief_cmd import HOOK_DEADLINE_DEFAULT_S
from prism_memory.cli.claude_subagent import subagent_session
from prism_memory.cli.main import cli
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext, WriteResult
from prism_memory.services.briefed_state import BriefedState
from prism_memory.services.claude_settings import SESSION_START_TIMEOUT_S
from prism_memory.services.project_config import session_uuid
from prism_memory.settings import load_settings
from tests.cli_run import BACKEND, run_prism

ContextFactory = Callable[..., SessionContext]
CLAUDE_SESSION = "00893aaf-19fa-41d2-8238-13269b9b3ca0"
SOURCES = ("startup", "resume", "clear", "compact")


def rule(subject: str, body: str, applies_to: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": extra.pop("memorule_kind", "behavioral_rule"),
        "subject": subject,
        "body": body,
        "applies_to": applies_to,
        **extra,
    }


@pytest.fixture
def store(db_path: Path) -> Iterator[Services]:
    svc = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    try:
        yield svc
    finally:
        svc.close()


@pytest.fixture
def rules(store: Services, make_ctx: ContextFactory) -> dict[str, str]:
    """Rules in the CLI's default tenant and project: some apply to donna, some must not."""
    home = make_ctx(tenant="default", project="default", persona="donna")
    other_tenant = make_ctx(tenant="elsewhere", project="default", persona="donna")

    def write(ctx: SessionContext, raw: dict[str, Any]) -> WriteResult:
        return store.memory.writes.remember(ctx, validate_remember(raw))

    ids = {
        "donna": write(
            home,
            rule(
                "Run the tests before pushing",
                "Always run make test before you push a branch.",
                {"persona": "donna"},
                confidence="observed",
            ),
        ).id,
        "project": write(
            home,
            rule(
                "Migrations are reversible",
                "Every schema migration ships with its downgrade.",
                {"scope": "project"},
                memorule_kind="convention",
            ),
        ).id,
        "python": write(
            home,
            rule(
                "Format with ruff",
                "Python code is formatted with ruff format.",
                {"surface": "python"},
            ),
        ).id,
        "go": write(
            home,
            rule("Run gofmt", "Go code is formatted with gofmt before review.", {"surface": "go"}),
        ).id,
        "texi": write(
            home,
            rule(
                "Draw the architecture",
                "Texi puts a diagram in every design review.",
                {"persona": "texi"},
            ),
        ).id,
        "tenant": write(
            other_tenant,
            rule(
                "Another tenant's rule",
                "This rule belongs to another tenant.",
                {"scope": "project"},
            ),
        ).id,
        "retired": write(
            home,
            rule("An old habit", "Squash every commit before review.", {"persona": "donna"}),
        ).id,
    }
    store.memory.lifecycle.retire(home, ids["retired"], "superseded by the review guide")
    return {k: str(v) for k, v in ids.items()}


def hook_input(event: str = "SessionStart", **fields: Any) -> str:
    base: dict[str, Any] = {
        "session_id": CLAUDE_SESSION,
        "transcript_path": f"/home/me/.claude/projects/demo/{CLAUDE_SESSION}.jsonl",
        "cwd": fields.pop("cwd", "/"),
        "hook_event_name": event,
    }
    if event == "SessionStart":
        base["source"] = fields.pop("source", "startup")
        base["model"] = "claude-sonnet-4-6"
    else:
        base["permission_mode"] = "default"
    base.update(fields)
    return json.dumps(base)


def run_hook(
    db: Path, stdin: str, *args: str, state: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    return run_prism(
        db,
        "brief",
        "--hook",
        "claude-code",
        *args,
        stdin=stdin,
        PRISM_HOOK_STATE_DIR=str(state),
        **env,
    )


def context_of(proc: subprocess.CompletedProcess[str], event: str) -> str:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == event
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def ids_in(markdown: str) -> set[str]:
    return set(re.findall(r"id `([0-9a-f-]{36})`", markdown))


@pytest.mark.parametrize("source", SOURCES)
def test_session_start_gives_the_rules_that_apply_and_none_that_do_not(
    db_path: Path, tmp_path: Path, rules: dict[str, str], source: str
) -> None:
    proc = run_hook(
        db_path, hook_input(source=source), "--persona", "donna", state=tmp_path / "state"
    )
    context = context_of(proc, "SessionStart")
    assert context.startswith("# Memorules that apply")
    shown = ids_in(context)
    assert {rules["donna"], rules["project"], rules["python"], rules["go"]} <= shown
    assert not shown & {rules["texi"], rules["tenant"], rules["retired"]}
    # The session is Claude Code's own id, and the brief is remembered for the prompt hook.
    state = BriefedState(tmp_path / "state")
    assert state.briefed(UUID(CLAUDE_SESSION)) == shown


def test_the_project_file_and_its_marker_files_set_persona_and_surface(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (project / ".prism.toml").write_text('persona = "donna"\n')
    (project / "src").mkdir()
    proc = run_hook(db_path, hook_input(cwd=str(project / "src")), state=tmp_path / "state")
    context = context_of(proc, "SessionStart")
    assert "_Context: persona donna, surface python_" in context
    shown = ids_in(context)
    assert {rules["donna"], rules["python"]} <= shown
    assert rules["go"] not in shown and rules["texi"] not in shown
    # A flag beats the file; derive_surface = false turns the guess off.
    (project / ".prism.toml").write_text('persona = "donna"\nderive_surface = false\n')
    proc = run_hook(
        db_path, hook_input(cwd=str(project)), "--persona", "texi", state=tmp_path / "state"
    )
    shown = ids_in(context_of(proc, "SessionStart"))
    assert rules["texi"] in shown and rules["donna"] not in shown and rules["go"] in shown


def test_the_prompt_hook_adds_only_relevant_rules_the_session_was_not_given(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    # A tiny budget: the session-start brief holds only the best-ranked rules.
    start = run_hook(
        db_path, hook_input(), "--persona", "donna", "--token-budget", "100", state=state
    )
    briefed = ids_in(context_of(start, "SessionStart"))
    assert rules["go"] not in briefed
    prompt = hook_input("UserPromptSubmit", prompt="Run gofmt on the Go code before the review")
    first = run_hook(db_path, prompt, "--persona", "donna", state=state)
    added = ids_in(context_of(first, "UserPromptSubmit"))
    assert rules["go"] in added and not added & briefed
    assert not added & {rules["texi"], rules["tenant"], rules["retired"]}
    again = run_hook(db_path, prompt, "--persona", "donna", state=state)
    assert again.returncode == 0 and again.stdout == "", "a rule is given once per session"
    assert "already given in this session" in again.stderr


def test_the_prompt_hook_says_on_stderr_why_it_added_nothing(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    prompt = hook_input("UserPromptSubmit", prompt="Run gofmt on the Go code before the review")
    none = run_hook(db_path, prompt, "--persona", "donna", "--min-relevance", "1", state=state)
    assert none.returncode == 0 and none.stdout == ""
    assert re.search(r"no rule reaches relevance 1 to this prompt \(best 0\.\d\d;", none.stderr)
    empty = run_hook(db_path, hook_input("UserPromptSubmit", prompt=" "), state=state)
    assert empty.stdout == "" and "the prompt is empty" in empty.stderr
    off = run_hook(db_path, prompt, "--prompt-rules", "0", state=state)
    assert off.stdout == "" and "--prompt-rules is 0" in off.stderr


def test_prompt_rules_bounds_how_many_rules_the_prompt_hook_adds(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    prompt = hook_input("UserPromptSubmit", prompt="Run gofmt on the Go code before the review")
    one = run_hook(
        db_path,
        prompt,
        "--persona",
        "donna",
        "--prompt-rules",
        "1",
        "--min-relevance",
        "0",
        state=tmp_path / "one",
    )
    assert len(ids_in(context_of(one, "UserPromptSubmit"))) == 1


def test_a_missing_store_makes_the_hook_exit_0_with_empty_output(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "prism.db"
    proc = run_hook(missing, hook_input(), state=tmp_path / "state")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "no Prism store at" in proc.stderr
    assert not missing.exists(), "the hook must not create a store"


def test_a_locked_store_makes_the_hook_give_up_at_its_deadline(
    db_path: Path, tmp_path: Path, store: Services, rules: dict[str, str]
) -> None:
    store.close()  # the exclusive lock needs every other connection gone
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("CREATE TABLE lock_probe (x)")  # takes the file's exclusive lock
        proc = subprocess.run(
            [sys.executable, "-m", "prism_memory", "brief", "--hook", "claude-code"],
            input=hook_input(),
            capture_output=True,
            text=True,
            env=_env(db_path, PRISM_HOOK_DEADLINE="1", PRISM_HOOK_STATE_DIR=str(tmp_path)),
            timeout=120,  # only so a hang fails the test instead of stalling the run
            check=False,
        )
    finally:
        holder.close()  # ends the transaction and releases the lock
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "deadline" in proc.stderr


def test_the_hook_deadline_ends_before_claude_code_kills_the_hook() -> None:
    # The deadline is what keeps a locked store from costing the session start: it must fall
    # inside the timeout the installed hook entry gives the process (times are not measured
    # here; a loaded machine would make such a test lie either way).
    assert HOOK_DEADLINE_DEFAULT_S < SESSION_START_TIMEOUT_S


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        ("not json at all", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"session_id": "s", "hook_event_name": "PostToolUse"}), "PostToolUse"),
        (json.dumps({"hook_event_name": "SessionStart"}), "no session_id"),
    ],
)
def test_bad_hook_input_is_skipped_with_the_reason_on_stderr(
    db_path: Path, tmp_path: Path, rules: dict[str, str], stdin: str, reason: str
) -> None:
    proc = run_hook(db_path, stdin, state=tmp_path / "state")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert reason in proc.stderr


def test_a_bad_project_file_or_setting_is_skipped_with_its_structured_error(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".prism.toml").write_text('persona = "donna"\ncolour = "blue"\n')
    proc = run_hook(db_path, hook_input(cwd=str(project)), state=tmp_path / "state")
    assert (proc.returncode, proc.stdout) == (0, "")
    error = json.loads(proc.stderr.split("skipped: ", 1)[1])
    assert error["error"]["fields"][0]["field"] == ".prism.toml.colour"
    bad_tenant = run_hook(
        db_path, hook_input(), state=tmp_path / "state", PRISM_TENANT="no spaces!"
    )
    assert (bad_tenant.returncode, bad_tenant.stdout) == (0, "")
    assert "tenant" in bad_tenant.stderr


def test_prism_brief_prints_the_mcp_brief_as_markdown_or_json(
    db_path: Path, rules: dict[str, str]
) -> None:
    runner = CliRunner()
    env = {"PRISM_DB": str(db_path), "PRISM_EMBEDDER": "fake", "PRISM_PERSONA": "donna"}
    text = runner.invoke(cli, ["brief"], env=env)
    assert text.exit_code == 0, text.output
    assert text.output.startswith("# Memorules that apply\n_Context: persona donna_")
    assert "## Behavioral rules" in text.output and "## Conventions" in text.output
    payload = json.loads(
        runner.invoke(cli, ["brief", "--json", "--task", "-"], env=env, input="run gofmt").output
    )
    assert payload["ok"] is True
    assert {i["id"] for i in payload["included"]} == ids_in(payload["markdown"])
    assert rules["texi"] not in ids_in(payload["markdown"])
    too_long = runner.invoke(cli, ["brief", "--json", "--task", "x" * 4001], env=env)
    assert too_long.exit_code == 2
    assert json.loads(too_long.output)["error"]["fields"][0]["field"] == "task"


def test_the_brief_path_loads_no_model_and_no_front_door_it_does_not_use(
    db_path: Path, rules: dict[str, str]
) -> None:
    probe = (
        "import sys\n"
        "from prism_memory.cli.main import main\n"
        "sys.argv = ['prism', 'brief']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ['onnxruntime', 'tokenizers', 'fastapi', 'mcp', 'psycopg', 'uvicorn',\n"
        "         'prism_memory.services.rules_import', 'prism_memory.services.auth_service']\n"
        "print('LOADED', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    env = _env(db_path, PRISM_EMBEDDER="minilm", PRISM_PERSONA="donna")
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "# Memorules that apply" in proc.stdout
    assert "LOADED []" in proc.stderr


def _env(db: Path, **extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update({"PRISM_DB": str(db), "PRISM_EMBEDDER": "fake", "PYTHONPATH": str(BACKEND)})
    env.update(extra)
    return env


def test_a_state_folder_that_cannot_be_written_still_gets_the_brief(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the state folder should be")
    proc = run_hook(db_path, hook_input(), "--persona", "donna", state=blocked)
    assert rules["donna"] in ids_in(context_of(proc, "SessionStart"))
    assert "warning: could not record the briefed rules" in proc.stderr


def test_a_bad_deadline_setting_warns_and_keeps_the_default(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    proc = run_hook(db_path, hook_input(), state=tmp_path / "s", PRISM_HOOK_DEADLINE="soon")
    assert rules["project"] in ids_in(context_of(proc, "SessionStart"))
    assert "warning: deadline 'soon' is not 0.1 to 600 seconds; using 5" in proc.stderr


@pytest.mark.real_model
def test_with_the_real_model_the_prompt_hook_adds_the_rule_the_prompt_is_about(
    db_path: Path, tmp_path: Path, make_ctx: ContextFactory
) -> None:
    services = build_services(load_settings(db=db_path, embedder="minilm", database_url=""))
    ctx = make_ctx(tenant="default", project="default", persona="donna")
    about = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Do not tune on the test set",
                "Hyperparameter search uses a validation split; the test set is touched once.",
                {"scope": "project"},
            )
        ),
    ).id
    services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Release notes name the migration",
                "Every release note lists the schema migrations it ships.",
                {"scope": "project"},
            )
        ),
    )
    services.close()
    prompt = hook_input("UserPromptSubmit", prompt="should I tune hyperparameters on the test set?")
    proc = run_prism(
        db_path,
        "brief",
        "--hook",
        "claude-code",
        fake=False,
        stdin=prompt,
        PRISM_HOOK_STATE_DIR=str(tmp_path / "state"),
        PRISM_HOOK_DEADLINE="60",
    )
    assert ids_in(context_of(proc, "UserPromptSubmit")) == {str(about)}


def test_an_unreachable_postgresql_makes_the_hook_exit_0_with_empty_output(
    tmp_path: Path,
) -> None:
    proc = run_hook(
        tmp_path / "unused.db",
        hook_input(),
        state=tmp_path / "state",
        PRISM_DATABASE_URL="postgresql://prism@127.0.0.1:1/prism?connect_timeout=2",
        PRISM_HOOK_DEADLINE="4",
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "skipped: " in proc.stderr


# SubagentStart, and the brief coming back after compaction (a transcript in Claude Code's
# format drives both).

AGENT_ID = "a1b2c3d4e5f6"


def transcript(path: Path, *entries: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def user(text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": CLAUDE_SESSION,
        "message": {"role": "user", "content": text},
    }


def task_call(agent_type: str, description: str, prompt: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": CLAUDE_SESSION,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll delegate this."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Task",
                    "input": {
                        "subagent_type": agent_type,
                        "description": description,
                        "prompt": prompt,
                    },
                },
            ],
        },
    }


def receipts(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT session_id, memorule_id, tool FROM served_receipt ORDER BY seq")
        return [(str(s), str(m), str(t)) for s, m, t in rows]


def test_a_subagent_gets_the_rules_for_its_task_under_its_own_session(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    log = transcript(
        tmp_path / "session.jsonl",
        user("Tidy the Go service before the review"),
        task_call(
            "code-reviewer", "Review Go formatting", "Run gofmt on the Go code and review it"
        ),
    )
    start = hook_input(
        "SubagentStart", agent_id=AGENT_ID, agent_type="code-reviewer", transcript_path=str(log)
    )
    proc = run_hook(db_path, start, "--persona", "donna", state=tmp_path / "state")
    given = ids_in(context_of(proc, "SubagentStart"))
    assert rules["go"] in given
    assert not given & {rules["texi"], rules["tenant"], rules["retired"]}
    task = "code-reviewer\nReview Go formatting\nRun gofmt on the Go code and review it"
    with sqlite3.connect(db_path) as conn:
        hashes = {h for (h,) in conn.execute("SELECT DISTINCT query_sha256 FROM served_receipt")}
    assert hashes == {hashlib.sha256(task.encode()).hexdigest()}, "ranked by role and task"
    own = str(subagent_session("claude-code", CLAUDE_SESSION, AGENT_ID))
    served = receipts(db_path)
    assert {m for s, m, _ in served if s == own} == given, "receipts are the subagent's"
    parent = str(session_uuid("claude-code", CLAUDE_SESSION))
    assert {m for s, m, _ in served if s == parent} != given


def test_a_subagent_brief_is_smaller_and_needs_no_transcript(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    start = hook_input(
        "SubagentStart",
        agent_id=AGENT_ID,
        agent_type="Explore",
        transcript_path=str(tmp_path / "gone"),
    )
    proc = run_hook(db_path, start, "--subagent-token-budget", "100", state=tmp_path / "state")
    text = context_of(proc, "SubagentStart")
    assert len(text) <= 100 * 4
    no_id = hook_input("SubagentStart", agent_type="Explore")
    skipped = run_hook(db_path, no_id, state=tmp_path / "state")
    assert skipped.returncode == 0 and skipped.stdout == ""
    assert "no agent_id" in skipped.stderr


def test_after_compaction_the_brief_comes_back_and_prompt_rules_are_served_again(
    db_path: Path, tmp_path: Path, rules: dict[str, str]
) -> None:
    state = tmp_path / "state"
    log = transcript(tmp_path / "session.jsonl", user("Run gofmt on the Go code before the review"))
    args = ("--persona", "donna", "--token-budget", "100")
    start = run_hook(db_path, hook_input(transcript_path=str(log)), *args, state=state)
    briefed = ids_in(context_of(start, "SessionStart"))
    prompt = hook_input(
        "UserPromptSubmit",
        prompt="Run gofmt on the Go code before the review",
        transcript_path=str(log),
    )
    added = ids_in(context_of(run_hook(db_path, prompt, *args, state=state), "UserPromptSubmit"))
    assert rules["go"] in added
    # Claude Code compacts: the conversation is summarised and SessionStart fires again
    # with source "compact" for the same session.
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
        handle.write(json.dumps(user("This session is being continued from a summary.")) + "\n")
    again = run_hook(
        db_path, hook_input(source="compact", transcript_path=str(log)), *args, state=state
    )
    assert ids_in(context_of(again, "SessionStart")) == briefed, "the brief comes back"
    resumed = run_hook(
        db_path, hook_input(source="resume", transcript_path=str(log)), *args, state=state
    )
    assert ids_in(context_of(resumed, "SessionStart")) == briefed
    later = run_hook(db_path, prompt, *args, state=state)
    assert rules["go"] in ids_in(context_of(later, "UserPromptSubmit")), (
        "a rule the compaction dropped is served again when relevant"
    )
