"""The task-start brief: which rules, in what order, how they read, and the token budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import BriefCreate
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.errors import InvalidInput
from prism_memory.serializers import brief_dict
from prism_memory.services.brief_service import KIND_ORDER, estimate_tokens

ContextFactory = Callable[..., SessionContext]


def rule(subject: str, **overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": subject,
        "body": f"{subject}: the full explanation of why and how, for the agent.",
        "applies_to": {"persona": "donna"},
        "confidence": "inferred",
    }
    raw.update(overrides)
    return raw


def ids_in(markdown: str) -> list[str]:
    return re.findall(r"id `([0-9a-f-]{36})`", markdown)


def test_an_empty_store_gives_a_short_brief_that_says_so(
    services: Services, ctx: SessionContext
) -> None:
    brief = services.brief.brief(ctx)
    assert "No memorules apply to this context yet." in brief.markdown
    assert brief.included == ()
    assert brief.omitted == 0


def test_rules_are_grouped_by_kind_in_the_fixed_order(
    services: Services, ctx: SessionContext
) -> None:
    for kind in reversed(KIND_ORDER):
        services.memory.writes.remember(
            ctx, validate_remember(rule(f"A {kind.value} rule", memorule_kind=kind.value))
        )
    markdown = services.brief.brief(ctx).markdown
    headings = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    assert headings == ["Behavioral rules", "Corrections", "Conventions", "Preferences", "Feedback"]


def test_within_a_kind_the_highest_ranked_rule_comes_first(
    services: Services, ctx: SessionContext
) -> None:
    weak = services.memory.writes.remember(
        ctx, validate_remember(rule("Asserted habit", confidence="asserted"))
    )
    strong = services.memory.writes.remember(
        ctx, validate_remember(rule("Observed habit", confidence="observed"))
    )
    middle = services.memory.writes.remember(
        ctx, validate_remember(rule("Inferred habit", confidence="inferred"))
    )
    brief = services.brief.brief(ctx)
    assert ids_in(brief.markdown) == [str(strong.id), str(middle.id), str(weak.id)]
    assert [m.memory.id for m in brief.included] == [strong.id, middle.id, weak.id]


def test_each_bullet_shows_subject_body_and_id_and_the_commonest_confidence_is_said_once(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Run the tests first", body="Always run the full suite.", confidence="observed")
        ),
    )
    line = next(x for x in services.brief.brief(ctx).markdown.splitlines() if x.startswith("- "))
    assert line == f"- **Run the tests first** — Always run the full suite. (id `{written.id}`)"
    assert "Confidence observed unless marked." in services.brief.brief(ctx).markdown


def test_long_bodies_are_shortened_to_one_line(services: Services, ctx: SessionContext) -> None:
    services.memory.writes.remember(ctx, validate_remember(rule("Long rule", body="word\n" * 400)))
    line = next(x for x in services.brief.brief(ctx).markdown.splitlines() if x.startswith("- "))
    assert "…" in line
    assert len(line) < 400


def test_notes_retired_rules_and_rules_for_other_personas_are_left_out(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(persona="donna")
    services.memory.writes.remember(
        ctx, validate_remember({"body": "A note about the tests, not a rule."})
    )
    mine = services.memory.writes.remember(ctx, validate_remember(rule("Mine to follow")))
    services.memory.writes.remember(
        ctx, validate_remember(rule("For Texi only", applies_to={"persona": "texi"}))
    )
    retired = services.memory.writes.remember(ctx, validate_remember(rule("No longer true")))
    services.memory.lifecycle.retire(ctx, retired.id, "superseded by practice")
    brief = services.brief.brief(ctx)
    assert ids_in(brief.markdown) == [str(mine.id)]
    assert brief.omitted == 0


def test_the_task_text_ranks_the_rule_that_fits_it_first(
    services: Services, ctx: SessionContext
) -> None:
    services.memory.writes.remember(ctx, validate_remember(rule("Commit messages explain why")))
    fit = services.memory.writes.remember(
        ctx, validate_remember(rule("Database migrations need a reviewer"))
    )
    brief = services.brief.brief(ctx, BriefCreate(task="write a database migration"))
    assert ids_in(brief.markdown)[0] == str(fit.id)


def test_a_short_budget_keeps_the_best_rules_and_counts_the_rest(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(20):
        confidence = "observed" if i < 3 else "asserted"
        services.memory.writes.remember(
            ctx, validate_remember(rule(f"Rule number {i:02d}", confidence=confidence))
        )
    full = services.brief.brief(ctx, BriefCreate(token_budget=20_000))
    short = services.brief.brief(ctx, BriefCreate(token_budget=150))
    assert len(full.included) == 20 and full.omitted == 0
    assert 0 < len(short.included) < 20
    assert short.omitted == 20 - len(short.included)
    assert len(short.markdown) <= 150 * 4
    assert short.estimated_tokens == estimate_tokens(short.markdown) <= 150
    # The kept rules are the best-ranked ones.
    assert [m.memory.id for m in short.included] == [
        m.memory.id for m in full.included[: len(short.included)]
    ]
    assert f"_{short.omitted} more applicable rules left out" in short.markdown


def test_top_k_bounds_the_rules_considered_and_the_rest_count_as_left_out(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(5):
        services.memory.writes.remember(ctx, validate_remember(rule(f"Rule number {i}")))
    brief = services.brief.brief(ctx, BriefCreate(top_k=2))
    assert len(brief.included) == 2
    assert brief.omitted == 3


def test_the_context_line_names_the_session_context(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(persona="donna", surface="python")
    assert "_Context: persona donna, surface python_" in services.brief.brief(ctx).markdown


def test_to_dict_lists_what_the_brief_holds(services: Services, ctx: SessionContext) -> None:
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Run the tests first", confidence="observed"))
    )
    data = brief_dict(services.brief.brief(ctx, BriefCreate(token_budget=500)))
    assert data["ok"] is True
    assert data["omitted"] == 0 and data["token_budget"] == 500
    assert data["estimated_tokens"] == estimate_tokens(data["markdown"])
    [item] = data["included"]
    assert item["id"] == str(written.id)
    assert item["memorule_kind"] == "behavioral_rule"
    assert item["confidence"] == "observed"
    assert item["subject"] == "Run the tests first"


@pytest.mark.parametrize(
    ("kwargs", "field", "code"),
    [
        ({"token_budget": 99}, "token_budget", "out_of_range"),
        ({"token_budget": 20_001}, "token_budget", "out_of_range"),
        ({"token_budget": "lots"}, "token_budget", "wrong_type"),
        ({"token_budget": True}, "token_budget", "wrong_type"),
        ({"task": "x" * 4001}, "task", "too_long"),
        ({"task": 42}, "task", "wrong_type"),
        ({"task": "bad\x00text"}, "task", "invalid_characters"),
        ({"top_k": 0}, "top_k", "out_of_range"),
        ({"namespace": "no spaces please"}, "namespace", "invalid_format"),
    ],
)
def test_invalid_arguments_are_refused_with_field_errors(
    services: Services, ctx: SessionContext, kwargs: dict[str, Any], field: str, code: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.brief.brief(ctx, BriefCreate.parse(kwargs))
    assert [(e.field, e.code) for e in caught.value.errors] == [(field, code)]


def test_every_invalid_argument_is_reported_at_once(
    services: Services, ctx: SessionContext
) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.brief.brief(
            ctx,
            BriefCreate.parse(
                {"task": "x" * 5000, "token_budget": 5, "namespace": "a b", "top_k": 0}
            ),
        )
    assert {e.field for e in caught.value.errors} == {"task", "token_budget", "namespace", "top_k"}


def test_observed_corrections_and_feedback_are_briefed_before_better_ranked_rules(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(12):
        services.memory.writes.remember(
            ctx, validate_remember(rule(f"Ordinary rule number {i:02d}", confidence="observed"))
        )
    pinned = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Never force-push to main", memorule_kind="correction", confidence="observed")
        ),
    )
    guessed = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule("Maybe prefer rebases", memorule_kind="feedback", confidence="asserted")
        ),
    )
    short = services.brief.brief(ctx, BriefCreate(token_budget=150))
    kept = [m.memory.id for m in short.included]
    assert kept[0] == pinned.id, "the must-include tier is spent first"
    assert guessed.id not in kept, "feedback without observed confidence is ranked as usual"
    assert short.omitted == 14 - len(kept) > 0


def test_with_no_task_rules_of_equal_score_keep_the_order_they_were_written_in(
    services: Services, ctx: SessionContext
) -> None:
    written = [
        services.memory.writes.remember(ctx, validate_remember(rule(f"File rule {i:02d}"))).id
        for i in range(40)
    ]
    brief = services.brief.brief(ctx, BriefCreate(token_budget=300))
    kept = [m.memory.id for m in brief.included]
    assert kept == written[: len(kept)], "a file imported at once is briefed from its top"
    tasked = services.brief.brief(ctx, BriefCreate(task="File rule 39", token_budget=300))
    assert tasked.included[0].memory.id == written[-1], "with a task, relevance decides"


def test_the_brief_says_how_to_get_what_it_left_out(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(10):
        services.memory.writes.remember(ctx, validate_remember(rule(f"Rule number {i:02d}")))
    markdown = services.brief.brief(ctx, BriefCreate(token_budget=150)).markdown
    assert "semantic_recall(query=<your task>, source_type='memorule') ranks them" in markdown


def test_a_body_that_opens_with_its_subject_is_not_briefed_twice(
    services: Services, ctx: SessionContext
) -> None:
    services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Testing: Run only the tests covering the files you changed",
                body="Run only the tests covering the files you changed. Never the whole suite.",
            )
        ),
    )
    markdown = services.brief.brief(ctx).markdown
    assert (
        "- **Testing: Run only the tests covering the files you changed** — "
        "Never the whole suite. (id" in markdown
    )


def test_a_body_that_repeats_its_subject_in_bold_after_a_label_is_not_briefed_twice(
    services: Services, ctx: SessionContext
) -> None:
    services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                "Coding Patterns: Key rules: Never create agents in loops",
                body="Key rules: **Never create agents in loops** — reuse them.",
            )
        ),
    )
    markdown = services.brief.brief(ctx).markdown
    assert "- **Coding Patterns: Key rules: Never create agents in loops** — reuse them. (id" in (
        markdown
    )


def test_confidence_is_marked_on_the_rules_whose_confidence_is_not_the_commonest(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(3):
        services.memory.writes.remember(
            ctx, validate_remember(rule(f"Asserted habit {i}", confidence="asserted"))
        )
    odd = services.memory.writes.remember(
        ctx, validate_remember(rule("Observed habit", confidence="observed"))
    )
    markdown = services.brief.brief(ctx).markdown
    assert "Confidence asserted unless marked." in markdown
    assert f"(observed; id `{odd.id}`)" in markdown
    assert markdown.count("asserted;") == 0


def test_consecutive_rules_under_one_heading_say_the_heading_once(
    services: Services, ctx: SessionContext
) -> None:
    a = services.memory.writes.remember(
        ctx, validate_remember(rule("Testing: Use the real database", body="No mocks at all."))
    )
    b = services.memory.writes.remember(
        ctx,
        validate_remember(rule("Testing: Name tests for behaviour", body="Say why it matters.")),
    )
    alone = services.memory.writes.remember(
        ctx, validate_remember(rule("Style: Tabs, not spaces", body="Everywhere, always."))
    )
    markdown = services.brief.brief(ctx).markdown
    assert (
        f"- Testing:\n  - **Use the real database** — No mocks at all. (id `{a.id}`)\n"
        f"  - **Name tests for behaviour** — Say why it matters. (id `{b.id}`)\n"
        f"- **Style: Tabs, not spaces** — Everywhere, always. (id `{alone.id}`)"
    ) in markdown


def test_with_no_task_rules_about_every_change_are_briefed_before_the_file_order(
    services: Services, ctx: SessionContext
) -> None:
    written = [
        services.memory.writes.remember(ctx, validate_remember(rule(f"File rule {i:02d}"))).id
        for i in range(30)
    ]
    commit = services.memory.writes.remember(
        ctx, validate_remember(rule("Commits: Use Conventional Commits for commit messages"))
    )
    checks = services.memory.writes.remember(
        ctx, validate_remember(rule("Run `make check` before you open a pull request"))
    )
    brief = services.brief.brief(ctx, BriefCreate(token_budget=300))
    kept = [m.memory.id for m in brief.included]
    assert kept[:2] == [commit.id, checks.id], "the rules about every change come first"
    assert kept[2:] == written[: len(kept) - 2], "then the file from its top"
    tasked = services.brief.brief(ctx, BriefCreate(task="File rule 07", token_budget=300))
    assert tasked.included[0].memory.id == written[7], "with a task, relevance decides"
