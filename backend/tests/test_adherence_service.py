"""Judging sessions through the services, on both engines: the applicable rules, served
before the action (the Watson proof), verdicts as hash-chained audit events that no door can
edit and ``audit verify`` checks (tamper tests), idempotent re-judging, the report, and the
keys, roles and project isolation of both AccessService methods."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import AuditEventType, SessionContext, utcnow
from prism_memory.errors import PermissionDenied
from prism_memory.services.adherence_service import AdherenceService
from prism_memory.trigraph.port import AuditFilter
from tests.conftest import ContextFactory, raw_sql

SECRET = "ghp_" + "Q7w" * 12
SESSION = "3f2b1c0d-1111-4222-8333-444455556666"


def rule(subject: str, checks: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: what the agent is told, in full.",
        "applies_to": {"scope": "project"},
        "checks": checks,
        **extra,
    }


NO_NPM = [{"forbid_command": r"(?:^|[\s;&|(])npm\b"}]
TESTS_FIRST = [{"require_before": {"command": r"make test", "before": r"git commit"}}]
CHANGELOG = [{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}]


def session(*actions: Action, name: str = SESSION) -> SessionActions:
    start = utcnow()
    timed = tuple(
        Action(
            a.type, a.text, a.ran, start + timedelta(minutes=i), a.tool, f"t{i}", refusal=a.refusal
        )
        for i, a in enumerate(actions)
    )
    return SessionActions(name, "/home/dev/shop", timed)


def cmd(text: str, ran: bool = True) -> Action:
    return Action("command", text, ran=ran, refusal=None if ran else "user_rejected")


def edit(path: str) -> Action:
    return Action("edit", path)


def key(
    ctx: SessionContext, role: Role, projects: tuple[UUID, ...] = (), persona: str | None = None
) -> ApiKey:
    return ApiKey(f"key_{role.value}", ctx.tenant_id, role, projects, persona, "", None, utcnow())


def verdict_events(services: Services, ctx: SessionContext) -> list[Any]:
    return services.store.audit_events(
        ctx.tenant_id,
        AuditFilter(events=(AuditEventType.VIOLATED, AuditEventType.FOLLOWED), limit=100),
    )


@pytest.fixture
def rules(services: Services, ctx: SessionContext) -> dict[str, UUID]:
    return {
        "npm": services.memory.writes.remember(
            ctx, validate_remember(rule("Use pnpm, never npm", NO_NPM))
        ).id,
        "tests": services.memory.writes.remember(
            ctx, validate_remember(rule("Run the tests before committing", TESTS_FIRST))
        ).id,
        "changelog": services.memory.writes.remember(
            ctx, validate_remember(rule("Changelog with src changes", CHANGELOG))
        ).id,
        "plain": services.memory.writes.remember(
            ctx, validate_remember({**rule("A rule without checks here", []), "checks": None})
        ).id,
    }


def test_a_session_is_judged_against_every_applicable_rule_with_checks(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    found = AdherenceService(services.store, services.memorules).judge(
        ctx,
        session(
            cmd(f"GH_TOKEN={SECRET} npm publish"),
            edit("src/a.py"),
            cmd("make test"),
            cmd("git commit -m x"),
        ),
        client="claude-code",
    )
    by_id = {UUID(v.verdict.rule.memorule_id): v for v in found.verdicts}
    assert set(by_id) == {rules["npm"], rules["tests"], rules["changelog"]}
    assert by_id[rules["npm"]].verdict.verdict == "violated"
    assert by_id[rules["tests"]].verdict.verdict == "followed"
    assert by_id[rules["changelog"]].verdict.verdict == "violated"
    assert found.recorded == 3
    shown = json.dumps(found.to_dict())
    assert SECRET not in shown
    assert found.to_dict()["session"] == SESSION and found.session_uuid == UUID(SESSION)


def test_a_dry_run_records_nothing(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    found = AdherenceService(services.store, services.memorules).judge(
        ctx, session(cmd("npm i")), dry_run=True
    )
    assert [v.verdict.verdict for v in found.verdicts if v.verdict.verdict != "not_exercised"] == [
        "violated"
    ]
    assert found.recorded == 0 and verdict_events(services, ctx) == []


def test_verdicts_are_chained_audit_events_with_the_redacted_verdict_as_reason(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    AdherenceService(services.store, services.memorules).judge(
        ctx, session(cmd(f"export NPM_TOKEN={SECRET} && npm publish")), client="claude-code"
    )
    (event,) = verdict_events(services, ctx)
    assert event.event is AuditEventType.VIOLATED and event.memorule_id == rules["npm"]
    assert event.evidence_signal_id == f"claude-code:{SESSION}"
    assert event.content_hash is not None
    record = json.loads(event.reason)
    assert record["format"] == "prism-verdict/1" and record["verdict"] == "violated"
    assert record["project_id"] == str(ctx.project_id)
    assert SECRET not in event.reason
    assert (
        record["evidence"][0]["action"]["command"] == "export NPM_TOKEN=[REDACTED] && npm publish"
    )
    assert services.memorules.verify_chain(ctx).ok


def test_judging_the_same_session_again_records_nothing_new(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    adherence = AdherenceService(services.store, services.memorules)
    actions = session(cmd("npm i"), cmd("make test"), cmd("git commit -m x"))
    first = adherence.judge(ctx, actions)
    again = adherence.judge(ctx, actions)
    assert first.recorded == 2 and again.recorded == 0
    assert all(v.replayed for v in again.verdicts if v.verdict.verdict != "not_exercised")
    assert len(verdict_events(services, ctx)) == 2
    grown = session(cmd("npm i"), cmd("make test"), cmd("git commit -m x"), cmd("npm ci"))
    assert adherence.judge(ctx, grown).recorded == 2  # the npm verdict has more evidence now


@pytest.mark.parametrize(
    "column, value",
    [("reason", '{"verdict":"followed"}'), ("event", "followed"), ("evidence_signal_id", "x:y")],
)
def test_editing_a_verdict_event_in_the_database_is_detected(
    services: Services, ctx: SessionContext, rules: dict[str, UUID], column: str, value: str
) -> None:
    AdherenceService(services.store, services.memorules).judge(ctx, session(cmd("npm i")))
    assert services.memorules.verify_chain(ctx).ok
    raw_sql(services, f"UPDATE memorule_audit SET {column} = ? WHERE event = 'violated'", (value,))
    report = services.memorules.verify_chain(ctx)
    assert not report.ok and "edited" in (report.problem or "")


def test_deleting_a_verdict_event_is_detected(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    adherence = AdherenceService(services.store, services.memorules)
    adherence.judge(ctx, session(cmd("npm i")))
    services.memory.writes.remember(
        ctx, validate_remember(rule("Another rule after the verdict", NO_NPM))
    )
    raw_sql(services, "DELETE FROM memorule_audit WHERE event = 'violated'")
    assert not services.memorules.verify_chain(ctx).ok


def test_served_before_says_when_the_rule_was_served_to_the_session(
    services: Services, make_ctx: ContextFactory, rules: dict[str, UUID]
) -> None:
    agent = make_ctx(persona="donna", session_id=UUID(SESSION))
    services.memory.recalls.recall(
        agent, validate_recall({"query": "npm pnpm", "source_type": "memorule"})
    )
    services.ledger.flush()
    later = session(cmd("npm i"))
    found = AdherenceService(services.store, services.memorules).judge(
        agent, later, client="claude-code"
    )
    npm = next(v for v in found.verdicts if UUID(v.verdict.rule.memorule_id) == rules["npm"])
    assert npm.served_before is not None and npm.served_before.served
    shown = npm.to_dict()["served_before"]
    assert shown["version"] == 1 and shown["minutes_after_first_served"] >= 0
    other = session(cmd("npm i"), name="another-session")
    elsewhere = AdherenceService(services.store, services.memorules).judge(
        agent, other, dry_run=True
    )
    npm_other = next(
        v for v in elsewhere.verdicts if UUID(v.verdict.rule.memorule_id) == rules["npm"]
    )
    assert npm_other.served_before is not None and not npm_other.served_before.served


def test_a_rule_served_only_after_the_action_was_not_served_before_it(
    services: Services, make_ctx: ContextFactory, rules: dict[str, UUID]
) -> None:
    agent = make_ctx(persona="donna", session_id=UUID(SESSION))
    early = SessionActions(
        SESSION, "/x", (Action("command", "npm i", at=utcnow() - timedelta(hours=1)),)
    )
    services.memory.recalls.recall(
        agent, validate_recall({"query": "npm pnpm", "source_type": "memorule"})
    )
    services.ledger.flush()
    found = AdherenceService(services.store, services.memorules).judge(agent, early, dry_run=True)
    npm = next(v for v in found.verdicts if UUID(v.verdict.rule.memorule_id) == rules["npm"])
    assert npm.served_before is not None and not npm.served_before.served


def test_rules_of_another_project_or_persona_do_not_apply(
    services: Services, make_ctx: ContextFactory
) -> None:
    mine = make_ctx(project="api", persona="donna")
    other = make_ctx(project="web", persona="donna")
    services.memory.writes.remember(other, validate_remember(rule("Web: never npm either", NO_NPM)))
    services.memory.writes.remember(
        mine,
        validate_remember(
            rule(
                "Only for rex: never npm", NO_NPM, applies_to={"scope": "persona", "persona": "rex"}
            )
        ),
    )
    services.memory.writes.remember(
        other,
        validate_remember(rule("Tenant-wide: never npm", NO_NPM, applies_to={"scope": "global"})),
    )
    found = AdherenceService(services.store, services.memorules).judge(mine, session(cmd("npm i")))
    assert [v.verdict.rule.subject for v in found.verdicts] == ["Tenant-wide: never npm"]


def test_the_report_counts_served_exercised_and_violated_sessions(
    services: Services, make_ctx: ContextFactory, rules: dict[str, UUID]
) -> None:
    agent = make_ctx(persona="donna", session_id=UUID(SESSION))
    services.memory.recalls.recall(
        agent, validate_recall({"query": "npm pnpm tests commit", "source_type": "memorule"})
    )
    services.ledger.flush()
    adherence = AdherenceService(services.store, services.memorules)
    adherence.judge(agent, session(cmd("npm i"), cmd("git commit -m a")), client="claude-code")
    adherence.judge(agent, session(cmd("make test"), cmd("git commit -m b"), name="s-2"))
    adherence.judge(
        agent, session(cmd("make test"), cmd("git commit -m c"), name="s-2")
    )  # again: counted once
    report = build_access(services).adherence_report(key(agent, Role.READER), agent).to_dict()
    figures = {r["subject"]: r for r in report["rules"]}
    npm, tests = figures["Use pnpm, never npm"], figures["Run the tests before committing"]
    assert (npm["served_sessions"], npm["exercised_sessions"], npm["violated_sessions"]) == (
        1,
        1,
        1,
    )
    assert npm["last_violation"]["session"] == SESSION
    assert npm["last_violation"]["evidence"][0]["action"]["command"] == "npm i"
    assert (
        tests["exercised_sessions"],
        tests["violated_sessions"],
        tests["followed_sessions"],
    ) == (2, 1, 1)
    assert [r["subject"] for r in report["never_exercised"]] == ["Changelog with src changes"]
    assert {r["subject"] for r in report["most_violated"]} == {
        "Use pnpm, never npm",
        "Run the tests before committing",
    }
    (violator,) = report["sessions_with_violations"]
    assert violator["session"] == SESSION and len(violator["rules"]) == 2


def test_the_report_of_another_project_does_not_show_these_verdicts(
    services: Services, make_ctx: ContextFactory, rules: dict[str, UUID]
) -> None:
    agent = make_ctx(persona="donna")
    AdherenceService(services.store, services.memorules).judge(agent, session(cmd("npm i")))
    web = make_ctx(project="web")
    report = build_access(services).adherence_report(key(web, Role.READER), web).to_dict()
    assert report["rules"] == [] and report["sessions_with_violations"] == []


def test_judging_needs_a_writer_and_the_report_a_reader(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    doors = build_access(services)
    with pytest.raises(PermissionDenied):
        doors.judge_session(key(ctx, Role.READER), ctx, session(cmd("npm i")))
    assert verdict_events(services, ctx) == []
    judged = doors.judge_session(
        key(ctx, Role.WRITER), ctx, session(cmd("npm i")), client="claude-code"
    )
    assert judged.recorded == 1
    assert doors.adherence_report(key(ctx, Role.READER), ctx).rules


def test_a_persona_bound_key_judges_only_against_rules_it_can_see(
    services: Services, make_ctx: ContextFactory
) -> None:
    team = make_ctx(persona=None)
    services.memory.writes.remember(
        team,
        validate_remember(
            rule(
                "Only for rex: never npm", NO_NPM, applies_to={"scope": "persona", "persona": "rex"}
            )
        ),
    )
    services.memory.writes.remember(team, validate_remember(rule("Everyone: never npm", NO_NPM)))
    doors = build_access(services)
    donna = doors.judge_session(
        key(team, Role.WRITER, persona="donna"), team, session(cmd("npm i")), dry_run=True
    )
    assert [v.verdict.rule.subject for v in donna.verdicts] == ["Everyone: never npm"]
    seen = doors.adherence_report(key(team, Role.READER, persona="donna"), team).to_dict()
    assert [r["subject"] for r in seen["rules"]] == ["Everyone: never npm"]


def test_a_recorded_verdict_is_bounded_however_long_the_commands(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    long = [cmd(f"npm run step{i} -- " + "x" * 5_000) for i in range(30)]
    found = AdherenceService(services.store, services.memorules).judge(ctx, session(*long))
    npm = next(v for v in found.verdicts if UUID(v.verdict.rule.memorule_id) == rules["npm"])
    assert npm.verdict.evidence_count == 30
    (event,) = verdict_events(services, ctx)
    record = json.loads(event.reason)
    assert len(event.reason) <= 16_000 and len(record["evidence"]) <= 5
    assert record["evidence_count"] == 30
    assert all(len(e["action"]["command"]) <= 2_000 for e in record["evidence"])


def test_a_command_with_characters_no_store_keeps_is_recorded_readably(
    services: Services, ctx: SessionContext, rules: dict[str, UUID]
) -> None:
    found = AdherenceService(services.store, services.memorules).judge(
        ctx, session(cmd("npm i \x00\ud800"), name="odd\x00session")
    )
    assert found.recorded == 1
    (event,) = verdict_events(services, ctx)
    assert json.loads(event.reason)["evidence"][0]["action"]["command"] == "npm i \ufffd\ufffd"
    assert services.memorules.verify_chain(ctx).ok
