"""Bulk writes (``BulkService.remember_many``): the same records as ``remember``, fewer
transactions, all-or-nothing validation."""

from __future__ import annotations

from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember, validate_remember_many
from prism_memory.domain.records import Kind, SessionContext
from prism_memory.errors import InvalidInput


def rule(i: int, **overrides: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": f"Naming rule {i}",
        "body": f"Name every migration file {i} with a date prefix and a verb.",
        "applies_to": {"scope": "project"},
        **overrides,
    }


def test_remember_many_writes_every_item_with_its_audit_event(
    services: Services, ctx: SessionContext
) -> None:
    raws = [rule(i) for i in range(5)] + [{"kind": "note", "body": "deploys are on Tuesdays"}]

    results = services.memory.bulk.remember_many(ctx, validate_remember_many(raws), chunk=2)

    assert [r.kind for r in results] == [Kind.MEMORULE] * 5 + [Kind.NOTE]
    assert all(r.audit_id is not None for r in results[:5]) and results[5].audit_id is None
    for result, raw in zip(results, raws, strict=True):
        _, state = services.memory.reads.get(ctx, result.id)
        assert state.body == raw["body"] and state.version == 1
    assert services.store.stats(ctx.tenant_id)["audit_events"] == 5
    assert services.memorules.verify_chain(ctx).ok


def test_remember_many_reports_every_error_and_writes_nothing(
    services: Services, ctx: SessionContext
) -> None:
    raws = [rule(0), rule(1, subject="x"), rule(2, idempotency_key="k-2"), {"kind": "nope"}]

    with pytest.raises(InvalidInput) as caught:
        services.memory.bulk.remember_many(ctx, validate_remember_many(raws))

    fields = {(e.field, e.code) for e in caught.value.errors}
    assert ("items[1].subject", "too_short") in fields
    assert ("items[2].idempotency_key", "not_allowed") in fields
    assert ("items[3].kind", "invalid_choice") in fields
    assert services.store.stats(ctx.tenant_id)["memories"] == 0


def test_the_bulk_service_refuses_a_typed_item_with_an_idempotency_key_by_its_index(
    services: Services, ctx: SessionContext
) -> None:
    writes = [validate_remember(rule(i)) for i in range(3)]
    writes[1] = validate_remember(rule(1, idempotency_key="k-1"))

    with pytest.raises(InvalidInput) as caught:
        services.memory.bulk.remember_many(ctx, writes)

    assert [(e.field, e.code) for e in caught.value.errors] == [
        ("items[1].idempotency_key", "not_allowed")
    ]
    assert services.store.stats(ctx.tenant_id)["memories"] == 0


def test_remember_many_items_are_recalled_like_single_writes(
    services: Services, ctx: SessionContext
) -> None:
    services.memory.bulk.remember_many(ctx, validate_remember_many([rule(i) for i in range(3)]))

    found = services.memory.recalls.recall(
        ctx, validate_recall({"query": "migration file names", "top_k": 5})
    )

    assert len(found.matches) == 3
