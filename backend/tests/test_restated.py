"""Query words that only restate the session context are not scored as relevance."""

from __future__ import annotations

from uuid import uuid4

import pytest

from prism_memory.domain.records import SessionContext
from prism_memory.domain.restated import without_restated
from prism_memory.errors import InvalidInput
from prism_memory.settings import load_settings

KEYS = ("persona", "surface", "specialization")


def ctx(**values: str) -> SessionContext:
    return SessionContext(uuid4(), uuid4(), uuid4(), **values)


@pytest.mark.parametrize(
    ("query", "context", "expected"),
    [
        ("The Go dashboard is slow.", {"surface": "go"}, "The dashboard is slow."),
        ("A new ticket in this Next.js repo.", {"surface": "nextjs"}, "A new ticket in this repo."),
        ("Ship the Azure DevOps app", {"surface": "azure-devops"}, "Ship the app"),
        ("Log in the Power Platform worker", {"surface": "power-platform"}, "Log in the worker"),
        ("Review as the Code Reviewer", {"persona": "code-reviewer"}, "Review as the"),
        ("GO go Go", {"surface": "go"}, ""),
    ],
)
def test_runs_of_words_spelling_a_context_value_are_dropped(
    query: str, context: dict[str, str], expected: str
) -> None:
    assert without_restated(query, ctx(**context), KEYS) == expected


@pytest.mark.parametrize(
    ("query", "context"),
    [
        ("Ship the Azure app", {"surface": "azure-devops"}),  # a part of a value stays
        ("Going to the gopher", {"surface": "go"}),  # words, not substrings
        ("The Go dashboard", {}),  # the context names no surface
        ("", {"surface": "go"}),
        ("Azure. DevOps is slow", {"surface": "azure-devops"}),  # a sentence break between
    ],
)
def test_other_words_stay(query: str, context: dict[str, str]) -> None:
    assert without_restated(query, ctx(**context), KEYS) == query


def test_only_the_keys_asked_for_count() -> None:
    c = ctx(surface="go", specialization="security")
    text = "Go security review"
    assert without_restated(text, c, ("surface",)) == "security review"
    assert without_restated(text, c, ()) == text


def test_the_keys_are_a_setting_of_known_applies_to_keys() -> None:
    assert load_settings().ranking_weights().restated == ("persona", "surface")
    assert load_settings(rank_restated="").ranking_weights().restated == ()
    assert load_settings(rank_restated=" surface , specialization").ranking_weights().restated == (
        "surface",
        "specialization",
    )
    with pytest.raises(InvalidInput) as refused:
        load_settings(rank_restated="surface,scope")
    [error] = refused.value.errors
    assert error.field == "rank_restated"
    assert "not applies_to keys: scope" in error.message
