"""Ranking over a recall cache's snapshot, in process (the SQLite engine's recall and
near-duplicate probe)."""

from __future__ import annotations

from uuid import UUID

import numpy as np

from prism_memory.domain.ranking import NONE, Candidates, dots, rank, rows_within_reach
from prism_memory.domain.records import APPLIES_TO_KEYS
from prism_memory.embeddings.port import Vector
from prism_memory.trigraph.port import NearMatch, RankedPage, RecallRequest


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


def near_in_snapshot(
    cands: Candidates, vector: Vector, threshold: float, limit: int
) -> list[NearMatch]:
    """``RecallStore.near_duplicates`` over an in-process snapshot (sketch-pruned, exact)."""
    if not len(cands) or cands.matrix.shape[1] != vector.shape[0]:
        return []
    reach = rows_within_reach(cands, vector, threshold)
    if reach is None:  # no sketch: every row
        reach = np.arange(len(cands.ids))
        sims = dots(cands.matrix, vector)
    else:
        sims = dots(cands.matrix[reach], vector)
    hit = sims >= threshold
    if cands.selected is not None:
        hit &= cands.selected[reach]
    found = np.flatnonzero(hit)
    found = found[np.argsort(-sims[found], kind="stable")][:limit]
    out = []
    for j in found:
        i = int(reach[j])
        applies: dict[str, str | None] = {}
        for key in APPLIES_TO_KEYS:
            code = int(cands.keys[key][i])
            applies[key] = _name_of(cands.vocab[key], code)
        out.append(NearMatch(UUID(str(cands.ids[i])), float(sims[j]), applies))
    return out


def _name_of(vocab: dict[str, int], code: int) -> str | None:
    if code == NONE:
        return None
    return next((name for name, c in vocab.items() if c == code), None)
