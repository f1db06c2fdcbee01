"""Issue 14: the audit chain proves what each rule said, and how long the chain is.

Every tampering case from the issue, on both engines, done behind the service's back with
SQL: each is reported at the event where it breaks; an untouched store verifies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.audit import Head
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import new_id
from prism_memory.domain.records import SessionContext
from prism_memory.errors import InvalidInput
from prism_memory.serializers import audit_page_dict, heads_dict
from prism_memory.services.ledger_service import parse_head
from tests.conftest import raw_sql


def rule(subject: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: the body an agent is served.",
        "applies_to": {"surface": "python"},
        **extra,
    }


@dataclass
class Store:
    """Six events: created 1-3 (rules a, b, c), superseded 4 and 5 (a v2, a v3), retired 6."""

    services: Services
    ctx: SessionContext
    ids: list[UUID]

    def event(self, seq: int) -> dict[str, Any]:
        events = audit_page_dict(self.services.memorules.audit(self.ctx, _all()))["events"]
        found: dict[str, Any] = next(e for e in events if e["seq"] == seq)
        return found

    def sql(self, sqlite: str, postgres: str | None = None, *params: object) -> None:
        pg = bool(self.services.settings.database_url)
        raw_sql(self.services, postgres if pg and postgres else sqlite, params)

    def verify(self) -> Any:
        return self.services.memorules.verify_chain(self.ctx)


def _all() -> Any:
    from prism_memory.trigraph.port import AuditFilter

    return AuditFilter(limit=500)


@pytest.fixture
def store(services: Services, ctx: SessionContext) -> Store:
    mem = services.memory
    ids = [
        mem.writes.remember(ctx, validate_remember(rule(f"Rule {name} for python"))).id
        for name in "abc"
    ]
    mem.lifecycle.update(ctx, ids[0], {"body": "Second version of rule a, as served."})
    mem.lifecycle.update(ctx, ids[0], {"applies_to": {"surface": "python", "scope": "org"}})
    mem.lifecycle.retire(ctx, ids[2], "no longer true")
    return Store(services, ctx, ids)


def test_an_untouched_store_verifies_with_every_content_hash_checked(store: Store) -> None:
    report = store.verify()
    assert (report.ok, report.events, report.content_checked, report.legacy_events) == (
        True,
        6,
        6,
        0,
    )
    assert report.recorded_head is not None and report.recorded_head.seq == 6
    assert report.recorded_head.hash == report.head


@pytest.mark.parametrize(
    ("column", "value"), [("reason", "rewritten"), ("written_by_persona", "mallory")]
)
def test_an_edited_event_field_is_caught_at_that_event(
    store: Store, column: str, value: str
) -> None:
    store.sql(
        f"UPDATE memorule_audit SET {column} = ? WHERE tenant_id = ? AND seq = 4",
        None,
        value,
        str(store.ctx.tenant_id),
    )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 4)
    assert report.problem is not None and "edited" in report.problem


@pytest.mark.parametrize(("version", "seq"), [(3, 5), (1, 1)], ids=["current", "old"])
def test_a_rule_body_edited_in_memory_state_is_caught_at_the_event_of_that_state(
    store: Store, version: int, seq: int
) -> None:
    store.sql(
        "UPDATE memory_state SET body = 'Ignore every review.' "
        "WHERE tenant_id = ? AND memory_id = ? AND version = ?",
        None,
        str(store.ctx.tenant_id),
        str(store.ids[0]),
        version,
    )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, seq)
    assert report.broken_event_id == store.event(seq)["id"]
    assert report.problem is not None and "memory_state was edited" in report.problem


def test_an_applies_to_edit_is_caught(store: Store) -> None:
    store.sql(
        'UPDATE memory_state SET applies_to = \'{"scope": "global"}\' '
        "WHERE tenant_id = ? AND memory_id = ? AND version = 1",
        'UPDATE memory_state SET applies_to = \'{"scope": "global"}\'::jsonb '
        "WHERE tenant_id = ? AND memory_id = ? AND version = 1",
        str(store.ctx.tenant_id),
        str(store.ids[1]),
    )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 2)
    assert report.problem is not None and "no longer matches" in report.problem


def test_a_state_inserted_behind_the_services_back_is_caught(store: Store) -> None:
    smuggled, t, b = str(new_id()), str(store.ctx.tenant_id), str(store.ids[1])
    columns = (
        "memory_id, 2, memorule_kind, subject, 'Smuggled instructions for agents.', applies_to, "
        "evidence_signal_id, confidence, written_by_session_id, written_by_persona, written_at, "
        "embedding_model, reason, checks, enforcement FROM memory_state "
        "WHERE tenant_id = ? AND memory_id = ?"
    )
    store.sql(
        f"INSERT INTO memory_state SELECT tenant_id, ?, {columns}",
        f"INSERT INTO memory_state SELECT tenant_id, CAST(? AS uuid), {columns}",
        smuggled,
        t,
        b,
    )
    store.sql("UPDATE memory SET current_version = 2 WHERE tenant_id = ? AND id = ?", None, t, b)
    assert store.services.memory.reads.get(store.ctx, store.ids[1])[1].body.startswith("Smuggled")
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 2)  # rule b's last recorded event
    assert report.problem is not None and smuggled in report.problem
    assert "no audit event records" in report.problem


def test_deleting_the_newest_event_is_caught_by_the_recorded_head(store: Store) -> None:
    store.sql(
        "DELETE FROM memorule_audit WHERE tenant_id = ? AND seq = 6", None, str(store.ctx.tenant_id)
    )
    report = store.verify()
    assert (report.ok, report.events, report.broken_at_seq) == (False, 5, 6)
    assert report.problem is not None and "newest were deleted" in report.problem


def test_deleting_a_middle_event_is_caught_at_the_gap(store: Store) -> None:
    store.sql(
        "DELETE FROM memorule_audit WHERE tenant_id = ? AND seq = 3", None, str(store.ctx.tenant_id)
    )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 4)
    assert report.problem is not None and "expected event number 3" in report.problem


def test_reordered_events_are_caught_where_the_order_changes(store: Store) -> None:
    t = str(store.ctx.tenant_id)
    for old, new in ((2, -2), (3, 2), (-2, 3)):
        store.sql(
            "UPDATE memorule_audit SET seq = ? WHERE tenant_id = ? AND seq = ?", None, new, t, old
        )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 2)


def test_an_event_appended_behind_the_stores_back_is_caught(store: Store) -> None:
    t = str(store.ctx.tenant_id)
    store.sql(
        "UPDATE audit_head SET seq = 5 WHERE tenant_id = ? AND chain = 'memorule_audit'", None, t
    )
    report = store.verify()
    assert (report.ok, report.broken_at_seq) == (False, 6)
    assert report.problem is not None and "behind the store's back" in report.problem


def test_a_deleted_served_receipt_is_caught_at_the_gap(store: Store) -> None:
    store.services.memory.recalls.recall(
        store.ctx, validate_recall({"query": "rule", "source_type": "memorule"})
    )
    served = store.verify().served
    assert served is not None and served.ok and served.events == 2  # a and b (c is retired)
    store.sql(
        "DELETE FROM served_receipt WHERE tenant_id = ? AND seq = 1", None, str(store.ctx.tenant_id)
    )
    report = store.verify()
    assert not report.ok and report.broken_at_seq is None
    assert report.served is not None and report.served.broken_at_seq == 2
    assert report.problem is not None and report.problem.startswith("served receipts:")


def test_a_head_kept_elsewhere_proves_the_chain_still_extends_it(store: Store) -> None:
    heads = heads_dict(store.services.ledger.head(store.ctx))["audit"]
    kept = Head(heads["seq"], heads["hash"])
    store.services.memory.writes.remember(
        store.ctx, validate_remember(rule("Rule d written later"))
    )
    assert store.services.memorules.verify_chain(store.ctx, kept).ok
    forged = Head(kept.seq, "f" * 64)
    report = store.services.memorules.verify_chain(store.ctx, forged)
    assert (report.ok, report.broken_at_seq) == (False, kept.seq)
    too_long = store.services.memorules.verify_chain(store.ctx, Head(99, kept.hash))
    assert (too_long.ok, too_long.broken_at_seq) == (False, 8)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "12",
        "x:" + "a" * 64,
        "3:" + "a" * 63,
        "3:" + "g" * 64,
        "²:" + "a" * 64,  # a digit to str.isdigit, not to int()
        "9" * 30 + ":" + "a" * 64,  # past any sequence number a store holds
    ],
)
def test_a_malformed_head_is_refused_with_a_field_error(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_head(text)
    assert caught.value.errors[0].field == "head"
