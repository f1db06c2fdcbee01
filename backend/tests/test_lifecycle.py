"""Memorule lifecycle (issue 3): supersede, retire/restore, history, audit reads and chain
verification, idempotent writes, near-duplicate warnings."""

from __future__ import annotations

import random
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import AuditEventType, SessionContext
from prism_memory.errors import (
    Conflict,
    IdempotencyConflict,
    InvalidInput,
    MemoryRetired,
    NearDuplicate,
    NotFound,
)
from prism_memory.serializers import history_dict
from prism_memory.trigraph.port import AuditFilter
from tests.conftest import ContextFactory, raw_sql


def rule(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "kind": "memorule",
        "memorule_kind": "behavioral_rule",
        "subject": "Review migrations twice",
        "body": "Every schema migration gets a second reviewer before merge.",
        "applies_to": {"surface": "python"},
        "evidence_signal_id": "sig-1",
    }
    raw.update(overrides)
    return raw


def test_three_updates_give_versions_one_to_four_with_their_writers(
    services: Services, make_ctx: ContextFactory
) -> None:
    first = make_ctx(persona="donna")
    written = services.memory.writes.remember(first, validate_remember(rule()))
    editors = [make_ctx(persona=p) for p in ("texi", "candi", "frank")]
    for i, editor in enumerate(editors, start=2):
        result = services.memory.lifecycle.update(
            editor,
            written.id,
            {"body": f"Version {i}: every migration gets two reviewers."},
            reason=f"round {i}",
        )
        assert result.version == i
        assert result.audit_id is not None
    history = services.memory.reads.history(first, written.id)
    assert [s.version for s in history.states] == [1, 2, 3, 4]
    assert [s.written_by_persona for s in history.states] == ["donna", "texi", "candi", "frank"]
    assert [s.written_by_session_id for s in history.states] == [
        first.session_id,
        *[e.session_id for e in editors],
    ]
    assert [s.reason for s in history.states] == [None, "round 2", "round 3", "round 4"]
    assert [e.event.value for e in history.events] == [
        "superseded",
        "superseded",
        "superseded",
        "created",
    ]
    assert history_dict(history)["versions"][0]["body"].startswith("Every schema migration")


def test_recall_after_an_update_returns_the_newest_text_only(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    for i in range(3):
        services.memory.lifecycle.update(
            ctx, written.id, {"body": f"Rewritten rule text number {i + 2}."}
        )
    result = services.memory.recalls.recall(
        ctx, validate_recall({"query": "rewritten rule text", "source_type": "memory"})
    )
    assert [(m.memory.id, m.state.version, m.state.body) for m in result.matches] == [
        (written.id, 4, "Rewritten rule text number 4.")
    ]


def test_an_update_that_changes_applies_to_changes_who_sees_it(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx(surface="python")
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    services.memory.lifecycle.update(ctx, written.id, {"applies_to": {"surface": "go"}})
    assert (
        services.memory.recalls.recall(ctx, validate_recall({"source_type": "memorule"})).matches
        == []
    )
    go = make_ctx(surface="go")
    assert (
        len(
            services.memory.recalls.recall(go, validate_recall({"source_type": "memorule"})).matches
        )
        == 1
    )


def test_an_update_is_validated_like_a_new_write_and_writes_nothing_when_bad(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    before = services.store.stats(ctx.tenant_id)
    with pytest.raises(InvalidInput) as info:
        services.memory.lifecycle.update(
            ctx, written.id, {"subject": "no", "applies_to": {}, "namespace": "x"}
        )
    assert {e.field: e.code for e in info.value.errors} == {"namespace": "not_updatable"}
    with pytest.raises(InvalidInput) as info:
        services.memory.lifecycle.update(ctx, written.id, {"subject": "no", "applies_to": {}})
    assert {e.field: e.code for e in info.value.errors} == {
        "subject": "too_short",
        "applies_to": "empty",
    }
    with pytest.raises(InvalidInput):
        services.memory.lifecycle.update(ctx, written.id, {})
    assert services.store.stats(ctx.tenant_id) == before


def test_unknown_ids_are_not_found_everywhere(services: Services, ctx: SessionContext) -> None:
    missing = new_id()
    with pytest.raises(NotFound):
        services.memory.lifecycle.update(ctx, missing, {"body": "anything at all here"})
    with pytest.raises(NotFound):
        services.memory.lifecycle.retire(ctx, missing, "gone")
    with pytest.raises(NotFound):
        services.memory.lifecycle.restore(ctx, missing, "back")
    with pytest.raises(NotFound):
        services.memory.reads.history(ctx, missing)


def test_retired_memories_never_appear_in_recall_but_stay_readable(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    note = services.memory.writes.remember(ctx, validate_remember({"body": "a note to retire"}))
    services.memory.lifecycle.retire(ctx, written.id, "no longer holds")
    services.memory.lifecycle.retire(ctx, note.id, "stale")
    for source_type in ("memory", "memorule"):
        for query in ("", "schema migration reviewer"):
            found = services.memory.recalls.recall(
                ctx, validate_recall({"source_type": source_type, "query": query})
            )
            assert found.matches == []
    memory, _ = services.memory.reads.get(ctx, written.id)
    assert memory.status.value == "retired"
    events = services.memory.reads.history(ctx, written.id).events
    assert [e.event.value for e in events] == ["retired", "created"]
    assert events[0].reason == "no longer holds"


def test_updating_or_retiring_a_retired_memory_is_a_structured_conflict(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    services.memory.lifecycle.retire(ctx, written.id, "wrong")
    before = services.store.stats(ctx.tenant_id)
    with pytest.raises(MemoryRetired) as info:
        services.memory.lifecycle.update(ctx, written.id, {"body": "an edit to a retired rule"})
    assert info.value.to_payload()["error"]["code"] == "memory_retired"
    with pytest.raises(MemoryRetired):
        services.memory.lifecycle.retire(ctx, written.id, "again")
    assert services.store.stats(ctx.tenant_id) == before


def test_restore_brings_a_memory_back_and_emits_restored(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    with pytest.raises(Conflict):
        services.memory.lifecycle.restore(ctx, written.id, "not retired yet")
    services.memory.lifecycle.retire(ctx, written.id, "paused")
    services.memory.lifecycle.restore(ctx, written.id, "holds again")
    assert (
        len(
            services.memory.recalls.recall(
                ctx, validate_recall({"source_type": "memorule"})
            ).matches
        )
        == 1
    )
    events = services.memory.reads.history(ctx, written.id).events
    assert [e.event.value for e in events] == ["restored", "retired", "created"]


def test_retire_needs_a_reason(services: Services, ctx: SessionContext) -> None:
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    with pytest.raises(InvalidInput) as info:
        services.memory.lifecycle.retire(ctx, written.id, "  ")
    assert info.value.errors[0].field == "reason"


def test_a_correction_supersedes_the_memorule_it_corrects_in_one_write(
    services: Services, ctx: SessionContext
) -> None:
    wrong = services.memory.writes.remember(ctx, validate_remember(rule()))
    fixed = services.memory.writes.remember(
        ctx,
        validate_remember(
            rule(
                memorule_kind="correction",
                corrects=str(wrong.id),
                subject="One reviewer is enough",
                body="Schema migrations need one reviewer; two slowed releases for nothing.",
            )
        ),
    )
    memory, _ = services.memory.reads.get(ctx, wrong.id)
    assert memory.status.value == "retired"
    events = services.memory.reads.history(ctx, wrong.id).events
    assert events[0].event is AuditEventType.SUPERSEDED
    assert events[0].reason == f"corrected by memorule {fixed.id}"
    assert [
        m.memory.id for m in services.memory.recalls.recall(ctx, validate_recall({})).matches
    ] == [fixed.id]


def test_a_correction_of_an_unknown_memorule_writes_nothing(
    services: Services, ctx: SessionContext
) -> None:
    with pytest.raises(NotFound):
        services.memory.writes.remember(
            ctx, validate_remember(rule(memorule_kind="correction", corrects=str(new_id())))
        )
    assert services.store.stats(ctx.tenant_id)["memories"] == 0


def test_a_replayed_idempotent_write_returns_the_same_result_and_writes_nothing(
    services: Services, ctx: SessionContext
) -> None:
    first = services.memory.writes.remember(ctx, validate_remember(rule(idempotency_key="k-1")))
    before = services.store.stats(ctx.tenant_id)
    again = services.memory.writes.remember(ctx, validate_remember(rule(idempotency_key="k-1")))
    assert (again.id, again.state_id, again.audit_id) == (first.id, first.state_id, first.audit_id)
    assert again.replayed
    assert services.store.stats(ctx.tenant_id) == before
    with pytest.raises(IdempotencyConflict) as info:
        services.memory.writes.remember(
            ctx, validate_remember(rule(idempotency_key="k-1", body="A different body text."))
        )
    assert info.value.to_payload()["error"]["code"] == "idempotency_conflict"


def test_idempotency_keys_cover_update_and_retire_and_are_per_tenant(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx()
    written = services.memory.writes.remember(ctx, validate_remember(rule()))
    u1 = services.memory.lifecycle.update(
        ctx, written.id, {"body": "Updated body text here."}, idempotency_key="u"
    )
    u2 = services.memory.lifecycle.update(
        ctx, written.id, {"body": "Updated body text here."}, idempotency_key="u"
    )
    assert u1.state_id == u2.state_id and u2.replayed
    r1 = services.memory.lifecycle.retire(ctx, written.id, "done", idempotency_key="r")
    r2 = services.memory.lifecycle.retire(ctx, written.id, "done", idempotency_key="r")
    assert r1.audit_id == r2.audit_id
    assert [s.version for s in services.memory.reads.history(ctx, written.id).states] == [1, 2]
    other = make_ctx(tenant="other")
    fresh = services.memory.writes.remember(other, validate_remember(rule(idempotency_key="u")))
    assert not fresh.replayed


def test_a_near_duplicate_memorule_warns_and_strict_refuses(
    services: Services, ctx: SessionContext
) -> None:
    original = services.memory.writes.remember(ctx, validate_remember(rule()))
    twin = services.memory.writes.remember(ctx, validate_remember(rule()))
    assert [w["memorule_id"] for w in twin.warnings] == [str(original.id)]
    assert twin.warnings[0]["code"] == "near_duplicate"
    before = services.store.stats(ctx.tenant_id)
    with pytest.raises(NearDuplicate):
        services.memory.writes.remember(ctx, validate_remember(rule(strict=True)))
    assert services.store.stats(ctx.tenant_id) == before
    other_kind = services.memory.writes.remember(
        ctx, validate_remember(rule(memorule_kind="convention"))
    )
    assert other_kind.warnings == ()
    other_surface = services.memory.writes.remember(
        ctx, validate_remember(rule(applies_to={"surface": "go"}))
    )
    assert other_surface.warnings == ()


def test_audit_lists_filter_and_paginate_newest_first(
    services: Services, make_ctx: ContextFactory
) -> None:
    donna, texi = make_ctx(persona="donna"), make_ctx(persona="texi")
    ids = [
        services.memory.writes.remember(
            donna, validate_remember(rule(subject=f"Rule number {i}"))
        ).id
        for i in range(5)
    ]
    services.memory.lifecycle.update(texi, ids[0], {"body": "Texi changed this rule body."})
    services.memory.lifecycle.retire(texi, ids[1], "obsolete")
    by_texi = services.memorules.audit(donna, AuditFilter(persona="texi"))
    assert [e.event.value for e in by_texi.events] == ["retired", "superseded"]
    by_session = services.memorules.audit(donna, AuditFilter(session_id=donna.session_id))
    assert len(by_session.events) == 5
    by_rule = services.memorules.audit(donna, AuditFilter(memorule_id=ids[0]))
    assert [e.event.value for e in by_rule.events] == ["superseded", "created"]
    retired = services.memorules.audit(donna, AuditFilter(events=(AuditEventType.RETIRED,)))
    assert [e.memorule_id for e in retired.events] == [ids[1]]
    seen, cursor = [], None
    while True:
        page = services.memorules.audit(donna, AuditFilter(limit=3, before_seq=cursor))
        seen.extend(e.seq for e in page.events)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [7, 6, 5, 4, 3, 2, 1]
    everything = services.memorules.audit(donna, AuditFilter())
    since = everything.events[2].written_at
    recent = services.memorules.audit(donna, AuditFilter(since=since))
    assert [e.seq for e in recent.events] == [7, 6, 5]


@pytest.mark.slow
def test_the_chain_verifies_after_many_mixed_operations_and_fails_where_tampered(
    services: Services, make_ctx: ContextFactory
) -> None:
    rng = random.Random(7)
    ctx = make_ctx(persona="donna")
    active: list[UUID] = []
    retired: list[UUID] = []
    for i in range(1000):
        op = rng.random()
        if op < 0.5 or not active:
            active.append(
                services.memory.writes.remember(
                    ctx, validate_remember(rule(subject=f"Rule {i:04d} here"))
                ).id
            )
        elif op < 0.8:
            services.memory.lifecycle.update(
                ctx, rng.choice(active), {"body": f"Body revision {i:04d}."}
            )
        elif op < 0.9:
            victim = active.pop(rng.randrange(len(active)))
            services.memory.lifecycle.retire(ctx, victim, f"retired at {i}")
            retired.append(victim)
        elif retired:
            back = retired.pop()
            services.memory.lifecycle.restore(ctx, back, f"restored at {i}")
            active.append(back)
    report = services.memorules.verify_chain(ctx)
    assert report.ok and report.events == services.store.stats(ctx.tenant_id)["audit_events"]
    assert report.events >= 900
    raw_sql(
        services,
        "UPDATE memorule_audit SET written_by_persona = 'mallory' WHERE tenant_id = ? AND seq = ?",
        (str(ctx.tenant_id), 321),
    )
    broken = services.memorules.verify_chain(ctx)
    assert not broken.ok
    assert broken.broken_at_seq == 321
    assert broken.problem is not None and "edited" in broken.problem


def test_deleting_an_audit_event_breaks_the_chain_at_the_gap(
    services: Services, ctx: SessionContext
) -> None:
    for i in range(4):
        services.memory.writes.remember(ctx, validate_remember(rule(subject=f"Rule number {i}")))
    raw_sql(
        services,
        "DELETE FROM memorule_audit WHERE tenant_id = ? AND seq = 2",
        (str(ctx.tenant_id),),
    )
    report = services.memorules.verify_chain(ctx)
    assert (report.ok, report.broken_at_seq) == (False, 3)
