"""``/metrics`` counts the adherence records in the store (issue 29, "adherence verdicts"):
session verdicts and guard attempts are audit events, written by whatever process judged
(the Stop hook, the guard, a door), so the server counts them from the store's chains, every
tenant, reading only what each chain gained since the last scrape. On both engines."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.services.adherence_service import AdherenceService
from prism_memory.services.guard_service import GuardRecorder, GuardService
from tests.api_world import ENGINES, World, world_on
from tests.conftest import raw_sql
from tests.test_domain_metrics import samples

KINDS = ("followed", "violated", "reminded", "blocked")


@pytest.fixture(params=ENGINES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_on(request, tmp_path) as w:
        for tenant in ("acme", "beta"):
            w.services.memory.writes.remember(
                w.ctx(tenant, "p1"),
                validate_remember(
                    {
                        "kind": "memorule",
                        "memorule_kind": "convention",
                        "subject": f"{tenant}: tests before commits, never npm",
                        "body": "Run make test before committing; this repository uses pnpm.",
                        "applies_to": {"scope": "project"},
                        "checks": [
                            {"forbid_command": r"\bnpm\b"},
                            {"require_before": {"command": r"make test", "before": r"git commit"}},
                        ],
                    }
                ),
            )
        yield w


def verdicts(w: World) -> dict[str, float]:
    found = samples(w)
    return {k: found[("prism_adherence_verdicts_total", (("verdict", k),))] for k in KINDS}


def judge(w: World, tenant: str, *commands: str) -> None:
    """As a Stop hook does: the store is written by the judging process, not the server."""
    session = SessionActions(
        f"{tenant}-{uuid.uuid4().hex[:8]}",
        "/srv/agent",
        tuple(Action("command", c) for c in commands),
    )
    AdherenceService(w.services.store, w.services.memorules).judge(
        w.ctx(tenant, "p1"), session, client="claude-code"
    )


def test_every_kind_is_on_metrics_and_counts_what_any_process_recorded(world: World) -> None:
    assert verdicts(world) == dict.fromkeys(KINDS, 0)
    judge(world, "acme", "npm install")  # violated
    judge(world, "beta", "make test", "git commit -m x")  # followed, in another tenant
    assert verdicts(world) == {"followed": 1, "violated": 1, "reminded": 0, "blocked": 0}
    # the next scrape reads only what was appended since: nothing is counted twice
    assert verdicts(world) == {"followed": 1, "violated": 1, "reminded": 0, "blocked": 0}
    judge(world, "acme", "git commit -m y")  # violated (no tests since the start)
    judge(world, "acme", "npm ci")
    assert verdicts(world) == {"followed": 1, "violated": 3, "reminded": 0, "blocked": 0}


def test_a_guard_reminder_is_counted_as_reminded(world: World) -> None:
    ctx = world.ctx("acme", "p1")
    action = Action("command", "npm install left-pad")
    decision = GuardService(world.services.store).check(
        ctx, action, "/srv/agent", lambda: SessionActions("s", "/srv/agent")
    )
    assert decision.enforcement is not None  # remind: the rule's default
    written = GuardRecorder(world.services.store, world.services.memorules).record(
        ctx, decision, client="claude-code", session="guarded", tool_use_id="toolu_1"
    )
    assert written == 1
    assert verdicts(world) == {"followed": 0, "violated": 0, "reminded": 1, "blocked": 0}


def test_a_judgement_through_the_http_door_is_counted_too(world: World) -> None:
    before = verdicts(world)
    body = {
        "session": {
            "session": f"http-{uuid.uuid4()}",
            "cwd": "/srv/agent",
            "actions": [{"type": "command", "command": "npm publish"}],
        },
        "client": "test-agent",
    }
    response = world.call("a_writer", "POST", "/v1/adherence/judge", body)
    assert response.status_code == 200, response.text
    assert verdicts(world) == {**before, "violated": before["violated"] + 1}


def test_metrics_answer_without_the_series_when_the_store_cannot_say(world: World) -> None:
    raw_sql(world.services, "DROP TABLE audit_head")  # a store whose chains cannot be read
    response = world.client.get("/metrics")
    assert response.status_code == 200
    assert "prism_adherence_verdicts" not in response.text
    assert "prism_served_receipts_pending" in response.text
