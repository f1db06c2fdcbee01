"""``prism checks``: the machine-checkable ``checks`` of memorules (DESIGN §12).

``prism checks propose --text SENTENCE`` prints the candidate checks of one sentence (a JSON
list; ``[]`` when it has none) and touches no store. ``prism checks propose`` reads the
active memorules of the project that have no checks and puts the candidates of each into the
review queue as a check proposal (``prism proposals``): nothing becomes active until a person
approves it.
"""

from __future__ import annotations

import json
from typing import Any

import click

from prism_memory.cli.runtime import Runtime, common, parse_id


def checks_group() -> click.Group:
    """``prism checks``."""

    @click.group("checks")
    def group() -> None:
        """Checks of memorules: propose them from the rules' own text (into the review queue)."""

    @group.command("propose")
    @click.option("--text", help="derive the checks of this sentence only (no store is read)")
    @click.option(
        "--id", "ids", multiple=True, help="only this memorule (repeatable; default: every rule)"
    )
    @click.option("--dry-run", is_flag=True, help="show the proposals; write nothing")
    @common
    def propose_command(rt: Runtime, text: str | None, ids: tuple[str, ...], dry_run: bool) -> None:
        """Propose checks from the text of rules; they wait in `prism proposals`.

        \b
          prism checks propose --text "never use npm, use pnpm"     the candidates of a sentence
          prism checks propose                 every active rule of the project without checks
          prism checks propose --id RULE_ID    one rule
        Approving a proposal gives the rule the checks (a new version of it); rejecting it
        leaves the rule as it is. Re-running proposes nothing new for an unchanged rule.
        """
        if text is not None:
            if ids or dry_run:
                raise click.UsageError("--text takes no --id or --dry-run")
            from prism_memory.domain.adherence.propose import propose

            found = propose(text)
            click.echo(json.dumps(found, ensure_ascii=False, indent=None if rt.json else 2))
            return
        from prism_memory.cli.acting import as_operator

        access, me = as_operator(rt.services, rt.ctx)
        targets = [parse_id(i, "id") for i in ids] or None
        report = access.propose_checks(me.key, me.ctx, targets, dry_run)
        rt.emit({"ok": True, **report.to_dict()}, proposals_text)

    return group


def proposals_text(payload: dict[str, Any]) -> str:
    """The report of a proposing run, for people."""
    lines = [
        f"{payload['rules_read']} active rules read, {payload['rules_with_checks']} already "
        f"with checks; {payload['proposed']} proposals written"
        + (" (dry run: nothing written)" if payload["dry_run"] else "")
    ]
    for p in payload["proposals"]:
        lines.append(f"{p['action']:16} {p['memorule_id']}  {p['subject']}")
        lines += [f"    {json.dumps(c, ensure_ascii=False)}" for c in p["checks"]]
        if p["proposal_id"]:
            lines.append(f"    review: prism proposals approve|reject {p['proposal_id']}")
    return "\n".join(lines)
