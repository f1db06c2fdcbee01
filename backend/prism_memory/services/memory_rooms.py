"""Memory (the v0.3 substrate and its v0.4 front): notes, recall over all memory, versions.

:class:`MemoryRooms` wires the rooms by concept, which share one
:class:`~prism_memory.services.memory_deps.MemoryDeps`; callers call the room that does the
work (``prism_remember`` is ``rooms.writes.remember``, ``semantic_recall`` is
``rooms.recalls.recall``):

- :mod:`.write_service` — new notes (memorules: :mod:`.memorule_service`), idempotent commits;
- :mod:`.lifecycle_service` — update (a new version), retire, restore, pin;
- :mod:`.recall_service` — ``semantic_recall``;
- :mod:`.bulk_service` — bulk writes and re-embedding;
- :mod:`.memory_reads` — one memory, its history, listings, the pinned rules.

A model, engine or ranking setting swapped on :attr:`MemoryRooms.deps` is the one every room
uses. What a door shows of these records (JSON, ``ok`` envelopes) is
:mod:`prism_memory.serializers`.
"""

from __future__ import annotations

from prism_memory.services.bulk_service import BulkService
from prism_memory.services.lifecycle_service import LifecycleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_reads import MemoryReads
from prism_memory.services.recall_service import RecallService
from prism_memory.services.write_service import WriteService


class MemoryRooms:
    """The memory rooms over one set of dependencies; no behaviour of its own.

    Args:
        deps: the engine, model, memorule service and ranking settings every room shares.
    """

    def __init__(self, deps: MemoryDeps) -> None:
        self.deps = deps
        self.writes = WriteService(deps)
        self.lifecycle = LifecycleService(deps)
        self.recalls = RecallService(deps)
        self.bulk = BulkService(deps, self.writes)
        self.reads = MemoryReads(deps)
