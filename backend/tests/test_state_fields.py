"""A state's fields are listed once (``records.STATE_FIELDS``); the rest is derived or checked.

The engines' ``memory_state`` columns, their row readers and writers and the dump's state keys
are derived from the one list; the content hash keeps its own frozen order (a format), and the
Cypher export its own property order (a format too): these tests keep them covering each other,
and pin the formats' bytes as they were before the list existed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg

from prism_memory.bootstrap import Services
from prism_memory.domain import audit
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import (
    STATE_FIELDS,
    AppliesTo,
    Confidence,
    Enforcement,
    MemoruleKind,
    MemoryState,
    SessionContext,
)
from prism_memory.formats.graph_export import STATE_PROPERTIES
from prism_memory.formats.transfer_format import state_json

FULL = MemoryState(
    id=UUID("01890000-0000-7000-8000-000000000001"),
    memory_id=UUID("01890000-0000-7000-8000-000000000002"),
    version=3,
    body="Run the suite before every commit.",
    subject="Testing: run the suite",
    written_by_session_id=UUID("01890000-0000-7000-8000-000000000003"),
    written_by_persona="donna",
    written_at=datetime(2026, 12, 6, 4, 30, 1, 123456, tzinfo=UTC),
    embedding_model="fake-64",
    memorule_kind=MemoruleKind("convention"),
    applies_to=AppliesTo.from_dict({"scope": "persona", "persona": "donna", "surface": "cli"}),
    evidence_signal_id="pr-12",
    confidence=Confidence("observed"),
    reason="seen twice",
    checks=parse_checks([{"forbid_command": r"\bnpm\b"}]),
    enforcement=Enforcement("deny"),
)
PLAIN = MemoryState(
    id=FULL.id,
    memory_id=FULL.memory_id,
    version=1,
    body="A note.",
    subject=None,
    written_by_session_id=FULL.written_by_session_id,
    written_by_persona=None,
    written_at=FULL.written_at,
    embedding_model="fake-64",
)
PROJECT = UUID("01890000-0000-7000-8000-000000000004")


def test_the_list_names_every_field_of_a_state_once() -> None:
    assert len(set(STATE_FIELDS)) == len(STATE_FIELDS)
    assert set(STATE_FIELDS) == {f.name for f in fields(MemoryState)}


def test_the_content_hash_and_the_list_cover_each_other() -> None:
    hashed, unhashed = audit.HASHED_STATE_FIELDS, audit.UNHASHED_STATE_FIELDS
    assert len(set(hashed)) == len(hashed) == audit.STATE_WIDTH
    assert not set(hashed) & set(unhashed)
    assert set(hashed) | set(unhashed) == set(STATE_FIELDS)


def test_the_content_hash_format_is_unchanged() -> None:
    # Hashes of these states as the code wrote them before the one list existed: stored
    # chains must keep verifying (formats 1 and 2 for a plain state, 3 for a guarded one).
    assert (
        audit.content_hash(FULL)
        == "cec4ca857436dc9bb67e5f7fe613923f156f68f213874e9e49112e6201106e77"
    )
    assert (
        audit.content_hash(FULL, PROJECT)
        == "e1b97e212b4650fc8253e7736af978f358efec97dbfeff96bc78a63471eab6e2"
    )
    assert (
        audit.content_hash(PLAIN)
        == "c6bf3bfc879f4fc11fb24353d91aadbb9bd9e64c3a2c8b71c201c5954daf83d5"
    )
    assert (
        audit.content_hash(PLAIN, PROJECT)
        == "9fac3dcddd6c5f68192a99aa3aba057c91bc2711f94c3db921a377a537bb9fa4"
    )


def test_the_dump_writes_every_field_but_memory_id_in_the_lists_order() -> None:
    assert list(state_json(FULL)) == [f for f in STATE_FIELDS if f != "memory_id"]
    # What a dump held before the one list existed (same keys in the same order: same bytes).
    assert list(state_json(PLAIN)) == list(state_json(FULL))
    assert state_json(FULL) == {
        "id": "01890000-0000-7000-8000-000000000001",
        "version": 3,
        "memorule_kind": "convention",
        "subject": "Testing: run the suite",
        "body": "Run the suite before every commit.",
        "applies_to": {"persona": "donna", "surface": "cli", "scope": "persona"},
        "evidence_signal_id": "pr-12",
        "confidence": "observed",
        "written_by_session_id": "01890000-0000-7000-8000-000000000003",
        "written_by_persona": "donna",
        "written_at": "2026-12-06T04:30:01.123456Z",
        "embedding_model": "fake-64",
        "reason": "seen twice",
        "checks": [{"forbid_command": "\\bnpm\\b"}],
        "enforcement": "deny",
    }
    assert state_json(PLAIN) == {
        "id": "01890000-0000-7000-8000-000000000001",
        "version": 1,
        "memorule_kind": None,
        "subject": None,
        "body": "A note.",
        "applies_to": None,
        "evidence_signal_id": None,
        "confidence": None,
        "written_by_session_id": "01890000-0000-7000-8000-000000000003",
        "written_by_persona": None,
        "written_at": "2026-12-06T04:30:01.123456Z",
        "embedding_model": "fake-64",
        "reason": None,
        "checks": [],
        "enforcement": "remind",
    }


def test_the_cypher_properties_cover_the_state_fields() -> None:
    # The export flattens applies_to into one property per key; its order is its own format.
    named = {"applies_to" if p.startswith("applies_to_") else p for p in STATE_PROPERTIES}
    assert named == set(STATE_FIELDS) - {"memory_id"}


def _columns(services: Services) -> list[str]:
    url = services.settings.database_url
    if url:
        with psycopg.connect(url) as conn:
            found = conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'memory_state' AND table_schema = current_schema()"
            ).fetchall()
        return [str(r[0]) for r in found]
    file = sqlite3.connect(services.settings.db_path())
    try:
        return [str(r[1]) for r in file.execute("PRAGMA table_info(memory_state)")]
    finally:
        file.close()


def test_each_engine_stores_exactly_the_listed_fields(
    services: Services, ctx: SessionContext
) -> None:
    assert sorted(_columns(services)) == sorted(["tenant_id", *STATE_FIELDS])
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "Testing: run the suite",
        "body": "Run the suite before every commit.",
        "applies_to": {"scope": "persona", "persona": "donna", "surface": "cli"},
        "confidence": "observed",
        "evidence_signal_id": "pr-12",
        "checks": [{"forbid_command": r"\bnpm\b"}],
        "enforcement": "deny",
    }
    written = services.memory.writes.remember(ctx, validate_remember(raw))
    found = services.store.get(ctx.tenant_id, written.id)
    assert found is not None
    state = found[1]
    # Every field read back as written, through the derived reader and writer.
    assert (state.subject, state.body, state.evidence_signal_id) == (
        raw["subject"],
        raw["body"],
        "pr-12",
    )
    assert state.memorule_kind is MemoruleKind.CONVENTION
    assert state.applies_to is not None and state.applies_to.to_dict() == raw["applies_to"]
    assert state.confidence is Confidence.OBSERVED and state.enforcement is Enforcement.DENY
    assert [c.to_json() for c in state.checks] == raw["checks"]
    assert (state.written_by_session_id, state.written_by_persona) == (ctx.session_id, "donna")
    assert state.memory_id == written.id and state.version == 1
    assert state.written_at.tzinfo is not None and state.embedding_model
    assert state.reason is None
