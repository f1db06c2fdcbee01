"""Which rules apply to every change, whatever the task: the words of committing, pull
requests, whole-change checks, the end of a task and "every change", in several languages."""

from __future__ import annotations

import pytest

from prism_memory.domain.every_change import applies_to_every_change


@pytest.mark.parametrize(
    "subject",
    [
        "Commit Messages: Use an optional component scope and a lowercase imperative summary",
        "PR conventions: PR titles should start with the area in brackets",
        "Always run these scripts before pushing code or creating a PR",
        "Create a changeset for runtime behavior changes",
        "Run `make check` before you finish",
        "Run `uv run pre-commit` at the end of a task if you changed files",
        "Code Style: Use tabs for indentation in all python code",
        "Format your code with the project's formatter",
        "Every change needs a test",
        "Requirements of all contributions: All changes need to be type-safe",
        "Keep diffs as minimal as possible",
        "Both scripts must pass with no errors before code review",
        "提交信息使用约定式提交格式",
        "コミットメッセージは英語で書くこと",
        "커밋 메시지는 명령형으로 작성하세요",
        "Vor dem Commit immer formatieren",
        "Avant de soumettre, lancez les tests",
        "Antes de enviar, ejecuta el linter",
        "Antes de finalizar, rode os testes",
        "Перед отправкой запускайте линтер",
        "所有更改都需要测试",
    ],
)
def test_rules_about_the_work_itself_are_recognised(subject: str) -> None:
    assert applies_to_every_change(subject, "")


@pytest.mark.parametrize(
    "subject",
    [
        "Testing: Use `it.effect` for Effect-returning tests",
        "Storage Format: file format, B-trees, pages",
        "Adding Linting Rule: Implement using the visitor pattern",
        "Validate your hypotheses before fixing a bug",
        "Use async python",
        "Never mock anything in tests, always use real objects",
        "Docstrings are rendered as Markdown, not reStructuredText",
        "测试中不要使用模拟对象",
        "Verwende immer echte Objekte in Tests",
    ],
)
def test_rules_about_one_kind_of_work_are_not(subject: str) -> None:
    assert not applies_to_every_change(subject, "")


def test_the_body_counts_as_well_as_the_subject() -> None:
    assert applies_to_every_change("Git workflow", "Squash your commits before merging.")
