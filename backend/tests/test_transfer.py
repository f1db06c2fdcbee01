"""Moving a store (issue 6): JSON Lines out of one engine and into another, nothing lost.

The round trip SQLite -> PostgreSQL -> SQLite must give back the same bytes (every memory,
version, vector, audit event and idempotency claim), chains that verify on every engine, and
the same recall answers. A bad file writes nothing.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prism_memory.bootstrap import Services, build_services
from prism_memory.cli.main import cli
from prism_memory.domain.contract.recall import BriefCreate, validate_recall
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.errors import Conflict, InvalidInput
from prism_memory.serializers import recall_dict
from prism_memory.services.transfer import export_store, import_store
from prism_memory.settings import Settings, load_settings
from tests.conftest import ContextFactory

RECALLS: list[dict[str, Any]] = [
    {"query": "", "top_k": 50},
    {"query": "review migrations", "top_k": 5},
    {"query": "timestamps", "source_type": "memorule", "confidence": ["observed"]},
    {"query": "deploys", "include_inapplicable": True, "top_k": 20},
]


def rule(subject: str, kind: str = "behavioral_rule", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memorule",
        "memorule_kind": kind,
        "subject": subject,
        "body": f"{subject}: because the team agreed so after the last incident.",
        "applies_to": {"surface": "python"},
        **extra,
    }


def populate(services: Services, make_ctx: ContextFactory) -> list[Any]:
    """A store with every kind of record and history; returns the contexts used."""
    donna = make_ctx(tenant="acme", project="api", persona="donna", surface="python")
    web = make_ctx(tenant="acme", project="web", persona="hal")
    other = make_ctx(tenant="globex", project="api", persona="donna")
    mem = services.memory
    mem.writes.remember(
        donna,
        validate_remember(
            {"body": "The staging database is rebuilt every night.", "subject": "Ops"}
        ),
    )
    kinds = ["behavioral_rule", "feedback", "preference", "correction", "convention"]
    scopes = ["global", "org", "project", "persona", None]
    ids = []
    for i, (kind, scope) in enumerate(zip(kinds, scopes, strict=True)):
        applies: dict[str, str] = {"surface": "python", "persona": "donna"}
        if scope:
            applies["scope"] = scope
        ids.append(
            mem.writes.remember(
                donna,
                validate_remember(
                    rule(
                        f"Review migrations twice {i}",
                        kind,
                        applies_to=applies,
                        confidence=["observed", "inferred", "asserted"][i % 3],
                        evidence_signal_id=f"sig-{i}" if i % 2 else None,
                        idempotency_key=f"key-{i}",
                    )
                ),
            ).id
        )
    mem.lifecycle.update(
        donna, ids[0], {"body": "Two reviewers for every migration, no exceptions."}
    )
    mem.lifecycle.update(donna, ids[0], {"confidence": "observed"}, reason="seen in production")
    mem.lifecycle.retire(donna, ids[1], "no longer true", idempotency_key="retire-1")
    mem.lifecycle.restore(donna, ids[1], "true again")
    mem.lifecycle.retire(donna, ids[2], "superseded by a lint rule")
    mem.writes.remember(
        donna,
        validate_remember(rule("Store timestamps in UTC", "correction", corrects=str(ids[3]))),
    )
    mem.writes.remember(
        web, validate_remember(rule("Deploys wait for green builds", applies_to={"scope": "org"}))
    )
    mem.writes.remember(
        web, validate_remember({"body": "Frontend deploys go out on Tuesdays.", "namespace": "ops"})
    )
    mem.writes.remember(other, validate_remember(rule("Globex keeps its own rules")))
    mem.recalls.recall(donna, validate_recall({"query": "migrations", "source_type": "memorule"}))
    services.brief.brief(web, BriefCreate(task="deploy the web app"))
    return [donna, web, other]


def dump_text(services: Services) -> str:
    services.ledger.flush()  # receipts this process still holds
    out = io.StringIO()
    export_store(services.store, out, None)
    return out.getvalue()


def body(text: str) -> list[str]:
    """The lines of an export without its header (which carries the export time)."""
    return text.splitlines()[1:]


def recalls(services: Services, contexts: list[Any]) -> list[Any]:
    return [
        recall_dict(services.memory.recalls.recall(c, validate_recall(r)))
        for c in contexts
        for r in RECALLS
    ]


@pytest.mark.postgres
def test_sqlite_to_postgres_to_sqlite_gives_back_every_byte_chain_and_answer(
    tmp_path: Path, pg_url: str, make_ctx: ContextFactory
) -> None:
    engines = [
        load_settings(db=tmp_path / "first.db", embedder="fake", database_url=""),
        load_settings(database_url=pg_url, embedder="fake"),
        load_settings(db=tmp_path / "back.db", embedder="fake", database_url=""),
    ]
    stores = [build_services(s) for s in engines]
    try:
        contexts = populate(stores[0], make_ctx)
        dumps = [dump_text(stores[0])]
        for target in stores[1:]:
            report = import_store(target.store, io.StringIO(dumps[-1]))
            assert report.counts == json.loads(dumps[-1].splitlines()[-1])["counts"]
            dumps.append(dump_text(target))
        assert body(dumps[0]) == body(dumps[1]) == body(dumps[2])
        counts = json.loads(dumps[0].splitlines()[-1])["counts"]
        served = counts.pop("served_receipts")
        assert counts == {"memories": 10, "states": 12, "audit_events": 14, "idempotency": 6}
        verified = [s.memorules.verify_chain(contexts[0]) for s in stores]
        # Every acme event (globex has the 14th) has its content checked; every receipt moved.
        assert [(v.ok, v.content_checked, v.served and v.served.events) for v in verified] == [
            (True, 13, served)
        ] * 3
        answers = [recalls(s, contexts) for s in stores]
        assert answers[0] == answers[1] == answers[2]
        assert any(a["count"] for a in answers[0])
        for s in stores:
            for ctx in contexts:
                assert s.memorules.verify_chain(ctx).ok
                assert s.store.stats(ctx.tenant_id) == stores[0].store.stats(ctx.tenant_id)
        # Writes continue the imported chains, and idempotency claims still replay.
        donna = contexts[0]
        first = rule(
            "Review migrations twice 0",
            applies_to={"surface": "python", "persona": "donna", "scope": "global"},
            confidence="observed",
            idempotency_key="key-0",
        )
        assert stores[1].memory.writes.remember(donna, validate_remember(first)).replayed
        stores[1].memory.writes.remember(
            donna, validate_remember(rule("A rule written after the move"))
        )
        assert stores[1].memorules.verify_chain(donna).ok
    finally:
        for s in stores:
            s.close()


def test_an_export_of_one_tenant_holds_only_that_tenant(
    services: Services, make_ctx: ContextFactory
) -> None:
    contexts = populate(services, make_ctx)
    out = io.StringIO()
    report = export_store(services.store, out, contexts[2].tenant_id)
    assert report.tenants == [contexts[2].tenant_id]
    records = [json.loads(line) for line in out.getvalue().splitlines()[1:-1]]
    assert {r["tenant_id"] for r in records} == {str(contexts[2].tenant_id)}
    assert report.counts == {
        "memories": 1,
        "states": 1,
        "audit_events": 1,
        "idempotency": 0,
        "served_receipts": 0,
    }


def edits() -> list[tuple[str, Any]]:
    """Ways to spoil an export, each with the error code the import must answer."""

    def drop_end(lines: list[str]) -> list[str]:
        return lines[:-1]

    def edit_audit(lines: list[str]) -> list[str]:
        i = next(n for n, line in enumerate(lines) if '"type":"audit"' in line)
        record = json.loads(lines[i])
        record["written_by_persona"] = "mallory"
        return [*lines[:i], json.dumps(record), *lines[i + 1 :]]

    def drop_audit(lines: list[str]) -> list[str]:
        i = next(n for n, line in enumerate(lines) if '"type":"audit"' in line)
        return [*lines[:i], *lines[i + 1 :]]

    def unknown_field(lines: list[str]) -> list[str]:
        record = json.loads(lines[1])
        record["colour"] = "blue"
        return [lines[0], json.dumps(record), *lines[2:]]

    def not_an_export(lines: list[str]) -> list[str]:
        return lines[1:]

    return [
        (drop_end, "truncated"),
        (edit_audit, "broken_chain"),
        (drop_audit, "broken_chain"),
        (unknown_field, "invalid_record"),
        (not_an_export, "invalid_record"),
    ]


@pytest.mark.parametrize(("spoil", "code"), edits(), ids=lambda v: getattr(v, "__name__", v))
def test_a_spoiled_export_is_refused_and_writes_nothing(
    tmp_path: Path,
    engine_settings: Settings,
    make_ctx: ContextFactory,
    spoil: Any,
    code: str,
) -> None:
    source = build_services(load_settings(db=tmp_path / "src.db", embedder="fake", database_url=""))
    target = build_services(engine_settings)
    try:
        contexts = populate(source, make_ctx)
        lines = spoil(dump_text(source).splitlines())
        with pytest.raises(InvalidInput) as caught:
            import_store(target.store, io.StringIO("\n".join(lines) + "\n"))
        assert [e.code for e in caught.value.errors] == [code]
        assert target.store.tenants() == []
        assert all(target.store.stats(c.tenant_id)["memories"] == 0 for c in contexts)
    finally:
        source.close()
        target.close()


def test_importing_a_tenant_the_store_already_holds_is_a_conflict(
    services: Services, make_ctx: ContextFactory
) -> None:
    populate(services, make_ctx)
    text = dump_text(services)
    before = dump_text(services)
    with pytest.raises(Conflict):
        import_store(services.store, io.StringIO(text))
    assert body(dump_text(services)) == body(before)


@pytest.mark.postgres
def test_the_cli_moves_a_store_from_sqlite_to_postgres(
    tmp_path: Path, pg_url: str, make_ctx: ContextFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PRISM_DB", "PRISM_DATABASE_URL", "PRISM_TENANT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRISM_EMBEDDER", "fake")
    db = tmp_path / "laptop.db"
    source = build_services(load_settings(db=db, embedder="fake", database_url=""))
    populate(source, make_ctx)
    source.close()
    runner = CliRunner()
    dumped = runner.invoke(cli, ["dump", "--db", str(db), "--out", str(tmp_path / "all.jsonl")])
    assert dumped.exit_code == 0, dumped.output
    migrated = runner.invoke(cli, ["migrate", "--database-url", pg_url, "--json"])
    assert json.loads(migrated.output)["schema_version"] >= 1
    loaded = runner.invoke(
        cli, ["import", str(tmp_path / "all.jsonl"), "--database-url", pg_url, "--json"]
    )
    assert loaded.exit_code == 0, loaded.output
    result = json.loads(loaded.output)
    assert result["counts"]["memories"] == 10 and len(result["chains"]) == 2
    verified = runner.invoke(
        cli, ["audit", "verify", "--database-url", pg_url, "--tenant", "acme", "--json"]
    )
    assert json.loads(verified.output)["ok"] is True
    again = runner.invoke(cli, ["import", str(tmp_path / "all.jsonl"), "--database-url", pg_url])
    assert again.exit_code == 1 and "already has data" in again.output
