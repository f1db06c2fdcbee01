"""An update's and a proposal edit's reach is judged on the typed request (issue 27): the
changes are parsed into the version they make first, so a malformed one is refused as such
(422) whatever it names, and a well-formed one out of the key's reach is refused (403);
neither writes anything. On both engines."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_access
from prism_memory.capture.proposals import candidates
from prism_memory.capture.transcript import read_file
from prism_memory.domain.access import ApiKey, Role
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext, Status, utcnow
from prism_memory.errors import InvalidInput, PermissionDenied, PrismError
from prism_memory.services.capture_service import CaptureService
from prism_memory.services.proposal_service import ProposalService
from tests.test_memorule_checks import rule

GOLDEN = Path(__file__).parent / "golden" / "claude_code_session.jsonl"
CHECKS = [{"forbid_command": r"\bnpm\b"}]


def key(
    ctx: SessionContext,
    role: Role = Role.WRITER,
    *,
    projects: tuple[UUID, ...] = (),
    persona: str | None = None,
) -> ApiKey:
    return ApiKey(f"key_{role.value}", ctx.tenant_id, role, projects, persona, "", None, utcnow())


def written(services: Services, ctx: SessionContext) -> dict[str, int]:
    stats = services.store.stats(ctx.tenant_id)
    return {k: stats[k] for k in ("memories", "states", "audit_events")}


def refused(services: Services, ctx: SessionContext, call: Any) -> PrismError:
    before = written(services, ctx)
    with pytest.raises(PrismError) as caught:
        call()
    assert written(services, ctx) == before
    return caught.value


@pytest.mark.parametrize(
    ("changes", "persona", "fields"),
    [
        ({"subject": "x"}, None, {"subject"}),
        ({"enforcement": "sometimes"}, None, {"enforcement"}),
        ({"colour": "red"}, None, {"colour"}),
        ({}, None, {"changes"}),
        # Out of reach as well as malformed: refused as malformed, before its reach is judged.
        ({"applies_to": {"persona": "bob", "scope": "galaxy"}}, "donna", {"applies_to.scope"}),
        ({"enforcement": "deny", "subject": "x"}, None, {"subject"}),
    ],
)
def test_a_malformed_update_is_refused_as_invalid_and_writes_nothing(
    services: Services,
    ctx: SessionContext,
    changes: dict[str, Any],
    persona: str | None,
    fields: set[str],
) -> None:
    access = build_access(services)
    target = access.remember(key(ctx), ctx, validate_remember(rule("Rules are short")))

    error = refused(
        services, ctx, lambda: access.update(key(ctx, persona=persona), ctx, target.id, changes)
    )

    assert isinstance(error, InvalidInput) and error.http_status == 422
    assert {e.field for e in error.errors} == fields


@pytest.mark.parametrize(
    ("changes", "narrow", "field"),
    [
        ({"applies_to": {"persona": "Bob", "scope": "persona"}}, "persona", "applies_to.persona"),
        ({"applies_to": {"scope": "org"}}, "projects", "applies_to.scope"),
        ({"checks": CHECKS, "enforcement": "deny"}, "writer", "enforcement"),
    ],
)
def test_a_well_formed_update_out_of_the_keys_reach_is_refused_and_writes_nothing(
    services: Services, ctx: SessionContext, changes: dict[str, Any], narrow: str, field: str
) -> None:
    access = build_access(services)
    target = access.remember(key(ctx), ctx, validate_remember(rule("Rules are short")))
    narrowed = {
        "persona": key(ctx, persona="donna"),
        "projects": key(ctx, projects=(ctx.project_id,)),
        "writer": key(ctx),
    }[narrow]

    error = refused(services, ctx, lambda: access.update(narrowed, ctx, target.id, changes))

    assert isinstance(error, PermissionDenied) and error.http_status == 403
    assert error.to_payload()["error"]["field"] == field
    assert access.update(key(ctx, Role.ADMIN), ctx, target.id, changes).version == 2


def test_a_writer_may_reword_a_rule_at_an_admins_deny_but_not_touch_its_checks(
    services: Services, ctx: SessionContext
) -> None:
    access = build_access(services)
    raw = rule("No npm here", checks=CHECKS, enforcement="deny")
    target = access.remember(key(ctx, Role.ADMIN), ctx, validate_remember(raw))

    error = refused(services, ctx, lambda: access.update(key(ctx), ctx, target.id, {"checks": []}))

    assert isinstance(error, PermissionDenied) and error.http_status == 403
    # The merged version keeps 'deny', but the update does not change it: a writer's to make.
    reworded = access.update(key(ctx), ctx, target.id, {"body": "Never run npm in this repo."})
    assert reworded.version == 2


def proposal(services: Services, ctx: SessionContext) -> UUID:
    messages = read_file(GOLDEN)
    queue = CaptureService(services.store, services.embedder, services.memorules)
    queue.capture(ctx, candidates(messages, persona="donna"), len(messages))
    pending = ProposalService(services.store, services.embedder, services.memorules)
    return pending.proposals(ctx)[0][0].id


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ({"subject": "x"}, InvalidInput),
        ({"applies_to": {"persona": "bob", "scope": "galaxy"}}, InvalidInput),
        ({"applies_to": {"persona": "bob", "scope": "persona"}}, PermissionDenied),
    ],
)
def test_a_proposal_edit_is_parsed_before_its_reach_is_judged_and_a_refusal_writes_nothing(
    services: Services, ctx: SessionContext, edits: dict[str, Any], expected: type[PrismError]
) -> None:
    access = build_access(services)
    proposed = proposal(services, ctx)
    donna = key(ctx, persona="donna")

    error = refused(services, ctx, lambda: access.approve(donna, ctx, proposed, edits, None))

    assert type(error) is expected
    assert services.memory.reads.get(ctx, proposed)[0].status is Status.PROPOSED
    if expected is PermissionDenied:
        approved = access.approve(key(ctx, Role.ADMIN), ctx, proposed, edits, "for bob")
        assert services.memory.reads.get(ctx, approved.id)[0].status is Status.ACTIVE
