"""Is a piece of a rule file a rule, and which kind: a deterministic classifier (no model).

Evidence, not one keyword. :func:`evidence` reads a text's mood and cues — an imperative
verb first (after "When X, …", "Then", "Label:"; :mod:`.english`), hard modals (always,
never, must, do not, only, required), soft ones (should, ensure, avoid), preference words
(prefer, ideally, where possible), convention cues (naming, layout, formatting, the tool or
command used), correction cues (deprecated, anti-pattern, pitfall) and descriptive openers
("This file…", "The X is…", "See …"); the heading path adds what the author's headings say
("Code style", "Anti-patterns", "Overview"; :mod:`.headings`) and the file's dialect a small
prior. A list entry that opens with a negation and no verb ("No inline styles", "Pas de …")
is a prohibition unless a heading above it describes; a bold "**Label:** value" entry whose
value names what to use ("**Lingua:** Italiano", "**Framework**: FastAPI") is a convention
(:func:`setting`).

- :func:`rule_likeness` turns that into a score in [0, 1]; :data:`RULE_THRESHOLD` and up
  reads as a rule (every keep/skip decision of the splitter compares with it, or with the
  threshold an import is given). It is public so that ranking can reuse it as a prior.
- :func:`classify` picks the kind of a rule, first match wins: correction, feedback,
  preference, behavioral_rule (hard modal), convention (cues or a conventions/style
  heading), behavioral_rule (any other instruction) — the order the corpus guideline in
  ``bench/rules_files/README.md`` uses. Descriptive text gets None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from prism_memory.domain.records import MemoruleKind
from prism_memory.formats.rules_io import cues, grammar
from prism_memory.formats.rules_io.english import (
    ACTIONS,
    IMPERATIVE,
    LABEL,
    lead_word,
    verb_after_clause,
)
from prism_memory.formats.rules_io.headings import (
    correcting,
    describes,
    kind_of_heading,
    logs,
    mixed,
    names_rules,
    negating,
    template,
)

RULE_THRESHOLD: Final = 0.5  # the rule_likeness from which a piece of a file is a rule
# `prism import-rules --lenient`: also every list entry that no cue marks either way (a tech
# stack, a list of patterns), 0.2 to start + 0.15 for an entry of a list (see rule_likeness)
LENIENT_THRESHOLD: Final = 0.35

_CODE: Final = re.compile(r"`+[^`]*`+")
_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_HARD: Final = re.compile(
    r"\b(?:always|never|must|mustn'?t|do not|don'?t|shall|required|requires?|mandatory"
    r"|forbidden|prohibited|not allowed|under no circumstances)\b"
    r"|\b(?:it'?s|it is) (?:important|critical|essential|necessary) to\b"
    r"|^\W*(?:important|critical|mandatory)\b"
    r"|(?:^\W*|[:;,]\s*|\b(?:should|must|may|can|to|and|or|then)\s+)only\b"
    r"|\bonly (?:when|if|after|before|for|in|use|run|change|add|import|apply|commit)\b",
    re.IGNORECASE,
)
_SOFT: Final = re.compile(
    r"\b(?:should(?:n'?t)?|ensure|make sure|avoid|need to|needs to|have to|has to|expected to)\b",
    re.IGNORECASE,
)
_PREFER: Final = re.compile(
    r"\b(?:prefer(?:red|ably)?|favou?r(?:ed)?|ideally|where possible|when possible"
    r"|if possible|whenever possible|consider|(?:it'?s|is) better to|better to"
    r"|it'?s best|recommended)\b",
    re.IGNORECASE,
)
_CORRECTION: Final = re.compile(
    r"\b(?:deprecated|anti-?patterns?|pitfalls?|gotchas?|mistakes?|will break|breaks the"
    r"|this is bad|bad code|do not generate)\b",
    re.IGNORECASE,
)
_FEEDBACK: Final = re.compile(
    r"^\W*feedback\b|\blast time\b|\byou (?:did|forgot|keep|kept|missed)\b", re.IGNORECASE
)
# The names of the languages rule files are written in, in those languages and in English.
_LANGUAGES: Final = (
    r"english|englisch|anglais|ingl[ée]s|inglese|inglês|英语|英文|英語|영어|deutsch|german"
    r"|allemand|alem[áã]n|alemão|tedesco|德语|ドイツ語|독일어|fran[çc]ais|french|französisch"
    r"|franc[ée]s|francês|francese|法语|フランス語|프랑스어|espa[ñn]ol|spanish|spanisch|espagnol"
    r"|espanhol|spagnolo|西班牙语|スペイン語|스페인어|portugu[êe]se?s?|português|portugiesisch"
    r"|portugais|portugués|portoghese|葡萄牙语|italiano|italian|italienisch|italien|意大利语"
    r"|简体中文|繁體中文|中文|chinese|chinesisch|chinois|chino|chin[êe]s|cinese|汉语|日本語"
    r"|japanese|japanisch|japonais|japon[ée]s|giapponese|日语|한국어|korean|koreanisch"
    r"|cor[ée]en|coreano|韩语|русский|russian|russisch|russe|ruso|russo|俄语"
)
_CONVENTION: Final = re.compile(
    r"\b(?:pascal ?case|camel ?case|snake[_ ]case|kebab[- ]case|upper_snake_case|title case"
    r"|sentence case|lower ?case with|naming|named|prefix(?:ed)?|suffix(?:ed)?"
    r"|(?:variable|function|method|class|file|branch|test|module) names?"
    r"|indent(?:ation|ed)?|tabs|spaces|line length|\b\d{1,5}[- ]char(?:acter)?s?(?: lines)?"
    r"|trailing (?:spaces|whitespace|commas?)|whitespace|curly braces|semicolons?"
    r"|(?:single|double) quotes|format(?:ted|ter|ting)?|code style|coding style|style guide"
    r"|\b\w{1,30}[- ]style|psr-\d+|pep ?8|commit messages?|conventional commits|copyright header"
    r"|(?:are|is) (?:marked|named|prefixed|suffixed|kept|stored|placed|located)"
    r" (?:with|in|under|as)"
    r"|(?:lives?|located|goes|reside|resides) (?:in|under|at)|is the \w+ command"
    r"|commands?\b[^.]{0,200}?\b(?:run|executed|invoked)\b"
    # which language a thing is written in ("Commits are in English", "Le code et les
    # commits sont en anglais", "I commenti sono in italiano"): a convention
    r"|(?:is|are|est|sont|es|son|é|são|è|sono|ist|sind)\s+(?:written\s+|rédigés?\s+|escritos?\s+"
    r"|scritti?\s+|geschrieben\s+)?(?:in|en|em|auf)\s+(?:" + _LANGUAGES + r")\b)",
    re.IGNORECASE,
)
_TOOL_STATEMENT: Final = re.compile(
    r"^(?:we use|uses?\s+[*`]|(?:tests?|all commands|commands|builds?)\s+(?:use|run)\b"
    r"|all\s+[\w.-]+\s+files?\s+(?:use|include|have)\b"
    r"|(?:python|node(?:\.js)?|java|go|rust|php|ruby|typescript|dotnet|\.net)\s*v?\d)",
    re.IGNORECASE,
)
# "Use uv for …", "Use Tailwind CSS for styling", "Use TanStack Query (react-query) for …":
# the tool used for a task (a name of up to four words, the later ones capitalised).
_USE_TOOL: Final = re.compile(
    r"^use\s+(?:\*\*|`)?[a-z][\w.-]{0,19}(?:\s+(?-i:[A-Z])[\w.-]{0,19}){0,3}"
    r"(?:\s+\([^()\n]{1,30}\))?(?:\*\*|`)?\s+(?:for|to|as|\()",
    re.I,
)
# Chinese "uniformly / by default use" ("文件名统一使用小写字母", "项目文档默认使用中文"):
# the project's convention wherever it stands in the line.
_ZH_UNIFORM: Final = re.compile(r"(?:统一|默认|一律|均|都|全部)(?:使用|采用)")
# Chinese "X uses Y" opening an entry ("配置文件使用 JSON 或 YAML", "代码评审使用中文", "术语可
# 使用英文"): a short name of what, then 使用/采用: what the project uses for it. Not after a
# condition ("如果已经使用 …").
_ZH_NAME: Final = r"[^\s，。：:；;,.!?！？（）()]{1,16}?"
_ZH_USES: Final = re.compile(
    rf"^(?!如果|若|当|假如|除非){_ZH_NAME}(?:\s?{_ZH_NAME})?"
    r"\s?可?(?:使用|采用)(?![\u3040-\u30ff])\s*\S"  # not Japanese "使用します"
)
# A human language as the whole value of a label ("Projektsprache, Logs: deutsch", "语言：
# English", "Sprache der Inhalte: Deutsch."): the language to write those things in.
_LANGUAGE_SETTING: Final = re.compile(
    r"^[^:：\n]{1,80}[:：]\s*(?:in\s+)?(?:" + _LANGUAGES + r")"
    r"(?:\s*[(（][^()（）\n]{0,60}[)）])?\s*[.。]?$",
    re.IGNORECASE,
)
# A size limit ("文件 ≤ 260 行", "functions <= 50 lines"): how things are laid out.
_LIMIT: Final = re.compile(r"(?:≤|⩽|<=)\s*\d")
_COMPARATIVE: Final = re.compile(r"^[a-z][\w`'\" ./-]{2,60}\s+over\s+\S", re.IGNORECASE)
_DESCRIPTIVE: Final = re.compile(
    r"^(?:(?:this|these) (?:file|document|repo|repository|project|directory|folder|section"
    r"|guide|page|module)s?\b|the following\b|(?:the|a|an) [\w .`'/-]{1,60}? (?:is|are|was|has"
    r"|have|provides?|contains?|handles?|defines?|exports?|describes?|lists?)\b"
    r"|[\w`.'-]+ (?:is|are) (?:a|an|the)\b"
    r"|(?:it|there) (?:is|are)\b(?! (?:important|critical|essential|necessary) to)"
    r"|e\.g\.|for example"
    r"|example\b|see\b|canonical reference|note:)",
    re.IGNORECASE,
)
# A statement about a thing ("The -x flag stops…", "Die Datei enthält…"): not carried by
# the rules around it.
_STATEMENT: Final = re.compile(
    r"^\W*(?:(?:the|a|an|this|these|those|its?|le|la|les|un|une|el|los|las|der|die|das|ein|eine"
    r"|o|os|as|um|uma|il|lo|gli)\s|l['’]\w)",
    re.IGNORECASE,
)
# A line of metadata ("Version: 2.0 | Updated: 2026-01 | Status: Production"): two or more
# "Label: value" pairs side by side, one of them a date, in any language, say what the file
# is, not what to do (with a code span they name commands: "Build: `make` | Test: `make
# test`"; without a date, tools: "Lint: ruff | Format: black").
_METADATA: Final = re.compile(
    r"^\W*[^|:：`\n]{1,30}[:：][^|`\n]{1,40}(?:[|·•][^|:：`\n]{1,30}[:：][^|`\n]{1,40})+$"
)
# One line of a file's metadata ("Status: normative", "Revision: 2746015f…", "Autor: Ana"): a
# metadata label and a value of one or two words ("Status: PASS or FAIL" is a field to fill).
_FILE_METADATA: Final = re.compile(
    r"^\W*(?:status|scope|source|revision|owner|author|maintainers?|last[ -]?(?:updated|modified"
    r"|reviewed)|updated|状态|作者|维护者|最后更新|更新(?:时间|日期)|ステータス|作成者|更新日|最終更新"
    r"|상태|작성자|최종 ?수정|stand|autor|verantwortlich|estado|responsable|statut|auteur"
    r"|mis à jour|responsável|atualizado|статус|автор|обновлено"
    # a tool's front-matter keys written in the body ("trigger: always_on", "alwaysApply: true")
    r"|trigger|alwaysapply|globs|applyto)\s*[:：]\s*"
    r"(?:[^\s:：]+(?:\s+[^\s:：]+)?|[0-9a-f]{7,40})\s*$",
    re.IGNORECASE,
)
_BRACKET_LABEL: Final = re.compile(r"^(?:【[^】\n]{1,20}】|\[[^\]\n]{1,20}\])$")
_LABELLED_CODE: Final = re.compile(r"^(?P<label>[\w /&().'-]{2,48})(?::\s+|：\s*)(?P<rest>.*`.+)$")
# The command-line tools a command line starts with.
_TOOL: Final = (
    r"(?:pnpm|npm|npx|yarn|bunx?|uvx?|pipx?|poetry|python3?|make|cargo|go|dotnet|mvn|gradle"
    r"|\./gradlew|docker(?:-compose)?|php|composer|bundle|rake|rails|pytest|ruff|deno|flutter"
    r"|dart|mix|swift|xcodebuild|just|mise|node|tsc|git|bin/[\w.-]+|\./[\w./-]+)"
)
# A label, then a bare command line that starts with a command-line tool ("开发：pnpm dev",
# "Тесты: python manage.py test"): the command used for the task, as in a code span.
_LABELLED_BARE: Final = re.compile(
    r"^(?P<label>[^:：`\n]{1,30})(?::\s+|：\s*)(?P<tool>" + _TOOL + r")"
    r"(?P<args>(?:\s+[^\s]+){1,6})\s*$"
)
# A line that is a command and nothing else ("node --check app.js", "`uv run pytest -q`").
_BARE_COMMAND: Final = re.compile(r"^(?:\$\s+)?" + _TOOL + r"(?:\s+[^\s]+){1,12}$")
# words that say the value is prose about the tool, not a command ("npm is used for …")
_PROSE_WORD: Final = re.compile(
    r"(?i)^(?:is|are|was|were|for|the|to|with|and|or|of|a|an|in|on|as|by|when|if|und|oder"
    r"|et|ou|y|e|o|für|pour|para|per|ist|est|es|é|è)$"
)
_DIRECTIVE_LEAD: Final = re.compile(
    r"\b(?:must|should|need(?:s)? to|require[sd]?|always|never|rules?|done when|complete when"
    r"|ready when|checklist|criteria|minimum|maximum|thresholds?|follow|ensure|you should"
    # the same in the other languages: a modal, or a lead that names rules or principles
    r"|deve|devono|dovrebbe|doit|doivent|debe|deben|devem|muss|müssen|sollte|sollten"
    r"|principles|principes|principi|principios|princípios|prinzipien|règles|regole|reglas"
    r"|regras|regeln)\b",
    re.IGNORECASE,
)
KIND_TITLES: Final[dict[MemoruleKind, str]] = {
    MemoruleKind.BEHAVIORAL_RULE: "Behavioral rules",
    MemoruleKind.CONVENTION: "Conventions",
    MemoruleKind.PREFERENCE: "Preferences",
    MemoruleKind.CORRECTION: "Corrections",
    MemoruleKind.FEEDBACK: "Feedback",
}


@dataclass(frozen=True)
class Evidence:
    """What a text's wording says about it (see the module doc)."""

    imperative: bool
    grammatical: bool  # an instruction only by grammar (an infinitive, a "-ez" form…)
    hard: bool
    soft: bool
    prefer: bool
    correction: bool
    feedback: bool
    convention: bool
    descriptive: bool
    question: bool
    follow: bool
    labelled: bool


def prose(text: str) -> str:
    """The text without fenced code, emphasis stars and heading marks, on one line."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line.strip().lstrip("#>").strip())
    return " ".join(" ".join(lines).replace("**", "").split())


def _commandish(span: str) -> bool:
    inner = span.strip("`")
    script = re.search(r"(?:^|/)[\w.-]+\.(?:sh|bat|ps1|cmd|py)$", inner)
    return " " in inner.strip() or bool(script) or inner.endswith("/")  # a command or a folder


def _labelled_command(text: str) -> bool:
    """'Install dependencies: `uv sync`' (a label, then mostly a command; a full-width
    colon too, and a bare command line that starts with a command-line tool: "开发：pnpm
    dev"), or the other way round: '`make lint`: run the linters'."""
    reverse = re.match(r"^(`{1,3})(?P<code>[^`]{1,300}?)\1\s*[:—–]\s+\w", text)
    if reverse is not None and _commandish(reverse["code"]):
        return True
    bare = _LABELLED_BARE.match(text)
    # arguments, not a gloss: "pnpm (frontend)" names the tool a stack uses
    args = re.sub(r"\([^)]*\)", "", bare["args"]).split() if bare else []
    if args and not any(_PROSE_WORD.match(w) for w in args):
        return True
    found = _LABELLED_CODE.match(text)
    if found is None or re.match(
        r"(?i)\s*(?:e\.g|examples?|for example|note|see)\b", found["label"]
    ):
        return False
    commandish = any(_commandish(s) for s in _CODE.findall(found["rest"]))
    words = re.findall(r"[A-Za-z]+", re.sub(r"\([^)]*\)", "", _CODE.sub("", found["rest"])))
    return commandish and len(words) <= 3


def bare_command(text: str) -> bool:
    """The line is a command line and nothing else: a tool and its arguments, in a code span
    or not, no prose after it ("npm is used for …" is prose)."""
    line = text.strip()
    if "\n" in line:
        return False
    line = line[1:-1].strip() if len(line) > 2 and line[0] == line[-1] == "`" else line
    found = _BARE_COMMAND.match(line)
    return found is not None and not any(_PROSE_WORD.match(w) for w in line.split()[1:])


def command_row(text: str) -> bool:
    """A table row of a task and the command that does it ("| Test unitari | `npm test` |"):
    the command used for the task, as "Test unitari: `npm test`" in a list."""
    if not text.strip().startswith("|"):
        return False
    cells = [c.strip() for c in text.strip().strip("|").split("|") if c.strip()]
    return len(cells) == 2 and not cells[0].startswith("`") and bare_command(cells[1])


# A setting: "Lingua: Italiano", "**Framework**: FastAPI", "Tone: concise, direct" — a
# short label and a value with no verb of its own (see :func:`setting`).
_SETTING: Final = re.compile(
    r"^(?P<label>[^\W\d][\w./&()+-]*(?: [\w./&()+-]+){0,3}):\s+(?P<value>[^\n]{1,80})$"
)
_SETTING_WORDS: Final = 6
# The words of a value that names a thing: a name (capitalised), a number, code, a path,
# or a word that joins names ("React, Vite y Tailwind").
_NAMING: Final = re.compile(
    r"^(?:[`(\[\"']*[A-ZÀ-Ý0-9@.`]|[a-z][\w-]*[./][\w./-]*|(?:and|or|y|e|o|et|ou|und|oder|&|\+|/|-|—|–)$)"
)
_BOLD_LABEL: Final = re.compile(
    r"^(?:[-*+]\s+|\d{1,3}[.)]\s+)?\*\*[^*\n]{1,40}?(?:\*\*\s*[:：]|[:：]\s*\*\*)"
)
# Chinese, Japanese and Korean state an instruction with a noun ("…만 사용"): their own
# cues read them, not this one.
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def setting(text: str) -> bool:
    """``text`` is one "Label: value" line whose value (a few words) names what to use, not
    what to do ("Lingua: Italiano", "Framework: FastAPI", "Tone: concise, direct"): a
    convention."""
    if "\n" in text.strip() or not _BOLD_LABEL.match(text.strip()):
        return False
    found = _SETTING.match(prose(text))
    if found is None or _CJK.search(found["value"]):
        return False
    words = found["value"].rstrip(". ").split()
    if len(words) > _SETTING_WORDS or not all(_NAMING.match(w) for w in words):
        return False
    value = evidence(found["value"])
    return not (value.imperative or value.grammatical or value.hard or value.soft)


def evidence(text: str) -> Evidence:
    """The cues of a text (its first sentence weighs most for mood)."""
    flat = prose(text)
    labelled = _labelled_command(flat) or command_row(flat)
    bare = _CODE.sub("code", flat)
    lead = lead_word(flat)
    opening = re.sub(r"^[^\w`]+", "", LABEL.sub("", bare, count=1))
    return Evidence(
        imperative=lead in IMPERATIVE
        or verb_after_clause(flat)
        or bool(cues.IMPERATIVE.search(opening) or cues.IMPERATIVE.search(bare)),
        grammatical=grammar.instruction(opening)
        or (opening.startswith("code") and grammar.infinitive_label(bare)),
        hard=bool(_HARD.search(bare) or cues.HARD.search(bare)) or grammar.prohibition(bare),
        soft=bool(_SOFT.search(bare) or cues.SOFT.search(bare)),
        prefer=bool(_PREFER.search(bare) or cues.PREFER.search(bare)),
        correction=bool(_CORRECTION.search(bare)),
        feedback=bool(_FEEDBACK.search(bare)),
        convention=bool(
            _CONVENTION.search(flat)
            or _TOOL_STATEMENT.match(flat)
            or _USE_TOOL.match(flat)
            or labelled
            or (_COMPARATIVE.match(bare) and lead not in IMPERATIVE)
            or grammar.INSTEAD.search(bare)
            or _LIMIT.search(flat)
            or _ZH_UNIFORM.search(flat)
            or _ZH_USES.match(flat)
            or _LANGUAGE_SETTING.match(flat)
        ),
        labelled=labelled,
        descriptive=bool(
            _DESCRIPTIVE.match(re.sub(r"^[^\w`]+", "", flat)) or cues.who_or_what_file(flat)
        ),
        question=flat.rstrip().endswith("?"),
        follow=lead in ACTIONS,
    )


def _reading_list(text: str) -> bool:
    """Only links or documents after a label that does not itself instruct: "Naming:
    `docs/naming.md`" is a reading list, "Read the guide first: `docs/guide.md`" a rule."""
    if not cues.links_only(text):
        return False
    label = re.split(r"[:：](?!//)", prose(text), maxsplit=1)[0]
    if label == prose(text):
        return True
    said = evidence(label)
    return not (said.imperative or said.grammatical or said.hard)


def _later_imperative(text: str) -> bool:
    """A sentence after the first that starts with an imperative verb."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z`*])", prose(text))
    return any(lead_word(s) in IMPERATIVE for s in sentences[1:])


def rule_likeness(
    text: str,
    headings: Sequence[str] = (),
    file_format: str | None = None,
    lead_in: str = "",
    list_entry: bool = False,
    among_rules: bool = False,
) -> float:
    """How much ``text`` reads as an instruction to an agent, in [0, 1] (see RULE_THRESHOLD).

    Args:
        text: the candidate (a list item, a sentence with its rationale...).
        headings: the heading path above it, outermost first.
        file_format: the file's dialect (``markdown``, ``cursor``, ``copilot``).
        lead_in: a line ending in ":" that introduces it ("All changes need to:").
        list_entry: it is an entry of a list (under a heading that names rules, an entry
            is a rule unless its wording says otherwise).
        among_rules: most of the other entries of its list read as rules.
    """
    ev = evidence(text)
    heading = headings[-1] if headings else ""
    if list_entry and grammar.verbless_negation(prose(text)) and not describes(heading):
        ev = replace(ev, hard=True)  # "Pas de …", "Nessun …", "No inline styles"
    if not prose(text) or ev.question or cues.placeholder(text) or _reading_list(text):
        return 0.0  # a question, an unfilled template, a reading list: no instruction
    if cues.TO_THE_USER.search(prose(text)):
        return 0.0  # "If you use Copilot Chat, …": advice to the human, not the agent
    if _METADATA.match(prose(text)) and re.search(cues.DATE, text) and not (ev.hard or ev.soft):
        return 0.0  # "Version: 2.0 | Status: Production": about the file
    if _FILE_METADATA.match(prose(text)) and not (ev.hard or ev.soft):
        return 0.0  # "Status: normative", "Revision: 2746015…": about the file
    if _BRACKET_LABEL.match(prose(text)):
        return 0.0  # "【非常重要】", "[IMPORTANT]": a label over what follows
    if cues.vocabulary(text) and not ev.hard:
        return 0.0  # "Types: `feat`, `fix`": the values, not a rule
    score = 0.2
    score += 0.6 if ev.imperative or ev.grammatical or _later_imperative(text) else 0.0
    score += 0.5 if ev.hard else 0.0
    score += 0.4 if ev.soft and not ev.hard else 0.0
    score += 0.45 if ev.prefer else 0.0
    score += 0.35 if ev.convention else 0.0
    score += 0.35 if ev.correction or ev.feedback else 0.0
    score -= 0.5 if ev.descriptive and not ev.hard else 0.0
    if heading and cues.EXAMPLE_LEAD.match(heading.rstrip(":：")) and not ev.hard:
        return 0.0  # the entries under "Examples" / "Types:" illustrate, they do not rule
    if list_entry and heading and template(heading) and not ev.hard:
        return 0.0  # a template's fields ("Goal: what is the result?"), to be filled in
    if (
        list_entry
        and not ev.hard
        and ((heading and cues.WORK_HEADING.match(heading)) or cues.WORK_ENTRY.match(prose(text)))
    ):
        return 0.0  # work planned or done ("Next steps", "TODO: …"): items, not rules
    logged = list_entry and bool(heading) and logs(heading)
    if logged and not (ev.imperative or ev.grammatical):
        return 0.0  # a log entry ("📌 Cleanup v3 — not merged yet"): its "not" rules nothing
    if cues.EXAMPLE_ENTRY.match(prose(text)) and not re.match(r"(?i)\W*do(?:n'?t)?\s*:", text):
        return 0.0  # "Good: `parallel-tasks`" / "Bad: …" show the rule before them
    stack = list_entry and bool(cues.STACK_HEADING.match(heading))  # "技术栈" names the stack
    if heading and (negating(heading)):
        score += 0.3
    elif heading and describes(heading) and not (ev.imperative or ev.hard or ev.soft) and not stack:
        score -= 0.6 if ev.grammatical else 0.25  # "Objectif: Décrire …" states a goal
    elif list_entry and heading and mixed(heading) and not stack:
        # "Architecture & Conventions": the entry's wording decides; a "Label: value" setting
        # ("**Language**: Java 21" under "技术栈规范") names what the project uses
        score += 0.35 if setting(text) else 0.15
    elif any(names_rules(h) or cues.FORM_HEADING.search(h) for h in headings) or stack:
        # a heading that names rules, or the form of what the agent writes ("Output
        # format"): the latter does not name rules for a definition list under it
        # ("PR format" over "feat: new feature" glosses stays a vocabulary)
        score += 0.35 if list_entry else 0.15
    elif list_entry:
        score += 0.15  # structure: an entry of a list in a rule file leans towards a rule
    if list_entry and among_rules and not ev.descriptive and not _STATEMENT.match(prose(text)):
        score += 0.2
    if lead_in and _directive_lead(lead_in):
        score += 0.4
    if file_format in ("cursor", "copilot"):
        score += 0.05
    return max(0.0, min(1.0, score))


def _directive_lead(lead_in: str) -> bool:
    """A lead-in that instructs its entries: a modal or an imperative in any language's
    table, a negation ("🔒 禁止操作：", "Avoid:") or a name for rules ("编码规范：")."""
    if _DIRECTIVE_LEAD.search(lead_in) or lead_word(lead_in) in IMPERATIVE:
        return True
    if not lead_in.rstrip(" *").endswith((":", "：")):
        return False  # a heading over the entries weighs as a heading (see rule_likeness)
    said = evidence(lead_in)
    return bool(said.hard or said.soft or negating(lead_in) or cues.RULES_LEAD.search(lead_in))


def _led_by_heading(headings: Sequence[str]) -> bool:
    """A heading above says what to do with the entries ("Avoid:", "DO NOT use
    high-cardinality attributes:"): a "Label: value" entry there is its object, not a
    setting."""
    return any(negating(h) or rule_likeness(h) >= RULE_THRESHOLD for h in headings)


def classify(text: str, headings: Sequence[str] = ()) -> MemoruleKind:
    """The kind of a text already judged a rule (see the module doc for the order)."""
    ev = evidence(text)
    heading = headings[-1] if headings else ""
    if ev.correction or (heading and correcting(heading)):
        return MemoruleKind.CORRECTION
    if ev.feedback:
        return MemoruleKind.FEEDBACK
    if ev.prefer:
        return MemoruleKind.PREFERENCE
    if ev.hard:
        return MemoruleKind.BEHAVIORAL_RULE
    if heading and cues.RECOMMEND_HEADING.search(heading):
        return MemoruleKind.PREFERENCE
    if (
        ev.labelled
        or (ev.convention and not ev.follow)
        or (setting(text) and not _led_by_heading(headings))
        or (heading and cues.CONVENTION_HEADING.search(heading))
        or (heading and cues.STACK_HEADING.match(heading))
        or (heading and cues.FORM_HEADING.search(heading))
    ):
        return MemoruleKind.CONVENTION
    named = kind_of_heading(heading) if heading else None
    return named or MemoruleKind.BEHAVIORAL_RULE


def guess_kind(
    text: str,
    heading: str | Sequence[str] | None = None,
    file_format: str | None = None,
    lead_in: str = "",
) -> MemoruleKind | None:
    """The kind of ``text``, or None when it reads as description rather than a rule."""
    headings = [heading] if isinstance(heading, str) else list(heading or ())
    if rule_likeness(text, headings, file_format, lead_in) < RULE_THRESHOLD:
        return None
    return classify(text, headings)
