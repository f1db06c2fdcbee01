"""``prism guard claude-code``: Claude Code's ``PreToolUse`` hook, which puts a memorule in
front of the agent before a Bash command or file edit that its checks forbid (DESIGN §12).

Contract (Claude Code hooks reference): the hook input JSON arrives on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name: "PreToolUse"``,
``tool_name``, ``tool_input``, ``tool_use_id``). On exit 0, stdout may hold
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", ...}}`` with:

- ``additionalContext``: text added to Claude's context before the tool runs, without a
  permission decision, so the usual permission flow goes on (``remind``: never ``allow``,
  which would skip the user's own permission prompt);
- ``permissionDecision: "ask"`` with ``permissionDecisionReason`` (shown to the user, who
  confirms) and the same text as ``additionalContext`` for Claude (``ask``);
- ``permissionDecision: "deny"`` with ``permissionDecisionReason`` (shown to Claude: the
  rule is the reason the tool did not run) (``deny``).

Actions: ``Bash`` (``tool_input.command``), ``Edit``/``MultiEdit``/``Write``
(``tool_input.file_path``), ``NotebookEdit`` (``tool_input.notebook_path``); other tools
pass untouched. The session's folder is the transcript's first ``cwd`` (else the hook's), as
the judge reads it; the transcript is read whole only when a ``require_before`` rule could
be hit by the pending command.

The hook fails open: whatever goes wrong (bad input, no store, a store without the checks
migration, a broken rule, a bad ``.prism.toml``) it exits 0 with nothing on stdout and says
why on stderr. It never loads the embedding model, numpy or the settings model. Each
reminder or block is recorded (``reminded``/``blocked`` audit events) by ``prism guard
record``, started detached so the agent never waits for the write.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import click

    from prism_memory.domain.adherence.actions import Action, SessionActions
    from prism_memory.guard_bootstrap import GuardSettings
    from prism_memory.services.guard_service import GuardDecision

CLIENT: Final = "claude-code"
INPUT_MAX_BYTES: Final = 1_048_576
EVENT: Final = "PreToolUse"
EDIT_TOOLS: Final = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
HEAD_LINES_MAX: Final = 200  # transcript lines read for the session's first cwd...
HEAD_BYTES_MAX: Final = 1_048_576  # ...and bytes
LOG_NAME: Final = "guard.log"


class GuardSkipped(Exception):
    """The guard says nothing this time; the message says why (printed on stderr)."""


FLAGS: Final = ("db", "database-url", "tenant", "project", "persona")


def guard_group() -> click.Group:
    """``prism guard``."""
    import click  # here, not at import: the hook's own path (:func:`main_fast`) needs none

    @click.group("guard")
    def group() -> None:
        """Put memorules in front of an agent before it runs a command or edits a file."""

    @group.command("claude-code")
    @click.option("--db", help="SQLite file [env PRISM_DB; default: the user data directory]")
    @click.option("--database-url", help="postgresql://... [env PRISM_DATABASE_URL]")
    @click.option("--tenant", help="tenant UUID or slug [env PRISM_TENANT; .prism.toml]")
    @click.option("--project", help="project UUID or slug [env PRISM_PROJECT; .prism.toml]")
    @click.option("--persona", help="who is acting [env PRISM_PERSONA; .prism.toml]")
    @click.option("--no-record", is_flag=True, help="decide only; record no audit event")
    def claude_code(no_record: bool, **flags: str | None) -> None:
        """Claude Code's PreToolUse hook: hook input on stdin, the decision on stdout.

        Installed by `prism hooks install claude-code --guard`. Fails open: exit 0 always.
        """
        run_hook(flags, record=not no_record)

    @group.command("record", hidden=True)
    @click.option("--db")
    @click.option("--database-url")
    def record(db: str | None, database_url: str | None) -> None:
        """Record a guard decision (JSON on stdin) as audit events; the hook starts it."""
        record_decision(json.loads(sys.stdin.read()), db, database_url)

    return group


def main_fast(argv: list[str]) -> None:
    """``python -m prism_memory guard claude-code [FLAGS]`` without the CLI framework (the
    command ``prism hooks install claude-code --guard`` writes): the same flags as the click
    command, parsed here because the hook runs before every tool use. ``--help`` goes to
    the full CLI. Never raises; a bad flag fails open like any other problem."""
    if any(a in ("-h", "--help") for a in argv):
        from prism_memory.cli.main import main

        sys.argv[1:] = ["guard", "claude-code", *argv]
        main()
        return
    flags: dict[str, str | None] = {}
    record = True
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        name, _, value = word.partition("=")
        if name == "--no-record" and not value:
            record = False
        elif name.startswith("--") and name[2:] in FLAGS and (value or rest):
            flags[name[2:].replace("-", "_")] = value or rest.pop(0)
        else:
            _say(f"unknown option {word[:40]!r}", "failed open")
            return
    raw = sys.stdin.read(INPUT_MAX_BYTES + 1)
    if _nothing_to_say(flags, raw):
        return
    run_hook(flags, record=record, stdin=io.StringIO(raw))


def _nothing_to_say(flags: dict[str, str | None], raw: str) -> bool:
    """True when the store certainly has no check the pending action could break
    (:func:`prism_memory.trigraph.sqlite.guard_prefilter.may_hit`), decided before anything of
    the domain is imported; False leaves every decision (and every message) to the full path."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("hook_event_name") != EVENT:
            return False
        if not isinstance(data.get("session_id"), str) or not data["session_id"]:
            return False
        tool, tool_input = data.get("tool_name"), data.get("tool_input")
        if not isinstance(tool, str) or not isinstance(tool_input, dict):
            return False
        if tool == "Bash":
            kind, text = "command", tool_input.get("command")
        elif tool in EDIT_TOOLS:
            kind, text = "edit", tool_input.get(EDIT_TOOLS[tool])
        else:
            return True  # not an action: nothing to guard
        if not isinstance(text, str) or not text.strip():
            return True
        from prism_memory.locations import store_location

        db, url = store_location(flags)
        if url:
            return False  # PostgreSQL: the full path reads it
        from prism_memory.trigraph.sqlite.guard_prefilter import may_hit

        return not may_hit(db, kind, text)
    except Exception:  # any doubt: the full path decides, and says why
        return False


def run_hook(
    flags: dict[str, str | None],
    *,
    record: bool = True,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> None:
    """Answer one hook call; never raises and never exits non-zero (fail open)."""
    source = stdin or sys.stdin
    out = stdout or sys.stdout
    try:
        answer = _answer(flags, _read_input(source), record)
    except GuardSkipped as skip:
        _say(str(skip))
        return
    except Exception as exc:  # fail open: the agent's tool use must never break on us
        _say(f"{type(exc).__name__}: {exc}", "failed open")
        from prism_memory.cli.hook_failures import count_failure

        count_failure(flags, "guard")  # for /metrics, when the store can take it
        return
    if answer is not None:
        out.write(json.dumps(answer, ensure_ascii=False))
        out.flush()


def _say(message: str, what: str = "skipped") -> None:
    print(f"prism guard: {what}: {message}", file=sys.stderr)


def _read_input(source: IO[str]) -> dict[str, Any]:
    raw = source.read(INPUT_MAX_BYTES + 1)
    if len(raw) > INPUT_MAX_BYTES:
        raise GuardSkipped(f"hook input over {INPUT_MAX_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError:
        raise GuardSkipped("hook input is not JSON") from None
    if not isinstance(data, dict):
        raise GuardSkipped("hook input is not a JSON object")
    if data.get("hook_event_name") != EVENT:
        raise GuardSkipped(f"not a {EVENT} event: {str(data.get('hook_event_name'))[:40]!r}")
    if not isinstance(data.get("session_id"), str) or not data["session_id"]:
        raise GuardSkipped("hook input has no session_id")
    return data


def pending_action(data: dict[str, Any]) -> Action | None:
    """The action a PreToolUse call is about to run, or None for other tools."""
    from prism_memory.domain.adherence.actions import COMMAND_MAX, PATH_MAX, Action

    tool, tool_input = data.get("tool_name"), data.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    use_id = data.get("tool_use_id") if isinstance(data.get("tool_use_id"), str) else None
    if tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip():
            return Action("command", command[:COMMAND_MAX], ran=False, tool=tool, id=use_id)
    elif tool in EDIT_TOOLS:
        path = tool_input.get(EDIT_TOOLS[tool])
        if isinstance(path, str) and path.strip():
            return Action("edit", path[:PATH_MAX], ran=False, tool=tool, id=use_id)
    return None


def _answer(
    flags: dict[str, str | None], data: dict[str, Any], record: bool
) -> dict[str, Any] | None:
    from prism_memory.guard_bootstrap import build_rules_reader, guard_settings
    from prism_memory.services.guard_service import GuardService
    from prism_memory.services.project_config import session_uuid

    action = pending_action(data)
    if action is None:
        return None  # not a command or an edit: nothing to guard
    start = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    settings = guard_settings(flags, Path(str(start)))
    ctx = settings.context(session_uuid(CLIENT, data["session_id"]))
    transcript = data.get("transcript_path")
    path = Path(transcript) if isinstance(transcript, str) and transcript else None
    hook_cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
    cwd = _first_cwd(path) or hook_cwd

    def history() -> SessionActions:
        return _history(path, action, cwd)

    decision = GuardService(build_rules_reader(settings)).check(ctx, action, cwd, history)
    for line in decision.broken:
        _say(line, "warning")
    if decision.enforcement is None:
        return None
    if record:
        _start_recorder(settings, decision, ctx, data["session_id"], action.id)
    return hook_output(decision)


def hook_output(decision: GuardDecision) -> dict[str, Any]:
    """The ``hookSpecificOutput`` for a decision that hit rules (see the module docstring)."""
    from prism_memory.domain.records import Enforcement

    text = decision.message()
    out: dict[str, Any] = {"hookEventName": EVENT}
    if decision.enforcement is Enforcement.DENY:
        out["permissionDecision"] = "deny"
        out["permissionDecisionReason"] = text
    elif decision.enforcement is Enforcement.ASK:
        out["permissionDecision"] = "ask"
        out["permissionDecisionReason"] = text
        out["additionalContext"] = text
    else:
        out["additionalContext"] = text
    return {"hookSpecificOutput": out}


def _first_cwd(path: Path | None) -> str | None:
    """The session's first ``cwd``, from the head of its transcript (cheap to read)."""
    if path is None or not path.is_file():
        return None
    with path.open("rb") as f:
        for _ in range(HEAD_LINES_MAX):
            line = f.readline(HEAD_BYTES_MAX)
            if not line or f.tell() > HEAD_BYTES_MAX:
                return None
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("cwd"), str) and entry["cwd"]:
                return str(entry["cwd"])
    return None


def _history(path: Path | None, action: Action, cwd: str | None) -> SessionActions:
    """The session's actions so far (subagents included), without the pending one."""
    from prism_memory.domain.adherence.actions import SessionActions

    if path is None or not path.is_file():
        return SessionActions(session="-", cwd=cwd)
    from prism_memory.capture.claude_actions import read_session

    found = read_session(path)
    earlier = tuple(a for a in found.actions if action.id is None or a.id != action.id)
    return SessionActions(found.session, found.cwd or cwd, earlier)


def _start_recorder(
    settings: GuardSettings,
    decision: GuardDecision,
    ctx: Any,
    session: str,
    tool_use_id: str | None,
) -> None:
    """Start ``prism guard record`` detached, the decision on its stdin (the command
    redacted already): the agent does not wait for the audit write."""
    import subprocess  # only on a hit: most tool uses hit nothing

    from prism_memory.domain.adherence.redact import redact_action
    from prism_memory.services.guard_service import GuardDecision, decision_payload

    redacted = GuardDecision(
        redact_action(decision.action), decision.hits, decision.rules, decision.rules_read
    )
    payload = json.dumps(decision_payload(redacted, ctx, session, tool_use_id))
    args = [sys.executable, "-P", "-m", "prism_memory", "guard", "record"]  # the full CLI
    if settings.database_url:
        args += ["--database-url", settings.database_url]
    else:
        args += ["--db", str(settings.db)]
    log = settings.db.parent / LOG_NAME
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        errors: IO[bytes] | int = log.open("ab")
    except OSError:
        errors = subprocess.DEVNULL
    try:
        child = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
            close_fds=True,
        )
        assert child.stdin is not None
        child.stdin.write(payload.encode())
        child.stdin.close()
    finally:
        if not isinstance(errors, int):
            errors.close()


def record_decision(payload: dict[str, Any], db: str | None, database_url: str | None) -> None:
    """``prism guard record``: write the decision's audit events through AccessService."""
    from uuid import UUID

    from prism_memory.bootstrap import build_access, build_services
    from prism_memory.domain.access import operator_key
    from prism_memory.domain.records import SessionContext
    from prism_memory.services.guard_service import decision_from_record
    from prism_memory.settings import load_settings

    decision, session, tool_use_id = decision_from_record(payload)
    c = payload["context"]
    ctx = SessionContext(
        tenant_id=UUID(c["tenant_id"]),
        project_id=UUID(c["project_id"]),
        session_id=UUID(c["session_id"]),
        persona=c.get("persona"),
        surface=c.get("surface"),
        specialization=c.get("specialization"),
    )
    services = build_services(load_settings(db=db, database_url=database_url or ""), migrate=False)
    try:
        access = build_access(services)
        key = operator_key(ctx.tenant_id, label="prism guard")
        access.record_guard(
            key, ctx, decision, client=CLIENT, session=session, tool_use_id=tool_use_id
        )
    finally:
        services.close()
