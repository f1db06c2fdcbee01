"""What the memory rooms share: one engine, one model, the memorule service, ranking settings.

The rooms (:mod:`.write_service`, :mod:`.lifecycle_service`, :mod:`.recall_service`,
:mod:`.bulk_service`, :mod:`.memory_reads`) each hold the same :class:`MemoryDeps`
(wired by :class:`~prism_memory.services.memory_rooms.MemoryRooms`), so a model swapped here
is the one every room uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prism_memory.domain.ranking import RankingWeights
from prism_memory.embeddings.port import Embedder
from prism_memory.services.ledger_service import LedgerService
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.trigraph.port import TriGraphStore


@dataclass
class MemoryDeps:
    """The wiring of the memory rooms.

    Args:
        store: the TriGraph engine.
        embedder: the embedding model (loaded on first use).
        memorules: the memorule service writes of ``kind='memorule'`` route to.
        weights: recall ranking weights.
        preselect_above: candidate count above which recall prunes rows by the sketch's
            bound (same results; see ``ranking._relevance``); 0 scores every row.
        served: where recall records which memorule versions it served (None: nowhere).
    """

    store: TriGraphStore
    embedder: Embedder
    memorules: MemoruleService
    weights: RankingWeights = field(default_factory=RankingWeights)
    preselect_above: int = 8192
    served: LedgerService | None = None


def text_of(subject: str | None, body: str) -> str:
    """The text a memory is embedded (and re-embedded) from."""
    return f"{subject}\n{body}" if subject else body
