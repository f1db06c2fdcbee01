"""``prism capture claude-code`` / ``prism capture codex``: propose memorules from what the
operator typed.

Reads a Claude Code session transcript or a Codex CLI session file, detects the messages that
state a lasting rule (:mod:`prism_memory.capture`), and puts each into the review queue as a
``proposed`` memorule, or adds it as evidence to the rule it repeats. Re-running on the same
file proposes nothing new.

``--hook`` is the entry a Claude Code ``Stop``/``SessionEnd`` hook calls: it reads the hook
input (JSON with ``transcript_path``) from stdin, starts the capture in a detached background
process and returns at once, printing nothing; failures go to ``capture.log`` in the user data
directory, never to the agent, and are counted in the store for ``/metrics``
(:mod:`prism_memory.trigraph.hook_failures`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prism_memory.capture.codex import read_codex
from prism_memory.capture.proposals import candidates, project_slug
from prism_memory.capture.transcript import Transcript, read
from prism_memory.cli.acting import as_operator
from prism_memory.cli.hook_failures import count_failure
from prism_memory.cli.runtime import Runtime, common
from prism_memory.serializers import capture_dict
from prism_memory.settings import default_db_path

if TYPE_CHECKING:
    from prism_memory.cli.progress import Progress
    from prism_memory.services.capture_service import CaptureProgress

HOOK_INPUT_MAX = 1_000_000
LOG_MAX_BYTES = 1_000_000  # then capture.log becomes capture.log.1 and a new one starts


def log_path() -> Path:
    """Where the hook's background captures write what went wrong (and what they did)."""
    return default_db_path().parent / "capture.log"


def capture_group() -> click.Group:
    """``prism capture``."""

    @click.group("capture")
    def group() -> None:
        """Propose memorules from agent session transcripts (into `prism proposals`)."""

    @group.command("claude-code")
    @click.option(
        "--transcript",
        type=click.Path(dir_okay=False, path_type=Path),
        help="a Claude Code session file (~/.claude/projects/<dir>/<session>.jsonl)",
    )
    @click.option("--dry-run", is_flag=True, help="show what would be proposed; write nothing")
    @click.option(
        "--for-persona",
        help="applies_to.persona: the agent the operator was talking to [default: --persona]",
    )
    @click.option(
        "--hook",
        is_flag=True,
        help="read Claude Code hook input from stdin, capture in the background, print nothing",
    )
    @click.option("--log", "log_file", type=click.Path(path_type=Path), hidden=True)
    @common
    def claude_code(
        rt: Runtime,
        transcript: Path | None,
        dry_run: bool,
        for_persona: str | None,
        hook: bool,
        log_file: Path | None,
    ) -> None:
        """Capture corrections, rules, preferences and conventions from a transcript.

        Only what the operator typed is read: never tool results, assistant text, sub-agent
        sidechains or attached files. The project is the transcript's working directory
        unless --project or PRISM_PROJECT names one.
        """
        if hook:
            _start_hook(rt, for_persona)
            return
        if transcript is None:
            raise click.UsageError("give --transcript FILE (or --hook with the hook input)")
        if log_file is not None:
            _run_logged(rt, transcript, for_persona, log_file)
            return
        from prism_memory.cli.progress import progress_for

        shown = progress_for(rt.json, "capture")
        try:
            report = _capture(rt, transcript, for_persona, dry_run, _staged(shown))
        finally:
            shown.close()
        rt.emit(report, _human)

    @group.command("codex")
    @click.option(
        "--transcript",
        type=click.Path(dir_okay=False, path_type=Path),
        required=True,
        help="a Codex CLI session file (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)",
    )
    @click.option("--dry-run", is_flag=True, help="show what would be proposed; write nothing")
    @click.option(
        "--for-persona",
        help="applies_to.persona: the agent the operator was talking to [default: --persona]",
    )
    @common
    def codex(rt: Runtime, transcript: Path, dry_run: bool, for_persona: str | None) -> None:
        """Capture corrections, rules, preferences and conventions from a Codex session.

        Only what the operator typed is read (its user_message events): never the context
        Codex injects, assistant text, tool calls or output, or a sub-agent's session. The
        project is the session's working directory unless --project or PRISM_PROJECT names one.
        """
        report = _capture(rt, transcript, for_persona, dry_run, reader=read_codex)
        rt.emit(report, _human)

    return group


def _staged(shown: Progress) -> CaptureProgress | None:
    """The capture's stages on one progress line (a terminal only): embedded, then decided."""
    if not shown.enabled:
        return None

    def report(stage: str, done: int, total: int) -> None:
        label = f"{stage} (detected messages)"
        if label != shown.label:
            shown.restart(label, total)
        shown(done, total)

    return report


def _capture(
    rt: Runtime,
    transcript: Path,
    for_persona: str | None,
    dry_run: bool,
    progress: CaptureProgress | None = None,
    reader: Callable[[Path], Transcript] = read,
) -> dict[str, Any]:
    read_back = reader(transcript)
    messages = read_back.messages
    if rt.options.get("project") is None and "PRISM_PROJECT" not in os.environ:
        rt.options["project"] = project_slug(messages) or None
    ctx = rt.ctx
    found = candidates(messages, for_persona or ctx.persona)
    access, me = as_operator(rt.services, ctx)
    captured = access.capture(me.key, ctx, found, len(messages), dry_run=dry_run, progress=progress)
    report = capture_dict(captured)
    report["transcript"] = str(transcript)
    report["project"] = str(ctx.project_id)
    report["transcript_skipped"] = dict(sorted(read_back.skipped.items()))
    return report


def _human(report: dict[str, Any]) -> str:
    head = "would capture" if report["dry_run"] else "captured"
    lines = [
        f"{head} {report['detected']} of {report['messages']} operator messages: "
        f"{report['proposed']} proposed, {report['evidence']} as evidence for a known rule, "
        f"{report['already_captured']} already captured"
        + (f", {report['skipped']} skipped" if report["skipped"] else "")
    ]
    unread = report.get("transcript_skipped") or {}
    if unread:
        why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in unread.items())
        lines.append(f"skipped transcript lines: {why}")
    for o in report["outcomes"]:
        target = f" -> {o['memorule_id']}" if o["memorule_id"] else ""
        lines.append(f"  {o['action']:16} {o['memorule_kind']:15} {o['subject']}{target}")
    if report["proposed"] and not report["dry_run"]:
        lines.append("review them with: prism proposals")
    return "\n".join(lines)


def _start_hook(rt: Runtime, for_persona: str | None) -> None:
    """Parse the hook input and start the capture detached; never fail the agent's turn."""
    log = log_path()
    try:
        data = json.loads(sys.stdin.read(HOOK_INPUT_MAX) or "{}")
        path = data.get("transcript_path") if isinstance(data, dict) else None
        if not isinstance(path, str) or not path:
            _log(log, "hook input has no transcript_path; nothing captured")
            return
        # -P: the hook runs in the user's project folder, whose own ``prism_memory/`` (or any
        # module name) must never shadow ours: Python 3.11's -P keeps the cwd off sys.path.
        argv = [sys.executable, "-P", "-m", "prism_memory", "capture", "claude-code"]
        argv += ["--transcript", path, "--log", str(log)]
        for option, value in (
            ("--db", rt.options.get("db")),
            ("--database-url", rt.options.get("database_url")),
            ("--tenant", rt.options.get("tenant")),
            ("--project", rt.options.get("project")),
            ("--persona", rt.options.get("persona")),
            ("--for-persona", for_persona),
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
        count_failure(rt.options, "capture")


def _run_logged(rt: Runtime, transcript: Path, for_persona: str | None, log: Path) -> None:
    """The hook's background run: the outcome, or the failure, goes to ``log`` only."""
    try:
        report = _capture(rt, transcript, for_persona, dry_run=False)
        _log(
            log,
            f"{transcript}: {report['proposed']} proposed, {report['evidence']} evidence, "
            f"{report['already_captured']} already captured",
        )
    except Exception:  # a background run has no one to tell but the log (and /metrics)
        _log(log, f"{transcript}: capture failed:\n" + traceback.format_exc())
        count_failure(rt.options, "capture")


def _log(log: Path, text: str) -> None:
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.exists() and log.stat().st_size > LOG_MAX_BYTES:  # Stop runs every turn
            log.replace(log.with_name(log.name + ".1"))
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"{datetime.now(UTC).isoformat()} {text}\n")
    except OSError:
        pass  # nowhere left to report to; the agent's session must go on regardless
