"""Recall smooths relevance within a section: rules filed under one subject heading."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ranking import CONFIDENCE_CODE, Ranked, RankingWeights, parts_of
from prism_memory.domain.records import SessionContext
from prism_memory.domain.sections import section_of, smooth
from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.errors import InvalidInput
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.settings import load_settings
from prism_memory.trigraph.postgres.store import PostgresStore
from prism_memory.trigraph.sqlite.store import SQLiteStore


@pytest.mark.parametrize(
    ("subject", "section"),
    [
        ("Testing: Run the suite before every commit.", "testing"),
        ("  Error   Handling : wrap every call", "error handling"),  # spaces, case
        ("API Design: Versions: never break v1", "api design"),  # the first ": " only
        ("Testing (file:rules/a.md#L3-L4): x", "testing (file:rules/a.md#l3-l4)"),
        ("Never force-push to main.", None),  # no lead
        ("Testing:", None),  # nothing after it
        ("Testing:   ", None),
        ("Ratio 3:2 is fine", None),  # a colon without a space is not a lead
        (": nothing before it", None),
        ("x" * 61 + ": a sentence with a colon, not a heading", None),
        ("x" * 60 + ": the importer's longest heading", "x" * 60),
        ("", None),
        (None, None),
    ],
)
def test_a_section_is_the_subjects_lead_before_the_first_colon(
    subject: str | None, section: str | None
) -> None:
    assert section_of(subject) == section


def entry(name: str, cosine: float, lexical: float = 0.0, applicable: bool = True) -> Ranked:
    """A ranked memorule of asserted confidence whose score is what ``rank`` gives it."""
    w = RankingWeights()
    relevance = (1 - w.lexical) * cosine + w.lexical * lexical
    score = w.asserted * (w.relevance * relevance + w.prior)
    parts = parts_of(
        w,
        relevance=cosine,
        lexical=lexical,
        matched=[],
        conflicts=[],
        scope_rank=0,
        confidence_code=CONFIDENCE_CODE["asserted"],
    )
    return Ranked(0, name, score, applicable, parts)


def test_relevance_is_interpolated_with_the_sections_mean_in_the_window() -> None:
    w = RankingWeights(section=0.5)
    ranked = [
        entry("side-word", 0.60),  # matches the task alone in its section
        entry("testing-1", 0.50),
        entry("testing-2", 0.35, lexical=0.25),
        entry("alone", 0.40),  # a section of one in the window
        entry("deploy-1", 0.0),
        entry("no-section", 0.05),
    ]
    sections = ["style", "testing", "testing", "docs", "style", None]
    out = smooth(ranked, sections, [True] * 6, w)
    by = {r.memory_id: r for r in out}
    rel = {
        r.memory_id: (1 - w.lexical) * r.why["relevance"] + w.lexical * r.why["lexical"]
        for r in ranked
    }
    for name, section in (("testing-1", "testing"), ("side-word", "style")):
        members = [n for n, s in zip(rel, sections, strict=True) if s == section]
        mean = sum(rel[n] for n in members) / len(members)
        before = next(r for r in ranked if r.memory_id == name)
        expected = before.score + w.asserted * w.relevance * 0.5 * (mean - rel[name])
        assert by[name].score == pytest.approx(expected, abs=1e-12)
        assert by[name].why["section"] == section
        assert by[name].why["section_relevance"] == round(mean, 6)
        assert by[name].why["score"] == round(expected, 6)
    for name in ("alone", "no-section"):  # nothing to smooth with: unchanged, unexplained
        before = next(r for r in ranked if r.memory_id == name)
        assert by[name] == before and "section" not in by[name].why
    # The testing rules, both relevant, now outrank the side-word match of a section
    # that is about something else.
    assert [r.memory_id for r in out][:3] == ["testing-1", "testing-2", "side-word"]


def test_smoothing_reads_the_parts_the_ranking_computed_not_their_rounded_display() -> None:
    # Relevances finer than the why's six decimals: the new score is exact in them.
    w = RankingWeights(section=1.0)
    ranked = [entry("a", 0.612345678901, lexical=0.2000004), entry("b", 0.3000004999)]
    out = smooth(ranked, ["s", "s"], [True, True], w)
    rel = [(1 - w.lexical) * r.parts.relevance + w.lexical * r.parts.lexical for r in ranked]
    mean = sum(rel) / 2
    by = {r.memory_id: r for r in out}
    for r, own in zip(ranked, rel, strict=True):
        expected = r.score + w.asserted * w.relevance * (mean - own)
        assert by[r.memory_id].score == pytest.approx(expected, abs=1e-15)
        assert by[r.memory_id].parts.section_relevance == pytest.approx(mean, abs=1e-15)
        assert by[r.memory_id].why["section_relevance"] == round(mean, 6)
    # ``why`` is only a rendering of the parts: a ranked entry carries no other copy.
    assert "why" not in {f.name for f in fields(Ranked)}
    assert ranked[0].why["relevance"] == round(0.612345678901, 6)


def test_notes_use_their_own_lexical_share() -> None:
    w = RankingWeights(section=1.0, lexical=0.0, lexical_note=1.0)
    ranked = [entry("rule", 0.2, lexical=0.9), entry("note", 0.8, lexical=0.1)]
    out = smooth(ranked, ["s", "s"], [True, False], w)
    mean = (0.2 + 0.1) / 2  # the rule's relevance is its cosine, the note's its BM25 share
    assert [r.why["section_relevance"] for r in out] == [round(mean, 6)] * 2


def test_off_inapplicable_and_single_entries_keep_the_engines_order() -> None:
    ranked = [entry("a", 0.9), entry("b", 0.1), entry("c", 0.8, applicable=False)]
    assert smooth(ranked, ["s", "s", "s"], [True] * 3, RankingWeights(section=0.0)) == ranked
    assert smooth(ranked[:1], ["s"], [True], RankingWeights()) == ranked[:1]
    out = smooth(ranked, ["s", "s", "s"], [True] * 3, RankingWeights(section=1.0))
    assert [r.memory_id for r in out] == ["a", "b", "c"]  # equal scores: engine order
    assert out[0].score == pytest.approx(out[1].score)
    assert out[2] == ranked[2]  # an inapplicable rule is neither smoothed nor counted
    assert out[0].why["section_relevance"] == round((1 - 0.3) * (0.9 + 0.1) / 2, 6)
    # No heading shared by two applicable entries: the engine's list, whys untouched.
    alone = smooth(ranked, ["s", "t", "s"], [True] * 3, RankingWeights(section=1.0))
    assert alone == ranked


def test_the_weight_and_window_are_settings() -> None:
    weights = load_settings().ranking_weights()
    assert (weights.section, weights.section_window) == (0.5, 100)
    off = load_settings(rank_section=0, rank_section_window=10).ranking_weights()
    assert (off.section, off.section_window) == (0.0, 10)
    for bad in ({"rank_section": 1.5}, {"rank_section": -0.1}, {"rank_section_window": 0}):
        with pytest.raises(InvalidInput) as refused:
            load_settings(**bad)
        [error] = refused.value.errors
        assert error.field == next(iter(bad))


# -- end to end, on both engines ------------------------------------------------------

ENGINES: list[Any] = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        made: Any = SQLiteStore(db_path)
    else:
        made = PostgresStore(request.getfixturevalue("pg_url"))
    made.migrate()
    try:
        yield made
    finally:
        made.close()


def service(store: Any, **settings: Any) -> MemoryRooms:
    embedder = FakeEmbedder()
    weights = load_settings(**settings).ranking_weights()
    return MemoryRooms(MemoryDeps(store, embedder, MemoruleService(store, embedder, 0.99), weights))


RULES = [  # (subject, body): a testing section, and a style rule that names the task's words
    ("Testing: Run pytest before every commit", "Run pytest with coverage before every commit."),
    ("Testing: Mock the network in tests", "Mock the network in unit tests; never call out."),
    ("Testing: Name tests after behaviour", "Name each test after the behaviour it checks."),
    ("Style: Commit messages say why", "Before every commit, write a message that says why."),
    ("Style: Tabs are forbidden", "Indent with spaces, never tabs, in every file."),
]


def write_rules(memory: MemoryRooms, ctx: SessionContext) -> dict[str, str]:
    ids = {}
    for subject, body in RULES:
        req = {
            "kind": "memorule",
            "memorule_kind": "convention",
            "subject": subject,
            "body": body,
            "applies_to": {"scope": "project"},
        }
        ids[str(memory.writes.remember(ctx, validate_remember(req)).id)] = subject
    return ids


def test_recall_smooths_within_sections_on_every_engine(store: Any) -> None:
    ctx = SessionContext(uuid4(), uuid4(), uuid4())
    names = write_rules(service(store), ctx)
    query = {"query": "pytest tests before every commit", "top_k": 2, "source_type": "memorule"}
    plain = service(store, rank_section=0).recalls.recall(ctx, validate_recall(query))
    smoothed = service(store).recalls.recall(ctx, validate_recall(query))
    before = [names[str(m.memory.id)] for m in plain.matches]
    after = [names[str(m.memory.id)] for m in smoothed.matches]
    # Unsmoothed, the style rule sharing "before every commit" is second; smoothed, a rule
    # of the testing section rises above it, each explained.
    assert before == ["Testing: Run pytest before every commit", "Style: Commit messages say why"]
    assert after == [
        "Testing: Run pytest before every commit",
        "Testing: Mock the network in tests",
    ]
    for m in smoothed.matches:
        assert m.why["section"] == "testing"
        assert 0 < m.why["section_relevance"] < 1
    assert smoothed.candidates == plain.candidates == len(RULES)
    # top_k smaller than the window: the window, not the page, is what is smoothed.
    one = service(store).recalls.recall(ctx, validate_recall(query | {"top_k": 1}))
    assert [m.memory.id for m in one.matches] == [smoothed.matches[0].memory.id]
    # An empty query has no relevance to smooth: the ranking is the unsmoothed one.
    empty = {"query": "", "source_type": "memorule"}
    assert [m.why for m in service(store).recalls.recall(ctx, validate_recall(empty)).matches] == [
        m.why
        for m in service(store, rank_section=0).recalls.recall(ctx, validate_recall(empty)).matches
    ]
