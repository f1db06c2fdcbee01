"""The PreToolUse guard: its decision and output for each enforcement, require_before over a
real-format transcript, its records on both engines, and every way it fails open (always exit
0, nothing on stdout, the reason on stderr) — in process and as the real subprocess Claude
Code runs, from a project folder."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access
from prism_memory.cli.guard_hook import hook_output, pending_action, run_hook
from prism_memory.domain.access import operator_key
from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.records import AuditEventType, SessionContext
from prism_memory.guard_bootstrap import GuardSettings, build_rules_reader
from prism_memory.services.guard_service import GuardService, decision_from_record
from prism_memory.services.guard_service import decision_payload as payload_of
from prism_memory.settings import Settings
from prism_memory.trigraph.port import AuditFilter
from tests.claude_transcripts import Transcript
from tests.cli_run import run_prism

SESSION = "7f3c2a10-5b6e-4d1a-9c8e-2b4f6a8d0e11"
NPM = r"(?<![\w./@-])npm(?![\w.@/-])"


def rule(
    services: Services,
    ctx: SessionContext,
    subject: str,
    checks: list[dict[str, Any]],
    enforcement: str = "remind",
) -> UUID:
    raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: the team decided this after an incident.",
        "applies_to": {"scope": "project"},
        "checks": checks,
        "enforcement": enforcement,
    }
    access = build_access(services)
    return access.remember(operator_key(ctx.tenant_id), ctx, validate_remember(raw)).id


def reader_settings(settings: Settings, ctx_project: str = "api") -> GuardSettings:
    return GuardSettings(
        db=settings.db_path(),
        database_url=settings.database_url or None,
        tenant="acme",
        project=ctx_project,
    )


def hook_input(tool: str, tool_input: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": "/home/dev/shop",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01PENDING",
        **extra,
    }


def no_history() -> SessionActions:
    raise AssertionError("the transcript must not be read for this action")


# -- the decision, on both engines -------------------------------------------------------


def test_each_check_kind_is_put_in_front_of_the_agent_only_when_the_action_breaks_it(
    services: Services, engine_settings: Settings, ctx: SessionContext
) -> None:
    rule(services, ctx, "Use pnpm, never npm", [{"forbid_command": NPM}])
    rule(services, ctx, "Generated code is generated", [{"forbid_edit": "src/generated/**"}])
    rule(
        services,
        ctx,
        "Changelog with src",
        [{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}],
    )
    guard = GuardService(build_rules_reader(reader_settings(engine_settings)))
    ctx = SessionContext(ctx.tenant_id, ctx.project_id, ctx.session_id)  # no persona

    def hit(action: Action) -> list[str]:
        decision = guard.check(ctx, action, "/home/dev/shop", no_history)
        return [r.subject for r in decision.rules]

    assert hit(Action("command", "cd web && npm install")) == ["Use pnpm, never npm"]
    assert hit(Action("command", "pnpm install")) == []
    assert hit(Action("edit", "/home/dev/shop/src/generated/api.ts")) == [
        "Generated code is generated"
    ]
    assert hit(Action("edit", "/elsewhere/src/generated/api.ts")) == []  # outside the session
    assert hit(Action("edit", "/home/dev/shop/src/app.ts")) == []  # require_edit_with: later


def test_require_before_reads_the_transcript_and_the_pending_command_is_not_its_own_test(
    services: Services, engine_settings: Settings, ctx: SessionContext, tmp_path: Path
) -> None:
    rule(
        services,
        ctx,
        "Tests before commits",
        [{"require_before": {"command": r"\bmake test\b", "before": r"\bgit commit\b"}}],
    )
    guard = GuardService(build_rules_reader(reader_settings(engine_settings)))
    ctx = SessionContext(ctx.tenant_id, ctx.project_id, ctx.session_id)
    from prism_memory.capture.claude_actions import read_session

    def decide(transcript: Transcript, command: str) -> list[str]:
        path = transcript.write(tmp_path / "s.jsonl")
        history = lambda: read_session(path)  # noqa: E731
        decision = guard.check(ctx, Action("command", command), transcript.cwd, history)
        return [h.why for h in decision.hits]

    tested = Transcript()
    tested.edit("/home/dev/shop/src/app.py")
    tested.bash("make test")
    assert decide(tested, "git commit -m fix") == []
    edited_after = Transcript()
    edited_after.bash("make test")
    edited_after.edit("/home/dev/shop/src/app.py")
    assert len(decide(edited_after, "git commit -m fix")) == 1
    assert len(decide(Transcript().say("commit it"), "make test && git commit -m fix")) == 1
    rejected = Transcript()
    rejected.edit("/home/dev/shop/src/app.py")
    rejected.bash("make test")
    rejected.reject("Edit", {"file_path": "/home/dev/shop/src/b.py"})  # did not run
    assert decide(rejected, "git commit -m fix") == []


def test_the_strictest_enforcement_decides_and_each_has_its_output(
    services: Services, engine_settings: Settings, ctx: SessionContext
) -> None:
    rule(services, ctx, "No npm", [{"forbid_command": NPM}])
    rule(
        services, ctx, "Ask before a force push", [{"forbid_command": r"git push .*--force"}], "ask"
    )
    rule(services, ctx, "Never drop the database", [{"forbid_command": r"dropdb\b"}], "deny")
    guard = GuardService(build_rules_reader(reader_settings(engine_settings)))
    ctx = SessionContext(ctx.tenant_id, ctx.project_id, ctx.session_id)

    def output(command: str) -> dict[str, Any]:
        decision = guard.check(ctx, Action("command", command), None, no_history)
        return hook_output(decision)["hookSpecificOutput"]

    remind = output("npm ci")
    assert set(remind) == {"hookEventName", "additionalContext"}  # never "allow": no bypass
    assert remind["hookEventName"] == "PreToolUse" and "No npm" in remind["additionalContext"]
    ask = output("npm ci && git push origin x --force")
    assert ask["permissionDecision"] == "ask"
    assert "Ask before a force push" in ask["permissionDecisionReason"]
    assert "No npm" in ask["additionalContext"]  # every rule hit is shown
    deny = output("dropdb shop && git push origin x --force")
    assert deny["permissionDecision"] == "deny"
    assert "Never drop the database" in deny["permissionDecisionReason"]
    assert "additionalContext" not in deny


def test_a_decision_is_recorded_as_reminded_or_blocked_once_per_tool_use(
    services: Services, engine_settings: Settings, ctx: SessionContext
) -> None:
    npm = rule(services, ctx, "No npm", [{"forbid_command": NPM}])
    drop = rule(services, ctx, "Never drop the database", [{"forbid_command": r"dropdb\b"}], "deny")
    guard = GuardService(build_rules_reader(reader_settings(engine_settings)))
    bare = SessionContext(ctx.tenant_id, ctx.project_id, ctx.session_id)
    access, key = build_access(services), operator_key(ctx.tenant_id)
    secret = "PGPASSWORD=hunter2 dropdb shop && npm i"
    decision = guard.check(bare, Action("command", secret, id="toolu_9"), None, no_history)
    # what the hook hands the detached recorder is read back as the same decision
    payload = json.loads(json.dumps(payload_of(decision, bare, SESSION, "toolu_9")))
    again, session, use = decision_from_record(payload)
    assert (again.rules, session, use) == (decision.rules, SESSION, "toolu_9")
    args = {"client": "claude-code", "session": SESSION, "tool_use_id": "toolu_9"}
    assert access.record_guard(key, bare, again, **args) == 2
    assert access.record_guard(key, bare, again, **args) == 0  # a retried hook: no twin
    for memorule_id in (npm, drop):
        (event,) = [
            e
            for e in services.store.audit_events(
                ctx.tenant_id, AuditFilter(memorule_id=memorule_id, limit=10)
            )
            if e.event is AuditEventType.BLOCKED
        ]
        record = json.loads(event.reason or "")
        assert record["decision"] == "deny" and record["verdict"] == "violated"
        assert "hunter2" not in event.reason and record["tool_use_id"] == "toolu_9"
    assert access.verify_chain(key, ctx).ok


# -- the hook in process: inputs, outputs, failing open -----------------------------------


def call(
    data: Any, flags: dict[str, str | None], capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    raw = data if isinstance(data, str) else json.dumps(data)
    out = io.StringIO()
    run_hook(flags, record=False, stdin=io.StringIO(raw), stdout=out)
    return out.getvalue(), capsys.readouterr().err


@pytest.fixture
def store_with_rule(db_path: Path, make_ctx: Any) -> Path:
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    try:
        rule(services, make_ctx(tenant="acme", project="api"), "No npm", [{"forbid_command": NPM}])
    finally:
        services.close()
    return db_path


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ({"hook_event_name": "PostToolUse", "session_id": "s"}, "not a PreToolUse event"),
        ({"hook_event_name": "PreToolUse"}, "no session_id"),
        ("x" * 1_100_000, "over 1048576 bytes"),
    ],
)
def test_bad_hook_input_fails_open_with_the_reason_on_stderr(
    data: Any, said: str, store_with_rule: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = call(data, {"db": str(store_with_rule)}, capsys)
    assert out == "" and said in err


def test_a_missing_an_unmigrated_or_a_broken_store_fails_open(
    store_with_rule: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hook_input("Bash", {"command": "npm i"})
    flags = {"tenant": "acme", "project": "api"}
    out, err = call(data, {**flags, "db": str(tmp_path / "none.db")}, capsys)
    assert out == "" and "no Prism store" in err
    old = tmp_path / "old.db"
    sqlite3.connect(old).execute("CREATE TABLE memory_state (id TEXT)").connection.close()
    out, err = call(data, {**flags, "db": str(old)}, capsys)
    assert out == "" and "failed open: StorageError" in err
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    out, err = call(data, {**flags, "db": str(junk)}, capsys)
    assert out == "" and "failed open" in err
    # a rule whose stored checks were broken in the database after they were written: it
    # is skipped (said on stderr), the others still hold
    conn = sqlite3.connect(store_with_rule)
    conn.execute(
        "UPDATE memory_state SET checks = ? WHERE checks IS NOT NULL",
        (json.dumps([{"forbid_command": "(unclosed"}]),),
    )
    conn.commit()
    conn.close()
    out, err = call(data, {**flags, "db": str(store_with_rule)}, capsys)
    assert out == "" and "has a broken check" in err
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=store_with_rule, embedder="fake", database_url=""))
    try:
        ctx = SessionContext(uuid_for("tenant", "acme"), uuid_for("project", "api"), UUID(SESSION))
        rule(services, ctx, "No npm installs at all", [{"forbid_command": r"\bnpm i\b"}])
    finally:
        services.close()
    out, err = call(data, {**flags, "db": str(store_with_rule)}, capsys)
    assert "No npm installs at all" in out and "has a broken check" in err


def test_a_bad_project_config_and_a_bad_tenant_fail_open(
    store_with_rule: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".prism.toml").write_text("persona = [not toml")
    data = hook_input("Bash", {"command": "npm i"}, cwd=str(tmp_path))
    out, err = call(data, {"db": str(store_with_rule)}, capsys)
    assert out == "" and "failed open: InvalidInput" in err
    data = hook_input("Bash", {"command": "npm i"})
    out, err = call(data, {"db": str(store_with_rule), "tenant": "not a slug!"}, capsys)
    assert out == "" and "failed open: InvalidInput" in err


def test_other_tools_and_empty_inputs_are_not_actions(
    store_with_rule: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pending_action(hook_input("Read", {"file_path": "/x/package.json"})) is None
    assert pending_action(hook_input("Bash", {"command": "  "})) is None
    notebook = pending_action(hook_input("NotebookEdit", {"notebook_path": "/x/a.ipynb"}))
    assert notebook is not None and (notebook.type, notebook.text) == ("edit", "/x/a.ipynb")
    flags = {"db": str(store_with_rule), "tenant": "acme", "project": "api"}
    out, _ = call(hook_input("Read", {"file_path": "/x/npm"}), flags, capsys)
    assert out == ""
    out, _ = call(hook_input("Bash", {"command": "npm i"}), flags, capsys)
    assert "No npm" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


# -- the real process, from a project folder ---------------------------------------------


def test_the_hook_process_reads_the_project_from_its_folder_and_records_its_reminder(
    store_with_rule: Path, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".prism.toml").write_text('tenant = "acme"\nproject = "api"\n')
    data = hook_input("Bash", {"command": "npm install left-pad"}, cwd=str(project))
    done = run_prism(store_with_rule, "guard", "claude-code", cwd=project, stdin=json.dumps(data))
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)["hookSpecificOutput"]
    assert said["hookEventName"] == "PreToolUse" and "No npm" in said["additionalContext"]
    # another project's folder: the rule is not its rule
    other = tmp_path / "blog"
    (other / ".git").mkdir(parents=True)
    (other / ".prism.toml").write_text('tenant = "acme"\nproject = "blog"\n')
    data_other = {**data, "cwd": str(other)}
    done = run_prism(
        store_with_rule, "guard", "claude-code", cwd=other, stdin=json.dumps(data_other)
    )
    assert (done.returncode, done.stdout) == (0, "")
    # the detached recorder wrote the reminder (waited for, not timed)
    tenant = uuid_for("tenant", "acme")
    for _ in range(600):
        found = _events(store_with_rule, tenant)
        if found:
            break
        time.sleep(0.1)
    assert found == ["reminded"], (store_with_rule.parent / "guard.log").read_text()
    done = run_prism(store_with_rule, "guard", "claude-code", cwd=project, stdin="{oops")
    assert (done.returncode, done.stdout) == (0, "") and "not JSON" in done.stderr


def _events(db: Path, tenant: UUID) -> list[str]:
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=db, embedder="fake", database_url=""))
    try:
        found = services.store.audit_events(tenant, AuditFilter(limit=100))
    finally:
        services.close()
    return [e.event.value for e in found if e.event.value in ("reminded", "blocked")]


# -- installing it ------------------------------------------------------------------------


def test_install_guard_adds_one_pretooluse_handler_for_the_action_tools_and_uninstall_removes_it(
    db_path: Path, tmp_path: Path
) -> None:
    from tests.cli_run import invoke_prism

    settings = tmp_path / "settings.json"
    args = ("hooks", "install", "claude-code", "--guard", "--settings", str(settings))
    done = invoke_prism(db_path, *args, "--db", str(db_path), "--persona", "donna")
    assert done.returncode == 0, done.stdout + done.stderr
    (group,) = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash|Edit|MultiEdit|Write|NotebookEdit"
    (handler,) = group["hooks"]
    assert handler["command"].endswith(
        f"-m prism_memory guard claude-code --db {db_path} --persona donna"
    )
    again = invoke_prism(db_path, *args, "--db", str(db_path), "--persona", "donna")
    assert "no change" in again.stdout
    done = invoke_prism(db_path, "hooks", "uninstall", "claude-code", "--settings", str(settings))
    assert done.returncode == 0 and "removed PreToolUse" in done.stdout
    assert not settings.exists()  # it held only Prism's handlers


def test_the_fast_entry_takes_the_same_flags_and_fails_open_on_a_bad_one(
    store_with_rule: Path, tmp_path: Path
) -> None:
    data = json.dumps(hook_input("Bash", {"command": "npm i"}))
    flags = ("--db", str(store_with_rule), "--tenant=acme", "--project", "api", "--no-record")
    done = run_prism(tmp_path / "unused.db", "guard", "claude-code", *flags, stdin=data)
    assert done.returncode == 0 and "No npm" in done.stdout, done.stderr
    done = run_prism(store_with_rule, "guard", "claude-code", "--bogus", stdin=data)
    assert (done.returncode, done.stdout) == (0, "") and "unknown option" in done.stderr
    done = run_prism(store_with_rule, "guard", "claude-code", "--help")
    assert done.returncode == 0 and "PreToolUse" in done.stdout


def test_edits_are_anchored_at_the_session_s_first_cwd_not_the_hook_s(
    db_path: Path, make_ctx: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    try:
        ctx = make_ctx(tenant="acme", project="api")
        rule(services, ctx, "Generated code is generated", [{"forbid_edit": "src/generated/**"}])
    finally:
        services.close()
    transcript = Transcript(cwd="/home/dev/shop").say("regenerate nothing")
    path = transcript.write(tmp_path / "s.jsonl")
    edit = {"file_path": "/home/dev/shop/src/generated/api.ts"}
    data = hook_input("Edit", edit, transcript_path=str(path), cwd="/home/dev/shop/src")
    flags = {"db": str(db_path), "tenant": "acme", "project": "api"}
    out, _ = call(data, flags, capsys)
    assert "Generated code is generated" in out
    data["transcript_path"] = str(tmp_path / "missing.jsonl")  # only the hook's cwd is known
    out, _ = call(data, flags, capsys)
    assert out == ""


def test_a_tool_use_no_rule_could_hit_is_answered_before_the_domain_is_imported(
    store_with_rule: Path, tmp_path: Path
) -> None:
    def imported(command: str, *extra: str) -> tuple[str, set[str]]:
        data = json.dumps(hook_input("Bash", {"command": command}))
        done = run_prism(
            store_with_rule,
            "guard",
            "claude-code",
            "--tenant",
            "acme",
            "--project",
            "api",
            *extra,
            stdin=data,
            PYTHONPROFILEIMPORTTIME="1",
        )
        assert done.returncode == 0, done.stderr
        lines = [x.split("|")[-1].strip() for x in done.stderr.splitlines() if "|" in x]
        return done.stdout, set(lines)

    out, modules = imported("pnpm install")
    assert out == "" and "prism_memory.domain.records" not in modules
    assert "prism_memory.trigraph.sqlite.guard_prefilter" in modules
    out, modules = imported("npm install")  # a possible hit: the full path decides
    assert "No npm" in out and "prism_memory.domain.records" in modules


@pytest.mark.parametrize(
    ("checks", "kind", "text", "maybe"),
    [
        ([{"forbid_command": r"\bnpm\b"}], "command", "pnpm i", False),
        ([{"forbid_command": r"\bnpm\b"}], "command", "npm i", True),
        (
            [{"require_before": {"command": "make test", "before": "git commit"}}],
            "command",
            "git commit -m x",
            True,
        ),
        (
            [{"require_before": {"command": "make test", "before": "git commit"}}],
            "command",
            "make test",
            False,
        ),
        ([{"forbid_edit": "src/generated/**"}], "edit", "/x/README.md", False),
        ([{"forbid_edit": "src/generated/**"}], "edit", "/x/src/app.py", False),
        ([{"forbid_edit": "src/generated/**"}], "edit", "/home/dev/shop/src/generated/a.ts", True),
        ([{"forbid_edit": "src/generated/**"}], "edit", "src/generated/a.ts", True),
        ([{"forbid_edit": "src/generated/**"}], "edit", "../generated/a.ts", True),  # climbs
        ([{"forbid_edit": "*.lock"}], "edit", "/x/y/pnpm-lock.yaml", False),
        ([{"forbid_edit": "*.lock"}], "edit", "/x/y/yarn.lock", True),
        ([{"forbid_command": r"\bnpm\b"}], "edit", "/x/npm", False),
        (
            [{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}],
            "edit",
            "/x/src/a",
            False,
        ),
        ([{"forbid_command": "(unclosed"}], "command", "ls", True),  # broken: full path says so
        ([{"nope": 1}], "command", "ls", True),
    ],
)
def test_the_prefilter_only_clears_what_no_check_could_hit(
    db_path: Path, checks: list[dict[str, Any]], kind: str, text: str, maybe: bool
) -> None:
    from prism_memory.bootstrap import build_services
    from prism_memory.settings import load_settings
    from prism_memory.trigraph.sqlite.guard_prefilter import may_hit

    services = build_services(load_settings(db=db_path, embedder="fake", database_url=""))
    try:
        ctx = SessionContext(uuid_for("tenant", "other"), uuid_for("project", "x"), UUID(SESSION))
        rule(services, ctx, "Some rule of another tenant", [{"forbid_command": r"\bzz\b"}])
        ctx = SessionContext(uuid_for("tenant", "acme"), uuid_for("project", "api"), UUID(SESSION))
        valid = all(next(iter(c)) != "nope" and "(unclosed" not in str(c) for c in checks)
        rule(services, ctx, "The rule", checks if valid else [{"forbid_command": "x"}])
    finally:
        services.close()
    if not valid:  # a check broken in the database after it was written
        conn = sqlite3.connect(db_path)
        conn.execute(
            "UPDATE memory_state SET checks = ? WHERE subject = 'The rule'", (json.dumps(checks),)
        )
        conn.commit()
        conn.close()
    assert may_hit(db_path, kind, text) is maybe
    assert may_hit(db_path.with_name("missing.db"), kind, text) is True


def test_the_prefilter_never_clears_an_edit_the_judge_would_hit() -> None:
    """Whatever the session's folder turns out to be, an edit whose path a ``forbid_edit``
    glob names for the judge is never cleared by the prefilter (which knows no folder)."""
    from prism_memory.domain.adherence.paths import glob_matches, session_path
    from prism_memory.trigraph.sqlite.guard_prefilter import _edit_may_hit

    globs = ["src/generated/**", "*.lock", "**/migrations/*.sql", "docs/*.md", "a?c", "/x/*"]
    paths = [
        "/home/dev/shop/src/generated/api.ts",
        "/home/dev/shop/yarn.lock",
        "/srv/app/db/migrations/0001.sql",
        "docs/intro.md",
        "./docs/../docs/intro.md",
        "abc",
        "/abc",
        "/x/y",
        "src/generated/deep/er/file.py",
        "../outside/src/generated/a.ts",
        "/",
        "",
    ]
    cwds = [None, "/", "/home", "/home/dev/shop", "/home/dev/shop/src", "/srv/app", "/other"]
    checked = 0
    for glob in globs:
        for path in paths:
            for cwd in cwds:
                if glob_matches(glob, session_path(path, cwd)):
                    checked += 1
                    assert _edit_may_hit(glob, path), (glob, path, cwd)
    assert checked > 10
