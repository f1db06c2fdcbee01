"""``prism brief``: the task-start brief (what MCP's ``memorule_brief`` returns) on the CLI.

It runs at every agent session start (``--hook claude-code``), so its path stays light:
the rule-file, transfer, HTTP and MCP modules are not imported, and with no task text the
embedding model is never loaded (recall with an empty query needs no vector).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from prism_memory.cli import claude_hook
from prism_memory.cli.claude_subagent import SUBAGENT_TOKEN_BUDGET_DEFAULT
from prism_memory.cli.runtime import Runtime, common
from prism_memory.domain.contract.recall import BriefCreate
from prism_memory.serializers import brief_dict
from prism_memory.services.brief_service import (
    TOKEN_BUDGET_DEFAULT,
    TOKEN_BUDGET_MAX,
    TOKEN_BUDGET_MIN,
    TOP_K_DEFAULT,
)
from prism_memory.services.hook_answers import (
    MIN_RELEVANCE_DEFAULT,
    PROMPT_RULES_DEFAULT,
    PROMPT_RULES_MAX,
    TOUCH_RELEVANCE_DEFAULT,
    TOUCH_RULES_DEFAULT,
    TOUCH_RULES_MAX,
)

HOOK_DEADLINE_DEFAULT_S = claude_hook.HOOK_DEADLINE_DEFAULT_S


def brief_command() -> click.Command:
    """``prism brief``."""

    @click.command("brief")
    @click.option("--task", help="what you are about to do (ranks rules by it); '-' reads stdin")
    @click.option(
        "--token-budget",
        type=click.IntRange(TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
        default=TOKEN_BUDGET_DEFAULT,
        show_default=True,
        help="the most tokens the brief may take (characters / 4); lowest-ranked rules go first",
    )
    @click.option("--namespace", help="only rules of this namespace")
    @click.option(
        "--top-k",
        type=click.IntRange(1, 100),
        default=TOP_K_DEFAULT,
        show_default=True,
        help="how many of the best rules to consider",
    )
    @click.option(
        "--hook",
        type=click.Choice(["claude-code"]),
        help="answer a client hook: read its input JSON on stdin, print its output JSON; "
        "never fails (exit 0, reason on stderr)",
    )
    @click.option(
        "--deadline",
        default=str(HOOK_DEADLINE_DEFAULT_S),
        show_default=True,
        envvar="PRISM_HOOK_DEADLINE",
        help="--hook: give up (exit 0, empty output) after this many seconds, 0.1 to 600 "
        "[env PRISM_HOOK_DEADLINE]",
    )
    @click.option(
        "--state-dir",
        type=click.Path(path_type=Path),
        envvar="PRISM_HOOK_STATE_DIR",
        help="--hook: where each session's briefed rule ids are kept "
        "[env PRISM_HOOK_STATE_DIR; default: hook-sessions/ in the user data directory]",
    )
    @click.option(
        "--min-relevance",
        type=click.FloatRange(0.0, 1.0),
        default=MIN_RELEVANCE_DEFAULT,
        show_default=True,
        help="--hook, UserPromptSubmit: only rules at least this relevant to the prompt",
    )
    @click.option(
        "--prompt-rules",
        type=click.IntRange(0, PROMPT_RULES_MAX),
        default=PROMPT_RULES_DEFAULT,
        show_default=True,
        help="--hook, UserPromptSubmit: add at most this many rules for the prompt",
    )
    @click.option(
        "--subagent-token-budget",
        type=click.IntRange(TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
        default=SUBAGENT_TOKEN_BUDGET_DEFAULT,
        show_default=True,
        help="--hook, SubagentStart: the token budget of a subagent's brief",
    )
    @click.option(
        "--touch-rules",
        type=click.IntRange(0, TOUCH_RULES_MAX),
        default=TOUCH_RULES_DEFAULT,
        show_default=True,
        help="--hook, PreToolUse: add at most this many rules when the session first touches "
        "a file (0: none)",
    )
    @click.option(
        "--touch-relevance",
        type=click.FloatRange(0.0, 1.0),
        default=TOUCH_RELEVANCE_DEFAULT,
        show_default=True,
        help="--hook, PreToolUse: only rules at least this relevant to the file's path",
    )
    @common
    def command(
        rt: Runtime,
        task: str | None,
        token_budget: int,
        namespace: str | None,
        top_k: int,
        hook: str | None,
        deadline: str,
        state_dir: Path | None,
        min_relevance: float,
        prompt_rules: int,
        subagent_token_budget: int,
        touch_rules: int,
        touch_relevance: float,
    ) -> None:
        """The memorules that apply to you now, grouped by kind, best first, within a budget.

        The same brief as MCP's memorule_brief, for the context (--persona, --surface,
        --specialization, --project, --tenant or PRISM_*) and an optional --task. Each rule
        carries its id to cite. Markdown by default, --json for the payload.

        --hook claude-code is for Claude Code's settings (see `prism hooks install
        claude-code`): it reads the hook's input, maps Claude Code's session to Prism's,
        reads the project's .prism.toml, and prints the hook's JSON answer.
        """
        if hook is not None:
            claude_hook.run(
                rt.options,
                claude_hook.HookOptions(
                    token_budget=token_budget,
                    deadline_s=claude_hook.seconds(deadline, HOOK_DEADLINE_DEFAULT_S),
                    state_dir=state_dir,
                    min_relevance=min_relevance,
                    namespace=namespace,
                    top_k=top_k,
                    prompt_rules=prompt_rules,
                    subagent_token_budget=subagent_token_budget,
                    touch_rules=touch_rules,
                    touch_relevance=touch_relevance,
                ),
            )
            return
        text = sys.stdin.read() if task == "-" else (task or "")
        from prism_memory.cli.acting import as_operator

        access, me = as_operator(rt.services, rt.ctx)
        request = BriefCreate.parse(
            {"task": text, "token_budget": token_budget, "namespace": namespace, "top_k": top_k}
        )
        brief = access.brief(me.key, me.ctx, request)
        rt.emit(brief_dict(brief), lambda data: str(data["markdown"]))

    return command
