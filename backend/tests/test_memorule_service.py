"""SPEC-094 v0.4 acceptance criterion 6: write validation, read filter, audit event shape,
each missing required field, all five memorule kinds, all three confidence levels."""

from __future__ import annotations

from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.errors import InvalidInput
from prism_memory.serializers import recall_dict

KINDS = ["behavioral_rule", "feedback", "preference", "correction", "convention"]
CONFIDENCES = ["observed", "inferred", "asserted"]
REQUIRED = ["memorule_kind", "subject", "body", "applies_to"]


def memorule(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": "Run the tests before pushing",
        "body": "Always run the full test suite locally before pushing a branch.",
        "applies_to": {"persona": "donna", "surface": "python"},
        "evidence_signal_id": "94ccc816",
        "confidence": "observed",
    }
    raw.update(overrides)
    return {k: v for k, v in raw.items() if v is not None}


def field_codes(exc: InvalidInput) -> dict[str, str]:
    return {e.field: e.code for e in exc.errors}


def assert_nothing_written(services: Services, ctx: SessionContext) -> None:
    assert services.store.stats(ctx.tenant_id) == {"memories": 0, "states": 0, "audit_events": 0}


def test_a_valid_memorule_is_written_with_its_audit_event(
    services: Services, ctx: SessionContext
) -> None:
    result = services.memory.writes.remember(ctx, validate_remember(memorule()))
    assert result.kind.value == "memorule"
    assert result.version == 1
    assert result.audit_id is not None
    memory, state = services.memory.reads.get(ctx, result.id)
    assert memory.kind.value == "memorule"
    assert memory.source_type.value == "memorule"
    assert state.subject == "Run the tests before pushing"
    assert state.applies_to is not None and state.applies_to.to_dict() == {
        "persona": "donna",
        "surface": "python",
    }
    assert state.written_by_session_id == ctx.session_id
    assert state.written_by_persona == "donna"
    assert services.store.stats(ctx.tenant_id) == {"memories": 1, "states": 1, "audit_events": 1}


@pytest.mark.parametrize("missing", REQUIRED)
def test_each_missing_required_field_is_refused_and_writes_nothing(
    services: Services, ctx: SessionContext, missing: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        services.memory.writes.remember(ctx, validate_remember(memorule(**{missing: None})))
    assert field_codes(info.value) == {missing: "missing"}
    assert_nothing_written(services, ctx)


def test_all_field_errors_come_back_at_once_in_the_one_shape(
    services: Services, ctx: SessionContext
) -> None:
    raw = memorule(
        memorule_kind="rule",
        subject="abc",
        body="too short",
        applies_to={"scope": "persona", "colour": "red"},
        confidence="certain",
        bogus=1,
    )
    with pytest.raises(InvalidInput) as info:
        services.memory.writes.remember(ctx, validate_remember(raw))
    assert field_codes(info.value) == {
        "bogus": "unknown_field",
        "memorule_kind": "invalid_choice",
        "subject": "too_short",
        "body": "too_short",
        "applies_to.colour": "unknown_field",
        "applies_to.persona": "required_by_scope",
        "confidence": "invalid_choice",
    }
    payload = info.value.to_payload()
    assert payload["ok"] is False
    assert payload["error"]["code"] == "validation_failed"
    assert {"field", "code", "message"} <= set(payload["error"]["fields"][0])
    assert_nothing_written(services, ctx)


@pytest.mark.parametrize(
    ("overrides", "field", "code"),
    [
        ({"subject": "x" * 301}, "subject", "too_long"),
        ({"body": "y" * 16_001}, "body", "too_long"),
        ({"subject": "two\nlines"}, "subject", "invalid_characters"),
        ({"body": "bell \x07 character here"}, "body", "invalid_characters"),
        ({"applies_to": {}}, "applies_to", "empty"),
        ({"applies_to": "donna"}, "applies_to", "wrong_type"),
        ({"applies_to": {"persona": "p" * 101}}, "applies_to.persona", "too_long"),
        ({"applies_to": {"scope": "galaxy"}}, "applies_to.scope", "invalid_choice"),
        ({"subject": 42}, "subject", "wrong_type"),
        ({"evidence_signal_id": "e" * 1_001}, "evidence_signal_id", "too_long"),
        ({"namespace": "has space"}, "namespace", "invalid_format"),
        ({"kind": "fact"}, "kind", "invalid_choice"),
        ({"strict": "yes"}, "strict", "wrong_type"),
        ({"corrects": "not-a-uuid", "memorule_kind": "correction"}, "corrects", "invalid_format"),
        ({"corrects": "01a229b4-a695-7000-a801-29b40e2e11e3"}, "corrects", "not_allowed"),
    ],
)
def test_bad_fields_get_a_precise_error_and_write_nothing(
    services: Services, ctx: SessionContext, overrides: dict[str, Any], field: str, code: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        services.memory.writes.remember(ctx, validate_remember(memorule(**overrides)))
    assert field_codes(info.value).get(field) == code
    assert_nothing_written(services, ctx)


@pytest.mark.parametrize("kind", KINDS)
def test_all_five_memorule_kinds_are_written_and_recalled(
    services: Services, ctx: SessionContext, kind: str
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(memorule(memorule_kind=kind)))
    result = services.memory.recalls.recall(
        ctx, validate_recall({"source_type": "memorule", "memorule_kind": kind})
    )
    assert [m.memory.id for m in result.matches] == [written.id]
    assert recall_dict(result)["matches"][0]["memorule_kind"] == kind


@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_all_three_confidence_levels_are_written_and_filterable(
    services: Services, ctx: SessionContext, confidence: str
) -> None:
    for other in CONFIDENCES:
        services.memory.writes.remember(
            ctx, validate_remember(memorule(confidence=other, subject=f"Rule at {other}"))
        )
    result = services.memory.recalls.recall(
        ctx, validate_recall({"source_type": "memorule", "confidence": confidence})
    )
    assert [m.state.confidence.value for m in result.matches if m.state.confidence] == [confidence]


def test_confidence_defaults_to_inferred(services: Services, ctx: SessionContext) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(memorule(confidence=None)))
    _, state = services.memory.reads.get(ctx, written.id)
    assert state.confidence is not None and state.confidence.value == "inferred"


def test_source_type_memorule_returns_only_memorules_and_memory_returns_both(
    services: Services, ctx: SessionContext
) -> None:
    rule = services.memory.writes.remember(ctx, validate_remember(memorule()))
    note = services.memory.writes.remember(
        ctx, validate_remember({"body": "The staging database moved to pg-2."})
    )
    only_rules = services.memory.recalls.recall(ctx, validate_recall({"source_type": "memorule"}))
    everything = services.memory.recalls.recall(ctx, validate_recall({"source_type": "memory"}))
    assert [m.memory.id for m in only_rules.matches] == [rule.id]
    assert {m.memory.id for m in everything.matches} == {rule.id, note.id}


def test_recall_envelope_carries_the_memorule_fields_and_a_why(
    services: Services, ctx: SessionContext
) -> None:
    services.memory.writes.remember(ctx, validate_remember(memorule()))
    services.memory.writes.remember(
        ctx, validate_remember({"body": "A plain note about pushing branches."})
    )
    found = services.memory.recalls.recall(ctx, validate_recall({"query": "run tests before push"}))
    matches = recall_dict(found)["matches"]
    rule = next(m for m in matches if m["kind"] == "memorule")
    note = next(m for m in matches if m["kind"] == "note")
    for key in ("memorule_kind", "applies_to", "confidence", "evidence_signal_id"):
        assert key in rule
        assert key not in note
    for match in (rule, note):
        assert {"id", "kind", "source_type", "namespace", "subject", "body", "score"} <= set(match)
        assert {"written_at", "written_by_persona", "version", "why"} <= set(match)
        assert match["why"]["score"] == pytest.approx(match["score"], abs=1e-5)
    assert rule["evidence_signal_id"] == "94ccc816"
    assert rule["why"]["matched"] == ["persona"]


def test_audit_event_carries_the_spec_five_fields_plus_event_state_and_chain(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(memorule()))
    page = services.memorules.audit(ctx, _all_events())
    (event,) = page.events
    shape = event.to_dict()
    assert {
        "memorule_id",
        "written_by_session_id",
        "written_by_persona",
        "evidence_signal_id",
        "written_at",
    } <= set(shape)
    assert shape["memorule_id"] == str(written.id)
    assert shape["written_by_session_id"] == str(ctx.session_id)
    assert shape["written_by_persona"] == "donna"
    assert shape["evidence_signal_id"] == "94ccc816"
    assert shape["event"] == "created"
    assert shape["state_id"] == str(written.state_id)
    assert shape["id"] == str(written.audit_id)
    assert shape["prev_hash"] == "0" * 64
    assert len(shape["hash"]) == 64
    assert services.memorules.verify_chain(ctx).ok


def test_notes_emit_no_audit_event(services: Services, ctx: SessionContext) -> None:
    written = services.memory.writes.remember(
        ctx, validate_remember({"kind": "note", "content": "content is an alias"})
    )
    _, state = services.memory.reads.get(ctx, written.id)
    assert state.body == "content is an alias"
    assert written.audit_id is None
    assert services.memorules.audit(ctx, _all_events()).events == []


def test_a_note_refuses_memorule_fields(services: Services, ctx: SessionContext) -> None:
    with pytest.raises(InvalidInput) as info:
        services.memory.writes.remember(
            ctx, validate_remember({"body": "a note", "applies_to": {"persona": "x"}})
        )
    assert field_codes(info.value) == {"applies_to": "unknown_field"}
    assert "kind='memorule'" in info.value.errors[0].message


def _all_events() -> Any:
    from prism_memory.trigraph.port import AuditFilter

    return AuditFilter(limit=100)
