"""Checks proposed from the text of rules: the derivation (pure), and the review queue on both
engines (propose, approve, reject, re-run, import-rules, access)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access
from prism_memory.domain.access import ApiKey, Role, operator_key
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.adherence.paths import glob_matches, session_path
from prism_memory.domain.adherence.propose import propose
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import AuditEventType, SessionContext, Status
from prism_memory.errors import Conflict, InvalidInput, PermissionDenied
from prism_memory.services.access_service import AccessService
from prism_memory.trigraph.port import AuditFilter
from tests.bench_scripts import REPO, load_script
from tests.cli_run import invoke_prism
from tests.conftest import raw_sql

# -- the derivation ----------------------------------------------------------------------


def fires(check: dict[str, Any], example: str) -> bool:
    ((kind, value),) = check.items()
    if kind == "forbid_command":
        return re.search(value, example) is not None
    return glob_matches(value, session_path(example, "/repo"))


@pytest.mark.parametrize(
    ("text", "kind", "triggers", "spares"),
    [
        (
            "never use `npm`, use `pnpm`",
            "forbid_command",
            ["npm install", "cd web && npm run build", "npm"],
            ["pnpm install", "pnpm add npm-run-all", "cat .npmrc", "npx tsc"],
        ),
        (
            "Use pnpm, not npm",
            "forbid_command",
            ["npm i", "yarn && npm test"],
            ["pnpm i", "pnpm run dev"],
        ),
        (
            "Always use `uv` — use `uv pip` (not `pip`) and `uv run` (not `python`).",
            "forbid_command",
            ["pip install x", "python x.py"],
            ["uv pip install x", "uv run python x.py"],
        ),
        (
            "Never run `rm -rf` on the repository",
            "forbid_command",
            ["rm -rf build", "make clean && rm -rf dist"],
            ["rm build.log", "mv dist /tmp"],
        ),
        (
            "Never force push.",
            "forbid_command",
            ["git push --force", "git push -f origin x", "git push --force-with-lease"],
            ["git push origin x", "git push --follow-tags"],
        ),
        (
            "Never push directly to `main`.",
            "forbid_command",
            ["git push origin main", "git push -u origin HEAD:main"],
            ["git push origin main-fix", "git push origin feature/main"],
        ),
        (
            "Never amend commits (`git commit --amend`).",
            "forbid_command",
            ["git commit --amend", "git commit -a --amend --no-edit"],
            ["git commit -m amend"],
        ),
        (
            "do not edit files under `src/generated/`",
            "forbid_edit",
            ["src/generated/api.ts", "src/generated/deep/x.py", "/repo/src/generated/y"],
            ["src/app.ts", "generated/api.ts", "/elsewhere/src/generated/x"],
        ),
        (
            "Do not ever read or edit `.env` files.",
            "forbid_edit",
            [".env", "config/.env", "/home/me/.env"],
            [".env.example", "src/env.ts"],
        ),
    ],
)
def test_a_rule_sentence_gives_the_check_that_fires_on_what_it_forbids_only(
    text: str, kind: str, triggers: list[str], spares: list[str]
) -> None:
    (check,) = propose(text)
    assert next(iter(check)) == kind
    parse_checks([check])
    assert all(fires(check, t) for t in triggers), check
    assert not any(fires(check, s) for s in spares), check


def test_an_order_gives_require_before_and_a_companion_gives_require_edit_with() -> None:
    assert propose("run `make test` before committing") == [
        {
            "require_before": {
                "command": r"(?<![\w./@-])make\s+test(?![\w.@/-])",
                "before": r"\bgit\s+commit\b",
            }
        }
    ]
    (pushed,) = propose("Always run `pytest -q` before pushing.")
    assert pushed["require_before"]["before"] == r"\bgit\s+push\b"
    assert propose("update CHANGELOG.md with every change under src/") == [
        {"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}
    ]
    assert propose(
        "When adding a migration to `/db/migrations/`, you must also register it in "
        "`/db/migrate.ts`."
    ) == [{"require_edit_with": {"edit": "db/migrations/**", "also": "db/migrate.ts"}}]


@pytest.mark.parametrize(
    "text",
    [
        "Write tests for new functionality",
        "Never commit directly to `main`.",  # the branch is not in the command
        "Never `git commit` unless I tell you to do it",
        "Never force push without explicit approval",
        "Prefer `docker compose` over raw `docker` commands when possible.",
        "Ask before destructive operations (rm -rf, force push, DROP TABLE)",
        "NEVER proactively create documentation files (*.md) or README files",
        "Never use `any` in TypeScript",
        "Use `const` instead of `var`",
        "Avoid `console.log` in production code",
        "NEVER modify or touch ~/.config/git/ignore",
        "Don't forget to run `npm test` before you hand over",  # an order, not a prohibition
        "Never skip `make lint`",
        "Never push `main` without running the tests first",
        "Never edit generated/output folders.",
        "",
    ],
)
def test_rules_with_an_exception_or_nothing_visible_in_an_action_get_no_check(text: str) -> None:
    assert propose(text) == []


def test_a_tool_name_is_escaped_and_never_matched_inside_another() -> None:
    (check,) = propose("Never run `c++ -o a.out` by hand")
    assert re.search(check["forbid_command"], "c++ -o a.out main.cc")
    assert not re.search(check["forbid_command"], "cc -o a.out")  # '+' is literal


def test_propose_is_deterministic_bounded_and_always_valid() -> None:
    text = "\n".join(f"Never run `tool{i} go`." for i in range(20))
    found = propose(text)
    assert found == propose(text)
    assert len(found) == 8
    parse_checks(found)


def test_the_labelled_set_reaches_its_bars_on_both_parts() -> None:
    """The scorer of bench/adherence over the labelled real sentences (see its docstring)."""
    module = load_script("bench/adherence/proposals_score.py", "proposals_score")
    sentences = REPO / "bench" / "adherence" / "proposal_sentences.json"
    items = json.loads(sentences.read_text())["items"]
    module.verify_labels(items)
    for split in ("dev", "held_out"):
        part = module.score([i for i in items if i["split"] == split])
        assert part["precision"] >= 0.80 and part["recall"] >= 0.50, (split, part)


# -- the review queue, on both engines ---------------------------------------------------


def remember(access: AccessService, key: ApiKey, ctx: SessionContext, body: str) -> UUID:
    raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": body[:60],
        "body": body,
        "applies_to": {"scope": "project"},
    }
    return access.remember(key, ctx, validate_remember(raw)).id


def events(services: Services, ctx: SessionContext, memorule_id: UUID) -> list[AuditEventType]:
    found = services.store.audit_events(
        ctx.tenant_id, AuditFilter(memorule_id=memorule_id, limit=100)
    )
    return [e.event for e in sorted(found, key=lambda e: e.seq)]


def test_checks_wait_in_the_queue_and_approval_gives_them_to_the_rule(
    services: Services, ctx: SessionContext
) -> None:
    access, key = build_access(services), operator_key(ctx.tenant_id)
    rule = remember(access, key, ctx, "Use `pnpm`, never `npm`, in this repository.")
    plain = remember(access, key, ctx, "Write small commits with clear messages.")
    report = access.propose_checks(key, ctx)
    assert report.rules_read == 2 and [p.memorule_id for p in report.proposals] == [rule]
    (proposal,) = report.proposals
    assert proposal.action == "proposed" and proposal.proposal_id is not None
    # nothing active changed: the rule has no checks until someone approves
    assert access.get(key, ctx, rule)[1].checks == ()
    ((pending, state, _),) = access.pending(key, ctx)
    assert pending.id == proposal.proposal_id and pending.status is Status.PROPOSED
    assert state.evidence_signal_id == f"checks-for:{rule}@v1" and state.checks
    # a second run proposes nothing new for the same version
    again = access.propose_checks(key, ctx)
    assert [(p.action, p.proposal_id) for p in again.proposals] == [
        ("already_proposed", proposal.proposal_id)
    ]

    result = access.approve(key, ctx, pending.id, None, "looks right")
    assert (result.id, result.version) == (rule, 2)
    memory, now = access.get(key, ctx, rule)
    assert memory.status is Status.ACTIVE and now.checks == state.checks
    assert now.body == "Use `pnpm`, never `npm`, in this repository."
    assert events(services, ctx, rule)[-1] is AuditEventType.SUPERSEDED
    assert events(services, ctx, pending.id) == [AuditEventType.PROPOSED, AuditEventType.APPROVED]
    assert access.get(key, ctx, pending.id)[0].status is Status.RETIRED
    assert access.pending(key, ctx) == []
    assert access.propose_checks(key, ctx).with_checks == 1
    assert plain not in [p.memorule_id for p in access.propose_checks(key, ctx).proposals]
    # the chain knows an approved check proposal is retired (its checks went to the rule) ...
    assert access.verify_chain(key, ctx).ok
    # ... so bringing it back to life behind the service's back is caught
    raw_sql(
        services,
        "UPDATE memory SET status = 'active' WHERE tenant_id = ? AND id = ?",
        (str(ctx.tenant_id), str(pending.id)),
    )
    tampered = access.verify_chain(key, ctx)
    assert not tampered.ok and tampered.problem is not None
    assert str(pending.id) in tampered.problem and "memory.status" in tampered.problem


def test_a_rejected_proposal_leaves_the_rule_and_a_stale_one_cannot_be_approved(
    services: Services, ctx: SessionContext
) -> None:
    access, key = build_access(services), operator_key(ctx.tenant_id)
    rule = remember(access, key, ctx, "Never run `make deploy` from a laptop.")
    (first,) = access.propose_checks(key, ctx).proposals
    assert first.proposal_id is not None
    access.reject(key, ctx, first.proposal_id, "deploys are fine here")
    assert access.get(key, ctx, rule)[1].checks == ()
    assert access.propose_checks(key, ctx).proposals[0].action == "already_proposed"

    access.update(key, ctx, rule, {"body": "Never run `make release` from a laptop."})
    (second,) = access.propose_checks(key, ctx).proposals  # v2: a new proposal
    assert second.action == "proposed" and second.version == 2
    assert second.proposal_id is not None
    access.update(key, ctx, rule, {"body": "Never run `make ship` from a laptop."})
    (third,) = access.propose_checks(key, ctx).proposals  # v3 closes v2's, still pending
    assert third.proposal_id is not None
    assert [p.id for p, _, _ in access.pending(key, ctx)] == [third.proposal_id]
    assert events(services, ctx, second.proposal_id) == [
        AuditEventType.PROPOSED,
        AuditEventType.REJECTED,
    ]
    access.update(key, ctx, rule, {"body": "Never run `make ship` from any laptop."})
    with pytest.raises(Conflict, match="changed since"):
        access.approve(key, ctx, third.proposal_id, None, None)
    with pytest.raises(InvalidInput) as err:
        access.approve(key, ctx, third.proposal_id, {"body": "edited"}, None)
    assert err.value.errors[0].field == "body"


def test_a_dry_run_writes_nothing_and_a_reader_cannot_propose(
    services: Services, ctx: SessionContext
) -> None:
    access, key = build_access(services), operator_key(ctx.tenant_id)
    remember(access, key, ctx, "Do not edit files under `vendor/` by hand.")
    dry = access.propose_checks(key, ctx, dry_run=True)
    assert [p.action for p in dry.proposals] == ["would_propose"]
    assert access.pending(key, ctx) == []
    reader = ApiKey("k", ctx.tenant_id, Role.READER, (), None, "p", None, datetime.now(UTC))
    with pytest.raises(PermissionDenied):
        access.propose_checks(reader, ctx)


def test_the_cli_proposes_from_a_sentence_and_from_the_store_and_import_rules_too(
    db_path: Path, tmp_path: Path
) -> None:
    out = invoke_prism(db_path, "checks", "propose", "--json", "--text", "be kind to users")
    assert (out.returncode, json.loads(out.stdout)) == (0, [])
    out = invoke_prism(db_path, "checks", "propose", "--json", "--text", "Use pnpm, not npm")
    assert [next(iter(c)) for c in json.loads(out.stdout)] == ["forbid_command"]

    rules = tmp_path / "CLAUDE.md"
    rules.write_text(
        "# Rules\n\n- Never run `npm install` or create `package-lock.json`\n"
        "- Write tests for new functionality\n"
    )
    out = invoke_prism(db_path, "import-rules", str(rules), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    proposed = json.loads(out.stdout)["check_proposals"]
    assert proposed["proposed"] == 1
    assert [list(c) for c in proposed["proposals"][0]["checks"]] == [
        ["forbid_command"],
        ["forbid_edit"],
    ]
    out = invoke_prism(db_path, "checks", "propose", "--json")
    assert [p["action"] for p in json.loads(out.stdout)["proposals"]] == ["already_proposed"]
    out = invoke_prism(db_path, "proposals", "--json")
    assert json.loads(out.stdout)["count"] == 1


def test_a_writer_cannot_arm_an_admin_s_deny_by_approving_proposed_checks(
    services: Services, ctx: SessionContext
) -> None:
    """A rule an admin set to ``deny`` without checks blocks nothing yet; approving proposed
    checks onto it arms the block, so it takes a key that may change that rule's checks."""
    from prism_memory.domain.records import utcnow

    access, admin = build_access(services), operator_key(ctx.tenant_id)
    writer = ApiKey("key_writer", ctx.tenant_id, Role.WRITER, (), None, "", None, utcnow())
    raw = {
        "kind": "memorule",
        "memorule_kind": "convention",
        "subject": "Use pnpm, never npm",
        "body": "Use `pnpm`, never `npm`, in this repository.",
        "applies_to": {"scope": "project"},
        "enforcement": "deny",
    }
    rule = access.remember(admin, ctx, validate_remember(raw)).id
    (proposal,) = access.propose_checks(admin, ctx).proposals
    assert proposal.proposal_id is not None
    with pytest.raises(PermissionDenied):
        access.approve(writer, ctx, proposal.proposal_id, None, "arm it")
    assert access.get(admin, ctx, rule)[1].checks == ()  # nothing written
    result = access.approve(admin, ctx, proposal.proposal_id, None, "armed by an admin")
    assert result.id == rule and access.get(admin, ctx, rule)[1].checks
