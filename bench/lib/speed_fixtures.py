"""Scale fixtures for the speed benchmarks: N memories with synthetic vectors, loaded fast,
and the real task and rule texts they time queries and writes with.

Embedding 100k texts with the real model would take hours here, so scale stores hold
synthetic text ("memory <i> ...") and random unit vectors. The vectors are labelled with
the real model's id, so recall scores them exactly as it would real ones.

Loading is NOT what is measured (bulk import and single writes are measured separately
with the real model): each system gets its fixture through its cheapest honest path:

- Prism: the storage port, 1,000 records per transaction; every record is a complete
  memorule (``:Memory`` + ``:MemoryState`` + audit event + vector), built like
  ``MemoruleService.build_create`` but without its near-duplicate scan.
- mem0: its vector store's ``insert`` with mem0's own payload layout (what ``add`` writes,
  minus the history row).
- LangGraph: ``store.batch`` of ``PutOp`` (the embed function returns the synthetic vectors).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from . import common

TOPICS = (
    "database migrations",
    "error handling",
    "code review",
    "logging",
    "test fixtures",
    "deploys",
    "secrets",
    "timestamps",
)


def text_of(i: int) -> str:
    return f"memory {i}: always follow the team rule about {TOPICS[i % len(TOPICS)]} #{i}"


class VectorTable:
    """An 'embedder' serving precomputed synthetic vectors by text (unknown texts: random)."""

    def __init__(self, model_id: str, dim: int = 384) -> None:
        self.model_id = model_id
        self.dim = dim
        self.table: dict[str, np.ndarray] = {}
        self.fallback = common.SyntheticEmbedder(model_id, dim)

    def register(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        self.table.update(zip(texts, matrix, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self.table]
        for i, t in enumerate(texts):
            if t in self.table:
                out[i] = self.table[t]
        if missing:
            out[missing] = self.fallback.embed([texts[i] for i in missing])
        return out


def prism_load(svc: Any, ctx: Any, start: int, texts: Sequence[str], matrix: np.ndarray) -> None:
    """Append memorules ``start..`` to the context's project through the storage port."""
    from prism_memory.domain.ids import new_id
    from prism_memory.domain.records import (
        AppliesTo,
        AuditEventType,
        Confidence,
        Kind,
        MemoruleKind,
        Memory,
        MemoryState,
        Scope,
        Status,
        utcnow,
    )
    from prism_memory.trigraph.port import StateWrite, WriteBatch

    model = svc.memory.deps.embedder.model_id
    for part_start in range(0, len(texts), 1000):
        batch = WriteBatch(tenant_id=ctx.tenant_id)
        for j in range(part_start, min(part_start + 1000, len(texts))):
            now = utcnow()
            memory = Memory(
                id=new_id(),
                tenant_id=ctx.tenant_id,
                project_id=ctx.project_id,
                namespace="default",
                kind=Kind.MEMORULE,
                status=Status.ACTIVE,
                created_at=now,
            )
            state = MemoryState(
                id=new_id(),
                memory_id=memory.id,
                version=1,
                body=texts[j],
                subject=f"rule {start + j}",
                written_by_session_id=ctx.session_id,
                written_by_persona=None,
                written_at=now,
                embedding_model=model,
                memorule_kind=MemoruleKind.BEHAVIORAL_RULE,
                applies_to=AppliesTo(scope=Scope.PROJECT),
                confidence=Confidence.INFERRED,
            )
            audit = svc.memory.deps.memorules.audit_draft(
                ctx, memory, state, AuditEventType.CREATED, None, now
            )
            batch.new_memories.append(memory)
            batch.states.append(StateWrite(state, matrix[j]))
            batch.audits.append(audit)
        svc.store.write(batch)


def mem0_load(peer: Any, group: str, start: int, texts: Sequence[str], matrix: np.ndarray) -> None:
    """Insert points into mem0's vector store with the payload ``Memory.add`` writes."""
    store = peer.memory.vector_store
    for part_start in range(0, len(texts), 1000):
        ids, payloads, vectors = [], [], []
        for j in range(part_start, min(part_start + 1000, len(texts))):
            now = datetime.now(UTC).isoformat()
            ids.append(str(uuid.uuid4()))
            vectors.append(matrix[j].tolist())
            payloads.append(
                {
                    "user_id": group,
                    "role": "user",
                    "key": f"k{start + j}",
                    "data": texts[j],
                    "hash": hashlib.md5(texts[j].encode()).hexdigest(),
                    "created_at": now,
                    "updated_at": now,
                    "text_lemmatized": texts[j],
                }
            )
        store.insert(vectors=vectors, ids=ids, payloads=payloads)


def langgraph_load(
    peer: Any, table: VectorTable, group: str, start: int, texts: Sequence[str], matrix: np.ndarray
) -> None:
    """``store.batch`` of puts; the index's embed function serves the synthetic vectors."""
    table.register(texts, matrix)
    items = [(f"k{start + j}", texts[j], {}) for j in range(len(texts))]
    peer.add(group, items)


def task_texts() -> list[str]:
    """Realistic query texts: the dev tasks when the data is there, else fixed ones."""
    path = common.shared_bench_dir() / "rules" / "recall_bench_dev.jsonl"
    if path.exists():
        return [q["task"] for q in common.load_jsonl(path)]
    return [f"how do we handle {t} in this repository?" for t in TOPICS]


def rule_texts(n: int) -> list[str]:
    """The first ``n`` real rule texts (the dataset's plain subjects), else synthetic ones."""
    path = common.shared_bench_dir() / "rules" / "rules.jsonl"
    if not path.exists():
        return [text_of(i) for i in range(n)]
    from .rules_data import is_rule, rule_text

    out: list[str] = []
    with path.open() as handle:
        for line in handle:
            rule = json.loads(line)
            if is_rule(rule):
                out.append(rule_text(rule, "plain"))  # as when its figures were taken
            if len(out) >= n:
                break
    return out
