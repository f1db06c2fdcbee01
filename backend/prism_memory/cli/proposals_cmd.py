"""``prism proposals``: the capture review queue from the command line.

``prism proposals`` lists the pending proposals of the project; ``approve``, ``reject``,
``merge`` and ``promote`` decide (each one audit event); ``evidence`` lists the signals behind
a rule. The CLI acts as the local operator (:mod:`prism_memory.cli.acting`), as MCP over stdio does,
through the same access rules as HTTP, where only writer and admin keys decide.
"""

from __future__ import annotations

import json
from typing import Any

import click

from prism_memory.cli.acting import as_operator
from prism_memory.cli.runtime import Runtime, common, parse_id
from prism_memory.domain.records import Memory, MemoryState
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.serializers import memory_dict, state_dict, write_dict
from prism_memory.services.proposal_service import Evidence

ACTIONS = ("list", "approve", "reject", "merge", "promote", "evidence")


def proposal_dict(memory: Memory, state: MemoryState, evidence: list[Evidence]) -> dict[str, Any]:
    """A proposal as every front door shows it: the memory, its state, its evidence."""
    signals = [e.to_dict() for e in evidence]
    return {**memory_dict(memory), **state_dict(state), "evidence": signals}


def proposals_command() -> click.Command:
    """``prism proposals``."""

    @click.command("proposals")
    @click.argument("action", type=click.Choice(ACTIONS), default="list")
    @click.argument("memory_id", required=False)
    @click.option("--into", "into", help="merge: the active memorule the proposal repeats")
    @click.option("--reason", help="why (kept in the audit trail; required to reject)")
    @click.option("--subject", help="approve: the subject, edited")
    @click.option("--body", help="approve: the body, edited")
    @click.option("--memorule-kind", help="approve: the kind, edited")
    @click.option("--applies-to", "applies_to", help="approve: applies_to, edited (JSON object)")
    @click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
    @common
    def command(
        rt: Runtime,
        action: str,
        memory_id: str | None,
        into: str | None,
        reason: str | None,
        subject: str | None,
        body: str | None,
        memorule_kind: str | None,
        applies_to: str | None,
        limit: int,
    ) -> None:
        """The capture review queue: list proposals, or approve/reject/merge/promote one.

        \b
          prism proposals                         pending proposals, newest first
          prism proposals approve ID [--subject ... --body ... --applies-to JSON]
          prism proposals reject ID --reason "not a rule"
          prism proposals merge ID --into RULE_ID
          prism proposals promote RULE_ID         inferred/asserted -> observed on evidence
          prism proposals evidence RULE_ID        the signals behind a rule
        """
        access, me = as_operator(rt.services, rt.ctx)
        key, ctx = me.key, me.ctx
        if action == "list":
            items = [proposal_dict(*found) for found in access.pending(key, ctx, limit)]
            rt.emit({"ok": True, "proposals": items, "count": len(items)}, _human_list)
            return
        if memory_id is None:
            raise click.UsageError(f"'prism proposals {action}' needs an id")
        target = parse_id(memory_id, "id")
        if action == "evidence":
            signals = [e.to_dict() for e in access.evidence(key, ctx, target)]
            rt.emit({"ok": True, "id": str(target), "evidence": signals}, _human_evidence)
            return
        if action == "approve":
            edits = _edits(subject, body, memorule_kind, applies_to)
            result = access.approve(key, ctx, target, edits or None, reason)
        elif action == "reject":
            result = access.reject(key, ctx, target, reason)
        elif action == "merge":
            if into is None:
                raise click.UsageError("'prism proposals merge' needs --into RULE_ID")
            result = access.merge(key, ctx, target, parse_id(into, "into"), reason)
        else:
            result = access.promote(key, ctx, target, reason)
        rt.emit({**write_dict(result), "decision": action}, lambda d: f"{action}: {d['id']}")

    return command


def _edits(
    subject: str | None, body: str | None, kind: str | None, applies_to: str | None
) -> dict[str, Any]:
    edits: dict[str, Any] = {}
    for name, value in (("subject", subject), ("body", body), ("memorule_kind", kind)):
        if value is not None:
            edits[name] = value
    if applies_to is not None:
        try:
            edits["applies_to"] = json.loads(applies_to)
        except ValueError:
            raise InvalidInput(
                [FieldError("applies_to", "invalid_json", "'applies_to' must be a JSON object")]
            ) from None
    return edits


def _human_list(payload: dict[str, Any]) -> str:
    if not payload["proposals"]:
        return "no pending proposals"
    lines = []
    for p in payload["proposals"]:
        lines.append(f"{p['id']}  {p['memorule_kind']:15} {p['subject']}")
        lines.append(f"    {p['body'][:200]}")
        if p.get("checks"):  # proposed checks for an active rule (prism checks propose)
            lines += [f"    check: {json.dumps(c, ensure_ascii=False)}" for c in p["checks"]]
        lines.append(f"    evidence: {', '.join(e['evidence_signal_id'] for e in p['evidence'])}")
    return "\n".join(lines)


def _human_evidence(payload: dict[str, Any]) -> str:
    lines = [f"evidence for {payload['id']}:"]
    lines += [
        f"  {e['written_at']}  {e['event']:9} {e['evidence_signal_id']}"
        for e in payload["evidence"]
    ]
    return "\n".join(lines)
