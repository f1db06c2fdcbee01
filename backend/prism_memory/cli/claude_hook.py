"""``prism brief --hook claude-code``: Claude Code's ``SessionStart``, ``UserPromptSubmit``,
``SubagentStart`` and ``PreToolUse`` hooks, which put the memorules that apply in front of the
model without the model asking (the subagent's brief: :mod:`prism_memory.cli.claude_subagent`;
a file's first touch: :mod:`prism_memory.cli.claude_touch`).

Contract (Claude Code hooks reference): the hook input JSON arrives on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and ``source`` for SessionStart,
``prompt`` for UserPromptSubmit, ``agent_id`` and ``agent_type`` for SubagentStart,
``tool_name`` and ``tool_input`` for PreToolUse); on exit 0, stdout holding
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`` adds
``additionalContext`` to the model's context (capped by Claude Code at 10,000 characters;
for PreToolUse without a permission decision, so the usual permission flow goes on).

This module answers in the hook's own process (the store and, for a prompt or a subagent's
task, the embedding model loaded here). The installed command goes first through
:mod:`prism_memory.cli.claude_hook_fast`, which asks the store's running ``prism serve`` for
the same answer (:func:`prism_memory.services.hook_answers.answer`, the same request built by
:func:`hook_request`) and comes here only when no server can answer.

Hooks fail open: whatever goes wrong (bad input, no store, a locked or broken store, a bad
setting, the deadline passing) the hook exits 0 with nothing on stdout, so the session
starts as it would without Prism, and says why on stderr.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from uuid import UUID

from prism_memory.domain.contract.bounds import TASK_MAX, TOP_K_DEFAULT
from prism_memory.services.hook_answers import (
    EVENTS,
    PROMPT_RULES_DEFAULT,
    SUBAGENT_TOKEN_BUDGET_DEFAULT,
    TOUCH_RELEVANCE_DEFAULT,
    TOUCH_RULES_DEFAULT,
    HookAnswer,
    HookRequest,
)

if TYPE_CHECKING:
    from prism_memory.services.briefed_state import BriefedState

CLIENT: Final = "claude-code"
INPUT_MAX_BYTES: Final = 1_048_576
HOOK_DEADLINE_DEFAULT_S: Final = 5.0


class HookSkipped(Exception):
    """The hook adds nothing this time; the message says why (printed on stderr)."""


class HookOptions(NamedTuple):
    """How the hook runs (flags of ``prism brief``)."""

    token_budget: int
    deadline_s: float
    state_dir: Path | None
    min_relevance: float
    namespace: str | None = None
    top_k: int = TOP_K_DEFAULT
    prompt_rules: int = PROMPT_RULES_DEFAULT
    subagent_token_budget: int = SUBAGENT_TOKEN_BUDGET_DEFAULT
    touch_rules: int = TOUCH_RULES_DEFAULT
    touch_relevance: float = TOUCH_RELEVANCE_DEFAULT


class Deadline:
    """Ends the process with exit 0 and empty stdout if the hook is still working at the end.

    A timer thread, not a signal: a process waiting in SQLite's busy handler (a locked
    store) runs no Python signal handler until the wait ends. Writing the answer and
    expiring take the same lock, so stdout holds either the whole answer or nothing.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            say(f"gave up after the {self.seconds:g} s deadline (PRISM_HOOK_DEADLINE)")
            os._exit(0)

    def answer(self, payload: Mapping[str, Any]) -> None:
        """Print the hook's JSON answer, unless the deadline has already ended the process."""
        with self._lock:
            self._timer.cancel()
            sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
            sys.stdout.flush()


def run(options: Mapping[str, Any], hook: HookOptions, raw: bytes | None = None) -> None:
    """Answer one Claude Code hook call in this process; never raises, always returns (exit 0).

    Args:
        options: the CLI's context options (``db``, ``tenant``, ``persona``...; None when
            not given).
        hook: the hook's budget, deadline and state folder.
        raw: the hook input, when the caller read it already (else it is read from stdin).
    """
    try:
        with Deadline(hook.deadline_s) as deadline:
            if raw is None:
                raw = sys.stdin.buffer.read(INPUT_MAX_BYTES + 1)
            payload = _answer(options, hook, read_input(raw))
            if payload is not None:
                deadline.answer(payload)
    except HookSkipped as exc:
        say(str(exc))
    except Exception as exc:  # fail open: the session must start whatever Prism's state
        say(_describe(exc))
        from prism_memory.cli.hook_failures import count_failure

        count_failure(options, "brief")  # for /metrics, when the store can take it


def seconds(value: str, default: float) -> float:
    """The deadline in seconds (0.1 to 600); a bad value warns and keeps the default, since a
    hook must not fail on a setting."""
    try:
        parsed = float(value)
    except ValueError:
        parsed = float("nan")
    if not 0.1 <= parsed <= 600.0:  # also False for NaN
        say(f"deadline {value!r} is not 0.1 to 600 seconds; using {default:g}", "warning")
        return default
    return parsed


def say(reason: str, verb: str = "skipped") -> None:
    sys.stderr.write(f"prism brief --hook {CLIENT}: {verb}: {reason}\n")
    sys.stderr.flush()


def _describe(exc: Exception) -> str:
    from prism_memory.errors import PrismError

    if isinstance(exc, PrismError):
        return json.dumps(exc.to_payload(), ensure_ascii=False)
    return f"{type(exc).__name__}: {exc}"


def read_input(raw: bytes) -> dict[str, Any]:
    """The hook input (a JSON object of a known event with a session), from stdin's bytes.

    Raises:
        HookSkipped: anything else (the message says what).
    """
    if len(raw) > INPUT_MAX_BYTES:
        raise HookSkipped(f"hook input is over {INPUT_MAX_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookSkipped(f"hook input on stdin is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HookSkipped("hook input on stdin is not a JSON object")
    event = data.get("hook_event_name")
    if event not in EVENTS:
        raise HookSkipped(f"hook_event_name {event!r} is not one of {', '.join(EVENTS)}")
    if not isinstance(data.get("session_id"), str) or not data["session_id"]:
        raise HookSkipped("hook input has no session_id")
    return data


def _answer(
    options: Mapping[str, Any], hook: HookOptions, data: dict[str, Any]
) -> dict[str, Any] | None:
    from prism_memory.services.briefed_state import BriefedState, default_state_dir
    from prism_memory.services.project_config import session_uuid

    session = session_uuid(CLIENT, data["session_id"])
    state = BriefedState(hook.state_dir or default_state_dir())
    if data["hook_event_name"] == "PreToolUse":  # a file touched before: nothing to load
        asked_in = given_session(options.get("session_id"), session)
        if asked_in is not None:
            first_touch(data, hook, asked_in, state)
    from dataclasses import replace

    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.cli.acting import as_operator
    from prism_memory.services.hook_answers import answer
    from prism_memory.settings import load_settings

    settings = load_settings(**_context_options(options, data, session))
    if not settings.database_url and not settings.db_path().is_file():
        raise HookSkipped(f"no Prism store at {settings.db_path()} (set PRISM_DB or --db)")
    ctx = context_from(settings)
    request, own_session = hook_request(data, hook, ctx.session_id, state)
    ctx = replace(ctx, session_id=own_session)
    # A read-only path: no migrations (they take the write lock), no model unless a prompt.
    services = build_services(settings, migrate=False)
    try:
        access, me = as_operator(services, ctx)
        result = answer(access, me, request)
    finally:
        services.close()
    return deliver(request, result, state, own_session)


def hook_request(
    data: Mapping[str, Any], hook: HookOptions, session: UUID, state: BriefedState
) -> tuple[HookRequest, UUID]:
    """What to ask for a hook input, and the session it is asked in (a subagent's own);
    the same in the hook's process and when the hook asks a running server.

    Raises:
        HookSkipped: a SubagentStart input without ``agent_id``; a PreToolUse input that is
            not a session's first touch of a file (:func:`first_touch`).
    """
    from prism_memory.cli.claude_subagent import subagent_session, subagent_task

    event: str = data["hook_event_name"]
    text = ""
    briefed: frozenset[str] = frozenset()
    if event == "SubagentStart":
        agent_id = data.get("agent_id")
        if not isinstance(agent_id, str) or not agent_id:
            raise HookSkipped("SubagentStart input has no agent_id")
        session = subagent_session(CLIENT, str(data["session_id"]), agent_id)
        text = subagent_task(data, TASK_MAX)
    elif event == "UserPromptSubmit":
        prompt = data.get("prompt")
        text = prompt[:TASK_MAX] if isinstance(prompt, str) else ""
        briefed = frozenset(state.briefed(session))
    elif event == "PreToolUse":
        session = touching_session(data, session)
        text = first_touch(data, hook, session, state)
        briefed = frozenset(state.briefed(session))
    request = HookRequest(
        event=event,
        text=text,
        token_budget=hook.token_budget,
        namespace=hook.namespace,
        top_k=hook.top_k,
        min_relevance=hook.min_relevance,
        prompt_rules=hook.prompt_rules,
        subagent_token_budget=hook.subagent_token_budget,
        briefed=briefed,
        touch_rules=hook.touch_rules,
        touch_relevance=hook.touch_relevance,
    )
    return request, session


def first_touch(
    data: Mapping[str, Any], hook: HookOptions, session: UUID, state: BriefedState
) -> str:
    """The file a PreToolUse input touches (relative to the session's folder), when the
    session touches it for the first time. Cheap: no store, no model, no server; both paths
    ask it before anything else.

    Raises:
        HookSkipped: not a tool that touches a file, no path, ``--touch-rules 0``, or a file
            the session touched before.
    """
    from prism_memory.cli.claude_touch import NotATouch, touched_file

    try:
        path = touched_file(data)
    except NotATouch as exc:
        raise HookSkipped(str(exc)) from None
    if hook.touch_rules == 0:
        raise HookSkipped("added nothing: --touch-rules is 0")
    if path in state.touched(touching_session(data, session)):
        raise HookSkipped(f"added nothing: {path} was touched before in this session")
    return path


def touching_session(data: Mapping[str, Any], session: UUID) -> UUID:
    """The session a file is touched in: a subagent's own when the input names one
    (``agent_id``: Claude Code sets it on a tool call made inside a subagent), else
    ``session``. A subagent starts with a fresh context window, so it gets a file's rules on
    its own first touch, whatever its parent touched, and only what its own brief (recorded
    under the same session by ``SubagentStart``) did not give it."""
    agent_id = data.get("agent_id")
    if not isinstance(agent_id, str) or not agent_id:
        return session
    from prism_memory.cli.claude_subagent import subagent_session

    return subagent_session(CLIENT, str(data["session_id"]), agent_id)


def given_session(given: object, session: UUID) -> UUID | None:
    """The session a hook asks in: ``--session-id`` when given (None when it is not a UUID:
    the caller's own checks say so), else Claude Code's."""
    if given is None:
        return session
    try:
        return UUID(str(given))
    except ValueError:
        return None


def deliver(
    request: HookRequest, result: HookAnswer, state: BriefedState, session: UUID
) -> dict[str, Any]:
    """The hook's output for an answer, after recording what the session was given (and, for
    a PreToolUse, the file as touched, whether or not rules were added).

    Raises:
        HookSkipped: nothing to add (the answer says why).
    """
    touched = [request.text] if request.event == "PreToolUse" else []
    if result.context is None:
        if touched:
            _remember(state, session, [], False, touched)
        raise HookSkipped(result.skipped or "added nothing")
    _remember(state, session, list(result.served), result.replace, touched)
    return _output(request.event, result.context)


def _context_options(
    options: Mapping[str, Any], data: Mapping[str, Any], session: UUID
) -> dict[str, Any]:
    """Flags first, then ``PRISM_*`` variables, then the project's ``.prism.toml``, then the
    surface its files name; the session is Claude Code's unless ``--session-id`` names one."""
    from prism_memory.services.project_config import find_project_config, with_project_config

    start = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    config = find_project_config(Path(str(start)))
    merged = with_project_config(options, config, os.environ)
    if merged.get("session_id") is None:
        merged["session_id"] = str(session)
    return merged


def _remember(
    state: BriefedState, session: UUID, ids: list[str], replace: bool, touched: list[str]
) -> None:
    """Record what the session was given (and touched); a state folder that cannot be written
    costs only repeats (said on stderr), never the answer."""
    try:
        state.record(session, ids, replace=replace, touched=touched)
    except OSError as exc:
        say(f"could not record the briefed rules in {state.folder}: {exc}", "warning")


def _output(event: str, context: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
