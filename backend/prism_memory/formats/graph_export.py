"""The tenant's TriGraph as Cypher statements (``prism export --format cypher``).

The graph is SPEC-094 v0.4's schema block on SPEC-020's topology, node for node::

    (:Memory {id, tenant_id, project_id, namespace, kind, source_type, status, created_at})
      -[:HAS_STATE]->
    (:MemoryState {id, version, subject, body, memorule_kind, applies_to_persona,
                   applies_to_surface, applies_to_specialization, applies_to_scope,
                   evidence_signal_id, confidence, written_by_session_id,
                   written_by_persona, written_at, embedding_model, reason,
                   checks, enforcement})
    (:MemoruleAudit {id, tenant_id, seq, memorule_id, state_id, event,
                     written_by_session_id, written_by_persona, evidence_signal_id,
                     written_at, reason, prev_hash, hash})

- ``applies_to`` is flattened into ``applies_to_<key>`` properties: Neo4j property values
  cannot be maps, and flat properties stay queryable and indexable
  (``WHERE s.applies_to_surface = 'python'``), which JSON text would not be.
- A property that is null is left out (Neo4j does not store nulls).
- Timestamps stay ISO-8601 text, as the spec writes them (they sort as text).
- Audit events link to their memorule by ``memorule_id``/``state_id`` properties: the spec
  names no relationship for them, so none is invented.
- Embeddings are not exported (``embedding_model`` says which model made them).

Statements are ``UNWIND [rows] AS row MERGE ... SET ...;`` batches, one row per line, so
loading twice changes nothing and large tenants load in few round trips. Strings are
single-quoted with backslash escapes; control and invisible characters are written as
``\\uXXXX`` so the file can hide nothing from a reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, TextIO

from prism_memory.domain.adherence.checks import checks_json
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    AUDIT_FIELDS,
    MemoruleAudit,
    Memory,
    MemoryState,
    iso,
)
from prism_memory.formats.rules_io.reading import is_hidden
from prism_memory.trigraph.dump import DumpItem, MemoryDump

BATCH: Final = 100
MEMORY_PROPERTIES: Final = (
    "id",
    "tenant_id",
    "project_id",
    "namespace",
    "kind",
    "source_type",
    "status",
    "created_at",
)
STATE_PROPERTIES: Final = (
    "id",
    "version",
    "subject",
    "body",
    "memorule_kind",
    *(f"applies_to_{k}" for k in (*APPLIES_TO_KEYS, "scope")),
    "evidence_signal_id",
    "confidence",
    "written_by_session_id",
    "written_by_persona",
    "written_at",
    "embedding_model",
    "reason",
    "checks",
    "enforcement",
)
AUDIT_PROPERTIES: Final = AUDIT_FIELDS
CONSTRAINTS: Final = (
    "CREATE CONSTRAINT prism_memory_id IF NOT EXISTS FOR (n:Memory) REQUIRE n.id IS UNIQUE;",
    "CREATE CONSTRAINT prism_memory_state_id IF NOT EXISTS "
    "FOR (n:MemoryState) REQUIRE n.id IS UNIQUE;",
    "CREATE CONSTRAINT prism_memorule_audit_id IF NOT EXISTS "
    "FOR (n:MemoruleAudit) REQUIRE n.id IS UNIQUE;",
)
_ESCAPES: Final = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

Value = str | int


@dataclass
class CypherCounts:
    """What an export wrote."""

    memories: int = 0
    states: int = 0
    audit_events: int = 0
    statements: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def cypher_string(text: str) -> str:
    """A Cypher string literal: single quotes, backslash escapes, invisibles escaped."""
    out = ["'"]
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif is_hidden(ch):
            cp = ord(ch)
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def cypher_map(values: dict[str, Value | None]) -> str:
    """A Cypher map literal of the non-null values (keys are plain identifiers)."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        literal = str(value) if isinstance(value, int) else cypher_string(value)
        parts.append(f"{key}: {literal}")
    return "{" + ", ".join(parts) + "}"


def memory_row(m: Memory) -> dict[str, Value | None]:
    """The ``:Memory`` node's properties."""
    return {
        "id": str(m.id),
        "tenant_id": str(m.tenant_id),
        "project_id": str(m.project_id),
        "namespace": m.namespace,
        "kind": m.kind.value,
        "source_type": m.source_type.value,
        "status": m.status.value,
        "created_at": iso(m.created_at),
    }


def state_row(s: MemoryState) -> dict[str, Value | None]:
    """The ``:MemoryState`` node's properties (``applies_to`` flattened)."""
    applies = s.applies_to.to_dict() if s.applies_to else {}
    return {
        "id": str(s.id),
        "version": s.version,
        "subject": s.subject,
        "body": s.body,
        "memorule_kind": s.memorule_kind.value if s.memorule_kind else None,
        **{f"applies_to_{k}": applies.get(k) for k in (*APPLIES_TO_KEYS, "scope")},
        "evidence_signal_id": s.evidence_signal_id,
        "confidence": s.confidence.value if s.confidence else None,
        "written_by_session_id": str(s.written_by_session_id),
        "written_by_persona": s.written_by_persona,
        "written_at": iso(s.written_at),
        "embedding_model": s.embedding_model,
        "reason": s.reason,
        # A memorule's checks as JSON text (a property cannot hold maps); both left out
        # (null) on a state without checks and with the default enforcement.
        "checks": json.dumps(checks_json(s.checks), sort_keys=True) if s.checks else None,
        "enforcement": s.enforcement.value if s.guarded else None,
    }


def audit_row(a: MemoruleAudit) -> dict[str, Value | None]:
    """The ``:MemoruleAudit`` node's properties."""
    return {
        "id": str(a.id),
        "tenant_id": str(a.tenant_id),
        "seq": a.seq,
        "memorule_id": str(a.memorule_id),
        "state_id": str(a.state_id),
        "event": a.event.value,
        "written_by_session_id": str(a.written_by_session_id),
        "written_by_persona": a.written_by_persona,
        "evidence_signal_id": a.evidence_signal_id,
        "written_at": iso(a.written_at),
        "reason": a.reason,
        "prev_hash": a.prev_hash,
        "hash": a.hash,
    }


def write_cypher(items: Iterable[DumpItem], out: TextIO, tenant_label: str) -> CypherCounts:
    """Write a tenant's dump as Cypher statements.

    Args:
        items: the store's ``dump(tenant_id)`` (memories first, then the audit chain);
            idempotency claims are not part of the graph and are skipped.
        out: where the statements go.
        tenant_label: the tenant, named in the header comment.

    Returns:
        How many nodes of each label and statements were written.
    """
    counts = CypherCounts()
    out.write(f"// Prism Memory TriGraph, tenant {tenant_label} (SPEC-094 v0.4 schema)\n")
    out.write("// applies_to is flattened into applies_to_* properties; embeddings are left out.\n")
    for statement in CONSTRAINTS:
        out.write(statement + "\n")
        counts.statements += 1
    memories: list[MemoryDump] = []
    audits: list[MemoruleAudit] = []
    for item in items:
        if isinstance(item, MemoryDump):
            memories.append(item)
            if len(memories) == BATCH:
                _memories(memories, out, counts)
                memories = []
        elif isinstance(item, MemoruleAudit):
            audits.append(item)
            if len(audits) == BATCH:
                _audits(audits, out, counts)
                audits = []
    _memories(memories, out, counts)
    _audits(audits, out, counts)
    return counts


def _statement(rows: list[str], tail: str, out: TextIO, counts: CypherCounts) -> None:
    if not rows:
        return
    out.write("UNWIND [\n  " + ",\n  ".join(rows) + f"\n] AS row\n{tail};\n")
    counts.statements += 1


def _memories(batch: list[MemoryDump], out: TextIO, counts: CypherCounts) -> None:
    rows = [cypher_map(memory_row(d.memory)) for d in batch]
    _statement(rows, "MERGE (m:Memory {id: row.id}) SET m += row", out, counts)
    counts.memories += len(rows)
    states = [(d.memory, s) for d in batch for s in d.states]
    for start in range(0, len(states), BATCH):
        part = [
            "{memory_id: "
            + cypher_string(str(memory.id))
            + ", state: "
            + cypher_map(state_row(state))
            + "}"
            for memory, state in states[start : start + BATCH]
        ]
        _statement(
            part,
            "MATCH (m:Memory {id: row.memory_id})\n"
            "MERGE (s:MemoryState {id: row.state.id}) SET s += row.state\n"
            "MERGE (m)-[:HAS_STATE]->(s)",
            out,
            counts,
        )
        counts.states += len(part)


def _audits(batch: list[MemoruleAudit], out: TextIO, counts: CypherCounts) -> None:
    rows = [cypher_map(audit_row(a)) for a in batch]
    _statement(rows, "MERGE (a:MemoruleAudit {id: row.id}) SET a += row", out, counts)
    counts.audit_events += len(rows)


def statements(text: str) -> Iterator[str]:
    """Split an export into statements (each ends with ``;`` at the end of a line)."""
    current: list[str] = []
    for line in text.split("\n"):
        if line.startswith("//") and not current:
            continue
        current.append(line)
        if line.endswith(";"):
            yield "\n".join(current)
            current = []
