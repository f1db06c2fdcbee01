"""``prism adherence``: what agents did against the rules they were told (DESIGN §12).

- ``prism adherence claude-code --transcript FILE [--dry-run]`` reads a Claude Code session
  (its subagents' files included), judges it against every applicable memorule with checks,
  prints the verdicts and the refused attempts, and — unless ``--dry-run`` — records the
  ``violated``/``followed`` verdicts in the tenant's audit chain.
- ``prism adherence judge --actions FILE`` does the same for any agent: the session's actions
  in the client-neutral JSON shape (:mod:`prism_memory.domain.adherence.actions`).
- ``prism adherence report`` shows, per rule, sessions served / exercised / violated and the
  last violation; the most-violated rules, rules never exercised, sessions with violations.

``--hook`` is the entry a Claude Code ``Stop`` hook calls (``prism hooks install claude-code
--adherence``): it reads the hook input (JSON with ``transcript_path``) from stdin, starts the
judging in a detached background process and returns at once, printing nothing; what went
wrong goes to ``adherence.log`` in the user data directory, never to the agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any

import click

from prism_memory.cli.acting import as_operator
from prism_memory.cli.runtime import Runtime, common
from prism_memory.errors import FieldError, InvalidInput

HOOK_INPUT_MAX = 1_000_000
ACTIONS_FILE_MAX = 50_000_000
LOG_MAX_BYTES = 1_000_000
CLIENT = "claude-code"


def log_path() -> Path:
    """Where the hook's background runs write what they did and what went wrong."""
    from prism_memory.settings import default_db_path

    return default_db_path().parent / "adherence.log"


def adherence_group() -> click.Group:
    """``prism adherence``."""

    @click.group("adherence")
    def group() -> None:
        """Judge agent sessions against the checks of the rules they were told, and report."""

    @group.command("claude-code")
    @click.option(
        "--transcript",
        type=click.Path(dir_okay=False, path_type=Path),
        help="a Claude Code session file (~/.claude/projects/<dir>/<session>.jsonl)",
    )
    @click.option("--dry-run", is_flag=True, help="judge and print; record nothing")
    @click.option(
        "--hook",
        is_flag=True,
        help="read Claude Code hook input from stdin, judge in the background, print nothing",
    )
    @click.option("--log", "log_file", type=click.Path(path_type=Path), hidden=True)
    @common
    def claude_code(
        rt: Runtime, transcript: Path | None, dry_run: bool, hook: bool, log_file: Path | None
    ) -> None:
        """Judge a Claude Code session (subagents included) and record the verdicts.

        The project is the transcript's working directory unless --project or PRISM_PROJECT
        names one; the verdicts are recorded by the session itself unless --session-id names
        another.
        """
        if hook:
            _start_hook(rt)
            return
        if transcript is None:
            raise click.UsageError("give --transcript FILE (or --hook with the hook input)")
        if log_file is not None:
            _run_logged(rt, transcript, log_file)
            return
        rt.emit(_judge_transcript(rt, transcript, dry_run), _human)

    @group.command("judge")
    @click.option(
        "--actions",
        "actions_file",
        type=click.Path(dir_okay=False, path_type=Path),
        required=True,
        help="a JSON file: {session, cwd, actions: [...]} ('-' reads stdin)",
    )
    @click.option("--client", default="agent", show_default=True, help="the agent's client")
    @click.option("--dry-run", is_flag=True, help="judge and print; record nothing")
    @common
    def judge_cmd(rt: Runtime, actions_file: Path, client: str, dry_run: bool) -> None:
        """Judge a session's actions given in the client-neutral JSON shape (any agent)."""
        from prism_memory.domain.adherence.actions import parse_session

        session = parse_session(_read_json(actions_file))
        rt.emit(_judge(rt, session, client, dry_run), _human)

    @group.command("report")
    @common
    def report(rt: Runtime) -> None:
        """Per rule: sessions served, exercised and violated, and the last violation; the
        most-violated rules, rules never exercised and sessions with violations."""
        ctx = rt.ctx
        access, me = as_operator(rt.services, ctx)
        rt.emit(access.adherence_report(me.key, ctx).to_dict(), _human_report)

    return group


def _read_json(path: Path) -> Any:
    try:
        if str(path) == "-":
            text = sys.stdin.read(ACTIONS_FILE_MAX)
        else:
            with path.open("r", encoding="utf-8") as fh:
                text = fh.read(ACTIONS_FILE_MAX)
        return json.loads(text)
    except OSError as exc:
        message = f"cannot read {path}: {exc.strerror}"
        raise InvalidInput([FieldError("actions", "unreadable", message)]) from exc
    except ValueError as exc:
        message = f"{path} is not JSON: {exc}"
        raise InvalidInput([FieldError("actions", "invalid_json", message)]) from exc


def _judge_transcript(rt: Runtime, transcript: Path, dry_run: bool) -> dict[str, Any]:
    from prism_memory.capture.claude_actions import read_session

    session = read_session(transcript)
    if rt.options.get("project") is None and "PRISM_PROJECT" not in os.environ and session.cwd:
        rt.options["project"] = PurePath(session.cwd.rstrip("/")).name[:100] or None
    out = _judge(rt, session, CLIENT, dry_run)
    out["transcript"] = str(transcript)
    return out


def _judge(rt: Runtime, session: Any, client: str, dry_run: bool) -> dict[str, Any]:
    from prism_memory.services.project_config import session_uuid

    if rt.options.get("session_id") is None and "PRISM_SESSION_ID" not in os.environ:
        rt.options["session_id"] = str(session_uuid(client, session.session))
    ctx = rt.ctx
    access, me = as_operator(rt.services, ctx)
    judged = access.judge_session(me.key, ctx, session, client=client, dry_run=dry_run)
    out = judged.to_dict()
    out["project"] = str(ctx.project_id)
    return out


def _human(report: dict[str, Any]) -> str:
    head = "judged (dry run)" if report["dry_run"] else "judged"
    counts: dict[str, int] = {}
    for v in report["verdicts"]:
        counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
    lines = [
        f"{head} session {report['session']}: {report['actions']} actions, "
        f"{len(report['attempts'])} refused attempts, {report['rules_checked']} rules with checks"
        + "".join(f", {n} {kind}" for kind, n in sorted(counts.items()))
        + ("" if report["dry_run"] else f"; {report['recorded']} recorded")
    ]
    for v in report["verdicts"]:
        if v["verdict"] == "not_exercised":
            continue
        served = v.get("served_before") or {}
        when = ""
        if served.get("served"):
            when = (
                f" (served {served['first_at']}, {served['minutes_after_first_served']} min before)"
            )
        elif served:
            when = " (not served to this session before)"
        lines.append(f"  {v['verdict']:9} {v['subject']}{when}")
        if v["verdict"] == "violated":
            for e in v["evidence"][:3]:
                action = e["action"]
                text = action.get("command") or action.get("path")
                lines.append(f"      #{e['index']} {text!r}: {e['why']}")
    for a in report["attempts"][:10]:
        text = a.get("command") or a.get("path")
        lines.append(f"  attempt   {text!r} ({a.get('refusal')})")
    return "\n".join(lines)


def _human_report(report: dict[str, Any]) -> str:
    lines = [f"{'served':>6} {'exerc.':>6} {'viol.':>6}  rule"]
    for r in report["rules"]:
        lines.append(
            f"{r['served_sessions']:>6} {r['exercised_sessions']:>6} "
            f"{r['violated_sessions']:>6}  {r['subject']} ({r['memorule_id']})"
        )
        last = r["last_violation"]
        if last:
            first = (last.get("evidence") or [{}])[0].get("action", {})
            text = first.get("command") or first.get("path")
            lines.append(f"{'':21}last violated by {last['session']} at {last['at']}: {text!r}")
    if not report["rules"]:
        lines.append("no rules with checks in this project")
    if report["never_exercised"]:
        lines.append(f"never exercised: {len(report['never_exercised'])} rules")
    if report["sessions_with_violations"]:
        lines.append("sessions with violations:")
        for s in report["sessions_with_violations"][:10]:
            lines.append(f"  {s['session']}: {len(s['rules'])} rules")
    return "\n".join(lines)


def _start_hook(rt: Runtime) -> None:
    """Parse the hook input and start the judging detached; never fail the agent's turn."""
    log = log_path()
    try:
        data = json.loads(sys.stdin.read(HOOK_INPUT_MAX) or "{}")
        path = data.get("transcript_path") if isinstance(data, dict) else None
        if not isinstance(path, str) or not path:
            _log(log, "hook input has no transcript_path; nothing judged")
            return
        argv = [sys.executable, "-P", "-m", "prism_memory", "adherence", CLIENT]
        argv += ["--transcript", path, "--log", str(log)]
        for option, value in (
            ("--db", rt.options.get("db")),
            ("--database-url", rt.options.get("database_url")),
            ("--tenant", rt.options.get("tenant")),
            ("--project", rt.options.get("project")),
            ("--persona", rt.options.get("persona")),
        ):
            if value is not None:
                argv += [option, str(value)]
        subprocess.Popen(  # our own interpreter and module, no shell
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except Exception:  # the hook must never break the session: every failure goes to the log
        _log(log, "hook failed:\n" + traceback.format_exc())
        _count_failure(rt)


def _run_logged(rt: Runtime, transcript: Path, log: Path) -> None:
    """The hook's background run: the outcome, or the failure, goes to ``log`` only."""
    try:
        report = _judge_transcript(rt, transcript, dry_run=False)
        counts: dict[str, int] = {}
        for v in report["verdicts"]:
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
        _log(log, f"{transcript}: {report['recorded']} recorded {json.dumps(counts)}")
    except Exception:  # a background run has no one to tell but the log (and /metrics)
        _log(log, f"{transcript}: judging failed:\n" + traceback.format_exc())
        _count_failure(rt)


def _count_failure(rt: Runtime) -> None:
    from prism_memory.cli.hook_failures import count_failure

    count_failure(rt.options, "adherence")


def _log(log: Path, text: str) -> None:
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.exists() and log.stat().st_size > LOG_MAX_BYTES:  # Stop runs every turn
            log.replace(log.with_name(log.name + ".1"))
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"{datetime.now(UTC).isoformat()} {text}\n")
    except OSError:
        pass  # nowhere left to report to; the agent's session must go on regardless
