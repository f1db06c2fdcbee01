"""Issue #32, D4: what decides whether a rule is live, which version is served, where it
lives and who receives it is covered by ``prism audit verify``.

Each tampering the server's database role could do is done behind the service's back with
SQL, on both engines, and must be reported: ``memory.status`` (retire or resurrect a rule),
``memory.current_version`` (serve an old version), ``memory.project_id`` (move a rule), the
``recall_index`` row's scope, persona, project or active flag (widen who receives a rule);
and the newest served receipts deleted together with the stored receipt head rolled back,
which only a served head kept elsewhere can reveal (``--served-head``). Each is also run
through ``prism audit verify`` itself (exit 1, the flaw named), with and without the heads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner

from prism_memory.bootstrap import Services
from prism_memory.cli.main import cli
from prism_memory.domain.audit import Head
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.records import SessionContext
from tests.conftest import raw_sql


def rule(subject: str, **applies: str) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: the body an agent is served.",
        "applies_to": applies or {"surface": "python"},
    }


@dataclass
class World:
    """Rule a (v1, v2), rule b retired, rule c scoped to persona texi, a note; four recalls
    (each serves rule a to donna)."""

    services: Services
    ctx: SessionContext
    a: UUID
    b: UUID
    c: UUID
    note: UUID

    def sql(self, sql: str, *params: object) -> None:
        raw_sql(self.services, sql, tuple(str(p) if isinstance(p, UUID) else p for p in params))

    def verify(self, given: Head | None = None, served: Head | None = None) -> Any:
        return self.services.memorules.verify_chain(self.ctx, given, served)

    @property
    def t(self) -> str:
        return str(self.ctx.tenant_id)


@pytest.fixture
def world(services: Services, ctx: SessionContext) -> World:
    mem = services.memory
    a = mem.writes.remember(ctx, validate_remember(rule("Rule a for python"))).id
    mem.lifecycle.update(ctx, a, {"body": "Second version of rule a, as served."})
    b = mem.writes.remember(ctx, validate_remember(rule("Rule b for python"))).id
    mem.lifecycle.retire(ctx, b, "no longer true")
    c = mem.writes.remember(
        ctx, validate_remember(rule("Rule c for texi", scope="persona", persona="texi"))
    ).id
    note = mem.writes.remember(
        ctx, validate_remember({"body": "A note of the project, recalled with the rules."})
    ).id
    w = World(services, ctx, a, b, c, note)
    for _ in range(4):
        mem.recalls.recall(ctx, validate_recall({"query": "rule", "source_type": "memorule"}))
    assert w.verify().ok
    return w


def broken(report: Any, *words: str) -> None:
    assert not report.ok, report
    assert report.problem is not None
    for word in words:
        assert word in report.problem, report.problem


def test_an_untouched_store_verifies(world: World) -> None:
    report = world.verify()
    assert report.ok and report.served is not None and report.served.events >= 2


@pytest.mark.parametrize(
    ("which", "status", "words"),
    [
        ("b", "active", ("memory.status", "'retired'")),  # resurrect a retired rule
        ("a", "retired", ("memory.status", "'active'")),  # retire a rule silently
        ("a", "proposed", ("memory.status",)),
    ],
)
def test_a_status_edited_in_memory_is_caught(
    world: World, which: str, status: str, words: tuple[str, ...]
) -> None:
    memory_id = getattr(world, which)
    world.sql(
        "UPDATE memory SET status = ? WHERE tenant_id = ? AND id = ?", status, world.t, memory_id
    )
    world.sql(  # and the recall row with it, as the service would have
        "UPDATE recall_index SET active = ? WHERE tenant_id = ? AND memory_id = ?",
        status == "active",
        world.t,
        memory_id,
    )
    broken(world.verify(), str(memory_id), *words)


def test_an_old_version_served_by_rolling_back_current_version_is_caught(world: World) -> None:
    world.sql(
        "UPDATE memory SET current_version = 1 WHERE tenant_id = ? AND id = ?", world.t, world.a
    )
    broken(world.verify(), "memory.current_version", "version 2")


def test_a_rule_moved_to_another_project_is_caught(world: World) -> None:
    elsewhere = uuid_for("project", "elsewhere")
    world.sql(
        "UPDATE memory SET project_id = ? WHERE tenant_id = ? AND id = ?",
        elsewhere,
        world.t,
        world.a,
    )
    world.sql(
        "UPDATE recall_index SET project_id = ? WHERE tenant_id = ? AND memory_id = ?",
        elsewhere,
        world.t,
        world.a,
    )
    broken(world.verify(), "memory.project_id")


@pytest.mark.parametrize(
    ("column", "value", "which"),
    [
        ("scope", "global", "a"),  # every project of the tenant now receives it
        ("a_persona", None, "c"),  # texi's rule now reaches every persona
        ("scope", None, "c"),
        ("project_id", str(uuid_for("project", "elsewhere")), "a"),
        ("active", True, "b"),  # a retired rule recalled again
        ("kind", "memorule", "note"),
        ("scope", "global", "note"),
    ],
)
def test_a_recall_row_widened_behind_the_services_back_is_caught(
    world: World, column: str, value: Any, which: str
) -> None:
    world.sql(
        f"UPDATE recall_index SET {column} = ? WHERE tenant_id = ? AND memory_id = ?",
        value,
        world.t,
        getattr(world, which),
    )
    broken(world.verify(), "recall_index", column)


def test_a_rule_whose_kind_is_edited_to_a_note_is_caught(world: World) -> None:
    world.sql("UPDATE memory SET kind = 'note' WHERE tenant_id = ? AND id = ?", world.t, world.a)
    broken(world.verify(), str(world.a))


def heads(world: World) -> tuple[Head, Head]:
    found = world.services.ledger.head(world.ctx)
    return found.audit, found.served


def test_deleting_the_newest_receipts_and_rolling_back_their_head_needs_the_served_head(
    world: World,
) -> None:
    audit_head, served_head = heads(world)
    assert served_head.seq >= 4
    keep = served_head.seq - 2
    row = world.services.ledger.served(world.ctx, _after(keep - 1)).receipts[0]
    world.sql("DELETE FROM served_receipt WHERE tenant_id = ? AND seq > ?", world.t, keep)
    world.sql(
        "UPDATE audit_head SET seq = ?, hash = ? WHERE tenant_id = ? AND chain = 'served_receipt'",
        keep,
        row.hash,
        world.t,
    )
    assert world.verify().ok  # the store agrees with itself: only a head kept elsewhere tells
    assert world.verify(audit_head).ok
    report = world.verify(audit_head, served_head)
    assert not report.ok and report.served is not None
    assert report.served.broken_at_seq == keep + 1
    broken(report, "served receipts", f"given head is at {served_head.seq}")


def _after(seq: int) -> Any:
    from prism_memory.trigraph.ledger import ServedFilter

    return ServedFilter(after_seq=seq, limit=1)


def cli_verify(world: World, *args: str) -> tuple[int, Any]:
    settings = world.services.settings
    env = {"PRISM_EMBEDDER": "fake", "PRISM_TENANT": "acme", "PRISM_PROJECT": "api"}
    if settings.database_url:
        env["PRISM_DATABASE_URL"] = settings.database_url
    else:
        env["PRISM_DB"] = str(settings.db_path())
    result = CliRunner().invoke(cli, ["audit", "verify", "--json", *args], env=env)
    return result.exit_code, json.loads(result.output)


def test_prism_audit_verify_checks_both_heads_and_the_live_rows(world: World) -> None:
    audit_head, served_head = heads(world)
    both = ["--head", f"{audit_head.seq}:{audit_head.hash}"]
    both += ["--served-head", f"{served_head.seq}:{served_head.hash}"]
    code, out = cli_verify(world, *both)
    assert code == 0 and out["ok"], out
    assert out["served"]["given_head"]["seq"] == served_head.seq
    world.sql(
        "UPDATE memory SET status = 'active' WHERE tenant_id = ? AND id = ?", world.t, world.b
    )
    code, out = cli_verify(world)
    assert code == 1 and "memory.status" in out["problem"]
    code, out = cli_verify(world, *both)
    assert code == 1 and "memory.status" in out["problem"]


def test_a_malformed_served_head_is_refused_naming_the_option(world: World) -> None:
    code, out = cli_verify(world, "--served-head", "12")
    assert code != 0
    assert out["error"]["fields"][0]["field"] == "served_head"


def test_the_http_query_takes_a_served_head_and_names_a_bad_one() -> None:
    from prism_memory.domain.contract.audit import VerifyQuery
    from prism_memory.errors import InvalidInput

    kept = VerifyQuery.parse({"head": "3:" + "a" * 64, "served_head": "7:" + "b" * 64})
    assert (kept.head, kept.served_head) == (Head(3, "a" * 64), Head(7, "b" * 64))
    with pytest.raises(InvalidInput) as refused:
        VerifyQuery.parse({"served_head": "7"})
    assert [e.field for e in refused.value.errors] == ["served_head"]
