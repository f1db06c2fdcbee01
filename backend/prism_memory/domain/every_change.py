"""Rules that apply to every change in a repository, whatever the task (DESIGN §13).

A rule file mixes rules about one kind of work ("use ``it.effect`` for Effect tests") with
rules about the work itself: how to commit, how to title a pull request, what to run before
handing a change over, how code is formatted. The second kind applies to every task, and a
task's words rarely name it: "Add a timeout to the metadata call" never says "commit", so no
ranking by the task can find the commit-message rule. The brief gives such rules a tier of
their own, ahead of the rest.

A rule is recognised from what it is about, in the languages rule files are written in (as
:mod:`prism_memory.formats.rules_io.cues` reads them: English, Chinese, Japanese, Korean,
Spanish, German, French, Portuguese, Russian):

* a moment of the change's life: committing, pushing, a pull or merge request, a changelog
  or changeset entry, review;
* a check over the whole change: formatting and indentation, linting, type checking,
  pre-commit hooks, CI, validation;
* the end of a task: before finishing or submitting, at the end of a task, when done;
* a quantifier over changes: every change, all contributions, each pull request, diffs.

Each pattern is a plain alternation with no nested repetition: linear in the text.
"""

from __future__ import annotations

import re
from typing import Final

_LIFECYCLE: Final = re.compile(
    r"\b(?:commit\w*|push(?:ing|ed|es)?|pull[- ]requests?|merge[- ]requests?|change-?logs?"
    r"|changesets?|sign[- ]off)\b"
    r"|\b(?:PRs?|MRs?)\b"
    r"|\b(?:committen|gepusht|pushen|änderungsprotokoll)\b"
    r"|\b(?:committer|demande de (?:fusion|tirage)|journal des modifications)\b"
    r"|\b(?:confirmaci[oó]n|solicitud de (?:extracci[oó]n|fusi[oó]n)|registro de cambios)\b"
    r"|\b(?:solicita[çc][ãa]o de (?:mesclagem|pull)|registro de altera[çc][õo]es)\b"
    r"|(?<![а-яё])(?:коммит\w*|пул+-?реквест\w*|мерж-?реквест\w*|запуш\w*)(?![а-яё])"
    r"|提交|合并请求|拉取请求|变更日志|更新日志"
    r"|コミット|プルリク|マージリクエスト|プッシュ|変更履歴"
    r"|커밋|풀 ?리퀘스트|머지 ?리퀘스트|푸시|변경 ?로그",
    re.IGNORECASE,
)
# Case-sensitive: "PR", "CI" and "MR" in capitals only.
_ACRONYMS: Final = re.compile(r"\b(?:PRs?|MRs?|CI)\b")
# Formatting, linting, type checking, pre-commit hooks, validation: as something to run or
# follow (a formatter, "format your code", a command in backticks that does it), not the
# noun ("file format", "linting rules", "validate your hypotheses").
_WHOLE_CHANGE_CHECK: Final = re.compile(
    r"\b(?:formatters?|re-?format\w*|auto-?format\w*|indentation|linters?|type[- ]?check\w*"
    r"|pre-commit|validation)\b"
    r"|\bformat (?:the |your |all |any |new )?(?:code|changes?|files?|sources?)\b"
    r"|`[^`\n]{0,60}\b(?:fmt|format|lint|typecheck|pre-commit|prek|check|validate)\b[^`\n]{0,60}`"
    r"|\b(?:formatieren|formatierung|einrückung|typprüfung)\b"
    r"|\b(?:formater|formatage)\b"
    r"|\b(?:formatear|formateo|indentaci[oó]n)\b"
    r"|\b(?:formatar|formata[çc][ãa]o|indenta[çc][ãa]o)\b"
    r"|(?<![а-яё])(?:форматир\w*|линтер\w*|отступ\w*)(?![а-яё])"
    r"|格式化|缩进|代码检查|静态检查|类型检查"
    r"|フォーマット|整形|インデント|リント|型チェック"
    r"|포맷|포매터|린트|린터|들여쓰기|타입 ?체크",
    re.IGNORECASE,
)
_TASK_END: Final = re.compile(
    r"\bbefore (?:you )?(?:finish\w*|submit\w*|hand\w* (?:it|them|back|over)|open\w* a"
    r"|send\w*|request\w* (?:a )?review|declar\w*|consider\w*|mark\w*)"
    r"|\b(?:at|by) the end of (?:a|the|each|every|your) (?:task|change|session)\b"
    r"|\bwhen (?:you are |you're )?(?:done|finished)\b|\bready (?:to|for) (?:for )?review\b"
    r"|\bbefore (?:code )?review\b"
    r"|\b(?:bevor du (?:fertig|abschließ\w*|einreich\w*)|vor dem (?:abschluss|einreichen))\b"
    r"|\bavant de (?:terminer|finir|soumettre|rendre)\b"
    r"|\bantes de (?:terminar|finalizar|enviar|entregar)\b"
    r"|(?<![а-яё])(?:перед (?:завершением|отправкой|сдачей))(?![а-яё])"
    r"|完成(?:任务)?(?:之?前|后)|结束(?:之?前|后)|任务(?:结束|完成)"
    r"|完了(?:する)?前|終了(?:する)?前|作業の最後|完了したら"
    r"|완료 ?전|작업이 끝나면|마치기 전",
    re.IGNORECASE,
)
_EVERY_CHANGE: Final = re.compile(
    r"\b(?:all|every|each|any)(?: \w+)? (?:changes?|contributions?|diffs?|patch(?:es)?)\b"
    r"|\b(?:keep|minimi[sz]e|small|minimal) (?:the |your )?diffs?\b"
    r"|\b(?:jede|alle) (?:änderung(?:en)?|beiträge?)\b"
    r"|\b(?:chaque (?:modification|changement|contribution)|tou(?:s|tes) les (?:changements"
    r"|modifications|contributions))\b"
    r"|\b(?:cada cambio|todos los cambios|cada contribuci[oó]n)\b"
    r"|\b(?:cada (?:altera[çc][ãa]o|mudan[çc]a)|todas as (?:altera[çc][õo]es|mudan[çc]as))\b"
    r"|(?<![а-яё])(?:каждое изменение|все изменения|любое изменение)(?![а-яё])"
    r"|所有(?:的)?(?:更改|改动|变更|修改)|每个?(?:更改|改动|变更|修改)"
    r"|(?:すべて|全て)の変更|各変更|모든 변경",
    re.IGNORECASE,
)
_PATTERNS: Final = (_LIFECYCLE, _ACRONYMS, _WHOLE_CHANGE_CHECK, _TASK_END, _EVERY_CHANGE)


def applies_to_every_change(subject: str, body: str) -> bool:
    """Whether a rule is about the work itself rather than one kind of task: committing,
    pull requests, formatting and checks over the whole change, what to do before finishing,
    or a rule stated for every change.

    Args:
        subject: the rule's subject (for an imported rule, its section heading and first
            sentence).
        body: the rule's text.
    """
    text = f"{subject}\n{body}"
    return any(p.search(text) for p in _PATTERNS)
