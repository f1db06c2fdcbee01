"""Paired comparison of two runs over the same queries: the mean difference and its SE.

A ranking change is judged by how each query moved, not by two averages side by side: the
standard error of the mean per-query difference (``sd / sqrt(n)``) is what "beyond noise"
is measured against (bench/README.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def paired(new: Mapping[str, float], old: Mapping[str, float]) -> dict[str, float]:
    """Mean of ``new[q] - old[q]`` over the queries both hold, its paired SE and n."""
    keys = sorted(set(new) & set(old))
    if len(keys) < 2:
        raise ValueError("a paired comparison needs at least two common queries")
    diffs = [new[k] - old[k] for k in keys]
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return {
        "diff": round(mean, 4),
        "se": round(math.sqrt(var / len(diffs)), 4),
        "n": len(keys),
    }
