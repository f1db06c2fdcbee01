"""The CLI's bulk work on a project — rule-file import, rule export, transcript capture — goes
through :class:`AccessService` with the acting key, like every other door (issue 16): a key that
may not write imports or captures nothing, and an export holds only what the key may see.

The CLI acts with the local operator key (:mod:`prism_memory.cli.acting`); these tests act with
narrower keys to show the checks are really made on this path.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from prism_memory.bootstrap import Services, build_access
from prism_memory.capture.proposals import candidates
from prism_memory.capture.transcript import read_file
from prism_memory.domain.access import ApiKey, Role, operator_key
from prism_memory.domain.records import SessionContext
from prism_memory.errors import PermissionDenied
from prism_memory.services.rules_import import ImportOptions, RulesImporter, read_rule_files

GOLDEN = Path(__file__).parent / "golden" / "claude_code_session.jsonl"
RULES = """\
# Conventions

- Always run the whole test suite before asking for review.
- Use snake_case for module names in this repository.
"""


def key_of(ctx: SessionContext, role: Role, persona: str | None = None) -> ApiKey:
    return dataclasses.replace(
        operator_key(ctx.tenant_id), key_id=f"k-{role.value}", role=role, persona=persona
    )


def import_as(
    services: Services, ctx: SessionContext, key: ApiKey, folder: Path, **applies: str
) -> int:
    (folder / "CLAUDE.md").write_text(RULES, encoding="utf-8")
    importer = RulesImporter(build_access(services), key, services.store)
    files = read_rule_files([folder / "CLAUDE.md"], folder)
    report = importer.run(ctx, files, ImportOptions(applies_to=applies))
    return sum(1 for item in report.items if item.id is not None)


def stored(services: Services, ctx: SessionContext) -> int:
    return services.store.stats(ctx.tenant_id)["memories"]


def test_a_writer_imports_rule_files(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    assert import_as(services, ctx, key_of(ctx, Role.WRITER), tmp_path) == 2
    assert stored(services, ctx) == 2


@pytest.mark.parametrize(
    ("role", "persona", "applies"),
    [
        (Role.READER, None, {}),
        (Role.WRITER, "texi", {"persona": "donna"}),  # a persona key writes its own rules only
    ],
)
def test_a_key_that_may_not_write_these_rules_imports_nothing_not_even_a_dry_run(
    services: Services,
    ctx: SessionContext,
    tmp_path: Path,
    role: Role,
    persona: str | None,
    applies: dict[str, str],
) -> None:
    with pytest.raises(PermissionDenied):
        import_as(services, ctx, key_of(ctx, role, persona), tmp_path, **applies)
    assert stored(services, ctx) == 0


def test_an_export_holds_only_the_rules_the_key_may_see(
    services: Services, ctx: SessionContext, tmp_path: Path
) -> None:
    operator = key_of(ctx, Role.ADMIN)
    import_as(services, ctx, operator, tmp_path, scope="persona", persona="donna")
    access = build_access(services)
    donna = dataclasses.replace(ctx, persona="donna")
    assert len(access.applicable_rules(operator, donna)) == 2
    assert len(access.applicable_rules(key_of(ctx, Role.READER), donna)) == 2
    # A reader bound to another persona cannot see donna's persona rules.
    assert access.applicable_rules(key_of(ctx, Role.READER, "texi"), donna) == []


def test_capture_needs_a_key_that_may_write(services: Services, ctx: SessionContext) -> None:
    messages = read_file(GOLDEN)
    found = candidates(messages, persona="donna")
    access = build_access(services)
    with pytest.raises(PermissionDenied):
        access.capture(key_of(ctx, Role.READER), ctx, found, len(messages))
    assert stored(services, ctx) == 0
    report = access.capture(key_of(ctx, Role.WRITER), ctx, found, len(messages))
    assert report.count("proposed") == 3 and stored(services, ctx) == 3
