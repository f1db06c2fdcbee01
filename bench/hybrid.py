"""Experiment, not the product: Prism's ranking fused with BM25 (DESIGN §6 "hybrid where
it measurably helps").

score = prism_score / max(prism_scores) + weight * bm25 / max(bm25), over the union of
Prism's and BM25's top ``depth`` (both already restricted to what applies to the context).
"""

from __future__ import annotations

from typing import Any


def fuse(
    dense: list[tuple[str, float]], lexical: list[tuple[str, float]], weight: float, k: int
) -> list[str]:
    """The top ``k`` keys by the normalised weighted sum of the two score lists."""
    top_d = max((s for _, s in dense), default=0.0) or 1.0
    top_l = max((s for _, s in lexical), default=0.0) or 1.0
    score: dict[str, float] = {}
    for key, s in dense:
        score[key] = s / top_d
    for key, s in lexical:
        score[key] = score.get(key, 0.0) + weight * s / top_l
    return sorted(score, key=lambda key: -score[key])[:k]


class HybridRules:
    """Prism rules + a BM25 index over the same texts with the same context filter."""

    def __init__(self, prism: Any, weight: float, depth: int = 100) -> None:
        from peers import BM25Peer

        self.prism = prism
        self.bm25 = BM25Peer()
        self.weight = weight
        self.depth = depth
        self.name = f"prism+bm25(w={weight})"
        self.built = True

    def load(self, rules: list[dict[str, Any]]) -> None:
        from rules_data import is_rule, rule_text

        self.prism.load(rules)
        self.built = self.prism.built
        meta = [
            (r["id"], rule_text(r), {k: r.get(k) for k in ("scope", "surface", "persona")})
            for r in rules
            if is_rule(r)
        ]
        self.bm25.add("rules", meta)

    def search(self, ctx: dict[str, Any], task: str, k: int) -> list[str]:
        dense = self.prism.search_scored(ctx, task, self.depth)
        lexical = self.bm25.search_scored("rules", task, self.depth, self.bm25.rules_filter(ctx))
        return fuse(dense, lexical, self.weight, k)

    def close(self) -> None:
        self.prism.close()


class HybridNotes:
    """Prism notes + BM25 per conversation."""

    def __init__(self, prism: Any, weight: float, depth: int = 100) -> None:
        from peers import BM25Peer

        self.prism = prism
        self.bm25 = BM25Peer()
        self.weight = weight
        self.depth = depth
        self.name = f"prism+bm25(w={weight})"

    def add(self, group: str, items: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.prism.add(group, items)
        self.bm25.add(group, items)

    def search(self, group: str, query: str, k: int, where: Any = None) -> list[str]:
        dense = self.prism.search_scored(group, query, self.depth)
        lexical = self.bm25.search_scored(group, query, self.depth)
        return fuse(dense, lexical, self.weight, k)

    def close(self) -> None:
        self.prism.close()
