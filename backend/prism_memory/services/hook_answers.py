"""What a Claude Code hook puts in front of the model, computed where the store is open.

One function, :func:`answer`, for both places a hook is answered: in the hook's own process
(``prism brief --hook claude-code`` with no server: it loads the store and the model) and in a
running ``prism serve`` (``POST /v1/hooks/claude-code``, asked by the hook's fast path, see
:mod:`prism_memory.services.local_serve`). Same request, same code, same answer; the served
receipts are recorded by whichever process ran the recall, under the request's session.

What the session has already been given (its briefed state) stays with the hook process: the
request carries those ids in, the answer says which ids to record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from prism_memory.domain.contract.bounds import (
    TASK_MAX,
    TOKEN_BUDGET_DEFAULT,
    TOKEN_BUDGET_MAX,
    TOKEN_BUDGET_MIN,
    TOP_K_DEFAULT,
)
from prism_memory.errors import FieldError, InvalidInput

if TYPE_CHECKING:
    from prism_memory.domain.access import Caller
    from prism_memory.domain.records import RecallMatch
    from prism_memory.services.access_service import AccessService

EVENTS: Final = ("SessionStart", "UserPromptSubmit", "SubagentStart")
# Claude Code replaces context over 10,000 characters with a file preview; stay under it.
HOOK_TOKEN_BUDGET_MAX: Final = 2_400
PROMPT_TOKEN_BUDGET: Final = 300
PROMPT_RULES_MAX: Final = 10
PROMPT_RULES_DEFAULT: Final = 5
PROMPT_TOP_K: Final = 10
MIN_RELEVANCE_DEFAULT: Final = 0.2
SUBAGENT_TOKEN_BUDGET_DEFAULT: Final = 600
BRIEFED_MAX: Final = 1_000  # ids a request may carry (the briefed state keeps at most this)
NAMESPACE_MAX: Final = 200


@dataclass(frozen=True)
class HookRequest:
    """One hook call, after the hook has read its input and its settings.

    Attributes:
        event: ``SessionStart``, ``UserPromptSubmit`` or ``SubagentStart``.
        text: the prompt (UserPromptSubmit) or the subagent's role and task (SubagentStart);
            empty for SessionStart. Cut to the brief's task limit here.
        briefed: rule ids the session was given already (the prompt hook skips them).
    """

    event: str
    text: str = ""
    token_budget: int = TOKEN_BUDGET_DEFAULT
    namespace: str | None = None
    top_k: int = TOP_K_DEFAULT
    min_relevance: float = MIN_RELEVANCE_DEFAULT
    prompt_rules: int = PROMPT_RULES_DEFAULT
    subagent_token_budget: int = SUBAGENT_TOKEN_BUDGET_DEFAULT
    briefed: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class HookAnswer:
    """What to add to the model's context (None: nothing, ``skipped`` says why), and which
    rule ids the session was given (``replace``: they replace what was recorded)."""

    context: str | None
    served: tuple[str, ...] = ()
    replace: bool = False
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "served": list(self.served),
            "replace": self.replace,
            "skipped": self.skipped,
        }


def answer(access: AccessService, caller: Caller, request: HookRequest) -> HookAnswer:
    """The hook's answer for ``caller``'s context (its session is the one receipts name)."""
    if request.event == "UserPromptSubmit":
        return _prompt_rules(access, caller, request)
    subagent = request.event == "SubagentStart"
    budget = request.subagent_token_budget if subagent else request.token_budget
    brief = access.brief(
        caller.key,
        caller.ctx,
        task=request.text[:TASK_MAX] if subagent else "",
        token_budget=min(budget, HOOK_TOKEN_BUDGET_MAX),
        namespace=request.namespace,
        top_k=request.top_k,
    )
    served = tuple(str(m.memory.id) for m in brief.included)
    return HookAnswer(brief.markdown, served, replace=True)


def _prompt_rules(access: AccessService, caller: Caller, request: HookRequest) -> HookAnswer:
    """The few rules most relevant to the prompt that the session has not been given yet."""
    from prism_memory.services.brief_service import CHARS_PER_TOKEN, bullet

    prompt = request.text
    if not prompt.strip():
        return HookAnswer(None, skipped="added nothing: the prompt is empty")
    if request.prompt_rules == 0:
        return HookAnswer(None, skipped="added nothing: --prompt-rules is 0")
    raw: dict[str, Any] = {
        "query": prompt[:TASK_MAX],
        "top_k": PROMPT_TOP_K,
        "source_type": "memorule",
    }
    if request.namespace:
        raw["namespace"] = request.namespace
    result = access.recall(caller.key, caller.ctx, raw)
    relevant = [m for m in result.matches if _relevance(m) >= request.min_relevance]
    fresh = [m for m in relevant if str(m.memory.id) not in request.briefed]
    if not fresh:
        return HookAnswer(
            None, skipped=_why_nothing(result.matches, relevant, request.min_relevance)
        )
    lines = ["## Memorules relevant to this prompt"]
    kept: list[str] = []
    limit = PROMPT_TOKEN_BUDGET * CHARS_PER_TOKEN
    for match in fresh[: request.prompt_rules]:
        line = bullet(match)
        if sum(len(x) + 1 for x in lines) + len(line) > limit:
            break
        lines.append(line)
        kept.append(str(match.memory.id))
    if not kept:
        return HookAnswer(
            None,
            skipped=f"added nothing: the most relevant rule is over {PROMPT_TOKEN_BUDGET} tokens",
        )
    return HookAnswer("\n".join(lines), tuple(kept), replace=False)


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


# The wire form (``POST /v1/hooks/claude-code``): judged field by field, every problem at once.

CONTEXT_FIELDS: Final = ("tenant", "project", "persona", "surface", "specialization", "session_id")
_INTS: Final = {
    "token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
    "top_k": (1, 100),
    "prompt_rules": (0, PROMPT_RULES_MAX),
    "subagent_token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
}
_TOP_LEVEL: Final = frozenset({"event", "text", "store", "context", "options", "briefed"})
TEXT_MAX: Final = 16_000  # what the hook sends; the answer reads TASK_MAX of it


def request_from(body: Mapping[str, Any]) -> tuple[HookRequest, dict[str, str | None], str]:
    """The request, its context strings and the store it was meant for, from a JSON body.

    Raises:
        InvalidInput: every field that is missing, of the wrong type or out of range.
    """
    errors: list[FieldError] = []
    for name in sorted(set(body) - _TOP_LEVEL):
        errors.append(FieldError(name, "unknown_field", f"'{name}' is not a field of this call"))
    event = body.get("event")
    if event not in EVENTS:
        errors.append(FieldError("event", "invalid_choice", f"'event' must be one of {EVENTS}"))
    text = body.get("text", "")
    if not isinstance(text, str) or len(text) > TEXT_MAX:
        errors.append(
            FieldError("text", "invalid_format", f"'text' must be a string of <= {TEXT_MAX}")
        )
    store = body.get("store")
    if not isinstance(store, str) or not store:
        errors.append(FieldError("store", "required", "'store' must name the store asked"))
    context = _context(body.get("context"), errors)
    options = _options(body.get("options", {}), errors)
    briefed = body.get("briefed", [])
    if (
        not isinstance(briefed, list)
        or len(briefed) > BRIEFED_MAX
        or not all(isinstance(i, str) and 0 < len(i) <= 64 for i in briefed)
    ):
        errors.append(
            FieldError("briefed", "invalid_format", f"'briefed' must be <= {BRIEFED_MAX} rule ids")
        )
    if errors:
        raise InvalidInput(errors)
    request = HookRequest(event=str(event), text=str(text), briefed=frozenset(briefed), **options)
    return request, context, str(store)


def _context(raw: Any, errors: list[FieldError]) -> dict[str, str | None]:
    if not isinstance(raw, dict):
        errors.append(FieldError("context", "wrong_type", "'context' must be an object"))
        return {}
    out: dict[str, str | None] = {}
    for name in sorted(set(raw) - set(CONTEXT_FIELDS)):
        errors.append(FieldError(f"context.{name}", "unknown_field", f"'{name}' is not a key"))
    for name in CONTEXT_FIELDS:
        value = raw.get(name)
        if value is not None and (not isinstance(value, str) or not value or len(value) > 200):
            errors.append(
                FieldError(f"context.{name}", "invalid_format", f"'{name}' must be 1 to 200 chars")
            )
            continue
        out[name] = value
    if not out.get("session_id") and not any(e.field == "context.session_id" for e in errors):
        errors.append(FieldError("context.session_id", "required", "the session is required"))
    return out


def _options(raw: Any, errors: list[FieldError]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        errors.append(FieldError("options", "wrong_type", "'options' must be an object"))
        return {}
    out: dict[str, Any] = {}
    known = {*_INTS, "namespace", "min_relevance"}
    for name in sorted(set(raw) - known):
        errors.append(FieldError(f"options.{name}", "unknown_field", f"'{name}' is not a key"))
    for name, (low, high) in _INTS.items():
        value = raw.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors.append(
                FieldError(f"options.{name}", "out_of_range", f"'{name}' must be {low} to {high}")
            )
        else:
            out[name] = value
    relevance = raw.get("min_relevance")
    if relevance is not None:
        if isinstance(relevance, bool) or not isinstance(relevance, int | float):
            ok = False
        else:
            ok = 0.0 <= float(relevance) <= 1.0
        if ok:
            out["min_relevance"] = float(relevance)
        else:
            errors.append(
                FieldError("options.min_relevance", "out_of_range", "'min_relevance' is 0 to 1")
            )
    namespace = raw.get("namespace")
    if namespace is not None:
        if isinstance(namespace, str) and 0 < len(namespace) <= NAMESPACE_MAX:
            out["namespace"] = namespace
        else:
            errors.append(
                FieldError("options.namespace", "invalid_format", "'namespace' is 1 to 200 chars")
            )
    return out
