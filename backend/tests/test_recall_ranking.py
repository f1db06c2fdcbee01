"""Recall ranking and visibility (DESIGN §6): applicability, narrower-wins, confidence, ties,
scope across projects, persona rules, tenant isolation."""

from __future__ import annotations

from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.errors import InvalidInput
from prism_memory.serializers import recall_dict
from tests.conftest import ContextFactory

BODY = "Prefer small pull requests that change one thing at a time."


def rule(subject: str, applies_to: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "preference",
        "subject": subject,
        "body": BODY,
        "applies_to": applies_to,
        **extra,
    }


def subjects(services: Services, ctx: Any, **query: Any) -> list[str]:
    result = services.memory.recalls.recall(
        ctx, validate_recall({"source_type": "memorule", **query})
    )
    return [m.state.subject or "" for m in result.matches]


def test_more_overlap_ranks_higher_at_equal_relevance_and_confidence(
    services: Services, make_ctx: ContextFactory
) -> None:
    writer = make_ctx(persona="frank")
    services.memory.writes.remember(
        writer, validate_remember(rule("General rule", {"scope": "project"}))
    )
    services.memory.writes.remember(
        writer, validate_remember(rule("Donna rule", {"persona": "donna"}))
    )
    services.memory.writes.remember(
        writer,
        validate_remember(rule("Donna python rule", {"persona": "donna", "surface": "python"})),
    )
    reader = make_ctx(persona="donna", surface="python")
    assert subjects(services, reader, query="small pull requests") == [
        "Donna python rule",
        "Donna rule",
        "General rule",
    ]


def test_observed_beats_inferred_beats_asserted_at_equal_everything_else(
    services: Services, make_ctx: ContextFactory
) -> None:
    writer = make_ctx()
    for level in ("asserted", "observed", "inferred"):
        services.memory.writes.remember(
            writer,
            validate_remember(rule(f"Rule {level}", {"surface": "python"}, confidence=level)),
        )
    reader = make_ctx(surface="python")
    assert subjects(services, reader) == ["Rule observed", "Rule inferred", "Rule asserted"]
    assert subjects(services, reader, query="small pull requests") == [
        "Rule observed",
        "Rule inferred",
        "Rule asserted",
    ]


def test_exact_ties_go_to_the_newer_rule(services: Services, make_ctx: ContextFactory) -> None:
    writer = make_ctx()
    for name in ("first", "second", "third"):
        services.memory.writes.remember(
            writer, validate_remember(rule(f"Rule {name}", {"surface": "go"}))
        )
    result = services.memory.recalls.recall(
        make_ctx(surface="go"), validate_recall({"source_type": "memorule"})
    )
    assert [m.state.subject for m in result.matches] == ["Rule third", "Rule second", "Rule first"]
    assert len({m.score for m in result.matches}) == 1


def test_a_rule_for_another_persona_is_left_out_unless_asked_and_then_last_and_marked(
    services: Services, make_ctx: ContextFactory
) -> None:
    writer = make_ctx()
    services.memory.writes.remember(
        writer, validate_remember(rule("For texi", {"persona": "texi"}, confidence="observed"))
    )
    services.memory.writes.remember(
        writer, validate_remember(rule("For donna", {"persona": "donna"}, confidence="asserted"))
    )
    reader = make_ctx(persona="donna")
    assert subjects(services, reader) == ["For donna"]
    shown = recall_dict(
        services.memory.recalls.recall(
            reader, validate_recall({"source_type": "memorule", "include_inapplicable": True})
        )
    )["matches"]
    assert [(m["subject"], m["applicable"]) for m in shown] == [
        ("For donna", True),
        ("For texi", False),
    ]
    assert shown[1]["why"]["conflicts"] == ["persona"]


def test_a_key_the_context_does_not_name_is_neither_match_nor_conflict(
    services: Services, make_ctx: ContextFactory
) -> None:
    services.memory.writes.remember(
        make_ctx(), validate_remember(rule("Python rule", {"surface": "python"}))
    )
    matches = services.memory.recalls.recall(
        make_ctx(persona="donna"), validate_recall({"source_type": "memorule"})
    )
    assert [m.why["matched"] for m in matches.matches] == [[]]
    assert [m.why["conflicts"] for m in matches.matches] == [[]]


def test_applicability_compares_case_insensitively(
    services: Services, make_ctx: ContextFactory
) -> None:
    services.memory.writes.remember(
        make_ctx(), validate_remember(rule("Python rule", {"surface": "Python"}))
    )
    assert subjects(services, make_ctx(surface="python ")) == ["Python rule"]


def test_project_rules_stay_in_their_project_while_global_and_org_rules_travel(
    services: Services, make_ctx: ContextFactory
) -> None:
    in_a = make_ctx(project="a")
    services.memory.writes.remember(
        in_a, validate_remember(rule("Project rule of A", {"scope": "project"}))
    )
    services.memory.writes.remember(
        in_a, validate_remember(rule("Unscoped rule of A", {"surface": "python"}))
    )
    services.memory.writes.remember(
        in_a, validate_remember(rule("Global rule", {"scope": "global"}))
    )
    services.memory.writes.remember(in_a, validate_remember(rule("Org rule", {"scope": "org"})))
    services.memory.writes.remember(in_a, validate_remember({"body": "A note in project A"}))
    from_b = make_ctx(project="b")
    assert sorted(subjects(services, from_b)) == ["Global rule", "Org rule"]
    everything_b = services.memory.recalls.recall(
        from_b, validate_recall({"source_type": "memory"})
    )
    assert all(m.memory.kind.value == "memorule" for m in everything_b.matches)
    assert len(subjects(services, in_a)) == 4


def test_narrower_scope_ranks_above_broader(services: Services, make_ctx: ContextFactory) -> None:
    writer = make_ctx(persona="donna")
    for scope in ("global", "org", "project"):
        services.memory.writes.remember(
            writer, validate_remember(rule(f"Scope {scope}", {"scope": scope}))
        )
    services.memory.writes.remember(
        writer, validate_remember(rule("Scope persona", {"scope": "persona", "persona": "donna"}))
    )
    reader = make_ctx(persona="donna")
    ranked = subjects(services, reader)
    assert ranked[-3:] == ["Scope project", "Scope org", "Scope global"]
    assert ranked[0] == "Scope persona"


def test_persona_rules_are_seen_only_by_that_persona(
    services: Services, make_ctx: ContextFactory
) -> None:
    services.memory.writes.remember(
        make_ctx(), validate_remember(rule("Donna only", {"scope": "persona", "persona": "donna"}))
    )
    assert subjects(services, make_ctx(persona="donna")) == ["Donna only"]
    assert subjects(services, make_ctx(persona="texi"), include_inapplicable=True) == []
    assert subjects(services, make_ctx()) == []


def test_tenant_b_never_sees_tenant_a(services: Services, make_ctx: ContextFactory) -> None:
    a = make_ctx(tenant="a")
    written = services.memory.writes.remember(
        a, validate_remember(rule("Tenant A global", {"scope": "global"}))
    )
    services.memory.writes.remember(a, validate_remember({"body": "tenant A note"}))
    b = make_ctx(tenant="b")
    assert (
        services.memory.recalls.recall(b, validate_recall({"source_type": "memory"})).matches == []
    )
    from prism_memory.errors import NotFound

    with pytest.raises(NotFound):
        services.memory.reads.get(b, written.id)
    with pytest.raises(NotFound):
        services.memory.reads.history(b, written.id)
    assert services.memorules.audit(b, _flt()).events == []


def test_relevance_orders_rules_by_meaning_of_the_query(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx()
    services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                **rule("Database migrations", {"scope": "project"}),
                "body": "Every database schema change needs a migration.",
            }
        ),
    )
    services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                **rule("Commit messages", {"scope": "project"}),
                "body": "Commit messages explain why the change was made.",
            }
        ),
    )
    ranked = subjects(services, ctx, query="how to write commit messages")
    assert ranked[0] == "Commit messages"


def test_namespace_and_top_k_limit_recall(services: Services, make_ctx: ContextFactory) -> None:
    ctx = make_ctx()
    for i in range(5):
        services.memory.writes.remember(
            ctx, validate_remember({"body": f"note number {i}", "namespace": "ops"})
        )
    services.memory.writes.remember(ctx, validate_remember({"body": "elsewhere"}))
    result = services.memory.recalls.recall(ctx, validate_recall({"namespace": "ops", "top_k": 3}))
    assert len(result.matches) == 3
    assert {m.memory.namespace for m in result.matches} == {"ops"}
    assert result.candidates == 5


@pytest.mark.parametrize(
    ("raw", "field", "code"),
    [
        ({"top_k": 0}, "top_k", "out_of_range"),
        ({"top_k": 101}, "top_k", "out_of_range"),
        ({"top_k": "5"}, "top_k", "wrong_type"),
        ({"source_type": "notes"}, "source_type", "invalid_choice"),
        ({"memorule_kind": "rule"}, "memorule_kind", "invalid_choice"),
        ({"confidence": ["observed", "sure"]}, "confidence", "invalid_choice"),
        ({"query": "q" * 4001}, "query", "too_long"),
        ({"include_inapplicable": "yes"}, "include_inapplicable", "wrong_type"),
        ({"limit": 3}, "limit", "unknown_field"),
    ],
)
def test_bad_recall_arguments_get_precise_errors(
    services: Services, make_ctx: ContextFactory, raw: dict[str, Any], field: str, code: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        services.memory.recalls.recall(make_ctx(), validate_recall(raw))
    assert {e.field: e.code for e in info.value.errors}[field] == code


def _flt() -> Any:
    from prism_memory.trigraph.port import AuditFilter

    return AuditFilter()


def test_query_words_restating_the_surface_do_not_count_as_relevance(
    services: Services, make_ctx: ContextFactory
) -> None:
    writer = make_ctx()
    services.memory.writes.remember(
        writer,
        validate_remember(
            rule("Go style", {"surface": "go"}, body="Go code in Go files is gofmt-ed Go.")
        ),
    )
    services.memory.writes.remember(
        writer,
        validate_remember(
            rule(
                "Slow dashboards", {"surface": "go"}, body="Profile a slow dashboard before tuning."
            )
        ),
    )
    reader = make_ctx(surface="go")
    naming = services.memory.recalls.recall(
        reader, validate_recall({"source_type": "memorule", "query": "The Go dashboard is slow"})
    )
    plain = services.memory.recalls.recall(
        reader, validate_recall({"source_type": "memorule", "query": "The dashboard is slow"})
    )
    assert [m.state.subject for m in naming.matches] == ["Slow dashboards", "Go style"]
    # Scored as if the task had not said "Go": same scores, same reasons.
    assert [(m.memory.id, m.score, m.why) for m in naming.matches] == [
        (m.memory.id, m.score, m.why) for m in plain.matches
    ]
    # Where the context names no surface, "Go" is a word of the task like any other.
    elsewhere = services.memory.recalls.recall(
        make_ctx(),
        validate_recall({"source_type": "memorule", "query": "The Go dashboard is slow"}),
    )
    go_style = next(m for m in elsewhere.matches if m.state.subject == "Go style")
    assert go_style.why["lexical"] > 0


def test_a_query_made_only_of_the_context_ranks_as_an_empty_query(
    services: Services, make_ctx: ContextFactory
) -> None:
    writer = make_ctx()
    for name in ("first", "second"):
        services.memory.writes.remember(
            writer, validate_remember(rule(f"Rule {name}", {"surface": "go"}))
        )
    services.memory.writes.remember(
        writer, validate_remember(rule("General", {"scope": "project"}, body="Go, go, go."))
    )
    reader = make_ctx(surface="go")
    named = services.memory.recalls.recall(
        reader, validate_recall({"source_type": "memorule", "query": "Go"})
    )
    empty = services.memory.recalls.recall(reader, validate_recall({"source_type": "memorule"}))
    assert [(m.memory.id, m.score, m.why) for m in named.matches] == [
        (m.memory.id, m.score, m.why) for m in empty.matches
    ]
    assert [m.state.subject for m in named.matches] == ["Rule second", "Rule first", "General"]
