"""Exact pruning for recall: the rows a vector sketch proves cannot reach the top.

:func:`relevance` gives the clipped cosine of every candidate row that can still enter the
top ``top_k`` of :func:`prism_memory.domain.ranking.rank`; above a size it skips the others by a
Cauchy–Schwarz bound on a low-dimensional sketch of the vectors, with the same result as
scoring every row.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prism_memory.domain.ranking_inputs import (
    BoolArray,
    Candidates,
    FloatArray,
    IntArray,
    RankingWeights,
)


def dots(rows: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row's dot product with ``q``, the same wherever the row sits.

    A BLAS matrix-vector product rounds a row differently at a block's edge (by ~1e-8),
    so the same memory would score differently in two caches holding it at different
    positions; ``einsum`` sums every row alike, and costs about the same here.
    """
    out: npt.NDArray[np.float32] = np.einsum("ij,j->i", rows, q)
    return out


PRESELECT_MIN = 4096  # below this many vectors a cache keeps no sketch


def relevance(
    c: Candidates,
    q: npt.NDArray[np.float32] | None,
    idx: IntArray,
    conf_w: FloatArray,
    rest: FloatArray,
    applicable: BoolArray,
    weights: RankingWeights,
    top_k: int,
    preselect_above: int,
    lexical: FloatArray | None = None,
    alpha: FloatArray | None = None,
) -> tuple[IntArray, FloatArray]:
    """Clipped cosine for every row of ``idx`` that can reach the top ``top_k``.

    Above ``preselect_above`` rows (and with a sketch), rows that provably cannot reach
    the top are skipped, so the result is the same as scoring every row:

    1. The sketch gives each row an estimate ``Px·Pq`` and an upper bound
       ``Px·Pq + |x − PPᵀx|·|q − PPᵀq|`` of its cosine (Cauchy–Schwarz on what the
       orthonormal projection misses).
    2. The ``max(64, 4·top_k)`` rows with the best estimated scores are scored exactly;
       the ``top_k``-th best of those scores is a floor the final top must reach.
    3. The other rows whose upper-bound score reaches that floor are scored exactly, best
       bound first, raising the floor as they go; once the next bound is below the floor,
       no row left can beat ``top_k`` rows already in hand.

    When too many rows survive (vectors with no low-dimensional structure) every row is
    scored exactly, as below ``preselect_above``.

    Args:
        lexical: per-row lexical share (``_lexical_share``), mixed into relevance with
            the per-row weight ``alpha`` (``weights.lexical`` or ``lexical_note``); the
            bound accounts for it.

    Returns:
        The rows scored and their clipped cosine (float64), in matching order.
    """
    m = c.matrix
    if q is None or m.shape[0] != len(c.ids) or m.shape[1] != q.shape[0]:
        return idx, np.zeros(idx.size)
    if 0 < preselect_above < idx.size and c.coarse is not None:
        pruned = _pruned(c, q, idx, conf_w, rest, applicable, weights, top_k, lexical, alpha)
        if pruned is not None:
            return pruned
    exact = dots(m, q)[idx] if idx.size * 2 > m.shape[0] else dots(m[idx], q)
    return idx, np.clip(exact, 0.0, 1.0).astype(np.float64)


_BOUND_SLACK = 1e-4  # float32 rounding in the sketch, far above its worst case


def _pruned(
    c: Candidates,
    q: npt.NDArray[np.float32],
    idx: IntArray,
    conf_w: FloatArray,
    rest: FloatArray,
    applicable: BoolArray,
    weights: RankingWeights,
    top_k: int,
    lexical: FloatArray | None,
    alpha: FloatArray | None,
) -> tuple[IntArray, FloatArray] | None:
    """``relevance`` by sketch bounds (see there); None when pruning would not pay."""
    if c.projection is None or c.residual is None or c.coarse is None:
        return None
    lex_w = alpha[idx] if lexical is not None and alpha is not None else 0.0
    cos_w = conf_w[idx] * (weights.relevance * (1.0 - lex_w))
    if not (cos_w >= 0).all():  # a negative weight turns the bound around: score all
        return None
    base = conf_w[idx] * rest[idx] + applicable[idx] * 1e6
    if lexical is not None:
        base = base + conf_w[idx] * (weights.relevance * lex_w) * lexical[idx]
    qp = q @ c.projection
    q_left = float(np.sqrt(max(float(q @ q) - float(qp @ qp), 0.0)))
    estimate = (qp @ c.coarse)[idx]
    first = min(idx.size, max(64, 4 * top_k))
    short = np.argpartition(-(cos_w * np.clip(estimate, 0.0, 1.0) + base), first - 1)[:first]
    short_cos = np.clip(dots(c.matrix[idx[short]], q), 0.0, 1.0).astype(np.float64)
    short_score = cos_w[short] * short_cos + base[short]
    floor = np.partition(short_score, first - top_k)[first - top_k] if first >= top_k else -np.inf
    bound = cos_w * np.clip(estimate + q_left * c.residual[idx], 0.0, 1.0) + base
    survive = bound >= floor - _BOUND_SLACK
    survive[short] = False
    more = np.flatnonzero(survive)
    if more.size > idx.size // 4:
        return None
    # Best bounds first: each exactly scored block can raise the floor, and once the next
    # bound is below it nothing left can enter the top.
    more = more[np.argsort(-bound[more], kind="stable")]
    rows, cosines, scores = [short], [short_cos], short_score
    for lo in range(0, more.size, 256):
        block = more[lo : lo + 256]
        if bound[block[0]] < floor - _BOUND_SLACK:
            break
        cos = np.clip(dots(c.matrix[idx[block]], q), 0.0, 1.0).astype(np.float64)
        rows.append(block)
        cosines.append(cos)
        scores = np.concatenate([scores, cos_w[block] * cos + base[block]])
        floor = np.partition(scores, scores.size - top_k)[scores.size - top_k]
    return idx[np.concatenate(rows)], np.concatenate(cosines)
