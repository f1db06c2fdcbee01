"""The capture review queue on both engines: proposals, idempotency, evidence, decisions."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from uuid import UUID

import pytest

from prism_memory.bootstrap import Services, build_services
from prism_memory.capture.proposals import candidates
from prism_memory.capture.transcript import read_file
from prism_memory.domain.contract.recall import BriefCreate, validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import AuditEventType, SessionContext, Status
from prism_memory.errors import Conflict, InvalidInput, NotFound
from prism_memory.services.capture_service import CaptureReport, CaptureService
from prism_memory.services.proposal_service import ProposalService
from prism_memory.settings import Settings
from prism_memory.trigraph.port import AuditFilter

GOLDEN = Path(__file__).parent / "golden" / "claude_code_session.jsonl"
SESSION = UUID("5c1d7a2e-0b4f-4c8e-9a61-3f2e8d7c6b50")


def capture(services: Services, ctx: SessionContext, dry_run: bool = False) -> CaptureReport:
    messages = read_file(GOLDEN)
    found = candidates(messages, persona="donna")
    queue = CaptureService(services.store, services.embedder, services.memorules)
    return queue.capture(ctx, found, len(messages), dry_run=dry_run)


def queue(services: Services) -> ProposalService:
    return ProposalService(services.store, services.embedder, services.memorules)


def events(services: Services, ctx: SessionContext, memorule_id: UUID) -> list[AuditEventType]:
    found = services.store.audit_events(
        ctx.tenant_id, AuditFilter(memorule_id=memorule_id, limit=100)
    )
    return [e.event for e in sorted(found, key=lambda e: e.seq)]


def test_capture_proposes_the_rules_and_merges_the_repeated_correction(
    services: Services, ctx: SessionContext
) -> None:
    report = capture(services, ctx)
    assert (report.messages, report.count("proposed"), report.count("evidence")) == (7, 3, 1)
    pending = queue(services).proposals(ctx)
    assert sorted(s.memorule_kind.value for _, s in pending if s.memorule_kind) == [
        "behavioral_rule",
        "correction",
        "preference",
    ]
    assert all(m.status is Status.PROPOSED for m, _ in pending)
    correction = next(
        m for m, s in pending if s.memorule_kind and s.memorule_kind.value == "correction"
    )
    signals = queue(services).evidence(ctx, correction.id)
    assert [e.event for e in signals] == [AuditEventType.PROPOSED, AuditEventType.EVIDENCE]
    assert all(e.evidence_signal_id.startswith(f"claude-code:{SESSION}/") for e in signals)
    # audit events name the Claude Code session
    audit = services.store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=correction.id))
    assert {e.written_by_session_id for e in audit} == {SESSION}


def test_re_capturing_the_same_transcript_proposes_nothing_new(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    before = services.store.stats(ctx.tenant_id)
    again = capture(services, dataclasses.replace(ctx, session_id=ctx.session_id))
    assert again.count("already_captured") == 4
    assert again.count("proposed") == again.count("evidence") == 0
    assert services.store.stats(ctx.tenant_id) == before


def test_a_dry_run_decides_everything_and_writes_nothing(
    services: Services, ctx: SessionContext
) -> None:
    report = capture(services, ctx, dry_run=True)
    assert (report.count("proposed"), report.count("evidence")) == (3, 1)
    assert queue(services).proposals(ctx) == []
    assert services.store.stats(ctx.tenant_id).get("memories", 0) == 0


def test_proposals_are_invisible_to_recall_and_briefs(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    for query in ("", "pip uv", "force-push to main", "small commits"):
        assert services.memory.recalls.recall(ctx, validate_recall({"query": query})).matches == []
        assert (
            services.memory.recalls.recall(
                ctx, validate_recall({"query": query, "source_type": "memorule"})
            ).matches
            == []
        )
    brief = services.brief.brief(ctx, BriefCreate(task="install the dependencies"))
    assert "No memorules apply to this context yet." in brief.markdown
    assert "pip" not in brief.markdown


def test_an_approved_proposal_is_recalled_and_audited(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    q = queue(services)
    (rule,) = [m for m, s in q.proposals(ctx) if s.subject == "Never force-push to main"]
    result = q.approve(ctx, rule.id, reason="yes, a standing rule")
    matches = services.memory.recalls.recall(ctx, validate_recall({"query": "force-push"})).matches
    assert [m.memory.id for m in matches] == [rule.id]
    assert matches[0].state.confidence.value == "observed"  # type: ignore[union-attr]
    assert events(services, ctx, rule.id) == [AuditEventType.PROPOSED, AuditEventType.APPROVED]
    assert result.version == 1
    assert services.memorules.verify_chain(ctx).ok


def test_approval_can_edit_the_text_and_applies_to_as_a_new_version(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    q = queue(services)
    (pref,) = [m for m, s in q.proposals(ctx) if s.subject == "I prefer small commits"]
    with pytest.raises(InvalidInput) as err:
        q.approve(ctx, pref.id, {"confidence": "asserted"})
    assert err.value.errors[0].code == "not_editable"
    result = q.approve(
        ctx,
        pref.id,
        {"subject": "Small commits", "applies_to": {"scope": "project"}},
        reason="for everyone",
    )
    memory, state = services.memory.reads.get(ctx, pref.id)
    assert (memory.status, result.version, state.subject) == (Status.ACTIVE, 2, "Small commits")
    assert state.applies_to is not None and state.applies_to.to_dict() == {"scope": "project"}


def test_an_invalid_edit_writes_nothing(services: Services, ctx: SessionContext) -> None:
    capture(services, ctx)
    q = queue(services)
    (pref,) = [m for m, s in q.proposals(ctx) if s.subject == "I prefer small commits"]
    with pytest.raises(InvalidInput) as err:
        q.approve(ctx, pref.id, {"subject": "x", "body": "short"})
    assert {e.field for e in err.value.errors} == {"subject", "body"}
    assert services.memory.reads.get(ctx, pref.id)[0].status is Status.PROPOSED
    assert events(services, ctx, pref.id) == [AuditEventType.PROPOSED]


def test_a_rejection_needs_a_reason_and_leaves_the_queue_for_good(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    q = queue(services)
    (pref,) = [m for m, s in q.proposals(ctx) if s.subject == "I prefer small commits"]
    with pytest.raises(InvalidInput):
        q.reject(ctx, pref.id, "  ")
    q.reject(ctx, pref.id, "a one-off remark")
    assert pref.id not in [m.id for m, _ in q.proposals(ctx)]
    assert events(services, ctx, pref.id) == [AuditEventType.PROPOSED, AuditEventType.REJECTED]
    audit = services.store.audit_events(ctx.tenant_id, AuditFilter(memorule_id=pref.id))
    assert audit[0].reason == "a one-off remark"
    with pytest.raises(Conflict):
        q.approve(ctx, pref.id)
    assert capture(services, ctx).count("proposed") == 0  # re-capture does not resurrect it


def test_merging_folds_the_proposal_into_a_rule_as_evidence(
    services: Services, ctx: SessionContext
) -> None:
    existing = services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "convention",
                "subject": "Use uv, not pip",
                "body": "This project manages its environment with uv.",
                "applies_to": {"scope": "project"},
            }
        ),
    )
    capture(services, ctx)
    q = queue(services)
    (corr,) = [
        m for m, s in q.proposals(ctx) if s.memorule_kind and s.memorule_kind.value == "correction"
    ]
    with pytest.raises(NotFound):
        q.merge(ctx, corr.id, UUID(int=1))
    q.merge(ctx, corr.id, existing.id, reason="same rule")
    assert services.memory.reads.get(ctx, corr.id)[0].status is Status.RETIRED
    assert events(services, ctx, corr.id)[-1] is AuditEventType.MERGED
    assert events(services, ctx, existing.id) == [AuditEventType.CREATED, AuditEventType.EVIDENCE]
    assert (
        services.memory.reads.get(ctx, existing.id)[1].version == 1
    )  # evidence, not a new version


def test_a_message_repeating_an_approved_rule_becomes_its_evidence(
    services: Services, ctx: SessionContext
) -> None:
    capture(services, ctx)
    q = queue(services)
    (rule,) = [m for m, s in q.proposals(ctx) if s.subject == "Never force-push to main"]
    q.approve(ctx, rule.id)
    # a later session says it again
    lines = GOLDEN.read_text().splitlines()
    again = [ln.replace("5c1d7a2e", "6d2e8b3f") for ln in lines]
    from prism_memory.capture.transcript import read_lines

    messages = read_lines(again)
    found = [c for c in candidates(messages, "donna") if "force-push" in c.message.text]
    report = CaptureService(services.store, services.embedder, services.memorules).capture(
        ctx, found, len(messages)
    )
    assert [(o.action, o.memorule_id) for o in report.outcomes] == [("evidence", rule.id)]
    assert services.memory.reads.get(ctx, rule.id)[1].version == 1
    assert len(q.evidence(ctx, rule.id)) == 2


def test_an_inferred_rule_with_operator_evidence_can_be_promoted(
    services: Services, ctx: SessionContext
) -> None:
    inferred = services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "behavioral_rule",
                "subject": "Never force-push to main",
                "body": "Never force-push to main.",
                "applies_to": {"persona": "donna", "scope": "project"},
                "confidence": "inferred",
            }
        ),
    )
    q = queue(services)
    with pytest.raises(Conflict):
        q.promote(ctx, inferred.id)  # no operator evidence yet
    report = capture(services, ctx)
    assert ("evidence", inferred.id) in [(o.action, o.memorule_id) for o in report.outcomes]
    result = q.promote(ctx, inferred.id)
    state = services.memory.reads.get(ctx, inferred.id)[1]
    assert (result.version, state.confidence.value) == (2, "observed")  # type: ignore[union-attr]
    assert events(services, ctx, inferred.id)[-1] is AuditEventType.PROMOTED
    with pytest.raises(Conflict):
        q.promote(ctx, inferred.id)  # already observed
    assert services.memorules.verify_chain(ctx).ok


def test_deciding_on_something_that_is_not_a_pending_proposal_is_refused(
    services: Services, ctx: SessionContext
) -> None:
    rule = services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "preference",
                "subject": "Short answers",
                "body": "Keep answers short.",
                "applies_to": {"scope": "project"},
            }
        ),
    )
    q = queue(services)
    with pytest.raises(Conflict):
        q.approve(ctx, rule.id)
    with pytest.raises(Conflict):
        q.reject(ctx, rule.id, "no")
    with pytest.raises(NotFound):
        q.approve(ctx, UUID(int=7))


def test_a_message_that_breaks_the_write_contract_is_skipped_and_the_rest_captured(
    services: Services, ctx: SessionContext
) -> None:
    found = candidates(read_file(GOLDEN), persona="donna")
    bad = dataclasses.replace(
        found[1], write=dataclasses.replace(found[1].write, subject="x" * 400)
    )
    service = CaptureService(services.store, services.embedder, services.memorules)
    report = service.capture(ctx, [found[0], bad, *found[2:]], 7)
    assert report.count("skipped") == 1
    skipped = next(o for o in report.outcomes if o.action == "skipped")
    assert skipped.errors[0].field == "subject"
    assert report.count("proposed") == 2  # the correction, once; the rule
    assert len(queue(services).proposals(ctx)) == 2


def test_proposals_store_applies_to_as_prism_remember_would(
    services: Services, ctx: SessionContext
) -> None:
    messages = read_file(GOLDEN)
    service = CaptureService(services.store, services.embedder, services.memorules)
    service.capture(ctx, candidates(messages, persona="  Donna "), len(messages))
    personas = {s.applies_to.persona for _, s in queue(services).proposals(ctx) if s.applies_to}
    assert personas == {"Donna"}  # trimmed, as prism_remember stores it (matching ignores case)


def test_two_captures_racing_on_one_transcript_write_each_message_once(
    engine_settings: Settings, ctx: SessionContext
) -> None:
    """Two hook runs at once (Stop fires after every turn): each message is written once,
    whatever the interleaving, and the repeated correction still merges."""
    messages = read_file(GOLDEN)
    found = candidates(messages, persona="donna")
    start = threading.Barrier(2)
    reports: list[CaptureReport] = []
    errors: list[BaseException] = []
    # Wired here, not in the threads: an exception there would leave the other thread
    # waiting at the barrier for ever instead of failing the test.
    wired = [build_services(engine_settings) for _ in range(2)]

    def run(own: Services) -> None:
        try:
            service = CaptureService(own.store, own.embedder, own.memorules)
            start.wait()
            reports.append(service.capture(ctx, found, len(messages)))
        except BaseException as exc:
            errors.append(exc)
            start.abort()  # the other thread stops waiting too

    threads = [threading.Thread(target=run, args=(own,)) for own in wired]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for own in wired:
        own.close()
    assert not errors, errors
    assert len(reports) == 2
    assert sum(r.count("proposed") for r in reports) == 3
    assert sum(r.count("evidence") for r in reports) == 1
    services = build_services(engine_settings)
    try:
        pending = queue(services).proposals(ctx)
        assert len(pending) == 3
        (corr,) = [
            m for m, s in pending if s.memorule_kind and s.memorule_kind.value == "correction"
        ]
        assert len(queue(services).evidence(ctx, corr.id)) == 2
        assert services.memorules.verify_chain(ctx).ok
    finally:
        services.close()


@pytest.mark.real_model
def test_with_the_real_model_a_reworded_repeat_becomes_evidence(
    db_path: Path, ctx: SessionContext
) -> None:
    from prism_memory.capture.transcript import read_lines
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=db_path, embedder="minilm", database_url=""))
    try:
        report = capture(services, ctx)
        assert (report.count("proposed"), report.count("evidence")) == (3, 1)
        later = {
            "type": "user",
            "uuid": "7f0c2b1a-0000-4000-8000-000000000001",
            "parentUuid": "a1",
            "sessionId": "7f0c2b1a-0000-4000-8000-00000000000a",
            "message": {"role": "user", "content": "No, don't use pip here, this project uses uv."},
        }
        action = {
            "type": "assistant",
            "uuid": "a1",
            "sessionId": "7f0c2b1a-0000-4000-8000-00000000000a",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]},
        }
        messages = read_lines([json.dumps(action), json.dumps(later)])
        found = candidates(messages, persona="donna")
        service = CaptureService(services.store, services.embedder, services.memorules)
        (outcome,) = service.capture(ctx, found, 1).outcomes
        assert outcome.action == "evidence" and (outcome.similarity or 0) >= 0.95
        assert len(queue(services).proposals(ctx)) == 3
    finally:
        services.close()
