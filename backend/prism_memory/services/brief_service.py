"""Recall on task start (method.wall-break.persistence Element 5): the brief.

The memorules that apply to the session context (and to an optional task text), grouped by
kind, best first, rendered as compact Markdown that fits a token budget. Every rule carries
its id so the agent can cite it or correct it.

The budget is spent in tiers (DESIGN §13): first the must-include tier — the rules an operator
pinned (``prism pin``; shown under their own heading, whatever their rank, even when the
task's words would not find them), then corrections and feedback an operator's observation
stands behind (confidence ``observed``) — then, with no
task, the rules about every change (committing, pull requests, whole-change checks, what to
run before finishing: :mod:`prism_memory.domain.every_change`), which no task's words name,
then the rest in rank order. With no task, rules of equal score keep the order they were
written in (a rule file's own order), so a file imported at once is briefed from its top,
not its tail. What did not fit is counted, and the brief says how to get it. The rendering
is compact: a section heading shared by consecutive rules is said once, the commonest
confidence once, and a body's repeat of its subject not at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final
from uuid import UUID

from prism_memory.domain.contract.bounds import TASK_MAX as TASK_MAX
from prism_memory.domain.contract.bounds import TOKEN_BUDGET_DEFAULT as TOKEN_BUDGET_DEFAULT
from prism_memory.domain.contract.bounds import TOKEN_BUDGET_MAX as TOKEN_BUDGET_MAX
from prism_memory.domain.contract.bounds import TOKEN_BUDGET_MIN as TOKEN_BUDGET_MIN
from prism_memory.domain.contract.bounds import TOP_K_DEFAULT as TOP_K_DEFAULT
from prism_memory.domain.contract.recall import BriefCreate
from prism_memory.domain.every_change import applies_to_every_change
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    Confidence,
    MemoruleKind,
    Memory,
    MemoryState,
    RecallMatch,
    SessionContext,
)
from prism_memory.services.memory_rooms import MemoryRooms

# Rough and stable: English text with ids averages about four characters per token.
CHARS_PER_TOKEN: Final = 4
BODY_PREVIEW_MAX: Final = 240
# A subject's opening up to ": " is read as its section heading when at most this long.
HEADING_MAX: Final = 80
# The body's repeat of its subject is dropped when the repeat is at least this long, or
# follows a label of at most LABEL_MAX characters ending in ":".
LEAD_MIN: Final = 4
LABEL_MAX: Final = 80

KIND_ORDER: Final = (
    MemoruleKind.BEHAVIORAL_RULE,
    MemoruleKind.CORRECTION,
    MemoruleKind.CONVENTION,
    MemoruleKind.PREFERENCE,
    MemoruleKind.FEEDBACK,
)
KIND_HEADINGS: Final = {
    MemoruleKind.BEHAVIORAL_RULE: "Behavioral rules",
    MemoruleKind.CORRECTION: "Corrections",
    MemoruleKind.CONVENTION: "Conventions",
    MemoruleKind.PREFERENCE: "Preferences",
    MemoruleKind.FEEDBACK: "Feedback",
}
MUST_INCLUDE_KINDS: Final = frozenset({MemoruleKind.CORRECTION, MemoruleKind.FEEDBACK})
PINNED_HEADING: Final = "Pinned by an operator"
# With no task every rule of a project scores alike; look past top_k to keep file order.
NO_TASK_POOL: Final = 100
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|\n")


@dataclass(frozen=True)
class Brief:
    """A rendered brief.

    Attributes:
        markdown: the brief, ready to put in front of an agent.
        included: the rules shown, best first.
        omitted: rules that apply but were left out (token budget or ``top_k``).
        token_budget: the budget the brief was cut to.
        estimated_tokens: ``len(markdown) / 4``, rounded up.
    """

    markdown: str
    included: tuple[RecallMatch, ...]
    omitted: int
    token_budget: int
    estimated_tokens: int


class BriefService:
    """Builds the task-start brief from memorule recall.

    Args:
        memory: the memory rooms: recall ranks the rules, the reads list the pinned ones.
    """

    def __init__(self, memory: MemoryRooms) -> None:
        self.memory = memory

    def brief(
        self,
        ctx: SessionContext,
        request: BriefCreate | None = None,
    ) -> Brief:
        """The memorules that apply to ``ctx`` (and ``task``), as Markdown within a budget.

        Args:
            ctx: the session context; its persona, surface and specialization decide which
                rules apply and how they rank.
            request: the request, validated at the door (None: every default): its task
                (what the agent is about to do; empty: "what applies to me now"), the most
                tokens the Markdown may take (estimated as characters / 4), an only
                namespace, how many of the best rules to consider.

        Returns:
            The brief: rules grouped by kind (behavioral rules, corrections, conventions,
            preferences, feedback), best first within each group; the lowest-ranked rules
            are left out first when the budget is short.
        """
        request = request or BriefCreate()
        query, token_budget = request.to_query(), request.token_budget
        if not query.query:
            query = replace(query, top_k=max(query.top_k, NO_TASK_POOL))
        result = self.memory.recalls.recall(ctx, query, served_as=None)
        pins = self.memory.reads.pinned(ctx, request.namespace)
        matches = with_pins(result.matches, pins)
        ranked = tiered(matches, written_order=not query.query)[: request.top_k]
        included, markdown = _fit(ctx, ranked, token_budget, result.candidates)
        served = self.memory.deps.served
        if served is not None:
            served.record(ctx, "memorule_brief", query.query, included)
        return Brief(
            markdown=markdown,
            included=tuple(included),
            omitted=max(result.candidates - len(included), 0),
            token_budget=token_budget,
            estimated_tokens=estimate_tokens(markdown),
        )


def with_pins(
    matches: Sequence[RecallMatch], pins: Sequence[tuple[Memory, MemoryState]]
) -> list[RecallMatch]:
    """Recall's matches and the pinned rules that apply (each once): a pin recall did not
    rank (past its window) joins with score 0, and the tiers put every pin first."""
    ranked = {m.memory.id for m in matches}
    joined = [RecallMatch(m, s, 0.0, {"pinned": True}) for m, s in pins if m.id not in ranked]
    return [*matches, *joined]


def must_include(match: RecallMatch) -> bool:
    """An operator's pin, or a correction or feedback rule with observed confidence: briefed
    before anything else (pins first)."""
    state = match.state
    if match.memory.pinned:
        return True
    return state.memorule_kind in MUST_INCLUDE_KINDS and state.confidence is Confidence.OBSERVED


def about_every_change(match: RecallMatch) -> bool:
    """An applicable rule about the work itself (committing, pull requests, formatting, what
    to run before finishing), which no task's words are needed to apply; see
    :func:`prism_memory.domain.every_change.applies_to_every_change`."""
    state = match.state
    return match.applicable and applies_to_every_change(
        state.subject or "", _first_sentence(state.body)
    )


def tiered(matches: Sequence[RecallMatch], *, written_order: bool) -> list[RecallMatch]:
    """The must-include tier first (the pinned rules, then observed corrections and feedback);
    with no task, then the rules about every change; then the rest. Each tier in rank order.

    Args:
        matches: recall's matches, best first.
        written_order: the brief has no task: rules of equal score keep the order they were
            written in (ids are time-ordered) instead of recall's newest first, and the rules
            about every change come before the others (a task ranks them by its words).
    """
    ordered = list(matches)
    if written_order:
        ordered.sort(key=lambda m: (not m.applicable, -m.score, m.memory.id.int))
    first = [m for m in ordered if m.memory.pinned]
    first += [m for m in ordered if must_include(m) and not m.memory.pinned]
    rest = [m for m in ordered if not must_include(m)]
    if not written_order:
        return first + rest
    return (
        first
        + [m for m in rest if about_every_change(m)]
        + [m for m in rest if not about_every_change(m)]
    )


def _first_sentence(body: str) -> str:
    """The body up to its first sentence end or line break (at most 300 characters)."""
    head = body.strip()[:300]
    cut = _SENTENCE_END.search(head)
    return head[: cut.start()] if cut else head


def estimate_tokens(text: str) -> int:
    """Tokens a text takes, estimated as characters / 4 (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _fit(
    ctx: SessionContext, ranked: list[RecallMatch], token_budget: int, candidates: int
) -> tuple[list[RecallMatch], str]:
    """The best-ranked prefix of ``ranked`` whose rendering fits the budget, and that rendering."""
    limit = token_budget * CHARS_PER_TOKEN
    bullets: _Bullets = {}
    kept = _most_that_may_fit(ranked, limit)
    while kept > 0:
        markdown = _render(ctx, ranked[:kept], candidates - kept, bullets)
        if len(markdown) <= limit:
            return ranked[:kept], markdown
        # Drop the lowest-ranked rule that is still in; at most top_k (<= 100) renders, each
        # reusing the bullets an earlier one wrote.
        kept -= 1
    return [], _render(ctx, [], candidates, bullets)


def _most_that_may_fit(ranked: list[RecallMatch], limit: int) -> int:
    """How many of the best-ranked rules could fit at most: each takes at least its shortest
    bullet (its heading said above it, its confidence in the header) and a line break, so a
    prefix past this bound cannot fit and need not be rendered."""
    used = 0
    for i, m in enumerate(ranked):
        used += (
            len(
                bullet(m, heading=_heading(m.state.subject or ""), common_confidence=_confidence(m))
            )
            + 1
        )
        if used > limit:
            return i
    return len(ranked)


# A bullet by (rule id, heading said above it, confidence said in the header).
_Bullets = dict[tuple[UUID, str, str | None], str]


def _render(
    ctx: SessionContext, matches: list[RecallMatch], omitted: int, bullets: _Bullets
) -> str:
    """The brief's Markdown: the pinned rules under their own heading, then the others grouped
    by kind; within a group, consecutive rules under
    the same section heading (an imported rule's subject is "heading: first sentence") get
    the heading once; confidence is said once for the commonest and marked on the others."""
    lines = ["# Memorules that apply", _context_line(ctx)]
    if not matches and omitted <= 0:
        lines.append("")
        lines.append("No memorules apply to this context yet.")
        return "\n".join(lines)
    common = _commonest_confidence(matches)
    lines.append(
        "Advisory rules recorded by agents and operators; cite an id when you apply one."
        + (f" Confidence {common} unless marked." if common else "")
    )
    pinned = [m for m in matches if m.memory.pinned]
    if pinned:
        lines.append("")
        lines.append(f"## {PINNED_HEADING}")
        lines.extend(_grouped_bullets(pinned, common, bullets))
    for kind in KIND_ORDER:
        group = [m for m in matches if m.state.memorule_kind is kind and not m.memory.pinned]
        if group:
            lines.append("")
            lines.append(f"## {KIND_HEADINGS[kind]}")
            lines.extend(_grouped_bullets(group, common, bullets))
    if omitted > 0:
        lines.append("")
        noun = "rule" if omitted == 1 else "rules"
        lines.append(
            f"_{omitted} more applicable {noun} left out to fit the token budget; "
            "semantic_recall(query=<your task>, source_type='memorule') ranks them for it._"
        )
    return "\n".join(lines)


def _grouped_bullets(group: list[RecallMatch], common: str | None, bullets: _Bullets) -> list[str]:
    """Bullets of one kind; a run of two or more rules under one heading is nested under a
    bullet that says the heading once."""
    headings = [_heading(m.state.subject or "") for m in group]
    out: list[str] = []
    for i, m in enumerate(group):
        heading = headings[i]
        before = i > 0 and headings[i - 1] == heading
        after = i + 1 < len(group) and headings[i + 1] == heading
        nested = bool(heading) and (before or after)
        if nested and not before:
            out.append(f"- {heading}:")
        said = heading if nested else ""
        key = (m.memory.id, said, common)
        if key not in bullets:
            bullets[key] = bullet(m, heading=said, common_confidence=common)
        out.append(("  " if nested else "") + bullets[key])
    return out


def _heading(subject: str) -> str:
    """The section heading an imported rule's subject opens with ("Testing: Use ..."), or ""."""
    head, sep, rest = subject.partition(": ")
    if not sep or not rest.strip() or len(head) > HEADING_MAX or "`" in head:
        return ""
    return head.strip()


def _commonest_confidence(matches: Sequence[RecallMatch]) -> str | None:
    counts: dict[str, int] = {}
    for m in matches:
        value = _confidence(m)
        counts[value] = counts.get(value, 0) + 1
    if not counts:
        return None
    return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]


def _confidence(m: RecallMatch) -> str:
    return m.state.confidence.value if m.state.confidence else "inferred"


def _context_line(ctx: SessionContext) -> str:
    named = [f"{key} {ctx.value(key)}" for key in APPLIES_TO_KEYS if ctx.value(key)]
    return "_Context: " + (", ".join(named) or "no persona, surface or specialization") + "_"


def bullet(m: RecallMatch, *, heading: str = "", common_confidence: str | None = None) -> str:
    """One rule as a Markdown bullet: subject, body (shortened), confidence and id.

    Args:
        m: the rule.
        heading: the section heading already said above the bullet: left out of the subject.
        common_confidence: the confidence the brief says once; not repeated on the bullet.
    """
    state = m.state
    subject = state.subject or ""
    if heading and subject.startswith(heading + ": "):
        subject = subject[len(heading) + 2 :]
    body = _without_subject(_SPACE.sub(" ", state.body).strip(), state.subject or "")
    if len(body) > BODY_PREVIEW_MAX:
        body = body[: BODY_PREVIEW_MAX - 1].rstrip() + "…"
    confidence = _confidence(m)
    text = f" — {body} " if body else " "
    marks = f"{confidence}; " if confidence != common_confidence else ""
    return f"- **{subject}**{text}({marks}id `{m.memory.id}`)"


def _without_subject(body: str, subject: str) -> str:
    """The body less its opening when that only repeats the subject (a rule file's subject is
    its section heading and first sentence): the words are briefed once.

    The comparison ignores bold markers, and the repeat may follow a short label of the body's
    own ("Key rules: **Never** ..."); a body the subject already says in full is left out."""
    plain = body.replace("**", "")
    subject_plain = subject.replace("**", "").strip()
    if plain.rstrip(" .") and plain.rstrip(" .") in subject_plain:
        return ""
    for lead in (subject_plain, subject_plain.rsplit(": ", 1)[-1].strip()):
        lead = lead.rstrip(".")
        if len(lead) < LEAD_MIN:
            continue
        at = plain.find(lead)
        if at == 0 or (0 < at <= LABEL_MAX and plain[:at].rstrip().endswith(":")):
            return plain[at + len(lead) :].lstrip(" .;:—–-")
    return body
