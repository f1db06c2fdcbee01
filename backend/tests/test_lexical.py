"""The BM25 index behind hybrid recall: tokenizer, scores on a hand-checked corpus, live rows,
lazy and incremental indexing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prism_memory.domain.lexical import K1, B, tokenize
from prism_memory.trigraph.sqlite.lexical_index import LexicalIndex

CORPUS = [
    "Caroline went to the beach",  # caroline went beach      (3 terms)
    "The beach was cold, Caroline said",  # beach cold caroline said (4 terms)
    "Melanie paints sunsets; Melanie loves paint",  # melanie paints sunsets melanie loves paint
    "What a day",  # day
]


def search(
    index: LexicalIndex,
    query: str,
    live: list[bool] | None = None,
    k1: float | None = None,
    b: float | None = None,
) -> dict[int, float]:
    flags = np.array(live if live is not None else [True] * len(index), dtype=bool)
    hits = index.search(query, len(flags), flags, k1, b)
    return dict(zip(hits.rows.tolist(), hits.scores.tolist(), strict=True))


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("When did Caroline go to the beach?", ["caroline", "go", "beach"]),
        ("Use snake_case, Python 3.11!", ["use", "snake_case", "python", "3", "11"]),
        ("Größe der Datei überprüfen", ["größe", "der", "datei", "überprüfen"]),
        ("What? Where? Who? How? Why? Which?", []),
        ("", []),
    ],
)
def test_tokenize_lowercases_keeps_unicode_words_and_drops_stopwords(
    text: str, terms: list[str]
) -> None:
    assert tokenize(text) == terms


def index_of(texts: list[str], b: float = B) -> LexicalIndex:
    index = LexicalIndex(K1, b)
    index.add(texts)
    return index


@pytest.mark.parametrize("b", [B, 0.75])
def test_bm25_scores_match_the_formula_on_a_small_corpus(b: float) -> None:
    scores = search(index_of(CORPUS, b), "When did Caroline go to the beach?")
    # N = 4 docs, lengths 3, 4, 6, 1 (avgdl 3.5); "caroline" and "beach" are each in docs 0, 1.
    idf = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))

    def term(tf: int, length: int) -> float:
        return idf * tf * (K1 + 1) / (tf + K1 * (1 - b + b * length / 3.5))

    assert set(scores) == {0, 1}
    assert scores[0] == pytest.approx(2 * term(1, 3))
    assert scores[1] == pytest.approx(2 * term(1, 4))
    if b > 0:
        assert scores[0] > scores[1]  # length normalised: the shorter turn wins
    else:
        assert scores[0] == scores[1]  # the default (b 0): length does not count
    # A search may bring its own parameters (settings): the same as an index built with them.
    other = search(index_of(CORPUS, B), "When did Caroline go to the beach?", k1=K1, b=b)
    assert other == pytest.approx(scores)
    hits = index_of(CORPUS).search("caroline beach unknownword", 4, np.ones(4, dtype=bool))
    assert hits.ceiling == pytest.approx(2 * idf)  # terms no live row holds add nothing


def test_rarer_terms_and_repeats_rank_higher() -> None:
    index = index_of(CORPUS)
    scores = search(index, "Melanie beach")
    assert max(scores, key=lambda row: scores[row]) == 2  # melanie: 1 doc, twice; beach: 2 docs
    assert list(search(index, "paints paint")) == [2]  # no stemming: two distinct terms


def test_dead_rows_neither_score_nor_count_in_the_statistics() -> None:
    index = index_of(CORPUS)
    with_dead = search(index, "beach", live=[False, True, True, True])
    assert list(with_dead) == [1]
    alone = search(index_of(CORPUS[1:]), "beach")
    assert with_dead[1] == pytest.approx(alone[0])  # as if row 0 had never been written


def test_rows_past_the_snapshot_and_queries_of_stopwords_only_score_nothing() -> None:
    index = index_of(CORPUS)
    hits = index.search("Caroline", 1, np.ones(4, dtype=bool))
    assert hits.rows.tolist() == [0]
    assert search(index, "what did they do").keys() == set()
    assert search(index, "unknownword").keys() == set()


def test_rows_added_later_are_indexed_at_the_next_search_and_score_alike() -> None:
    grown = index_of(CORPUS[:2])
    assert list(search(grown, "beach")) == [0, 1]
    grown.add(CORPUS[2:])
    grown.add(["Another beach"])
    whole = index_of([*CORPUS, "Another beach"])
    for query in ("beach", "Melanie paints the beach", "day"):
        assert search(grown, query) == pytest.approx(search(whole, query))


def test_an_index_grown_by_many_small_batches_scores_like_one_built_at_once() -> None:
    """Incremental writes add one small batch per search; the small ones get merged
    (past eight), and every term's rows must stay complete and ascending."""
    rng = np.random.default_rng(2)
    words = ["beach", "caroline", "paints", "sunset", "kiln", "pottery", "quetzal", "day"]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(400)]
    grown = index_of(texts[:300])  # a first load: the big batch
    assert search(grown, "beach")
    for lo in range(300, 400, 5):  # twenty small batches, a search after each
        grown.add(texts[lo : lo + 5])
        search(grown, "kiln")
    whole = index_of(texts)
    for query in ("beach kiln", "pottery quetzal day", "caroline"):
        assert search(grown, query) == pytest.approx(search(whole, query))
    also = index_of(texts[:3])  # a small first batch, then bigger ones: merged all at once
    for lo in range(3, 400, 40):
        also.add(texts[lo : lo + 40])
        search(also, "sunset")
    assert search(also, "sunset paints") == pytest.approx(search(whole, "sunset paints"))
