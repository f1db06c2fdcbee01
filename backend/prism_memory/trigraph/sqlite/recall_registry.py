"""The process's recall caches, one per (tenant, project, model), bounded in bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from prism_memory.trigraph.sqlite.recall_cache import ProjectCache


class CacheRegistry:
    """The process's project caches, least recently used dropped first, bounded in bytes.

    One registry per engine instance; keys are (tenant, project, model). ``budget_bytes``
    caps what the caches hold together (``PRISM_RECALL_CACHE_MB``); a single project larger
    than the budget is still served, then dropped when another project is loaded. Each
    cache's size is remembered from its last use (a cache only grows when used), so
    trimming costs the same with 8 caches or 800.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._guard = threading.Lock()
        self._caches: OrderedDict[tuple[str, str, str], ProjectCache] = OrderedDict()
        self._sizes: dict[tuple[str, str, str], int] = {}
        self._total = 0

    def get(
        self,
        key: tuple[str, str, str],
        make: Callable[[], ProjectCache],
        fresh: bool = False,
    ) -> ProjectCache:
        """The cache under ``key`` (made by ``make`` when missing or ``fresh``), now newest."""
        with self._guard:
            cache = self._caches.pop(key, None)
            if cache is None or fresh:
                cache = make()
            self._caches[key] = cache
            return cache

    def cached(self, key: tuple[str, str, str]) -> ProjectCache | None:
        """The cache under ``key`` if the process holds it (its recency unchanged)."""
        with self._guard:
            return self._caches.get(key)

    def trim(self) -> None:
        """Measure the newest cache (the one just used), then drop least recently used
        caches until the rest fit the budget (the newest is kept)."""
        with self._guard:
            if not self._caches:
                return
            key, newest = next(reversed(self._caches.items()))
            size = newest.nbytes
            self._total += size - self._sizes.get(key, 0)
            self._sizes[key] = size
            while self._total > self.budget_bytes and len(self._caches) > 1:
                old, _ = self._caches.popitem(last=False)
                self._total -= self._sizes.pop(old, 0)

    def nbytes(self) -> int:
        """What the caches hold together, by :attr:`ProjectCache.nbytes` (measured now)."""
        with self._guard:
            return sum(c.nbytes for c in self._caches.values())

    def __len__(self) -> int:
        return len(self._caches)
