"""``prism brief --hook claude-code``: Claude Code's ``SessionStart``, ``UserPromptSubmit`` and
``SubagentStart`` hooks, which put the memorules that apply in front of the model without the
model asking (the subagent's brief: :mod:`prism_memory.cli.claude_subagent`).

Contract (Claude Code hooks reference): the hook input JSON arrives on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and ``source`` for SessionStart,
``prompt`` for UserPromptSubmit, ``agent_id`` and ``agent_type`` for SubagentStart); on exit
0, stdout holding
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`` adds
``additionalContext`` to the model's context (capped by Claude Code at 10,000 characters).

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from prism_memory.cli.claude_subagent import SUBAGENT_TOKEN_BUDGET_DEFAULT

if TYPE_CHECKING:
    from prism_memory.bootstrap import Services
    from prism_memory.domain.records import RecallMatch, SessionContext
    from prism_memory.services.briefed_state import BriefedState

CLIENT: Final = "claude-code"
INPUT_MAX_BYTES: Final = 1_048_576
# Claude Code replaces context over 10,000 characters with a file preview; stay under it.
HOOK_TOKEN_BUDGET_MAX: Final = 2_400
PROMPT_TOKEN_BUDGET: Final = 300
PROMPT_RULES_MAX: Final = 5
PROMPT_TOP_K: Final = 10
EVENTS: Final = ("SessionStart", "UserPromptSubmit", "SubagentStart")


class HookSkipped(Exception):
    """The hook adds nothing this time; the message says why (printed on stderr)."""


@dataclass(frozen=True)
class HookOptions:
    """How the hook runs (flags of ``prism brief``)."""

    token_budget: int
    deadline_s: float
    state_dir: Path | None
    min_relevance: float
    namespace: str | None = None
    top_k: int = 30
    prompt_rules: int = PROMPT_RULES_MAX
    subagent_token_budget: int = SUBAGENT_TOKEN_BUDGET_DEFAULT


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
            _say(f"gave up after the {self.seconds:g} s deadline (PRISM_HOOK_DEADLINE)")
            os._exit(0)

    def answer(self, payload: Mapping[str, Any]) -> None:
        """Print the hook's JSON answer, unless the deadline has already ended the process."""
        with self._lock:
            self._timer.cancel()
            sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
            sys.stdout.flush()


def run(options: Mapping[str, Any], hook: HookOptions) -> None:
    """Answer one Claude Code hook call; never raises, always returns (exit 0).

    Args:
        options: the CLI's context options (``db``, ``tenant``, ``persona``...; None when
            not given).
        hook: the hook's budget, deadline and state folder.
    """
    try:
        with Deadline(hook.deadline_s) as deadline:
            payload = _answer(options, hook, _read_input())
            if payload is not None:
                deadline.answer(payload)
    except HookSkipped as exc:
        _say(str(exc))
    except Exception as exc:  # fail open: the session must start whatever Prism's state
        _say(_describe(exc))
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
        _say(f"deadline {value!r} is not 0.1 to 600 seconds; using {default:g}", "warning")
        return default
    return parsed


def _say(reason: str, verb: str = "skipped") -> None:
    sys.stderr.write(f"prism brief --hook {CLIENT}: {verb}: {reason}\n")
    sys.stderr.flush()


def _describe(exc: Exception) -> str:
    from prism_memory.errors import PrismError

    if isinstance(exc, PrismError):
        return json.dumps(exc.to_payload(), ensure_ascii=False)
    return f"{type(exc).__name__}: {exc}"


def _read_input() -> dict[str, Any]:
    raw = sys.stdin.buffer.read(INPUT_MAX_BYTES + 1)
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
    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.cli.acting import as_operator
    from prism_memory.services.briefed_state import BriefedState, default_state_dir
    from prism_memory.services.project_config import session_uuid
    from prism_memory.settings import load_settings

    event: str = data["hook_event_name"]
    session = session_uuid(CLIENT, data["session_id"])
    settings = load_settings(**_context_options(options, data, session))
    if not settings.database_url and not settings.db_path().is_file():
        raise HookSkipped(f"no Prism store at {settings.db_path()} (set PRISM_DB or --db)")
    state = BriefedState(hook.state_dir or default_state_dir())
    # A read-only path: no migrations (they take the write lock), no model unless a prompt.
    services = build_services(settings, migrate=False)
    try:
        ctx = context_from(settings)
        if event == "SessionStart":
            budget = min(hook.token_budget, HOOK_TOKEN_BUDGET_MAX)
            access, me = as_operator(services, ctx)
            brief = access.brief(
                me.key, me.ctx, token_budget=budget, namespace=hook.namespace, top_k=hook.top_k
            )
            _remember(state, ctx.session_id, [str(m.memory.id) for m in brief.included], True)
            return _output(event, brief.markdown)
        if event == "SubagentStart":
            return _output(event, _subagent_brief(services, ctx, data, hook, state))
        text = _prompt_context(services, ctx, data, hook, state)
        return _output(event, text)
    finally:
        services.close()


def _subagent_brief(
    services: Services,
    ctx: SessionContext,
    data: Mapping[str, Any],
    hook: HookOptions,
    state: BriefedState,
) -> str:
    """The brief for a subagent's role and task, under the subagent's own session."""
    from dataclasses import replace

    from prism_memory.cli.acting import as_operator
    from prism_memory.cli.claude_subagent import subagent_session, subagent_task
    from prism_memory.services.brief_service import TASK_MAX

    agent_id = data.get("agent_id")
    if not isinstance(agent_id, str) or not agent_id:
        raise HookSkipped("SubagentStart input has no agent_id")
    own = replace(ctx, session_id=subagent_session(CLIENT, str(data["session_id"]), agent_id))
    access, me = as_operator(services, own)
    brief = access.brief(
        me.key,
        me.ctx,
        task=subagent_task(data, TASK_MAX),
        token_budget=min(hook.subagent_token_budget, HOOK_TOKEN_BUDGET_MAX),
        namespace=hook.namespace,
        top_k=hook.top_k,
    )
    _remember(state, own.session_id, [str(m.memory.id) for m in brief.included], True)
    return brief.markdown


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


def _remember(state: BriefedState, session: UUID, ids: list[str], replace: bool) -> None:
    """Record what the session was given; a state folder that cannot be written costs only
    repeats (said on stderr), never the answer."""
    try:
        state.record(session, ids, replace=replace)
    except OSError as exc:
        _say(f"could not record the briefed rules in {state.folder}: {exc}", "warning")


def _prompt_context(
    services: Services,
    ctx: SessionContext,
    data: Mapping[str, Any],
    hook: HookOptions,
    state: BriefedState,
) -> str:
    """The few rules most relevant to the prompt that the session has not been given yet.

    Raises:
        HookSkipped: nothing to add; the message says why (no prompt, nothing relevant
            enough and the best relevance seen, or all of it already given).
    """
    from prism_memory.cli.acting import as_operator
    from prism_memory.services.brief_service import CHARS_PER_TOKEN, TASK_MAX, bullet

    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise HookSkipped("added nothing: the prompt is empty")
    if hook.prompt_rules == 0:
        raise HookSkipped("added nothing: --prompt-rules is 0")
    raw: dict[str, Any] = {
        "query": prompt[:TASK_MAX],
        "top_k": PROMPT_TOP_K,
        "source_type": "memorule",
    }
    if hook.namespace:
        raw["namespace"] = hook.namespace
    access, me = as_operator(services, ctx)
    result = access.recall(me.key, me.ctx, raw)
    given = state.briefed(ctx.session_id)
    relevant = [m for m in result.matches if _relevance(m) >= hook.min_relevance]
    fresh = [m for m in relevant if str(m.memory.id) not in given]
    if not fresh:
        raise HookSkipped(_why_nothing(result.matches, relevant, hook.min_relevance))
    lines = ["## Memorules relevant to this prompt"]
    kept = []
    limit = PROMPT_TOKEN_BUDGET * CHARS_PER_TOKEN
    for match in fresh[: hook.prompt_rules]:
        line = bullet(match)
        if sum(len(x) + 1 for x in lines) + len(line) > limit:
            break
        lines.append(line)
        kept.append(str(match.memory.id))
    if not kept:
        raise HookSkipped(
            f"added nothing: the most relevant rule is over {PROMPT_TOKEN_BUDGET} tokens"
        )
    _remember(state, ctx.session_id, kept, False)
    return "\n".join(lines)


def _relevance(match: RecallMatch) -> float:
    return float(match.why.get("relevance", 0.0))


def _why_nothing(matches: list[RecallMatch], relevant: list[RecallMatch], floor: float) -> str:
    """Why the prompt hook adds nothing, said on stderr (Claude Code shows it in debug)."""
    if not matches:
        return "added nothing: no memorule applies to this context"
    if not relevant:
        best = max(_relevance(m) for m in matches)
        return (
            f"added nothing: no rule reaches relevance {floor:g} to this prompt "
            f"(best {best:.2f}; --min-relevance lowers the bar)"
        )
    return (
        f"added nothing: the {len(relevant)} rules at relevance {floor:g} or more were already "
        "given in this session"
    )


def _output(event: str, context: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
