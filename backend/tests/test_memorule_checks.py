"""Issue 28: a memorule's ``checks`` and ``enforcement`` are versioned content, on both engines.

Written and changed through the services and the access rules (only an admin sets ask/deny),
stored and read back, covered by the audit chain's content hash (tampering with either column
is caught; a rule without them hashes exactly as before), carried by dump and import, and
listed for the judge and the guard by ``memorules_with_checks`` without any model.
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access, build_services
from prism_memory.domain import audit as chain
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.adherence.rules import applicable
from prism_memory.domain.contract.recall import validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.listing import ListRequest
from prism_memory.domain.records import Enforcement, SessionContext, iso, utcnow
from prism_memory.errors import InvalidInput, PermissionDenied
from prism_memory.serializers import history_dict, match_dict, state_dict
from prism_memory.services.transfer import export_store, import_store
from prism_memory.settings import load_settings
from tests.conftest import ContextFactory, raw_sql

CHECKS = [
    {"forbid_command": r"\bnpm\b"},
    {"forbid_edit": "src/generated/**"},
    {"require_before": {"command": r"make test", "before": r"git commit"}},
    {"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}},
]


def rule(subject: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": subject,
        "body": f"{subject}: what the agent is told, in full.",
        "applies_to": {"scope": "project"},
        **extra,
    }


def key(ctx: SessionContext, role: Role, projects: tuple[UUID, ...] = ()) -> ApiKey:
    return ApiKey(f"key_{role.value}", ctx.tenant_id, role, projects, None, "", None, utcnow())


def count_states(services: Services, ctx: SessionContext) -> int:
    return services.store.stats(ctx.tenant_id)["states"]


# -- written, read, versioned ------------------------------------------------------------


def test_a_rule_with_checks_reads_back_through_every_read(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Use pnpm, never npm", checks=CHECKS))
    )
    _, state = services.memory.reads.get(ctx, written.id)
    assert state_dict(state)["checks"] == CHECKS
    assert state_dict(state)["enforcement"] == "remind"
    match = services.memory.recalls.recall(
        ctx, validate_recall({"query": "npm", "source_type": "memorule"})
    ).matches[0]
    assert match_dict(match)["checks"] == CHECKS and match_dict(match)["enforcement"] == "remind"
    listed = services.memory.reads.list_memories(ctx, ListRequest.parse({})).items
    assert state_dict(listed[0][1])["checks"] == CHECKS


def test_a_rule_without_checks_answers_exactly_as_before(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Plain rule without checks"))
    )
    _, state = services.memory.reads.get(ctx, written.id)
    shown = state_dict(state)
    assert "checks" not in shown and "enforcement" not in shown
    match = services.memory.recalls.recall(
        ctx, validate_recall({"query": "", "source_type": "memorule"})
    ).matches[0]
    assert "checks" not in match_dict(match) and "enforcement" not in match_dict(match)
    assert state.checks == () and state.enforcement is Enforcement.REMIND


def test_a_state_without_checks_hashes_in_the_format_before_checks_existed(
    services: Services, ctx: SessionContext
) -> None:
    _, s = services.memory.reads.get(
        ctx, services.memory.writes.remember(ctx, validate_remember(rule("Old shape rule"))).id
    )
    before = [  # prism-state/1 exactly as it was hashed before issue 28
        chain.STATE_FORMAT,
        str(s.memory_id),
        str(s.id),
        s.version,
        s.memorule_kind.value if s.memorule_kind else None,
        s.subject,
        s.body,
        s.applies_to.to_dict() if s.applies_to else None,
        s.evidence_signal_id,
        s.confidence.value if s.confidence else None,
        str(s.written_by_session_id),
        s.written_by_persona,
        iso(s.written_at),
    ]
    text = json.dumps(before, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib

    assert chain.content_hash(s) == hashlib.sha256(text.encode()).hexdigest()


def test_an_update_changes_the_checks_in_a_new_version_with_its_audit_event(
    services: Services, ctx: SessionContext
) -> None:
    first = services.memory.writes.remember(
        ctx, validate_remember(rule("Tests before commits", checks=CHECKS[2:3]))
    )
    second = services.memory.lifecycle.update(
        ctx, first.id, {"checks": CHECKS[:1]}, reason="npm was the real problem"
    )
    assert second.version == 2 and second.audit_id is not None
    versions = history_dict(services.memory.reads.history(ctx, first.id))["versions"]
    assert [v["checks"] for v in versions] == [CHECKS[2:3], CHECKS[:1]]
    third = services.memory.lifecycle.update(ctx, first.id, {"checks": []}, reason="advice only")
    _, state = services.memory.reads.get(ctx, first.id)
    assert third.version == 3 and state.checks == ()
    assert "checks" not in state_dict(state)
    # A text-only update keeps the checks of the version before it.
    services.memory.lifecycle.update(ctx, first.id, {"checks": CHECKS}, reason="all of them")
    services.memory.lifecycle.update(
        ctx, first.id, {"body": "A new body, the checks stay as they were."}
    )
    assert services.memory.reads.get(ctx, first.id)[1].checks == parse_checks(CHECKS)
    assert services.memorules.verify_chain(ctx).ok


BAD_CHECKS: list[tuple[Any, set[tuple[str, str]]]] = [
    ("npm", {("checks", "invalid_type")}),
    ([{"forbid_command": "(unclosed"}], {("checks.0.forbid_command", "invalid_regex")}),
    ([{"forbid_command": "(a+)+$"}], {("checks.0.forbid_command", "unsafe_regex")}),
    ([{"forbid_edit": ""}], {("checks.0.forbid_edit", "empty")}),
    ([{"forbid_edit": "x" * 501}], {("checks.0.forbid_edit", "too_long")}),
    ([{"forbid_push": "main"}], {("checks.0", "unknown_check")}),
    ([{"forbid_command": "a", "forbid_edit": "b"}], {("checks.0", "one_key")}),
    (
        [{"require_before": {"command": "make test"}}, {"forbid_edit": "src\\x"}],
        {("checks.0.require_before.before", "missing"), ("checks.1.forbid_edit", "invalid_glob")},
    ),
    ([{"forbid_command": "x"}] * 9, {("checks", "too_many")}),
]


@pytest.mark.parametrize(("checks", "expected"), BAD_CHECKS)
def test_bad_checks_are_field_errors_with_the_others_and_nothing_is_written(
    services: Services, ctx: SessionContext, checks: Any, expected: set[tuple[str, str]]
) -> None:
    before = count_states(services, ctx)
    with pytest.raises(InvalidInput) as caught:
        services.memory.writes.remember(
            ctx, validate_remember(rule("x", checks=checks, enforcement="block"))
        )
    found = {(e.field, e.code) for e in caught.value.errors}
    assert expected | {("subject", "too_short"), ("enforcement", "invalid_choice")} <= found
    assert count_states(services, ctx) == before


def test_a_bad_check_in_an_update_writes_no_version(
    services: Services, ctx: SessionContext
) -> None:
    written = services.memory.writes.remember(
        ctx, validate_remember(rule("Rule to update badly", checks=CHECKS[:1]))
    )
    with pytest.raises(InvalidInput) as caught:
        services.memory.lifecycle.update(ctx, written.id, {"checks": [{"forbid_edit": "a/***"}]})
    assert [(e.field, e.code) for e in caught.value.errors] == [
        ("checks.0.forbid_edit", "invalid_glob")
    ]
    assert services.memory.reads.get(ctx, written.id)[1].version == 1


def test_a_note_takes_no_checks(services: Services, ctx: SessionContext) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.memory.writes.remember(
            ctx, validate_remember({"body": "a note", "checks": CHECKS})
        )
    assert [(e.field, e.code) for e in caught.value.errors] == [("checks", "unknown_field")]


# -- only an admin decides ask / deny ----------------------------------------------------


@pytest.mark.parametrize("enforcement", ["ask", "deny"])
def test_only_an_admin_key_writes_ask_or_deny(
    services: Services, ctx: SessionContext, enforcement: str
) -> None:
    access = build_access(services)
    before = count_states(services, ctx)
    raw = rule("Never push to main", checks=CHECKS[:1], enforcement=enforcement)
    with pytest.raises(PermissionDenied) as caught:
        access.remember(key(ctx, Role.WRITER), ctx, validate_remember(raw))
    assert caught.value.details["field"] == "enforcement"
    assert count_states(services, ctx) == before
    written = access.remember(key(ctx, Role.ADMIN), ctx, validate_remember(raw))
    assert services.memory.reads.get(ctx, written.id)[1].enforcement.value == enforcement
    events = services.memorules.audit(ctx, _events(written.id)).events
    assert [e.event.value for e in events] == ["created"]


def test_a_writer_sets_remind_and_checks_but_cannot_undo_an_admins_decision(
    services: Services, ctx: SessionContext
) -> None:
    access = build_access(services)
    writer, admin = key(ctx, Role.WRITER), key(ctx, Role.ADMIN)
    mine = access.remember(
        writer, ctx, validate_remember(rule("Writer's own rule", checks=CHECKS[:1]))
    )
    access.update(writer, ctx, mine.id, {"checks": CHECKS, "enforcement": "remind"})
    with pytest.raises(PermissionDenied):
        access.update(writer, ctx, mine.id, {"enforcement": "deny"})
    decided = access.update(admin, ctx, mine.id, {"enforcement": "deny"}, reason="blocked now")
    for change in ({"enforcement": "remind"}, {"checks": []}):
        with pytest.raises(PermissionDenied):
            access.update(writer, ctx, mine.id, change)
    assert services.memory.reads.get(ctx, mine.id)[1].version == decided.version
    # The text stays a writer's to improve; the decision stays.
    access.update(writer, ctx, mine.id, {"body": "Clearer words for the same blocked rule."})
    assert services.memory.reads.get(ctx, mine.id)[1].enforcement is Enforcement.DENY
    access.update(admin, ctx, mine.id, {"enforcement": "remind"}, reason="advisory again")
    events = [e.event.value for e in services.memorules.audit(ctx, _events(mine.id)).events]
    assert events == ["superseded"] * 4 + ["created"]


def _events(memorule_id: UUID) -> Any:
    from prism_memory.trigraph.port import AuditFilter

    return AuditFilter(memorule_id=memorule_id, limit=50)


# -- the audit chain covers them ---------------------------------------------------------


def _sql(services: Services, sqlite: str, postgres: str, *params: object) -> None:
    raw_sql(services, postgres if services.settings.database_url else sqlite, params)


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        (
            'UPDATE memory_state SET checks = \'[{"forbid_command": "rm"}]\'',
            'UPDATE memory_state SET checks = \'[{"forbid_command": "rm"}]\'::jsonb',
        ),
        ("UPDATE memory_state SET checks = NULL", None),
        ("UPDATE memory_state SET enforcement = 'remind'", None),
        ("UPDATE memory_state SET checks = 'not json'", None),
    ],
    ids=["checks-edited", "checks-deleted", "enforcement-lowered", "checks-garbled"],
)
def test_a_checks_or_enforcement_column_edited_behind_the_services_back_is_caught(
    services: Services, ctx: SessionContext, sqlite: str, postgres: str | None
) -> None:
    if postgres is None and "not json" in sqlite and services.settings.database_url:
        pytest.skip("a jsonb column refuses text that is no JSON")
    plain = services.memory.writes.remember(
        ctx, validate_remember(rule("A rule with no checks at all"))
    )
    guarded = services.memory.writes.remember(
        ctx,
        validate_remember(rule("A rule that blocks npm", checks=CHECKS[:1], enforcement="deny")),
    )
    assert services.memorules.verify_chain(ctx).ok
    where = " WHERE tenant_id = ? AND memory_id = ?"
    _sql(
        services, sqlite + where, (postgres or sqlite) + where, str(ctx.tenant_id), str(guarded.id)
    )
    report = services.memorules.verify_chain(ctx)
    assert (report.ok, report.broken_at_seq) == (False, 2)
    assert report.problem is not None and "memory_state was edited" in report.problem
    assert plain.id != guarded.id


def test_checks_added_to_a_rule_that_had_none_are_caught(
    services: Services, ctx: SessionContext
) -> None:
    plain = services.memory.writes.remember(
        ctx, validate_remember(rule("A rule written without checks"))
    )
    _sql(
        services,
        "UPDATE memory_state SET enforcement = 'deny' WHERE tenant_id = ? AND memory_id = ?",
        "UPDATE memory_state SET enforcement = 'deny' WHERE tenant_id = ? AND memory_id = ?",
        str(ctx.tenant_id),
        str(plain.id),
    )
    report = services.memorules.verify_chain(ctx)
    assert (report.ok, report.broken_at_seq) == (False, 1)


# -- memorules_with_checks: what the judge and the guard read ----------------------------


def test_memorules_with_checks_lists_the_current_active_visible_rules_with_checks(
    services: Services, make_ctx: ContextFactory
) -> None:
    mem = services.memory
    here = make_ctx(project="api", persona="donna", surface="python")
    other = make_ctx(project="web", persona="donna")
    elsewhere = make_ctx(tenant="globex", project="api")
    own = mem.writes.remember(here, validate_remember(rule("Own project rule", checks=CHECKS[:1])))
    mem.writes.remember(here, validate_remember(rule("Advice only, nothing to check")))
    tenant_wide = mem.writes.remember(
        other,
        validate_remember(
            rule(
                "Org rule from another project",
                checks=CHECKS[1:2],
                applies_to={"scope": "org"},
            )
        ),
    )
    mem.writes.remember(
        other, validate_remember(rule("Other project's own rule", checks=CHECKS[:1]))
    )
    mem.writes.remember(
        elsewhere, validate_remember(rule("Another tenant's rule", checks=CHECKS[:1]))
    )
    retired = mem.writes.remember(here, validate_remember(rule("Retired rule", checks=CHECKS[:1])))
    mem.lifecycle.retire(here, retired.id, "gone")
    dropped = mem.writes.remember(
        here, validate_remember(rule("Checks dropped later", checks=CHECKS[:1]))
    )
    mem.lifecycle.update(here, dropped.id, {"checks": None})
    changed = mem.writes.remember(
        here, validate_remember(rule("Checks changed later", checks=CHECKS[:1]))
    )
    mem.lifecycle.update(here, changed.id, {"checks": CHECKS[2:], "enforcement": "ask"})
    persona = mem.writes.remember(
        here,
        validate_remember(
            rule(
                "Texi's own rule",
                checks=CHECKS[:1],
                applies_to={"scope": "persona", "persona": "texi"},
            )
        ),
    )
    other_surface = mem.writes.remember(
        here, validate_remember(rule("Go rule", checks=CHECKS[:1], applies_to={"surface": "go"}))
    )
    listed = services.store.memorules_with_checks(here.tenant_id, here.project_id)
    by_id = {r.memorule_id: r for r in listed}
    assert set(by_id) == {own.id, tenant_wide.id, changed.id, persona.id, other_surface.id}
    assert [r.memorule_id for r in listed] == sorted(by_id, key=str)
    latest = by_id[changed.id]
    assert (latest.version, latest.checks, latest.enforcement) == (
        2,
        parse_checks(CHECKS[2:]),
        Enforcement.ASK,
    )
    assert latest.state_id == services.memory.reads.get(here, changed.id)[1].id
    assert latest.to_dict()["checks"] == CHECKS[2:]
    assert by_id[own.id].subject == "Own project rule"
    assert by_id[own.id].body.startswith("Own project rule:")
    assert {r.memorule_id for r in applicable(listed, here)} == {
        own.id,
        tenant_wide.id,
        changed.id,
    }
    texi = make_ctx(project="api", persona="texi", surface="go")
    assert {r.memorule_id for r in applicable(listed, texi)} == {
        own.id,
        tenant_wide.id,
        changed.id,
        persona.id,
        other_surface.id,
    }
    assert services.store.memorules_with_checks(elsewhere.tenant_id, other.project_id) == []


# -- dump and import carry them ----------------------------------------------------------


def test_dump_and_import_carry_checks_and_enforcement_and_the_chain_verifies(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    access = build_access(services)
    admin = key(ctx, Role.ADMIN)
    guarded = access.remember(
        admin, ctx, validate_remember(rule("Blocked rule", checks=CHECKS, enforcement="deny"))
    )
    plain = access.remember(admin, ctx, validate_remember(rule("Plain advice rule")))
    access.update(admin, ctx, guarded.id, {"checks": CHECKS[:2]}, reason="fewer")
    out = io.StringIO()
    export_store(services.store, out, None)
    text = out.getvalue()
    assert json.loads(text.splitlines()[0])["version"] >= 3  # checks came with version 3
    target = build_services(
        load_settings(db=tmp_path / "copy.db", embedder="fake", database_url="")
    )
    try:
        import_store(target.store, io.StringIO(text))
        copied = target.memory.reads.history(ctx, guarded.id).states
        assert [(s.checks, s.enforcement.value) for s in copied] == [
            (parse_checks(CHECKS), "deny"),
            (parse_checks(CHECKS[:2]), "deny"),
        ]
        assert target.memory.reads.get(ctx, plain.id)[1].checks == ()
        report = target.memorules.verify_chain(ctx)
        assert (report.ok, report.content_checked) == (True, 3)
        listed = target.store.memorules_with_checks(ctx.tenant_id, ctx.project_id)
        assert [r.memorule_id for r in listed] == [guarded.id]
    finally:
        target.close()


def test_a_dump_with_a_bad_check_imports_nothing(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    services.memory.writes.remember(
        ctx, validate_remember(rule("Rule to be garbled", checks=CHECKS[:1]))
    )
    out = io.StringIO()
    export_store(services.store, out, None)
    garbled = out.getvalue().replace(r'"\\bnpm\\b"', '"(a+)+"')
    assert garbled != out.getvalue()
    target = build_services(load_settings(db=tmp_path / "bad.db", embedder="fake", database_url=""))
    try:
        with pytest.raises(InvalidInput) as caught:
            import_store(target.store, io.StringIO(garbled))
        assert caught.value.errors[0].code == "invalid_record"
        assert "repeat inside a repeat" in caught.value.errors[0].message
        assert target.store.stats(ctx.tenant_id)["states"] == 0
    finally:
        target.close()


def test_a_version_2_dump_without_checks_still_imports(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    services.memory.writes.remember(ctx, validate_remember(rule("Rule from before checks")))
    out = io.StringIO()
    export_store(services.store, out, None)
    lines = []
    for line in out.getvalue().splitlines():
        data = json.loads(line)
        if data["type"] == "header":
            data["version"] = 2
        data.pop("pinned", None)  # a memory's pin came with version 4
        for state in data.get("states", []):
            del state["checks"], state["enforcement"]
        lines.append(json.dumps(data))
    target = build_services(load_settings(db=tmp_path / "v2.db", embedder="fake", database_url=""))
    try:
        import_store(target.store, io.StringIO("\n".join(lines) + "\n"))
        assert target.memorules.verify_chain(ctx).ok
    finally:
        target.close()


def test_on_sqlite_the_read_starts_from_the_few_states_with_checks(db_path: Path) -> None:
    """The guard's read walks migration 6's partial index, not every memory of the tenant."""
    import sqlite3

    from prism_memory.trigraph.sqlite import checked_rules

    build_services(load_settings(db=db_path, embedder="fake", database_url="")).close()
    conn = sqlite3.connect(db_path)
    try:
        plan = [
            r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + checked_rules._SELECT, ("t", "p"))
        ]
    finally:
        conn.close()
    assert plan[0].startswith("SEARCH s USING INDEX memory_state_with_checks")
    assert plan[1].startswith("SEARCH m USING PRIMARY KEY")


@pytest.mark.postgres
def test_checks_move_from_sqlite_to_postgres_and_back_with_every_content_hash_intact(
    tmp_path: Path, pg_url: str, make_ctx: ContextFactory
) -> None:
    """PostgreSQL keeps checks as jsonb (its own key order); the hash reads them canonically."""
    engines = [
        load_settings(db=tmp_path / "first.db", embedder="fake", database_url=""),
        load_settings(database_url=pg_url, embedder="fake"),
        load_settings(db=tmp_path / "back.db", embedder="fake", database_url=""),
    ]
    stores = [build_services(s) for s in engines]
    ctx = make_ctx(persona="donna")
    try:
        first = stores[0].memory
        written = first.writes.remember(
            ctx, validate_remember(rule("Every kind of check", checks=CHECKS))
        )
        first.lifecycle.update(ctx, written.id, {"enforcement": "deny", "checks": CHECKS[::-1]})
        dumps = []
        for source, target in itertools.pairwise(stores):
            out = io.StringIO()
            export_store(source.store, out, None)
            dumps.append(out.getvalue().splitlines()[1:])
            import_store(target.store, io.StringIO(out.getvalue()))
        out = io.StringIO()
        export_store(stores[2].store, out, None)
        assert dumps[0] == dumps[1] == out.getvalue().splitlines()[1:]
        for s in stores:
            report = s.memorules.verify_chain(ctx)
            assert (report.ok, report.content_checked) == (True, 2)
            listed = s.store.memorules_with_checks(ctx.tenant_id, ctx.project_id)
            assert [(r.checks, r.enforcement) for r in listed] == [
                (parse_checks(CHECKS[::-1]), Enforcement.DENY)
            ]
    finally:
        for s in stores:
            s.close()
