"""What reads as no rule in a rule file (issue 30, precision): unfilled templates, reading
lists, the objects an enumerating lead-in names, definition lists of a specification, and
vocabularies; what stays with its rule (an "Exceptions:" label) or becomes rules (a numbered
list after a lead-in that names rules, a table's advice cell).

Every cue has a case it must catch and a case it must leave alone. Every fixture is
written here; none is copied from a third-party file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.records import SessionContext
from prism_memory.formats.rules_io import cues
from prism_memory.formats.rules_io.exporter import ExportFormat, applicable_memorules, render
from prism_memory.formats.rules_io.records import ImportReport, ParsedFile
from prism_memory.services.rules_import import ImportOptions, read_rule_files
from tests.conftest import ContextFactory
from tests.rules_helpers import operator_importer


def parse(tmp_path: Path, text: str, name: str = "AGENTS.md") -> ParsedFile:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    [parsed] = read_rule_files([path], tmp_path)
    return parsed


def rule_texts(parsed: ParsedFile) -> list[str]:
    return [u.text for u in parsed.units if u.kind is not None]


def skipped_texts(parsed: ParsedFile) -> list[str]:
    return [u.text for u in parsed.units if u.kind is None]


# -- unfilled templates ----------------------------------------------------------------


def test_unfilled_template_entries_are_not_rules_but_patterns_and_code_are(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Project\n\n"
        "- Name: [Your project name]\n"
        "- Owner: <TODO>\n"
        "- Deploy with {{deploy_command}}\n"
        "- Stack: [PROJECT_STACK]\n"
        "- TBD\n\n"
        "## Conventions\n\n"
        "- Name branches feature/<TICKET_ID>\n"
        "- Render strings with `{{ name }}` placeholders, never with `%`\n"
        "- Read [the guide](docs/guide.md) before changing the API\n",
    )
    assert rule_texts(parsed) == [
        "Name branches feature/<TICKET_ID>",
        "Render strings with `{{ name }}` placeholders, never with `%`",
        "Read [the guide](docs/guide.md) before changing the API",
    ]
    # nothing silently lost: the template lines are skipped units with their text
    assert "Name: [Your project name]" in skipped_texts(parsed)[0]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Describe [your architecture] here", True),
        ("Owner: <your name>", True),
        ("Use {{ project }} in titles", True),
        ("TODO", True),
        ("install: …", True),
        ("Note: wait... then retry the call", False),
        ("See [guide](docs/guide.md)", False),  # a link, not a blank
        ("Check `[your input]` in code", False),  # inside a code span
        ("Use `{{name}}` for interpolation", False),
        ("- [x] done", False),
    ],
)
def test_a_placeholder_is_template_text_outside_code(text: str, hit: bool) -> None:
    assert cues.placeholder(text) is hit


# -- reading lists ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("[Architecture](docs/arch.md)", True),
        ("API: [guide](docs/api.md), [reference](docs/ref.md)", True),
        ("Spec: <https://example.org/spec>", True),
        ("Read [the guide](docs/guide.md) before changing code.", False),
        ("Tests: `tests/unit/`", False),  # says where tests go: a convention
        ("Lint: `uv run ruff check`", False),
        ("[guide](docs/guide.md)\nAlways follow it.", False),
    ],
)
def test_only_links_make_a_reading_list(text: str, hit: bool) -> None:
    assert cues.links_only(text) is hit


def test_a_link_list_is_skipped_and_a_rule_with_a_link_is_kept(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Related documentation\n\n"
        "- [Architecture](docs/arch.md)\n"
        "- [Testing guide](docs/testing.md)\n\n"
        "## Conventions\n\n"
        "- Tests: `tests/unit/`\n"
        "- Follow [the style guide](docs/style.md) for naming.\n",
    )
    assert rule_texts(parsed) == [
        "Tests: `tests/unit/`",
        "Follow [the style guide](docs/style.md) for naming.",
    ]


# -- objects of an enumerating lead-in -------------------------------------------------


def test_the_objects_an_enumerating_lead_in_names_stay_with_it(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Agents\n\n"
        "All agents MUST follow `agents.md`, which includes:\n\n"
        "- Commit message rules\n"
        "- Type system notes for the compiler and its long explanation\n"
        "- Test layout\n\n"
        "## Pull requests\n\n"
        "Before you open one, make sure to:\n\n"
        "- Run the tests\n"
        "- Update the changelog\n",
    )
    texts = rule_texts(parsed)
    assert texts[0].startswith("All agents MUST follow `agents.md`, which includes:")
    assert "- Commit message rules" in texts[0] and "- Test layout" in texts[0]
    # must not regress: entries with a mood of their own after a non-enumerating lead-in
    assert texts[1:] == [
        "Before you open one, make sure to:\nRun the tests",
        "Before you open one, make sure to:\nUpdate the changelog",
    ]


# -- definition lists of a specification -----------------------------------------------


def test_a_specification_written_as_a_definition_list_is_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Language features\n\n"
        "- **Word order**: object, subject, verb\n"
        "- **Records**: Use `clone` and `freeze` to derive one from another\n"
        "- **Bindings**: each is used at most once\n"
        "- **Pipes**: `|>` composes functions\n\n"
        "## 変数\n\n"
        "- `let x = value` で不変の変数\n"
        "- `let mut x = value` で可変の変数\n"
        "- `x = other` で再代入\n",
    )
    assert rule_texts(parsed) == []
    assert len(skipped_texts(parsed)) == 7  # each entry reported, none lost


def test_definition_lists_of_conventions_and_commands_stay_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Code style\n\n"
        "- **Naming**: snake_case for functions, PascalCase for classes\n"
        "- **Indentation**: 4 spaces\n"
        "- **Imports**: sorted by isort\n\n"
        "## Commands\n\n"
        "- `make lint`: run the linters\n"
        "- `make test`: run the tests\n"
        "- `make docs`: build the documentation\n\n"
        "## Components\n\n"
        "- **Parser**: must never allocate per token\n"
        "- **Lexer**: keeps no state between files\n"
        "- **Emitter**: writes one file per module\n",
    )
    texts = rule_texts(parsed)
    assert texts[:6] == [
        "**Naming**: snake_case for functions, PascalCase for classes",
        "**Indentation**: 4 spaces",
        "**Imports**: sorted by isort",
        "`make lint`: run the linters",
        "`make test`: run the tests",
        "`make docs`: build the documentation",
    ]
    # a modal in one entry: the list is not a pure description, the rule is kept
    assert "**Parser**: must never allocate per token" in texts


# -- vocabularies ------------------------------------------------------------------------


def test_a_vocabulary_of_values_is_no_rule_but_a_rule_using_them_is(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Commits\n\n"
        "- Use conventional commit format: `type: subject`\n"
        "- Types: `feat`, `fix`, `docs`, `chore`\n"
        "- Prefix: `feat` or `fix` only\n",
    )
    assert rule_texts(parsed) == [
        "Use conventional commit format: `type: subject`",
        "Prefix: `feat` or `fix` only",
    ]


# -- numbered rules after a lead-in that names them ------------------------------------


def test_a_numbered_list_after_a_lead_in_naming_rules_is_one_rule_per_entry(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Commits\n\n"
        "Follow these rules for all commits:\n\n"
        "1. No emoji in messages\n"
        "2. Keep the subject under 50 characters\n\n"
        "## Release\n\n"
        "To cut a release:\n\n"
        "1. Bump the version\n"
        "2. Tag the commit\n",
    )
    texts = rule_texts(parsed)
    assert texts[:2] == [
        "Follow these rules for all commits:\nNo emoji in messages",
        "Follow these rules for all commits:\nKeep the subject under 50 characters",
    ]
    # must not regress: the steps of one task stay one rule, in order
    assert texts[2:] == ["To cut a release:\n1. Bump the version\n2. Tag the commit"]


# -- exceptions ----------------------------------------------------------------------------


EXCEPTIONS = (
    "# Rules\n\n"
    "## Tools\n\n"
    "- Never use `cat` to read files.\n\n"
    "**Exception:** build commands with no native equivalent.\n\n"
    "- Always run the tests before a commit.\n\n"
    "**The only exceptions** (all must hold):\n\n"
    "1. A documentation-only change\n"
    "2. The maintainer asked for it\n\n"
    "- Keep functions short.\n"
    "- Exceptions: generated parsers.\n"
    "- Unless told otherwise, reply in English.\n\n"
    "## Notes\n\n"
    "Exceptions: none recorded.\n"
)


def test_an_exception_stays_with_the_rule_it_qualifies(tmp_path: Path) -> None:
    parsed = parse(tmp_path, EXCEPTIONS)
    texts = rule_texts(parsed)
    assert texts == [
        "Never use `cat` to read files.\n\n"
        "**Exception:** build commands with no native equivalent.",
        "Always run the tests before a commit.\n\n"
        "**The only exceptions** (all must hold):\n"
        "1. A documentation-only change\n"
        "2. The maintainer asked for it",
        "Keep functions short.\nExceptions: generated parsers.",
        # must not regress: a conditional rule is a rule of its own
        "Unless told otherwise, reply in English.",
    ]
    first = next(u for u in parsed.units if u.kind is not None)
    assert (first.location.line_start, first.location.line_end) == (5, 7)
    # must not regress: an "Exceptions:" line with no rule before it in its section
    assert "Exceptions: none recorded." in skipped_texts(parsed)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Exceptions:", True),
        ("**Exception:** build commands", True),
        ("例外：テストコード", True),
        ("Ausnahmen: generierter Code", True),
        ("Unless told otherwise, reply in English.", False),
        ("Except for tests, use tabs.", False),
        ("Exceptional care is needed here: read twice.", False),
        ("Raise exceptions early", False),
    ],
)
def test_an_exception_label_is_a_noun_with_a_colon(text: str, hit: bool) -> None:
    assert (cues.EXCEPTION_LEAD.match(text.replace("**", "")) is not None) is hit


def run_import(services: Services, ctx: SessionContext, root: Path, name: str) -> ImportReport:
    files = read_rule_files([root / name], root)
    return operator_importer(services, ctx).run(ctx, files, ImportOptions())


def test_rules_with_their_exceptions_round_trip_and_reimport_writes_nothing(
    services: Services, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    ctx = make_ctx(project="one")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CLAUDE.md").write_text(EXCEPTIONS, encoding="utf-8")
    first = run_import(services, ctx, tmp_path / "src", "CLAUDE.md")
    assert first.counts()["written"] == 4
    [exported] = render(ExportFormat.CLAUDE_MD, applicable_memorules(services.store, ctx), ctx)
    out = tmp_path / "out"
    out.mkdir()
    (out / exported.name).write_text(exported.text, encoding="utf-8")
    again = run_import(services, ctx, out, exported.name)
    counts = again.counts()
    assert counts["written"] + counts["updated"] + counts["notes"] == 0
    assert counts["unchanged"] == 4
    fresh = make_ctx(tenant="elsewhere", project="two")
    run_import(services, fresh, out, exported.name)
    bodies = sorted(m.body for m in _bodies(services, ctx))
    assert sorted(m.body for m in _bodies(services, fresh)) == bodies
    assert any("The only exceptions" in b for b in bodies)


def _bodies(services: Services, ctx: SessionContext) -> list[object]:
    return [state for _memory, state in applicable_memorules(services.store, ctx)]


# -- Japanese request and "shall" forms --------------------------------------------------


def test_japanese_request_and_shall_forms_are_rules_and_statements_are_not(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "このプロジェクトは独自のビルドツールを使用しています。\n\n"
        "## 文書\n\n"
        "- 要件の正本は `docs/requirements.md` とする。\n\n"
        "## 開始\n\n"
        "以下のファイルを読み込んでください：\n\n"
        "- 設計: `docs/design.md`\n"
        "- 手順: `docs/steps.md`\n",
    )
    assert rule_texts(parsed) == [
        "要件の正本は `docs/requirements.md` とする。",
        "以下のファイルを読み込んでください：\n- 設計: `docs/design.md`\n- 手順: `docs/steps.md`",
    ]
    # must not regress: a statement about the project stays descriptive
    assert skipped_texts(parsed) == ["このプロジェクトは独自のビルドツールを使用しています。"]


def test_a_roadmap_describes_but_a_hard_rule_under_it_is_kept(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Future services\n\n"
        "- Notification service for mobile clients\n"
        "- Billing with usage-based plans\n"
        "- Never ship a service without a health check\n"
        "- Always version the public API\n",
    )
    # the planned services are not rules even among rules; the hard rules are kept
    assert rule_texts(parsed) == [
        "Never ship a service without a health check",
        "Always version the public API",
    ]
