"""Ranking over a recall cache's snapshot, in process (the SQLite engine's recall; its
near-duplicate probe reads ``recall_index`` itself: :mod:`.near_duplicates`)."""

from __future__ import annotations

from prism_memory.domain.ranking import Candidates, rank
from prism_memory.trigraph.port import RankedPage, RecallRequest


def rank_snapshot(cands: Candidates, req: RecallRequest) -> RankedPage:
    """``RecallStore.recall`` over an in-process snapshot: the domain's numpy ranking."""
    lexical = req.weights.lexical or req.weights.lexical_note
    hits = cands.lexical_hits(req.query, req.weights) if lexical and len(cands) else None
    ranked = rank(
        cands,
        req.context,
        req.vector,
        req.weights,
        req.top_k,
        req.include_inapplicable,
        req.preselect_above,
        lexical=hits,
    )
    return RankedPage(ranked, len(cands))
