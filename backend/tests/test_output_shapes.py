"""A memory, a state, a recall match, a write result and an audit event are shaped once: by
their response models.

``serializers.py`` builds every door's dict from the models in
``domain/contract/shapes.py`` (which the OpenAPI schema shows), so these tests check the
dicts against the models: the same keys in the models' order, values the model accepts and
gives back unchanged, and which optional fields each kind of memory shows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel

from prism_memory.api import models as api_models
from prism_memory.domain.contract import shapes
from prism_memory.domain.records import (
    AuditEventType,
    Enforcement,
    Kind,
    MemoruleAudit,
    Memory,
    PinResult,
    RecallMatch,
    Status,
    WriteResult,
)
from prism_memory.serializers import (
    audit_event_dict,
    match_dict,
    memory_dict,
    pin_dict,
    state_dict,
    write_dict,
)
from tests.test_state_fields import FULL, PLAIN

RULE = Memory(
    id=FULL.memory_id,
    tenant_id=UUID(int=1),
    project_id=UUID(int=2),
    namespace="default",
    kind=Kind.MEMORULE,
    status=Status.ACTIVE,
    created_at=FULL.written_at,
    current_version=3,
)
NOTE = replace(RULE, kind=Kind.NOTE, current_version=1)
UNGUARDED = replace(FULL, checks=(), enforcement=Enforcement.REMIND, applies_to=None)
STATE = [
    "state_id",
    "version",
    "subject",
    "body",
    "written_by_session_id",
    "written_by_persona",
    "written_at",
    "embedding_model",
    "reason",
]
MEMORULE = ["memorule_kind", "applies_to", "confidence", "evidence_signal_id"]
ADHERENCE = ["checks", "enforcement"]
MATCH_HEAD = ["id", "kind", "source_type", "namespace", "subject", "body", "score"]
MATCH_STATE = ["written_at", "written_by_persona", "version"]


def same_through(model: type[BaseModel], shown: dict[str, Any]) -> None:
    """``shown`` is what ``model`` accepts and writes back, key for key, in its order."""
    back = model.model_validate(shown).model_dump(mode="json", exclude_unset=True)
    assert back == shown and list(back) == list(shown)
    order = list(model.model_fields)
    assert [k for k in order if k in shown] == list(shown)


def test_the_door_models_are_the_shapes_not_copies() -> None:
    for name in (
        "MemoryPublic",
        "StatePublic",
        "RecallMatchPublic",
        "WriteResultPublic",
        "AuditEventPublic",
        "PinResultPublic",
    ):
        assert getattr(api_models, name) is getattr(shapes, name)


def test_a_memory_shows_every_field_of_its_model() -> None:
    shown = memory_dict(RULE)
    same_through(shapes.MemoryPublic, shown)
    assert list(shown) == list(shapes.MemoryPublic.model_fields)


@pytest.mark.parametrize(
    ("state", "keys"),
    [
        (PLAIN, STATE),  # a note: no memorule fields
        (UNGUARDED, STATE + MEMORULE),  # a rule without checks: no adherence fields
        (FULL, STATE + MEMORULE + ADHERENCE),
    ],
)
def test_a_state_shows_the_fields_of_its_kind(state: Any, keys: list[str]) -> None:
    shown = state_dict(state)
    same_through(shapes.StatePublic, shown)
    assert list(shown) == keys
    assert shown["state_id"] == str(state.id)
    if "applies_to" in shown:  # a rule naming no key shows {}, never null
        assert shown["applies_to"] == (state.applies_to.to_dict() if state.applies_to else {})


@pytest.mark.parametrize(
    ("memory", "state", "keys"),
    [
        (NOTE, PLAIN, MATCH_HEAD + MATCH_STATE),
        (RULE, UNGUARDED, MATCH_HEAD + MATCH_STATE + MEMORULE + ["pinned"]),
        (RULE, FULL, MATCH_HEAD + MATCH_STATE + MEMORULE + ADHERENCE + ["pinned"]),
    ],
)
def test_a_recall_match_shows_the_fields_of_its_kind(
    memory: Memory, state: Any, keys: list[str]
) -> None:
    why = {"relevance": 0.5, "score": 0.412346}
    shown = match_dict(RecallMatch(memory, state, 0.41234567, why, False))
    same_through(shapes.RecallMatchPublic, shown)
    assert list(shown) == [*keys, "applicable", "why"]
    assert (shown["id"], shown["score"], shown["applicable"]) == (str(memory.id), 0.412346, False)
    assert shown["why"] == why


@pytest.mark.parametrize(
    "result",
    [
        WriteResult(FULL.memory_id, FULL.id, 1, Kind.NOTE, FULL.written_at),
        WriteResult(
            FULL.memory_id,
            FULL.id,
            3,
            Kind.MEMORULE,
            FULL.written_at,
            audit_id=UUID(int=9),
            warnings=({"code": "near_duplicate", "id": str(UUID(int=7))},),
            replayed=True,
        ),
    ],
)
def test_a_write_result_shows_every_field_of_its_model(result: WriteResult) -> None:
    """Every door shows all of them (MCP once left out an empty ``warnings`` and a false
    ``replayed``, which HTTP's response model then added back)."""
    shown = write_dict(result)
    assert list(shown) == list(shapes.WriteResultPublic.model_fields)
    back = shapes.WriteResultPublic.model_validate(shown).model_dump(mode="json")
    assert back == shown
    assert shown["audit_id"] == (str(result.audit_id) if result.audit_id else None)
    assert shown["warnings"] == list(result.warnings)
    assert shown["replayed"] is result.replayed


@pytest.mark.parametrize(
    "result",
    [
        PinResult(FULL.memory_id, True, changed=True, audit_id=UUID(int=9)),
        PinResult(FULL.memory_id, False, changed=False),
    ],
)
def test_a_pin_result_shows_every_field_of_its_model(result: PinResult) -> None:
    shown = pin_dict(result)
    assert list(shown) == list(shapes.PinResultPublic.model_fields)
    assert shapes.PinResultPublic.model_validate(shown).model_dump(mode="json") == shown
    assert (shown["pinned"], shown["changed"]) == (result.pinned, result.changed)
    assert shown["audit_id"] == (str(result.audit_id) if result.audit_id else None)


def test_an_audit_event_shows_every_field_of_its_model() -> None:
    event = MemoruleAudit(
        id=UUID(int=11),
        tenant_id=UUID(int=1),
        seq=4,
        memorule_id=FULL.memory_id,
        state_id=FULL.id,
        event=AuditEventType.RETIRED,
        written_by_session_id=FULL.written_by_session_id,
        written_by_persona="reviewer",
        evidence_signal_id=None,
        written_at=FULL.written_at,
        reason="superseded",
        content_hash="c" * 64,
        prev_hash="p" * 64,
        hash="h" * 64,
    )
    shown = audit_event_dict(event)
    assert list(shown) == list(shapes.AuditEventPublic.model_fields)
    assert shapes.AuditEventPublic.model_validate(shown).model_dump(mode="json") == shown
    assert "tenant_id" not in shown, "a door never shows the tenant"
    assert shown["event"] == "retired" and shown["seq"] == 4
