"""What a Claude Code hook puts in front of the model, computed where the store is open.

One function, :func:`answer`, for both places a hook is answered: in the hook's own process
(``prism brief --hook claude-code`` with no server: it loads the store and the model) and in a
running ``prism serve`` (``POST /v1/hooks/claude-code``, asked by the hook's fast path, see
:mod:`prism_memory.services.local_serve`). Same request, same code, same answer; the served
receipts are recorded by whichever process ran the recall, under the request's session.

What the session has already been given (its briefed state) stays with the hook process: the
request carries those ids in, the answer says which ids to record. The request's wire form
is judged in :mod:`prism_memory.services.hook_wire`. Named tuples, not dataclasses, and no
error classes at import: the hook's fast path imports this module, and ``dataclasses``
alone (it imports ``inspect``) costs a third of such a hook's own start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple

from prism_memory.domain.contract.bounds import TASK_MAX, TOKEN_BUDGET_DEFAULT, TOP_K_DEFAULT

if TYPE_CHECKING:
    from prism_memory.domain.access import Caller
    from prism_memory.domain.records import RecallMatch
    from prism_memory.services.access_service import AccessService

EVENTS: Final = ("SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse")
# Claude Code replaces context over 10,000 characters with a file preview; stay under it.
HOOK_TOKEN_BUDGET_MAX: Final = 2_400
PROMPT_TOKEN_BUDGET: Final = 300
PROMPT_RULES_MAX: Final = 10
# The prompt hook's defaults and the session-start budget (TOKEN_BUDGET_DEFAULT, 1,200) were
# chosen together on the development part of the real-task benchmark (bench/tasks/README.md,
# "Choosing the defaults on dev"): the most must-follow rules delivered within 1,500 tokens.
PROMPT_RULES_DEFAULT: Final = 8
PROMPT_TOP_K: Final = 10
MIN_RELEVANCE_DEFAULT: Final = 0.15
SUBAGENT_TOKEN_BUDGET_DEFAULT: Final = 600
# The first touch of a file (PreToolUse): a couple of rules, never more than the prompt hook's
# room; each tool call may add context, so the count is small.
TOUCH_RULES_DEFAULT: Final = 2
TOUCH_RULES_MAX: Final = PROMPT_RULES_MAX
TOUCH_RELEVANCE_DEFAULT: Final = 0.15
TOUCH_TOKEN_BUDGET: Final = 300
TOUCH_TOP_K: Final = 10
PATH_SEPARATORS: Final = str.maketrans("/_-.\\", "     ")


class HookRequest(NamedTuple):
    """One hook call, after the hook has read its input and its settings.

    Attributes:
        event: ``SessionStart``, ``UserPromptSubmit``, ``SubagentStart`` or ``PreToolUse``.
        text: the prompt (UserPromptSubmit), the subagent's role and task (SubagentStart),
            the touched file's path relative to the session's folder (PreToolUse); empty for
            SessionStart. Cut to the brief's task limit here.
        briefed: rule ids the session was given already (the prompt and touch hooks skip
            them).
        touch_rules: at most this many rules for a file's first touch (0: none).
        touch_relevance: only rules at least this relevant to the file's path words.
    """

    event: str
    text: str = ""
    token_budget: int = TOKEN_BUDGET_DEFAULT
    namespace: str | None = None
    top_k: int = TOP_K_DEFAULT
    min_relevance: float = MIN_RELEVANCE_DEFAULT
    prompt_rules: int = PROMPT_RULES_DEFAULT
    subagent_token_budget: int = SUBAGENT_TOKEN_BUDGET_DEFAULT
    briefed: frozenset[str] = frozenset()
    touch_rules: int = TOUCH_RULES_DEFAULT
    touch_relevance: float = TOUCH_RELEVANCE_DEFAULT


class HookAnswer(NamedTuple):
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
    if request.event == "PreToolUse":
        return _touch_rules(access, caller, request)
    subagent = request.event == "SubagentStart"
    budget = request.subagent_token_budget if subagent else request.token_budget
    from prism_memory.domain.contract.recall import BriefCreate

    brief_request = BriefCreate.parse(
        {
            "task": request.text[:TASK_MAX] if subagent else "",
            "token_budget": min(budget, HOOK_TOKEN_BUDGET_MAX),
            "namespace": request.namespace,
            "top_k": request.top_k,
        }
    )
    brief = access.brief(caller.key, caller.ctx, brief_request)
    served = tuple(str(m.memory.id) for m in brief.included)
    return HookAnswer(brief.markdown, served, replace=True)


def _prompt_rules(access: AccessService, caller: Caller, request: HookRequest) -> HookAnswer:
    """The few rules most relevant to the prompt that the session has not been given yet."""
    prompt = request.text
    if not prompt.strip():
        return HookAnswer(None, skipped="added nothing: the prompt is empty")
    if request.prompt_rules == 0:
        return HookAnswer(None, skipped="added nothing: --prompt-rules is 0")
    return _fresh_rules(
        access,
        caller,
        request,
        _Pick(
            query=prompt,
            heading="## Memorules relevant to this prompt",
            most=request.prompt_rules,
            floor=request.min_relevance,
            budget=PROMPT_TOKEN_BUDGET,
            top_k=PROMPT_TOP_K,
            what="this prompt",
            flag="--min-relevance",
        ),
    )


def path_query(relative_path: str) -> str:
    """The recall query for a file the session touches: its path in words.

    The path (relative to the session's folder) is split on ``/``, ``_``, ``-``, ``.`` (and
    ``\\``) into words: ``packages/core/src/tracing/langgraph/index.ts`` is asked as
    ``packages core src tracing langgraph index ts``. Chosen on the development part of the
    real-task benchmark (``bench/tasks/touch_study.py``), where the path's words did at
    least as well as the task's title with the path, and they need no state of the prompt:
    the hook knows the file, not the conversation.
    """
    return " ".join(relative_path.translate(PATH_SEPARATORS).split())


def _touch_rules(access: AccessService, caller: Caller, request: HookRequest) -> HookAnswer:
    """The rules most relevant to a file the session touches for the first time that the
    session has not been given yet."""
    if request.touch_rules == 0:
        return HookAnswer(None, skipped="added nothing: --touch-rules is 0")
    query = path_query(request.text)
    if not query:
        return HookAnswer(None, skipped="added nothing: the file's path has no words")
    shown = "".join(c if c.isprintable() else "?" for c in request.text)
    return _fresh_rules(
        access,
        caller,
        request,
        _Pick(
            query=query,
            heading=f"## Memorules for {shown}",
            most=request.touch_rules,
            floor=request.touch_relevance,
            budget=TOUCH_TOKEN_BUDGET,
            top_k=TOUCH_TOP_K,
            what="this file's path",
            flag="--touch-relevance",
        ),
    )


class _Pick(NamedTuple):
    """How a prompt or a touched file picks its rules: the query, the heading, at most
    ``most`` rules at relevance ``floor`` or more within ``budget`` tokens; ``what`` and
    ``flag`` name them when nothing is added."""

    query: str
    heading: str
    most: int
    floor: float
    budget: int
    top_k: int
    what: str
    flag: str


def _fresh_rules(
    access: AccessService, caller: Caller, request: HookRequest, pick: _Pick
) -> HookAnswer:
    """The few rules most relevant to ``pick.query`` that the session has not been given."""
    from prism_memory.services.brief_service import CHARS_PER_TOKEN, bullet

    raw: dict[str, Any] = {
        "query": pick.query[:TASK_MAX],
        "top_k": pick.top_k,
        "source_type": "memorule",
    }
    if request.namespace:
        raw["namespace"] = request.namespace
    from prism_memory.domain.contract.recall import RecallCreate

    result = access.recall(caller.key, caller.ctx, RecallCreate.parse(raw))
    relevant = [m for m in result.matches if _relevance(m) >= pick.floor]
    fresh = [m for m in relevant if str(m.memory.id) not in request.briefed]
    if not fresh:
        return HookAnswer(None, skipped=_why_nothing(result.matches, relevant, pick))
    lines = [pick.heading]
    kept: list[str] = []
    limit = pick.budget * CHARS_PER_TOKEN
    for match in fresh[: pick.most]:
        line = bullet(match)
        if sum(len(x) + 1 for x in lines) + len(line) > limit:
            break
        lines.append(line)
        kept.append(str(match.memory.id))
    if not kept:
        return HookAnswer(
            None,
            skipped=f"added nothing: the most relevant rule is over {pick.budget} tokens",
        )
    return HookAnswer("\n".join(lines), tuple(kept), replace=False)


def _relevance(match: RecallMatch) -> float:
    return float(match.why.get("relevance", 0.0))


def _why_nothing(matches: list[RecallMatch], relevant: list[RecallMatch], pick: _Pick) -> str:
    """Why the prompt or touch hook adds nothing, said on stderr (Claude Code shows it in
    debug)."""
    if not matches:
        return "added nothing: no memorule applies to this context"
    if not relevant:
        best = max(_relevance(m) for m in matches)
        return (
            f"added nothing: no rule reaches relevance {pick.floor:g} to {pick.what} "
            f"(best {best:.2f}; {pick.flag} lowers the bar)"
        )
    return (
        f"added nothing: the {len(relevant)} rules at relevance {pick.floor:g} or more were "
        "already given in this session"
    )
