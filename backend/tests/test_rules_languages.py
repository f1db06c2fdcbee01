"""Instructions by grammar in German, Spanish, Portuguese, French, Italian and Chinese
(issue 30, fourth round): imperatives, infinitives, prohibitions with "no"/"nicht", an
instruction after a clause that says when, "X en lugar de Y"; and what they must leave
alone (descriptions in those languages, English lines that only look like them). The fifth
round: a second-person imperative before an article and an instruction after a short label
("Analizar: Investiga el problema"), a workflow heading in other languages, a checklist as
one rule, a heading that asks why, Korean nouns that instruct, and the kinds a recommending
or coding-standards heading, a tool named for a task and "if possible" give. The sixth
round: headings that name rules in Italian and the words the other languages lacked
(constraints, standards, defaults), a bold "Label: value" setting as a convention, a
negation without a verb as a prohibition, an imperative after a when-clause, more
imperatives, English verbs the list lacked, and advice to the human who uses the assistant.
The seventh round: a setup section and a heading that leads in with ":" hold one procedure,
a goal describes, a "preferred" heading names preferences, Italian plural modals and
"non" + infinitive with "senza", a lead-in ending in a modal and "be" over predicates, and
a bold lead-in that names principles. The ninth round, by shape: a heading that says when
(before or after something) leads its numbered steps in as one task, a label ending in ":"
over entries that each carry a hard modal leads them as rules of their own, a ranking under
a priorities heading is one rule whatever its wording, a list of document paths is a
reading list, a template's fields and a dated status section are no rules.

Every cue has a case it must catch and a case it must leave alone. Every fixture is
written here; none is copied from a third-party file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prism_memory.domain.records import MemoruleKind
from prism_memory.formats.rules_io import blocks, cues, grammar, markers, sentences
from prism_memory.formats.rules_io.kinds import classify, guess_kind
from prism_memory.formats.rules_io.lists import vocabulary_list
from prism_memory.formats.rules_io.records import ParsedFile
from prism_memory.formats.rules_io.requests import subject_for
from prism_memory.services.rules_import import read_rule_files


def parse(tmp_path: Path, text: str, name: str = "AGENTS.md") -> ParsedFile:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    [parsed] = read_rule_files([path], tmp_path)
    return parsed


def rule_texts(parsed: ParsedFile) -> list[str]:
    return [u.text for u in parsed.units if u.kind is not None]


# -- the grammar of an instruction ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        # German: du and Sie imperatives, any "-iere" verb, an infinitive at the end
        ("Schreibe Docstrings für öffentliche Klassen", True),
        ("Aktualisiere die Changelog-Datei nach jedem Release", True),
        ("Benennen Sie Migrationen nach dem Datum", True),
        ("Migrationen vor dem Deploy lokal ausführen.", True),
        ("Den Cache bei jedem Build löschen, sonst veralten die Assets", True),
        ("Die Konfiguration wird beim Start geladen.", False),  # a statement with a subject
        ("Alle Dienste arbeiten zusammen", False),  # "zusammen" only looks like a verb
        # Spanish and Portuguese: an infinitive first
        ("Validar la entrada antes de guardarla", True),
        ("Separar la lógica de negocio de la vista", True),
        ("Registrar os erros com o logger do projeto", True),
        ("Servidor de pruebas en el puerto 8080", False),  # a noun, no infinitive
        ("Lugar de trabajo para los borradores", False),
        # French and Italian
        ("Documenter chaque endpoint dans le wiki", True),
        ("Lancez les tests avant chaque push", True),
        ("Scrivere i commenti in italiano", False),  # one small word only: not sure enough
        ("Formattare il codice con il linter del progetto", True),
        ("Ce dossier contient les scripts", False),
        # a clause that says when, then the instruction
        ("Antes de abrir un PR, ejecuta la suite completa", True),
        ("Avant de fusionner, vérifiez la couverture", True),
        ("Bevor du pushst, starte die Tests", True),
        ("提交代码前运行全部测试", True),
        ("项目启动时间较长", False),  # "时" in a noun, no verb after it
        # a second-person imperative right before an article or "que"/"sempre" (fifth
        # round), also after a short label
        ("Investiga el problema antes de tocar el código", True),
        ("Comprueba que la migración se aplica en local", True),
        ("Preséntame un plan antes de editar", True),
        ("Verifica sempre i permessi del file", True),
        ("Analizar: Investiga el problema a fondo", True),
        ("Toda la configuración vive en config/", False),  # a determiner, then an article
        ("Entre la base de datos y la caché hay una cola", False),
        ("Backend: Supabase para los datos", False),  # a label over a value
        # English lines that only look like the above
        ("Other services read the same queue en masse", False),
        ("Docker runs the whole stack locally", False),
        ("Server logs go to the journal", False),
    ],
)
def test_an_instruction_by_grammar(text: str, hit: bool) -> None:
    assert grammar.instruction(text) is hit


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("No mezclar tabs y espacios en el mismo archivo", True),
        ("No subir archivos generados", True),
        ("Não commitar a pasta dist", True),
        ("Ne pas modifier les migrations appliquées", True),
        ("Non usare variabili globali nel modulo", True),
        ("Lösche nicht die Backups", True),
        ("Generierte Dateien nicht einchecken", True),
        ("No es posible usar el modo offline", False),  # "no es": a statement
        ("This flag is no longer needed", False),  # English "no" + comparative
        ("Der Dienst startet nicht automatisch.", False),  # "nicht" in a statement
        ("Non-blocking writes are faster", False),
    ],
)
def test_a_prohibition_by_grammar(text: str, hit: bool) -> None:
    assert grammar.prohibition(text) is hit


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Usar `dataclass` en lugar de diccionarios", True),
        ("`pathlib` statt `os.path` verwenden", True),
        ("Préférer `httpx` au lieu de `requests`", True),
        ("Usar `httpx` em vez de `requests`", True),
        ("Usar `pytest` para las pruebas", False),
        ("Run the migration instead", False),
    ],
)
def test_which_way_instead_of_another(text: str, hit: bool) -> None:
    assert (grammar.INSTEAD.search(text) is not None) is hit


# -- what the importer makes of them ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Generierte Dateien nicht einchecken", MemoruleKind.BEHAVIORAL_RULE),
        ("No subir archivos generados", MemoruleKind.BEHAVIORAL_RULE),
        ("Usar `dataclass` en lugar de diccionarios", MemoruleKind.CONVENTION),
        ("Validar la entrada antes de guardarla", MemoruleKind.BEHAVIORAL_RULE),
        ("Die Konfiguration wird beim Start geladen.", None),
        ("Ce dossier contient les scripts", None),
    ],
)
def test_the_kind_of_an_entry(text: str, kind: MemoruleKind | None) -> None:
    assert guess_kind(text, "Notas") is kind


def test_a_style_heading_in_german_or_spanish_names_conventions() -> None:
    assert guess_kind("Schreibe Kommentare auf Englisch", "Code-Stil") is (MemoruleKind.CONVENTION)
    assert guess_kind("Usar comillas dobles", "Estilo de código") is MemoruleKind.CONVENTION
    assert guess_kind("Schreibe Kommentare auf Englisch", "Arbeitsweise") is (
        MemoruleKind.BEHAVIORAL_RULE
    )


def test_an_infinitive_under_a_goal_heading_states_the_goal(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Objectif\n\n"
        "- Décrire comment le dépôt est organisé.\n\n"
        "## Règles\n\n"
        "- Décrire chaque changement dans le changelog.\n",
    )
    assert rule_texts(parsed) == ["Décrire chaque changement dans le changelog."]


def test_a_ranking_is_one_rule_and_a_numbered_list_of_rules_is_not(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Prioritäten\n\n"
        "1. Aufgaben exakt umsetzen\n"
        "2. Tests grün halten\n"
        "3. Lesbarkeit verbessern\n\n"
        "## Regeln\n\n"
        "1. Tests vor dem Commit ausführen\n"
        "2. Keine Secrets committen\n",
    )
    assert rule_texts(parsed) == [
        "1. Aufgaben exakt umsetzen\n2. Tests grün halten\n3. Lesbarkeit verbessern",
        "Tests vor dem Commit ausführen",
        "Keine Secrets committen",
    ]


def test_a_persona_is_no_rule_but_an_instruction_beside_it_is(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Rolle\n\n"
        "- Du bist ein erfahrener Backend-Entwickler\n"
        "- Antworte immer auf Deutsch\n"
        "- Erkläre Entscheidungen kurz\n\n"
        "## Role\n\n"
        "- You are a careful reviewer\n"
        "- You are expected to run the linters before every commit\n",
    )
    assert rule_texts(parsed) == [
        "Antworte immer auf Deutsch",
        "Erkläre Entscheidungen kurz",
        "You are expected to run the linters before every commit",
    ]


# -- the fifth round ----------------------------------------------------------------------


def test_a_workflow_heading_in_spanish_makes_its_steps_one_procedure(tmp_path: Path) -> None:
    steps = (
        "1. Usar UTF-8 en todos los archivos.\n"
        "2. Validar la entrada del usuario.\n"
        "3. Registrar los errores con el logger.\n"
    )
    parsed = parse(tmp_path, f"## Flujo de trabajo\n\n{steps}")
    assert rule_texts(parsed) == [steps.strip()]
    # a data flow describes no task: the numbered entries stay rules of their own
    parsed = parse(tmp_path, f"## Flujo de datos\n\n{steps}")
    assert len(rule_texts(parsed)) == 3


@pytest.mark.parametrize("heading", ["Flux de travail", "Flusso di lavoro", "Fluxo de trabalho"])
def test_a_workflow_heading_in_french_italian_or_portuguese_is_a_procedure(
    tmp_path: Path, heading: str
) -> None:
    parsed = parse(tmp_path, f"## {heading}\n\n1. Lire le ticket.\n2. Écrire le test.\n")
    assert len(rule_texts(parsed)) == 1


def test_a_checklist_is_one_rule_and_its_subject_has_no_box(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Antes de publicar\n\n"
        "- [ ] Los tests pasan en local\n"
        "- [ ] El changelog está al día\n"
        "- [x] La versión sube\n",
    )
    [rule] = [u for u in parsed.units if u.kind is not None]
    assert rule.text.count("[") == 3
    assert "[" not in subject_for(rule)
    # one box among plain entries is no checklist: the entries stay apart
    parsed = parse(
        tmp_path,
        "## Antes de publicar\n\n"
        "- [ ] Los tests pasan en local\n"
        "- Ejecuta el linter antes de cada push\n"
        "- Mantén los commits pequeños\n",
    )
    assert len(rule_texts(parsed)) >= 2


def test_a_heading_that_asks_why_gives_reasons_not_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 서비스 규칙\n\n"
        "- 서비스는 반드시 재시작 스크립트로 실행\n\n"
        "### 왜 이런 규칙이 필요한가?\n\n"
        "- 스크립트가 환경 변수와 로깅을 자동 처리\n"
        "- 팀 개발 환경의 일관성 유지\n\n"
        "## Why these rules?\n\n"
        "- Ports stay the same on every machine\n",
    )
    assert rule_texts(parsed) == ["서비스는 반드시 재시작 스크립트로 실행"]
    # "why" further in a heading asks nothing: the entries under it stay rules
    parsed = parse(tmp_path, "## Rules, and the reasons why\n\n- Run the tests before a push\n")
    assert rule_texts(parsed) == ["Run the tests before a push"]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("모든 설명과 코드 주석은 한국어로 작성", True),
        ("오류가 나면 즉시 작업 중단", True),
        ("작성자와 날짜는 머리말에 있다", False),  # "작성" not at the end: a statement
        ("팀 개발 환경의 일관성", False),
    ],
)
def test_a_korean_noun_that_instructs_at_the_end(text: str, hit: bool) -> None:
    assert (cues.IMPERATIVE.search(text) is not None) is hit


@pytest.mark.parametrize(
    ("text", "heading", "kind"),
    [
        # a heading that recommends makes its entries preferences, unless they say must
        ("Run the tests before you apply a change", "Recommended workflow", "preference"),
        ("変更前にバックアップを作成する", "推奨事項", "preference"),
        ("Never push to main", "Recommended workflow", "behavioral_rule"),
        # a coding-standards heading names conventions; a generic one does not
        ("Include docstrings for modules and classes", "Coding Standards", "convention"),
        ("API 에러는 try-catch로 처리한다", "코딩 규칙", "convention"),
        ("Include docstrings for modules and classes", "Development", "behavioral_rule"),
        # the tool used for a task, its name of several words
        ("Use Tailwind CSS for styling", "Frontend", "convention"),
        ("Use TanStack Query (react-query) for data fetching", "Frontend", "convention"),
        ("Use the existing helpers for date math", "Frontend", "behavioral_rule"),
        # "if possible" in the other languages is soft
        ("Añade pruebas unitarias cuando sea posible", "Pruebas", "preference"),
        ("Ajoute des tests si possible", "Tests", "preference"),
        ("Añade pruebas unitarias para cada endpoint", "Pruebas", "behavioral_rule"),
        # "plutôt que" and "尽量" weigh one way against another: soft
        ("Proposer une correction plutôt que de se justifier", "Conduite", "preference"),
        ("Proposer une correction au lieu de se justifier", "Conduite", "convention"),
    ],
)
def test_the_kind_a_heading_or_a_phrase_gives(text: str, heading: str, kind: str) -> None:
    assert guess_kind(text, heading) is MemoruleKind(kind)


@pytest.mark.parametrize(
    ("text", "heading", "kind"),
    [
        ("尽量使用 TypeScript 编写新代码", "前端", "preference"),
        ("必须使用 TypeScript 编写新代码", "前端", "behavioral_rule"),
        # a heading naming conventions in Chinese, Japanese or Korean
        ("脚本模板统一放在 `scripts/templates/`", "目录约定", "convention"),
        ("テストは `tests/` に置く", "命名規約", "convention"),
        ("脚本模板统一放在 `scripts/templates/`", "总则", "behavioral_rule"),
    ],
)
def test_the_kind_of_a_rule_in_chinese_or_japanese(text: str, heading: str, kind: str) -> None:
    assert classify(text, [heading]) is MemoruleKind(kind)


# -- the sixth round ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "rules"),
    [
        # headings that name rules in Italian, the other languages' missing words, and
        # settings to use by default: their entries are rules
        ("Regole", 2),
        ("Vincoli del progetto", 2),
        ("Linee guida", 2),
        ("Impostazioni predefinite", 2),
        ("Estándares técnicos", 2),
        ("Contraintes", 2),
        ("Constraints", 2),
        ("开发约束", 2),
        ("Principi", 2),
        ("Cosa fare", 2),
        ("Cosa non fare", 2),
        ("Qué no hacer", 2),
        # a heading that describes keeps its entries descriptive
        ("Architettura", 0),
        ("Panoramica del progetto", 0),
    ],
)
def test_a_heading_that_names_rules_in_more_languages(
    tmp_path: Path, heading: str, rules: int
) -> None:
    entries = "- Moduli piccoli e indipendenti\n- Tipi espliciti ovunque\n"
    parsed = parse(tmp_path, f"## {heading}\n\n{entries}")
    assert len(rule_texts(parsed)) == rules


def test_a_bold_setting_under_a_rule_heading_is_a_convention(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Impostazioni predefinite\n\n"
        "- **Lingua:** Italiano\n"
        "- **Framework**: FastAPI\n"
        "- **Formato date**: ISO 8601\n",
    )
    kinds = [u.kind for u in parsed.units if u.kind is not None]
    assert kinds == [MemoruleKind.CONVENTION] * 3


def test_a_setting_that_describes_or_that_a_heading_forbids_is_no_convention(
    tmp_path: Path,
) -> None:
    described = parse(
        tmp_path,
        "## Architettura\n\n- **Backend:** FastAPI\n- **Frontend:** React\n- **DB:** Postgres\n",
    )
    assert rule_texts(described) == []
    # under a heading that says what to do with them the values are its objects
    assert classify("**Librerie:** Moment.js", ["Evita queste librerie"]) is not (
        MemoruleKind.CONVENTION
    )
    # a value that is no name ("conciso e diretto") says how to behave, not what to use
    assert classify("**Tono:** conciso e diretto", ["Regole"]) is MemoruleKind.BEHAVIORAL_RULE


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Pas de dépendances nouvelles sans accord", True),
        ("Aucune clé d'API en dur", True),
        ("Nessun commento superfluo nel codice", True),
        ("Niente `print` nei moduli di libreria", True),
        ("Sin punto y coma al final de la línea", True),
        ("Nada de `console.log` en producción", True),
        ("Sem `any` no código novo", True),
        ("No inline styles", True),
        ("Sin embargo, el equipo usa Docker", False),  # "however"
        ("No longer supported after v2", False),
        ("No offline mode yet", False),  # not there yet: a description
        ("Nessun file è ancora pronto", False),
        ("No. 1 priority is stability", False),
    ],
)
def test_a_negation_without_a_verb(text: str, hit: bool) -> None:
    assert grammar.verbless_negation(text) is hit


def test_a_list_entry_that_negates_without_a_verb_is_a_prohibition(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Note\n\n"
        "- Pas de fonctionnalités non demandées\n\n"
        "## Architecture\n\n"
        "- Pas de cache côté serveur\n",
    )
    assert rule_texts(parsed) == ["Pas de fonctionnalités non demandées"]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        # an imperative right after a clause that says when, also one with a parenthesis
        ("Al final de cada plan, lista las preguntas abiertas", True),
        ("Quando appare un avviso in inglese, traduci il testo", True),
        ("Prima di ogni commit (codice, documenti), spiega cosa cambia", True),
        ("Cuando falla la red, aparece un aviso en pantalla", False),  # what happens
        ("Quando il server parte, viene mostrato un log", False),
        # an Italian infinitive with its small words; a Spanish "-ar"/"-ir" one with one
        ("Usare nomi brevi per le variabili", True),
        ("Registrar cada cambio en `CHANGELOG.md`.", True),
        ("Sidebar en la parte izquierda", False),  # an English noun in "-ar"
        ("Controller updates en masse", False),  # "-er" with one small word: English
    ],
)
def test_an_instruction_by_grammar_sixth_round(text: str, hit: bool) -> None:
    assert grammar.instruction(text) is hit


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Rispondi in modo conciso", True),
        ("Spiega ogni scelta non ovvia", True),
        ("Haz commits pequeños y frecuentes", True),
        ("Lista de archivos generados por el build", False),  # "lista", a noun
        ("Muestra de datos para las pruebas", False),
    ],
)
def test_more_spanish_and_italian_imperatives(text: str, hit: bool) -> None:
    assert (cues.IMPERATIVE.search(text) is not None) is hit


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # English verbs the list did not know
        ("Refer to `PLAN.md` for the current objectives.", MemoruleKind.BEHAVIORAL_RULE),
        ("Clarify the scope before you start.", MemoruleKind.BEHAVIORAL_RULE),
        ("Refers to the plan file.", None),
        # an adverb before the verb, a verb after a clause of several commas
        (
            "If the scope is unclear, explicitly ask which files to change.",
            MemoruleKind.BEHAVIORAL_RULE,
        ),
        (
            "When a task is done, and the tests pass, clear the plan file.",
            MemoruleKind.BEHAVIORAL_RULE,
        ),
        ("Early returns keep functions flat.", None),
        # advice to the human who uses the assistant, not to the agent
        ("Si usas GitHub Copilot Chat, escribe tus preguntas en español", None),
        ("If you use Claude in the terminal, paste the logs", None),
        ("Si el usuario pide una explicación, responde en español", MemoruleKind.BEHAVIORAL_RULE),
    ],
)
def test_what_an_english_verb_or_the_reader_gives(text: str, kind: MemoruleKind | None) -> None:
    assert guess_kind(text, "Notes") is kind


def test_a_hard_or_avoiding_heading_in_chinese_and_a_bracket_label(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 执行策略（硬性）\n\n"
        "- 先小后大：先在单个模块上验证\n\n"
        "## 坏味道（必须避免）\n\n"
        "【重要】\n\n"
        "1. 冗余：同一段逻辑出现在多处\n"
        "2. 晦涩：命名看不出意图\n\n"
        "## 项目结构\n\n"
        "- 模块：按功能划分\n",
    )
    rules = [u for u in parsed.units if u.kind is not None]
    assert [u.text.split("\n")[-1] for u in rules] == [
        "先小后大：先在单个模块上验证",
        "冗余：同一段逻辑出现在多处",
        "晦涩：命名看不出意图",
    ]
    # code smells name what not to write: corrections
    assert [u.kind for u in rules[1:]] == [MemoruleKind.CORRECTION] * 2


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("单个源文件 ≤ 300 行", MemoruleKind.CONVENTION),  # a size limit: layout
        ("Functions <= 40 lines", MemoruleKind.CONVENTION),
        ("单个源文件超过 300 行时拆分", MemoruleKind.BEHAVIORAL_RULE),
    ],
)
def test_a_size_limit_is_a_convention(text: str, kind: MemoruleKind) -> None:
    assert classify(text, ["规则"]) is kind


def test_a_parenthesis_qualifies_a_heading_it_does_not_name_it(tmp_path: Path) -> None:
    entries = "1. Le moteur tourne en local, sans service externe.\n2. Tenir un journal.\n"
    qualified = parse(tmp_path, f"## Règles de travail (contexte : tout le dépôt)\n\n{entries}")
    assert len(rule_texts(qualified)) == 2
    described = parse(tmp_path, f"## Contexte du dépôt (moteur)\n\n{entries}")
    assert rule_texts(described) == ["Tenir un journal."]


# -- the seventh round ------------------------------------------------------------------


def test_a_setup_section_holds_one_procedure_and_a_rules_section_does_not(
    tmp_path: Path,
) -> None:
    steps = "1. Clona il repository\n2. Esegui `make install`\n3. Avvia `make dev`\n"
    setup = parse(tmp_path, f"## Installazione\n\n{steps}")
    assert rule_texts(setup) == [steps.rstrip("\n")]
    rules = parse(tmp_path, f"## Regole\n\n{steps}")
    assert len(rule_texts(rules)) == 3


def test_a_heading_that_leads_in_with_a_colon_holds_one_procedure(tmp_path: Path) -> None:
    steps = "1. **Installare**: `npm ci`\n2. **Avviare**: `npm start`\n"
    lead = parse(tmp_path, f"### Per avviare il server in locale:\n\n{steps}")
    assert rule_texts(lead) == [steps.rstrip("\n")]
    # a heading that names rules leads in to rules, one per entry
    named = parse(tmp_path, "### Regole del progetto:\n\n1. Scrivi i test\n2. Usa nomi brevi\n")
    assert rule_texts(named) == ["Scrivi i test", "Usa nomi brevi"]


@pytest.mark.parametrize("heading", ["Obiettivo", "Objetivos del proyecto", "Goals", "目标"])
def test_a_goal_heading_describes(tmp_path: Path, heading: str) -> None:
    parsed = parse(tmp_path, f"## {heading}\n\n- Creare una libreria per leggere CSV\n")
    assert rule_texts(parsed) == []


def test_an_entry_beside_a_goal_heading_still_rules(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## Note\n\n- Creare un test per ogni funzione pubblica\n")
    assert rule_texts(parsed) == ["Creare un test per ogni funzione pubblica"]


def test_a_preferred_heading_names_preferences(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Librerie preferite\n\n- Pydantic per i modelli\n- httpx per le chiamate\n\n"
        "## Dipendenze\n\n- Pydantic 2.7\n- httpx 0.27\n",
    )
    rules = [u for u in parsed.units if u.kind is not None]
    assert [u.text for u in rules] == ["Pydantic per i modelli", "httpx per le chiamate"]
    assert {u.kind for u in rules} == {MemoruleKind.PREFERENCE}


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("I test devono passare prima del merge", True),
        ("Il token è obbligatorio per ogni chiamata", True),
        ("I file vengono generati dal build", False),
    ],
)
def test_italian_plural_and_adjective_modals(text: str, hit: bool) -> None:
    assert (cues.HARD.search(text) is not None) is hit


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("**Pulizia**: NON eseguire `make clean` senza conferma", True),
        ("Non square tiles are rejected", False),  # English "non" before an "-are" word
    ],
)
def test_non_and_an_infinitive_with_senza_is_a_prohibition(text: str, hit: bool) -> None:
    assert grammar.prohibition(text) is hit


def test_a_lead_in_ending_in_must_be_holds_one_requirement_per_entry(tmp_path: Path) -> None:
    predicates = parse(tmp_path, "Ogni risposta deve essere:\n\n- breve,\n- verificabile.\n")
    assert len(rule_texts(predicates)) == 2
    english = parse(tmp_path, "Every commit message must be:\n\n- short,\n- tied to an issue.\n")
    assert len(rule_texts(english)) == 2
    # the objects of one rule stay with it
    objects = parse(tmp_path, "Il codice va scritto pensando a:\n\n- leggibilità,\n- sicurezza.\n")
    assert len(objects.units) == 1


def test_a_bold_lead_in_that_names_principles_leads_its_list(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Note\n\n**Principi:**\n\n1. Meno è meglio: una funzione fa una cosa\n"
        "2. Codice chiaro: nomi che dicono cosa sono\n\n"
        "**Passi:**\n\n1. Apri il file\n2. Aggiorna la versione\n",
    )
    assert [t.split("\n")[-1] for t in rule_texts(parsed)] == [
        "Meno è meglio: una funzione fa una cosa",
        "Codice chiaro: nomi che dicono cosa sono",
        "2. Aggiorna la versione",  # a bold lead-in that names no rules: the steps of one task
    ]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Instalar dependências: `npm ci`", True),  # the label is the task
        ("Avviare il server: `npm start`", True),  # Italian, with its small word
        ("Middleware: `express`", False),  # an English noun in "-are"
        ("Sidebar: `Nav.tsx`", False),  # an English noun in "-ar"
        ("Compiler: `tsc`", False),
    ],
)
def test_an_infinitive_label_over_its_command_instructs(text: str, hit: bool) -> None:
    assert grammar.infinitive_label(text) is hit
    assert (guess_kind(f"**{text.replace(':', '**:', 1)}", "Notes") is not None) is hit


def test_a_description_column_describes_unless_it_says_must(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Comandi\n\n| Comando | Descrizione |\n|---|---|\n"
        "| `/deploy` | Pubblica la build sul server |\n"
        "| `/reset` | Non usare mai in produzione |\n\n"
        "## Strumenti\n\n| Strumento | Quando |\n|---|---|\n"
        "| `ruff` | Esegui il lint prima di ogni commit |\n",
    )
    assert rule_texts(parsed) == [
        "| `/reset` | Non usare mai in produzione |",  # a hard modal still rules
        "| `ruff` | Esegui il lint prima di ogni commit |",  # advice, not a description
    ]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("保持接口文档与代码同步", True),  # keep …
        ("遵循仓库已有的命名方式", True),  # follow …
        ("接口文档保存在 docs 目录", False),  # a statement: where the docs are
    ],
)
def test_a_chinese_entry_opening_with_an_instructing_verb(text: str, hit: bool) -> None:
    assert (cues.IMPERATIVE.search(text) is not None) is hit


def test_a_column_of_when_to_update_makes_each_filled_row_a_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Documenti\n\n| File | Ruolo | Aggiornamento |\n|---|---|---|\n"
        "| `STORIA.md` | Cronologia | Dopo ogni rilascio |\n"
        "| `BOZZE.md` | Appunti | |\n\n"
        "## Hook\n\n| Hook | Quando |\n|---|---|\n| `pre-push` | Prima di ogni push |\n",
    )
    assert rule_texts(parsed) == ["| `STORIA.md` | Cronologia | Dopo ogni rilascio |"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Les messages de commit sont en anglais.", MemoruleKind.CONVENTION),
        ("I commenti sono scritti in italiano", MemoruleKind.CONVENTION),
        ("Le serveur est en panne le dimanche.", None),  # "en" but no language
    ],
)
def test_the_language_a_thing_is_written_in_is_a_convention(
    text: str, kind: MemoruleKind | None
) -> None:
    assert guess_kind(text, "Notes") is kind


def test_a_procedure_trims_its_line_ends_as_an_entry_does(tmp_path: Path) -> None:
    # the export writes the body back as entry lines, which are read trimmed: a trailing
    # space kept here would make the re-import of an unchanged export a new version
    parsed = parse(
        tmp_path, "## Setup\n\n1. **Configurare**: \n   - `make db`\n2. Avviare `make run`\n"
    )
    [text] = rule_texts(parsed)
    assert text == "1. **Configurare**:\n   - `make db`\n2. Avviare `make run`"


# -- the eighth round: lines of a list without marks, a vocabulary under any heading ------


def test_lines_written_as_a_list_without_marks_are_a_unit_each(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Code\n\ntoujours parler en français\nkebab-case pour les noms de fichiers\n"
        "Le serveur tourne sur Vercel\nUtiliser des types explicites\n",
    )
    assert rule_texts(parsed) == [
        "toujours parler en français",
        "kebab-case pour les noms de fichiers",
        "Utiliser des types explicites",
    ]  # the third line states a fact: a unit of its own, no rule
    assert [u.text for u in parsed.units if u.kind is None] == ["Le serveur tourne sur Vercel"]


def test_a_line_of_two_sentences_keeps_its_rationale_and_splits_its_rules(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Docs\n\nNever create README files. Only edit them when asked.\n"
        "Keep answers short. Long answers bury the point.\n"
        "Cite the file you changed.\n",
    )
    assert rule_texts(parsed) == [
        "Never create README files.",
        "Only edit them when asked.",
        "Keep answers short. Long answers bury the point.",
        "Cite the file you changed.",
    ]


@pytest.mark.parametrize(
    "paragraph",
    [
        # wrapped prose: some lines end mid-sentence, the last with a stop
        "The importer reads every file in the folder and\nkeeps the ones whose names match,"
        "\nthen it writes a report\nof what it skipped.\n",
        # a folder tree drawn without a code block
        "src/\n├── api/\n└── core/\n",
        # two lines are no list
        "Run the tests\nbefore you push\n",
    ],
)
def test_wrapped_prose_and_a_drawn_tree_are_not_split_into_lines(paragraph: str) -> None:
    assert sentences.line_spans(paragraph.rstrip("\n")) is None


def test_wrapped_prose_stays_one_unit(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Notes\n\nAlways run the linter before you push, because the CI\n"
        "rejects a branch whose files are not formatted, and fixing it\nlater costs a round.\n",
    )
    assert len(rule_texts(parsed)) == 1


@pytest.mark.parametrize(
    ("entries", "hit"),
    [
        (["`feat`: new feature", "`fix`: bug fix", "`docs`: documentation"], True),
        (["`feat`: 新功能", "`fix`: 修复问题", "`perf`: 性能优化"], True),
        (["`lint`: run it before every push", "`fix`: bug fix", "`docs`: documentation"], False),
        (["`feat`: new feature", "`fix`: bug fix"], False),  # two are no list of values
        (["`make lint`: the linters", "`make test`: the tests", "`make db`: a database"], False),
    ],
)
def test_a_list_of_code_values_and_glosses_is_a_vocabulary(entries: list[str], hit: bool) -> None:
    assert vocabulary_list(entries) is hit


def test_a_vocabulary_under_a_rules_heading_is_no_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Commit rules\n\n- Write commit messages in English\n- Types:\n"
        "  - `feat`: new feature\n  - `fix`: bug fix\n  - `docs`: documentation\n",
    )
    assert rule_texts(parsed) == ["Write commit messages in English"]


def test_lines_without_marks_under_a_heading_that_asks_why_give_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 왜 이런 규칙이 필요한가?\n\n포트 충돌 방지\n설정 누락 방지\n팀 환경의 일관성 유지\n",
    )
    assert rule_texts(parsed) == []


def test_an_italian_statement_is_not_lifted_by_the_rules_around_it(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Progetto\n\n- Esegui i test prima di ogni push\n- Scrivi i commenti in italiano\n"
        "- Il progetto gira su Vercel\n- Un test per ogni funzione pubblica\n",
    )
    texts = rule_texts(parsed)
    assert "Il progetto gira su Vercel" not in texts  # "il": a statement about a thing
    assert "Esegui i test prima di ogni push" in texts


# -- the modal markers as one table per language ----------------------------------------

_FAMILIES = (("hard", cues.HARD), ("soft", cues.SOFT), ("prefer", cues.PREFER))


@pytest.mark.parametrize("language", sorted(markers.MARKERS))
@pytest.mark.parametrize(("family", "compiled"), _FAMILIES, ids=[f for f, _ in _FAMILIES])
def test_every_language_has_every_family_of_markers(
    language: str, family: str, compiled: re.Pattern[str]
) -> None:
    forms = getattr(markers.MARKERS[language], family)
    assert len(forms) >= 4 and len(set(forms)) == len(forms)
    glue = "яя" if language == "ru" else "zz"
    for form in forms:
        word = form.rstrip("*")
        assert compiled.search(f"- {word} ok"), form  # caught as a word
        assert not compiled.search(f"- {glue}{word}{glue} ok"), form  # not inside one


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("Non fare mai il push su main", "hard"),
        ("È necessario aggiornare il changelog", "soft"),
        ("Preferibilmente usa le f-string", "prefer"),
        ("É necessário rodar os testes antes do merge", "soft"),
    ],
)
def test_the_italian_and_portuguese_families_are_complete(text: str, family: str) -> None:
    assert dict(_FAMILIES)[family].search(text)


@pytest.mark.parametrize(
    "text",
    ["Il mais è un cereale", "La mairie ouvre à 9h", "Il preferito della squadra"],
)
def test_the_new_italian_markers_leave_other_words_alone(text: str) -> None:
    assert not any(compiled.search(text) for _, compiled in _FAMILIES)


# -- the ninth round: shapes ---------------------------------------------------------


@pytest.mark.parametrize("language", sorted(markers.SECTIONS))
def test_every_language_has_its_words_for_before_and_after(language: str) -> None:
    forms = markers.SECTIONS[language].when
    assert len(forms) >= 4 and len(set(forms)) == len(forms)
    glue = "яя" if language == "ru" else "zz"
    for form in forms:
        assert cues.WHEN_HEADING.search(f"{form.capitalize()} x"), form  # opens a heading
        assert not cues.WHEN_HEADING.search(f"{glue}{form} x"), form  # not inside a word
        assert not cues.WHEN_HEADING.search(f"Notes {form} x"), form  # only at the start


@pytest.mark.parametrize(
    ("heading", "hit"),
    [
        ("Before any change", True),
        ("AVANT TOUTE MODIFICATION", True),
        ("Nach dem Merge", True),
        ("提交前", True),
        ("コミットする前に", True),
        ("커밋 전에", True),
        ("Beforehand notes", False),
        ("目前", False),  # "at present"
        ("名前", False),  # "a name"
        ("버전", False),  # "version"
        ("Afterword", False),
    ],
)
def test_a_heading_that_says_when_is_told_from_one_that_does_not(heading: str, hit: bool) -> None:
    assert (cues.WHEN_HEADING.search(heading) is not None) is hit


def test_numbered_steps_under_a_heading_that_says_when_are_one_task(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Avant toute livraison\n\n1. LIS le journal\n2. MONTRE le diff\n3. ATTENDS mon accord\n",
    )
    assert rule_texts(parsed) == ["1. LIS le journal\n2. MONTRE le diff\n3. ATTENDS mon accord"]


def test_numbered_rules_under_a_heading_that_says_when_stay_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Before a release\n\n1. NEVER tag from a branch\n2. ALWAYS sign the tag\n"
        "3. Write the notes\n",
    )
    assert len(rule_texts(parsed)) == 3  # most entries carry a hard modal: rules each


def test_a_label_over_entries_that_each_carry_a_hard_modal_leads_them(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Regras\n\n1. **Revisão cuidadosa (sem pressa):**\n   - SEMPRE rodar os testes\n"
        "   - SEMPRE ler o diff\n   - NUNCA aprovar sem ler\n",
    )
    texts = rule_texts(parsed)
    assert len(texts) == 3 and all("Revisão cuidadosa" in t for t in texts)


def test_a_label_over_steps_without_hard_modals_stays_one_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Regras\n\n1. **Confirme SEMPRE antes de gerar código:**\n   - Descreva o plano\n"
        "   - Aguarde a resposta\n   - NUNCA assuma\n",
    )
    assert len(rule_texts(parsed)) == 1


def test_a_ranking_under_a_priorities_heading_is_one_rule_without_verbs(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## Prioridades\n\n1. **SIMPLES > ESPERTO**\n2. **LEGÍVEL > CURTO**\n")
    assert rule_texts(parsed) == ["1. **SIMPLES > ESPERTO**\n2. **LEGÍVEL > CURTO**"]


def test_a_numbered_list_of_names_under_another_heading_is_no_rule(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## Team\n\n1. **Calm mornings**\n2. **Long walks**\n")
    assert rule_texts(parsed) == []


def test_a_list_of_documents_under_labels_is_a_reading_list(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Regole\n\n- Esegui i test prima del push\n- Naming: `docs/guide/naming.md`\n"
        "- Architettura: `docs/architecture.md`\n",
    )
    assert rule_texts(parsed) == ["Esegui i test prima del push"]


@pytest.mark.parametrize(
    "entry",
    [
        "Plans: `plans/[name].md`",  # a pattern with a blank: where things go
        "Tests: `tests/unit/`",  # a folder: where things go
        "Docs: `docs/*.md`",  # a glob: where things go
        "Read the guide before coding: `docs/guide.md`",  # the label instructs
        "LIRE IMPÉRATIVEMENT : [règles](docs/regles.md)",
    ],
)
def test_a_path_that_says_where_or_a_label_that_instructs_stays_a_rule(
    tmp_path: Path, entry: str
) -> None:
    parsed = parse(tmp_path, f"## Rules\n\n- Run the tests first\n- {entry}\n")
    assert entry.replace("- ", "") in rule_texts(parsed)


@pytest.mark.parametrize("language", sorted(markers.SECTIONS))
@pytest.mark.parametrize(
    ("family", "compiled"),
    [
        ("template", cues.TEMPLATE_HEADING),
        ("status", cues.STATUS_HEADING),
        ("form", cues.FORM_HEADING),
    ],
    ids=["template", "status", "form"],
)
def test_every_language_has_its_template_status_and_form_headings(
    language: str, family: str, compiled: re.Pattern[str]
) -> None:
    forms = getattr(markers.SECTIONS[language], family)
    assert len(forms) >= 4 and len(set(forms)) == len(forms)
    glue = "яя" if language == "ru" else "zz"
    for form in forms:
        assert compiled.search(f"## {form.capitalize()} (x)"), form  # caught as a word
        assert not compiled.search(f"## {glue}{form}{glue}"), form  # not inside one


def test_the_fields_of_a_template_are_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Rules\n\n## Prompt-Vorlage\n\n1) Ziel: das konkrete Ergebnis\n"
        "2) Risiken: Punkte, die geprüft werden sollten\n3) Tests: NIEMALS überspringen\n",
    )
    assert rule_texts(parsed) == ["Tests: NIEMALS überspringen"]  # a field that says must


def test_entries_under_a_template_of_a_workflow_are_its_steps(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## Workflow templates\n\n1. Run the analyzer\n2. Fix what it finds\n")
    assert rule_texts(parsed) == ["1. Run the analyzer\n2. Fix what it finds"]


def test_a_log_under_a_status_or_dated_heading_gives_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Rules\n\n- Run the tests first\n\n## Focus (June 2026)\n\n"
        "- 📌 Parser rewrite — not merged yet, 3 of 5 items are not removed\n\n"
        "### Known issues\n\n- ⚠️ Burst shots are not grouped\n"
        "- Restart the emulator after a crash\n",
    )
    assert rule_texts(parsed) == ["Run the tests first", "Restart the emulator after a crash"]


@pytest.mark.parametrize(
    ("heading", "hit"),
    [
        ("Focus (June 2026)", True),
        ("Stand 2026-01", True),
        ("Python 3.12 setup", False),
        ("Version v2026.1", False),
        ("Release 2026-rc", False),
        ("Port 20261", False),
    ],
)
def test_a_date_in_a_heading_is_told_from_a_version(heading: str, hit: bool) -> None:
    assert (cues.STATUS_HEADING.search(heading) is not None) is hit


@pytest.mark.parametrize(
    "heading", ["Formato output", "Output format", "出力形式", "응답 스타일", "Antwortstil"]
)
def test_short_entries_under_a_heading_of_the_form_of_answers_are_conventions(
    tmp_path: Path, heading: str
) -> None:
    parsed = parse(
        tmp_path, f"## {heading}\n\n- Risposte brevi e complete\n- Titoli quando utile\n"
    )
    assert [u.kind for u in parsed.units] == [MemoruleKind.CONVENTION] * 2


def test_a_list_of_glosses_under_a_format_heading_stays_a_vocabulary(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path, "## PR format\n\n- feat: new feature\n- fix: bug fix\n- docs: documentation\n"
    )
    assert rule_texts(parsed) == []


def test_short_entries_under_another_heading_stay_no_rules(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## Interessi\n\n- Sviluppo full-stack\n- Modelli linguistici\n")
    assert rule_texts(parsed) == []


def test_a_line_that_points_back_goes_on_with_the_line_before_it(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Language\n\nAlways answer in French.\nThis includes error messages and summaries.\n"
        "Write commit messages in English.\n",
    )
    assert rule_texts(parsed) == [
        "Always answer in French.\nThis includes error messages and summaries.",
        "Write commit messages in English.",
    ]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("**Versione**: 2.0 | **Update**: 2026-01 | **Stato**: Production", False),
        ("Version: 3 · Released: 2025-11 · Owner: platform team", False),
        ("Lint: ruff | Format: black", True),  # tools, no date: conventions
        ("Build: `make` | Test: `make test`", True),  # commands: conventions
        ("Tests: must pass | Lint: must be clean", True),  # requirements side by side
    ],
)
def test_a_line_of_metadata_pairs_is_no_rule(text: str, rule: bool) -> None:
    assert (guess_kind(text, ["Notes"]) is not None) is rule


def test_a_dated_heading_that_names_rules_is_no_log(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path, "## Coding rules (2025)\n\n- No inline styles\n- One component a file\n"
    )
    assert rule_texts(parsed) == ["No inline styles", "One component a file"]


def test_a_template_heading_that_names_rules_keeps_its_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path, "## Template conventions\n\n- One block per page\n- Logic-free markup\n"
    )
    assert rule_texts(parsed) == ["One block per page", "Logic-free markup"]


def test_a_file_whose_only_rules_are_too_short_to_write_says_why(tmp_path: Path) -> None:
    # At a low keep/skip threshold bare heading fragments read as rules; none can be a
    # memorule (under 10 characters), so the file must still say why it imports nothing.
    path = tmp_path / ".cursorrules"
    path.write_text("# 前置\n- 你是一个\n# 项目简介\n# 技术架构\n# 代码规范\n", encoding="utf-8")
    [low] = read_rule_files([path], tmp_path, threshold=0.35)
    assert [u.text for u in low.units if u.kind is not None] == [
        "前置",
        "项目简介",
        "技术架构",
        "代码规范",
    ]
    [warning] = [w for w in low.warnings if w.code == "no_rules"]
    assert "shorter than 10 characters" in warning.message
    [default] = [w for w in read_rule_files([path], tmp_path)[0].warnings if w.code == "no_rules"]
    assert "none of its 5 stretches of text reads as a rule" in default.message


# -- the twelfth round: lead-ins in every language, rules headings, du, XML-style tags ----


def test_a_lead_in_that_negates_in_chinese_carries_into_its_entries(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 安全\n\n[SAFETY_LOCKS]\n🔒 禁止操作：\n   - 修改_docs现有文件路径\n"
        "   - 变更Jekyll的默认Markdown解析器\n   - 添加需要后端交互的功能\n",
    )
    texts = rule_texts(parsed)
    assert len(texts) == 3  # each entry a rule, with the lead-in that forbids it
    assert all(t.startswith("[SAFETY_LOCKS]\n🔒 禁止操作：\n") for t in texts)


def test_a_lead_in_with_a_du_modal_makes_its_entries_rules(tmp_path: Path) -> None:
    text = "## Agent\n\nDu musst dich an die folgenden Anweisungen halten:\n\n- Kleine Commits\n"
    assert len(rule_texts(parse(tmp_path, text))) == 1
    # a heading is no lead-in: "Important Notes" over statements leaves them statements
    notes = "## Important Notes\n\n- The language compiles to WASM\n- Comments use `//`\n"
    assert rule_texts(parse(tmp_path, notes)) == []


def test_a_numbered_list_under_a_heading_that_names_rules_and_a_workflow_is_rules(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Git & Workflow Richtlinien\n\n1. Überprüfe vor jedem Commit den Status.\n"
        "2. Formatiere alle Commit-Nachrichten auf Englisch.\n",
    )
    assert len(rule_texts(parsed)) == 2
    steps = parse(tmp_path, "## Workflow\n\n1. Run `make setup`.\n2. Run `make test`.\n")
    assert len(rule_texts(steps)) == 1  # a workflow alone: the steps of one task


@pytest.mark.parametrize(
    "entry",
    [
        "Du darfst und sollst vorhandene Dateien bearbeiten.",
        "Hilf bei der Planung von Entwicklungsaufgaben.",
        "Du musst die Datei nach jeder Änderung aktualisieren.",
        "Du solltest kurze Antworten geben.",
    ],
)
def test_german_addressed_as_du_reads_as_an_instruction(tmp_path: Path, entry: str) -> None:
    parsed = parse(tmp_path, f"## Aufgaben\n\n- {entry}\n- Das Projekt läuft auf Vercel.\n")
    assert rule_texts(parsed) == [entry]


def test_xml_style_tags_are_markup_and_the_lines_inside_are_read(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Rules\n\n<law>\n第1原則： AIは必ずベストプラクティスに準拠する。\n"
        "第2原則： AIは実行前に必ず計画を報告する。\n</law>\n\n"
        "<language_rules>\n- Always answer in Russian\n</language_rules>\n\n<br/>\n",
    )
    assert rule_texts(parsed) == [
        "第1原則： AIは必ずベストプラクティスに準拠する。",
        "第2原則： AIは実行前に必ず計画を報告する。",
        "Always answer in Russian",
    ]
    assert not any("<" in u.text for u in parsed.units)  # no tag is a unit of its own


# -- the thirteenth round: Chinese without 请 or 必须 ----------------------------------


@pytest.mark.parametrize(
    "line",
    ["使用中文跟我对话", "没有我的许可 不许随意新建文件", "所有的注释都要使用中文"],
)
def test_chinese_instructions_without_a_request_word_are_rules(tmp_path: Path, line: str) -> None:
    parsed = parse(tmp_path, f"## 注释\n{line}\n")
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [line]  # short: heading first


def test_a_chinese_verb_that_heads_a_label_is_no_instruction(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## 文档\n\n使用方法：见 README\n")
    assert rule_texts(parsed) == []


def test_a_bare_russian_ne_states_a_fact_and_a_negated_imperative_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Проект\n\n- Сервер не поддерживает HTTP/1.0\n- Сборка пока не кэшируется\n"
        "- Не используй `var` в новом коде\n",
    )
    assert rule_texts(parsed) == ["Не используй `var` в новом коде"]


def test_a_bold_title_over_rules_is_a_label_and_a_bold_instruction_is_a_rule(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Practices\n\n- **Build Process**\n  - Use `tsc` for building the project\n"
        "  - Run `npm run build` to compile TypeScript files\n"
        "- **Install dependencies**\n  - With pnpm: `pnpm install`\n  - With npm: `npm install`\n",
    )
    assert rule_texts(parsed) == [
        "**Build Process**\nUse `tsc` for building the project",
        "**Build Process**\nRun `npm run build` to compile TypeScript files",
        "**Install dependencies**\n- With pnpm: `pnpm install`\n- With npm: `npm install`",
    ]


# -- the fourteenth round: numbered prohibitions, Chinese "when" and "uniformly use",
# Japanese noun-final instructions ------------------------------------------------------


def test_numbered_prohibitions_after_a_lead_in_are_rules_of_their_own(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 强制约束\n\n以下约束在所有项目中强制生效：\n\n"
        "1. 禁止 git add -A，只能精确 add 本任务涉及的文件\n2. 禁止使用 Docker 进行任何测试\n"
        "3. 禁止修改测试来让测试通过\n",
    )
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [
        "禁止 git add -A，只能精确 add 本任务涉及的文件",
        "禁止使用 Docker 进行任何测试",
        "禁止修改测试来让测试通过",
    ]


def test_numbered_steps_after_a_lead_in_stay_one_procedure(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Releases\n\nWhen you cut a release:\n\n1. Update the CHANGELOG\n2. Tag the commit\n"
        "3. Push the tag\n",
    )
    [rule] = rule_texts(parsed)
    steps = ["1. Update the CHANGELOG", "2. Tag the commit", "3. Push the tag"]
    assert rule.splitlines()[-3:] == steps


@pytest.mark.parametrize("lead", ["Contraintes :", "制約：", "Einschränkungen:", "Ограничения:"])
def test_constraints_name_rules_in_every_language(lead: str) -> None:
    assert cues.RULES_LEAD.search(lead)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("当用户输入 `读 start.md`（或含此短语的消息）时，立即读取项目根目录下的文件", True),
        ("当上下文消耗超过 60% 时，立刻执行紧急存档", True),
        ("提交前先运行测试", True),
        ("当网络断开时，应用会自动重连", False),  # what the app does, no instruction
    ],
)
def test_a_chinese_when_clause_then_at_once_an_action(text: str, hit: bool) -> None:
    assert grammar.instruction(text) is hit


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("文件名统一使用小写字母和中划线（如：user-list.tsx）。", MemoruleKind.CONVENTION),
        ("本仓库内所有新建的项目文档默认使用中文。", MemoruleKind.CONVENTION),
    ],
)
def test_chinese_uniformly_or_by_default_use_is_a_convention(
    tmp_path: Path, text: str, kind: MemoruleKind
) -> None:
    parsed = parse(tmp_path, f"## 项目\n\n- {text}\n")
    [unit] = [u for u in parsed.units if u.kind is not None]
    assert unit.kind is kind


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("重要なポイントは太字で強調", True),
        ("ユーティリティは lib/ 配下に配置", True),
        ("コンテキストが不明瞭な時は、ユーザーに確認します。", True),
        ("Implementation Plan などは日本語で記載する。", True),
        ("例文や具体例を積極的に使用", True),
        ("このモジュールは PostgreSQL に依存する", False),  # a state, not an instruction
        ("このファイルは Claude Code へのガイダンスを提供します。", False),  # what it offers
        ("新しいサイクルを開始する場合に使用します。", False),  # what a thing is used for
    ],
)
def test_japanese_noun_final_and_plain_instructions(text: str, rule: bool) -> None:
    assert bool(cues.IMPERATIVE.search(text)) is rule


# -- the fifteenth round: entries with labels of their own, Korean informal requests, a
# file's metadata lines ------------------------------------------------------------------


def test_entries_with_labels_of_their_own_are_rules_under_a_label(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 后端规范\n\n- **命名规范**:\n  - 类名: PascalCase\n  - 方法/变量: camelCase\n"
        "  - 常量: UPPER_SNAKE_CASE\n",
    )
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [
        "类名: PascalCase",
        "方法/变量: camelCase",
        "常量: UPPER_SNAKE_CASE",
    ]


def test_a_field_to_fill_is_no_metadata_line(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Testing\n\nAfter each test, update `TEST_LOG.md` with:\n- Test name and path\n"
        "- Status: PASS or FAIL\n- Brief description of what was tested\n",
    )
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [
        "Test name and path",
        "Status: PASS or FAIL",
        "Brief description of what was tested",
    ]


@pytest.mark.parametrize(
    "line",
    ["이모티콘을 넣으면서 대답해줘.", "코드 예시는 꼭 포함해줘.", "주석은 한국어로 적어 주세요."],
)
def test_korean_informal_requests_are_instructions(line: str) -> None:
    assert cues.IMPERATIVE.search(line)


def test_a_files_metadata_lines_are_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Agent Instructions\n\nStatus: normative  \nScope: organization  \n"
        "Revision: 2746015fddc02636772fedb9d8672b244cea0b4e\n\n"
        "## Baseline\n\n- MUST NOT claim an unperformed test.\n",
    )
    assert rule_texts(parsed) == ["MUST NOT claim an unperformed test."]


# -- the sixteenth round: Chinese "ignore" and "don't" at the head of a line, "should" under
# a heading that describes ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    ["忽略文件编码有关的错误或警告。", "不运行测试用例，因为环境比较特殊，无法部署到容器内。"],
)
def test_chinese_ignore_and_dont_at_the_head_of_a_line_instruct(tmp_path: Path, line: str) -> None:
    parsed = parse(tmp_path, f"## 开发环境\n\n- {line}\n")
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [line]


def test_a_chinese_label_headed_by_ignore_is_no_instruction() -> None:
    assert not grammar.instruction("忽略: 这些文件")


def test_should_under_a_heading_that_describes_stays_a_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Website Design Elements\n\n"
        "* The contact info should appear somewhere and link to the email address.\n"
        "* The site is built with plain HTML.\n",
    )
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [
        "The contact info should appear somewhere and link to the email address."
    ]


# -- the seventeenth round: a sentence about the file in every language, a table of
# situations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("このファイルは AI エージェント共通の作業方針を定義します。", True),
        ("이 파일은 이 저장소의 운영 규칙입니다", True),
        ("本文件为 Claude Code 提供指导", True),
        ("Ce fichier décrit les règles du projet", True),
        ("Este archivo es la fuente de verdad", True),
        ("Questo filetto è buono", False),  # a word that only starts like "file"
        ("Ce fichage est interdit", False),
    ],
)
def test_a_sentence_about_the_file_itself_in_every_language(text: str, about: bool) -> None:
    assert cues.who_or_what_file(text) is about


def test_a_sentence_about_the_file_with_a_hard_modal_stays_a_rule(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## 维护\n\n- 本文件必须保持最新\n- 本文件为 Claude Code 提供指导\n")
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == ["本文件必须保持最新"]


def test_each_row_of_a_table_of_situations_is_a_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 技能\n\n| 场景 | 使用技能 |\n|------|----------|\n"
        "| 写 HTML/CSS/UI | `frontend-design` |\n| Git 提交 | `commit-commands:commit` |\n"
        "| 定时任务 | |\n",
    )
    assert [t.splitlines()[-1] for t in rule_texts(parsed)] == [
        "| 写 HTML/CSS/UI | `frontend-design` |",
        "| Git 提交 | `commit-commands:commit` |",
    ]


# -- the eighteenth round: plain-text headings, labelled commands in every language ---------


def test_a_plain_text_heading_heads_its_list_and_is_no_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Project\n\nAbsolutely forbidden (quick list)\n- Creating synths in components.\n"
        "- Storing timelines in state.\n\nKey terms\n- AudioEngine: the singleton audio "
        "controller.\n- BeatClock: the measure-based scheduler.\n- timelineMap: the shared "
        "registry.\n\nKeep it short\n- one\n",
        name=".cursorrules",
    )
    rules = [u for u in parsed.units if u.kind is not None]
    # the negating heading reaches its entries (carried into each, as a "#" heading's is);
    # the heading line is no unit of its own
    assert [u.text for u in rules][:2] == [
        "Absolutely forbidden (quick list)\nCreating synths in components.",
        "Absolutely forbidden (quick list)\nStoring timelines in state.",
    ]
    assert all("Absolutely forbidden (quick list)" in u.context for u in rules[:2])
    headings = ("Absolutely forbidden (quick list)", "Key terms")
    assert not any(u.text in headings for u in parsed.units)
    # a glossary under its plain heading describes; a line with an imperative stays a
    # paragraph (a rule of its own), not a heading
    assert not any("AudioEngine" in u.text for u in rules)
    assert any(u.text.startswith("Keep it short") for u in rules)


def test_a_plain_text_heading_covers_only_the_list_right_after_it(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Rules\n\nWhat to avoid\n- Global state\n\nAfterwards, run the linter before "
        "each commit.\n\n- Write tests first\n",
    )
    last = [u for u in parsed.units if u.kind is not None][-1]
    assert last.text == "Write tests first"
    assert "What to avoid" not in last.context


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("开发：pnpm dev", True),
        ("测试：`pnpm test`", True),
        ("Тесты: python manage.py test", True),
        ("Dev: pnpm dev", True),
        ("Package Manager: pnpm (frontend)", False),  # the tool a stack uses, no command
        ("Build Tools: npm is used for the builds", False),  # prose about the tool
    ],
)
def test_a_labelled_command_in_every_language(line: str, command: bool) -> None:
    from prism_memory.formats.rules_io.kinds import evidence

    assert evidence(line).labelled is command


def test_labelled_commands_under_any_heading_are_conventions(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "## 常用脚本\n- 开发：pnpm dev\n- 构建：pnpm build\n")
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("开发：pnpm dev", MemoruleKind.CONVENTION),
        ("构建：pnpm build", MemoruleKind.CONVENTION),
    ]


# -- the nineteenth round: a heading that names the stack ----------------------------------


@pytest.mark.parametrize(
    ("heading", "stack"),
    [
        ("Tech Stack", True),
        ("🛠 Technology Stack (from package.json)", True),
        ("技术栈", True),
        ("Stack technique cible", True),
        ("기술 스택", True),
        ("Call stack handling", False),
        ("Architecture", False),
        # the twentieth round: a qualifier before it, and the development environment
        ("Key Technologies", True),
        ("Technologies clés", True),
        ("Development Environment (local)", True),
        ("Environnement", True),
        ("开发环境", True),
        ("Environment Variables", False),
        ("Test environment setup", False),
    ],
)
def test_a_heading_that_names_the_stack(heading: str, stack: bool) -> None:
    assert bool(cues.STACK_HEADING.match(heading)) is stack


def test_a_stack_heading_that_also_describes_still_names_the_stack(tmp_path: Path) -> None:
    # "技术栈", "技術スタック", "기술 스택" are descriptive headings too; the stack decides
    for heading in ("技术栈", "技術スタック", "기술 스택"):
        parsed = parse(
            tmp_path,
            f"## {heading}\n\n- 框架: Spring Boot 4.0\n- 开发语言: Java\n- 缓存: caffeine\n",
        )
        assert [u.kind for u in parsed.units] == [MemoruleKind.CONVENTION] * 3, heading


def test_entries_under_an_environment_heading_are_conventions(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Environnement\n\n- **OS**: Windows 11\n- **Shell**: PowerShell\n"
        "- **Backend**: Python >=3.11 • FastAPI • Postgres\n",
    )
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("**OS**: Windows 11", MemoruleKind.CONVENTION),
        ("**Shell**: PowerShell", MemoruleKind.CONVENTION),
        ("**Backend**: Python >=3.11 • FastAPI • Postgres", MemoruleKind.CONVENTION),
    ]


# -- the twentieth round: work planned or done, and "TODO:" entries -------------------------


@pytest.mark.parametrize(
    ("heading", "work"),
    [
        ("Next Development Steps", True),
        ("🚀 Next steps", True),
        ("Already Completed", True),
        ("Future Services", True),
        ("Backlog", True),
        ("Próximos pasos", True),
        ("Prochaines étapes", True),
        ("Nächste Schritte", True),
        ("下一步计划", True),
        ("今後の予定", True),
        ("다음 단계", True),
        ("Definition of Done", False),
        ("Steps to release", False),
        ("Future-proof code", False),
    ],
)
def test_a_heading_that_names_work_planned_or_done(heading: str, work: bool) -> None:
    assert bool(cues.WORK_HEADING.match(heading)) is work


def test_work_items_are_no_rules_unless_they_say_must(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Rules\n\n- Run the tests before each commit\n- TODO: Improve the README\n\n"
        "## Next Development Steps\n\n- Create authentication pages and logic\n"
        "- Build the artisan dashboard\n- Never store tokens in localStorage\n",
    )
    assert rule_texts(parsed) == [
        "Run the tests before each commit",
        "Never store tokens in localStorage",
    ]
    skipped = [u.text for u in parsed.units if u.kind is None]
    assert "TODO: Improve the README" in skipped
    assert "Create authentication pages and logic" in skipped


def test_entries_under_a_stack_heading_are_conventions(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Technology Stack\n\n- **Framework**: Next.js 16\n- **Language**: TypeScript\n"
        "- **Styling**: Tailwind CSS v4\n\n## Glossary\n\n- **Shelf**: a list of books\n"
        "- **Loan**: a borrowed book\n- **Hold**: a reserved book\n",
    )
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("**Framework**: Next.js 16", MemoruleKind.CONVENTION),
        ("**Language**: TypeScript", MemoruleKind.CONVENTION),
        ("**Styling**: Tailwind CSS v4", MemoruleKind.CONVENTION),
    ]


# -- a rule file written as JSON ------------------------------------------------------------


JSON_RULES = """{
  "typescript": {
    "use": "for all code",
    "avoid_enums": "use maps instead"
  },
  "document_management": {
    "cardinal_rule": "Never create new memory-bank documents, always update existing ones",
    "procedure": [
      "1. Before creating a document, check if a related file already exists",
      "2. If similar content exists, update the existing file"
    ],
    "empty": []
  }
}
"""


def test_a_rule_file_written_as_json_is_read_key_by_key(tmp_path: Path) -> None:
    parsed = parse(tmp_path, JSON_RULES, name=".cursorrules")
    rules = [u for u in parsed.units if u.kind is not None]
    assert [u.text for u in rules] == [
        "use: for all code",
        "avoid_enums: use maps instead",
        "cardinal_rule: Never create new memory-bank documents, always update existing ones",
        "1. Before creating a document, check if a related file already exists\n"
        "2. If similar content exists, update the existing file",
    ]
    # the keys that open an object or array are the headings; each rule keeps its own lines
    assert rules[0].context == ("typescript",)
    assert rules[2].context == ("document_management",)
    assert (rules[2].location.line_start, rules[3].location.line_start) == (7, 9)


def test_json_in_a_shape_the_reading_does_not_know_stays_markdown(tmp_path: Path) -> None:
    one_line = '{"rules": ["Always run the tests", "Never push to main"]}\n'
    parsed = parse(tmp_path, one_line, name=".clinerules")
    assert [u.text for u in parsed.units] == [one_line.strip()]
    not_json = "{ this is not json }\n- Always run the tests\n"
    parsed = parse(tmp_path, not_json, name=".clinerules")
    assert "Always run the tests" in [u.text for u in parsed.units if u.kind is not None]


# -- the twenty-first round: a table of commands, and commands after a lead-in ------------


def test_each_row_of_a_table_of_commands_is_a_convention(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Comandi\n\n| Attività | Comando |\n| --- | --- |\n"
        "| Installazione dal lockfile | `npm ci` |\n| Test unitari | `npm test` |\n"
        "| `workplan/` | Arbeitsplanverwaltung |\n",
    )
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("| Installazione dal lockfile | `npm ci` |", MemoruleKind.CONVENTION),
        ("| Test unitari | `npm test` |", MemoruleKind.CONVENTION),
    ]
    # the header and a row that names a folder stay descriptive, nothing left out
    assert "| `workplan/` | Arbeitsplanverwaltung |" in "\n".join(
        u.text for u in parsed.units if u.kind is None
    )


def test_commands_after_a_lead_in_are_one_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Rules\n\nVerification before completion:\n- node --check app.js\n"
        "- python3 -m pytest tests -q\n\n## Pushing\n\n- Before pushing:\n  - `uv run ruff check`\n"
        "  - `uv run pytest`\n",
    )
    assert rule_texts(parsed) == [
        "Verification before completion:\n- node --check app.js\n- python3 -m pytest tests -q",
        "Before pushing:\n- `uv run ruff check`\n- `uv run pytest`",
    ]


# -- the twenty-second round: rules about what a heading describes, forms, examples,
# languages as settings, settings line by line, Chinese prohibitions ----------------------


def test_a_heading_that_names_rules_about_what_it_describes_heads_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 3. 架构硬约束\n\n- 不引入 Room / SQLite / Compose\n- 账户关联只用 `Account.id`\n\n"
        "## 架构\n\n- 模型放在 `model/` 目录\n\n## 왜 이런 규칙이 필요한가?\n\n"
        "- 팀 개발 환경의 일관성 유지\n- 포트 충돌 방지\n",
    )
    assert rule_texts(parsed) == ["不引入 Room / SQLite / Compose", "账户关联只用 `Account.id`"]


@pytest.mark.parametrize(
    ("heading", "describes"),
    [
        ("3. 架构硬约束", False),
        ("Architecture rules", False),
        ("Architecture", True),
        ("왜 이런 규칙이 필요한가?", True),
        ("Why these rules", True),
    ],
)
def test_naming_rules_wins_over_describing_except_why(heading: str, describes: bool) -> None:
    from prism_memory.formats.rules_io.headings import describes as describing

    assert describing(heading) is describes


def test_the_fields_of_a_request_form_are_no_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 작업 규칙\n\n- 커밋 전에 테스트를 실행하세요\n\n### 일반 작업 요청서\n\n"
        "- 작업 정보: 작업 유형, 우선순위\n- 작업 설명: 구현할 기능/수정 내용\n"
        "- 완료 조건: 작업 완료 기준\n",
    )
    assert rule_texts(parsed) == ["커밋 전에 테스트를 실행하세요"]


@pytest.mark.parametrize(
    ("entry", "example"),
    [
        ("예시: feat: add github mcp server support", True),
        ("Example: `fix(api): handle empty body`", True),
        ("例：`feat: フィルタルールを追加`", True),
        ("Esempio: raggiungi un limite di rate API", True),
        ("Examples: Provide clear examples in the documentation", False),
        ("Exemplify the fix in the PR body", False),
    ],
)
def test_an_example_on_its_own_entry(entry: str, example: bool) -> None:
    assert bool(cues.EXAMPLE_ENTRY.match(entry)) is example


def test_an_example_entry_is_no_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Git Commit 규칙\n\n- 커밋 메시지는 영어로 작성하세요\n"
        "- 예시: feat: add github mcp server support\n",
    )
    assert rule_texts(parsed) == ["커밋 메시지는 영어로 작성하세요"]


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        ("语言：English", True),
        ("Projektsprache, Markdowns, Planungsdokumente, Logs: deutsch", True),
        ("주 언어: 한국어 (Native Korean)", True),
        ("Sprache der Inhalte: Deutsch.", True),
        ("Language: Java 21", False),
        ("Deutsch ist die Sprache der Dokumentation", False),
    ],
)
def test_a_human_language_as_a_labels_value(line: str, setting: bool) -> None:
    from prism_memory.formats.rules_io.kinds import evidence

    assert evidence(line).convention is setting


def test_settings_written_line_by_line_are_entries(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "# Anweisungen\n\n### Sprache\n\n"
        "Projektsprache, Markdowns, Planungsdokumente, Logs: deutsch\n"
        "Typen, Kommentare, Code, Git Commit Kommentare: englisch\n\n"
        "### Regeln\n\ntrigger: always_on\nalwaysApply: true\n",
    )
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("Projektsprache, Markdowns, Planungsdokumente, Logs: deutsch", MemoruleKind.CONVENTION),
        ("Typen, Kommentare, Code, Git Commit Kommentare: englisch", MemoruleKind.CONVENTION),
    ]
    # the front-matter keys written in the body are read, skipped as metadata, not lost
    assert "alwaysApply: true" in [u.text for u in parsed.units if u.kind is None]


@pytest.mark.parametrize(
    ("line", "hard"),
    [
        ("不引入 Room / SQLite / Compose", True),
        ("不改 `applicationId` / `namespace`", True),
        ("不新增未使用的依赖", True),
        ("账户关联只用 `Account.id`", True),
        ("不同的模块放在不同的目录", False),
        ("不仅要快，还要稳定", False),
        ("不支持 Windows 7", False),
        ("不过这只是一个建议", False),
    ],
)
def test_chinese_prohibitions_and_only(line: str, hard: bool) -> None:
    assert bool(cues.HARD.search(line)) is hard


def test_a_subject_under_a_lead_in_and_an_entry_title_repeats_no_part(tmp_path: Path) -> None:
    # found by holdout22's first take: the lead (the lead-in, then the entry's title) was
    # one part and the title, its context, a second: "复杂样式编写: 样式核心规范： 复杂样式编写: …"
    parsed = parse(
        tmp_path,
        "样式核心规范：\n\n1. **原子化 CSS 方案**  \n   - 仅允许使用 UnoCSS 作为原子 CSS 工具。\n"
        "2. **复杂样式编写**  \n   - 复杂样式必须使用 SCSS，减少样式冗余。\n",
        name="style.mdc",
    )
    subjects = [subject_for(u) for u in parsed.units if u.kind is not None]
    assert "样式核心规范: 复杂样式编写: 复杂样式必须使用 SCSS，减少样式冗余。" in subjects
    for subject in subjects:
        parts = subject.split(": ")
        assert len(parts) == len(set(parts)), subject


def test_a_long_entry_label_is_not_repeated_shortened_before_itself(tmp_path: Path) -> None:
    # found by holdout24's first take: a parent entry's label over 60 characters was the
    # context, shortened ("… at the end of…"), and the lead, whole, so the subject named it
    # twice
    parsed = parse(
        tmp_path,
        "### 5. Final Review\n\n*   **Wrap-up Section:** Add a `## Review` section at the end "
        "of `tasks/todo.md`:\n    *   List all completed tasks with statuses.\n"
        "    *   Note any deviations and why.\n",
        name="GEMINI.md",
    )
    subjects = [subject_for(u) for u in parsed.units if u.kind is not None]
    assert subjects == [
        "Wrap-up Section: Add a `## Review` section at the end of `tasks/todo.md`: "
        "List all completed tasks with statuses",
        "Wrap-up Section: Add a `## Review` section at the end of `tasks/todo.md`: "
        "Note any deviations and why",
    ]


def test_a_lead_wrapped_over_lines_stays_one_part_of_the_subject(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Styling\n\nThe styling system lives in `styles/` and is organized into\n"
        "three layers:\n\n- **`base.go`**: Always build the base theme first.\n",
    )
    [subject] = [subject_for(u) for u in parsed.units if u.kind is not None]
    assert "organized into: three" not in subject
    assert "organized into three layers" in subject


# -- the twenty-third round: headings that name rules and describe, red lines, the stack
# under more headings ------------------------------------------------------------------------


def test_under_a_heading_that_names_rules_and_describes_the_wording_decides(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## Architecture & Conventions\n\n- Backend (Python)\n"
        "- `app.py` sert simplement l'application Flask courante\n"
        "- `lib/app_settings.py` centralise les constantes applicatives\n"
        "- Respectez les classes utilitaires CSS déjà existantes\n- **Language**: Java 21\n",
    )
    assert rule_texts(parsed) == [
        "Respectez les classes utilitaires CSS déjà existantes",
        "**Language**: Java 21",
    ]


@pytest.mark.parametrize(
    ("heading", "mixed"),
    [
        ("Architecture & Conventions", True),
        ("2. 아키텍처 원칙 (Nx + Micro Frontends)", True),
        ("3. 架构硬约束", True),
        ("Architecture", False),
        ("Coding conventions", False),
        ("왜 이런 규칙이 필요한가?", False),
    ],
)
def test_a_heading_that_names_rules_and_describes(heading: str, mixed: bool) -> None:
    from prism_memory.formats.rules_io.headings import mixed as naming_both

    assert naming_both(heading) is mixed


def test_a_heading_of_red_lines_names_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 十条红线\n\n❶ 先扫描，后修改 —— 体检报告前，不改代码\n❷ 从 P0 修起 —— P0 未清不上线\n"
        "❸ 删数据先想历史 —— 有业务记录就走软删除\n",
    )
    assert len(rule_texts(parsed)) == 3


@pytest.mark.parametrize(
    ("line", "hard"),
    [
        ("接手流程不可跳：Phase 0 → Phase 20", True),
        ("这是不可能的情况", False),
        ("服务暂时不可用", False),
        ("测试是不可或缺的一部分", False),
    ],
)
def test_chinese_must_not(line: str, hard: bool) -> None:
    assert bool(cues.HARD.search(line)) is hard


@pytest.mark.parametrize(
    ("heading", "stack"),
    [
        ("Outils et technologies", True),
        ("Herramientas y tecnologías", True),
        ("Strumenti e tecnologie", True),
        ("Tools und Technologien", True),
        ("주요 기술 스택", True),
        ("사용 기술", True),
        ("主要技术栈", True),
        ("主な技術スタック", True),
        ("Outils de test", False),
        ("기술 부채", False),
    ],
)
def test_the_stack_under_more_headings(heading: str, stack: bool) -> None:
    assert bool(cues.STACK_HEADING.match(heading)) is stack


def test_stack_entries_under_a_qualified_korean_heading_are_conventions(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 주요 기술 스택\n\n- **상태 관리**: riverpod\n- **라우팅**: go_router\n",
    )
    assert [(u.text, u.kind) for u in parsed.units if u.kind is not None] == [
        ("**상태 관리**: riverpod", MemoruleKind.CONVENTION),
        ("**라우팅**: go_router", MemoruleKind.CONVENTION),
    ]


def test_forbidding_entries_under_a_heading_that_says_when_are_rules(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Antes de cambiar código\n\n1. Leer `AGENTS.md` y crear una rama de trabajo.\n"
        "2. No implementar funciones del roadmap sin petición explícita.\n"
        "3. Mantener separación GUI / lógica.\n4. Tests + docs + `CHANGELOG.md`.\n"
        "5. UI y errores en español; nunca loguear datos personales.\n"
        "6. No añadir dependencias innecesarias al repositorio.\n",
    )
    assert len(rule_texts(parsed)) == 6


def test_steps_under_a_heading_that_says_when_stay_one_procedure(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Before committing\n\n1. Run the formatter.\n2. Run the tests.\n"
        "3. Update the changelog.\n4. Never push to main directly.\n",
    )
    assert len(rule_texts(parsed)) == 1


@pytest.mark.parametrize(
    "heading",
    [
        "2) 작업 시작 체크리스트",
        "リリース前チェックリスト",
        "提交检查清单",
        "Checkliste",
        "Чек-лист",
    ],
)
def test_a_checklist_in_other_languages_is_one_procedure(tmp_path: Path, heading: str) -> None:
    parsed = parse(
        tmp_path,
        f"## {heading}\n\n1. Run the linter.\n2. Run the tests.\n3. Update the changelog.\n",
    )
    assert len(rule_texts(parsed)) == 1


@pytest.mark.parametrize(
    "entry",
    [
        "Notazione coerente; definire i simboli alla prima occorrenza.",
        "Unità SI; in italiano usare virgola decimale (es. 3,14).",
        "Consistent notation; define symbols at first use.",
    ],
)
def test_a_later_clause_that_instructs(tmp_path: Path, entry: str) -> None:
    parsed = parse(tmp_path, f"## Stile\n\n- {entry}\n", name="stile.mdc")
    assert rule_texts(parsed) == [entry]


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        ("配置文件使用 JSON 或 YAML", True),
        ("代码评审使用中文", True),
        ("技术术语、专有名词可使用英文", True),
        ("如果已经使用强语义类型，不必再加注释", False),
        ("既存プロジェクトで使用します。", False),
        ("使用 pnpm 安装依赖", False),
    ],
)
def test_chinese_x_uses_y_is_a_convention(line: str, setting: bool) -> None:
    from prism_memory.formats.rules_io.kinds import evidence

    assert evidence(line).convention is setting


def test_chinese_settings_under_a_bold_label_are_a_rule_each(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 交流与协作语言\n\n1. **团队交流**\n   - 代码评审使用中文\n"
        "   - 技术讨论使用中文，技术术语可使用英文\n   - 会议和演示使用中文\n",
        name="chinese.mdc",
    )
    assert len(rule_texts(parsed)) == 3


def test_lines_that_are_each_a_sentence_are_an_entry_each(tmp_path: Path) -> None:
    # some lines end with a stop and some do not, but each opens a sentence of its own
    parsed = parse(
        tmp_path,
        "## Frontend\nAlways use tailwindcss for styling\nAlways use lucide-react icons\n"
        "Define props at the top of the file with interface Props {...}\n"
        "Always use react query. Use the use-api hook for calls to our server\n",
        name="general.mdc",
    )
    assert rule_texts(parsed) == [
        "Always use tailwindcss for styling",
        "Always use lucide-react icons",
        "Define props at the top of the file with interface Props {...}",
        "Always use react query.",
        "Use the use-api hook for calls to our server",
    ]


@pytest.mark.parametrize(
    "text",
    [
        # wrapped prose goes on in lower case
        "Run the tests before you\npush a branch. Then open a\npull request for a review.",
        # a line ending in a comma goes on in the next one
        "Keep functions small,\nName them for what they do\nPrefer pure functions",
        # a one-word label over the lines it names
        "ROLE\nYou are an expert in React and Next.js.\nYour task is to write notes",
    ],
)
def test_lines_that_go_on_are_not_entries(text: str) -> None:
    assert sentences.line_spans(text) is None


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("사용자에게 보이는 글은 예외 없이 한국어로 쓴다.", True),
        ("명령어 사용 시 경로 가정을 현재 저장소 구조와 맞춘다.", True),
        ("변경 사항은 CHANGELOG에 적는다", True),
        ("콘텐츠 슬롯에 렌더링된다.", False),
        ("이 설정은 기본값이다.", False),
    ],
)
def test_the_korean_plain_present_instructs(line: str, hit: bool) -> None:
    assert bool(cues.IMPERATIVE.search(line)) is hit


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("Datenbanktabellen analysieren", True),
        ("TODOs anpassen", True),
        ("neue Erkenntnisse dokumentieren", True),
        ("Imports korrigieren", True),
        ("the file is hidden", False),
        ("Use the modern pattern", False),
        ("Tests are written", False),
    ],
)
def test_short_german_entries_without_small_words(line: str, hit: bool) -> None:
    assert grammar.instruction(line) is hit


def test_bullets_pasted_from_a_document_are_list_entries(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Rules\n\n"
        "1.\tService rules\n"
        "\t•\tAlways wrap the crawler as a web service.\n"
        "\t•\tNever block the request while the crawler runs.\n"
        "\n"
        "• Always write each comment to the database at once.\n",
        name="rules.mdc",
    )
    texts = rule_texts(parsed)
    # each entry a rule of its own, under its numbered label
    assert "Service rules\nAlways wrap the crawler as a web service." in texts
    assert "Service rules\nNever block the request while the crawler runs." in texts
    assert "Always write each comment to the database at once." in texts
    # the entry is cut after the bullet: its text is source text
    assert not any("•" in t for t in texts)


def test_a_pasted_bullet_run_followed_by_a_margin_line_is_left_as_it_was() -> None:
    # "- …" there would make the next line the last entry's lazy continuation
    texts = ["Plan a path:", "• Hero section first.", "• Then the form.", "Give feedback."]
    assert blocks.as_list_items(texts) == texts
    assert blocks.as_list_items([*texts[:3], ""])[1:3] == [
        "- Hero section first.",
        "- Then the form.",
    ]


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("Alte Saves muessen ueber `normalizeLoadedState()` kompatibel bleiben.", True),
        ("Bei Build-Fehlern zuerst Konfigurations- und Importkette pruefen.", True),
        ("Tick-Dispatches laufen ueber den zentralen Orchestrator", False),
    ],
)
def test_german_written_without_umlauts(line: str, hit: bool) -> None:
    assert (
        bool(cues.HARD.search(line) or cues.SOFT.search(line)) or grammar.instruction(line)
    ) is hit


def test_cursors_new_rule_template_is_no_rule(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "---\nalwaysApply: true\n---\n# Your rule content\n\n- You can @ files here\n"
        "- You can use markdown but dont have to\n\n- Always answer in Portuguese.\n",
        name="regras.mdc",
    )
    assert rule_texts(parsed) == ["Always answer in Portuguese."]


def test_a_block_at_the_margin_after_a_list_entry_is_its_own(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## Backend\nEach folder can contain the following files:\n"
        "- views.py which defines fastapi routes\n- models.py which define pydantic models\n"
        "Run mypy after editing code in the backend\nAlways run ruff before you commit\n"
        "Never edit a migration once it is merged\n",
        name="general.mdc",
    )
    texts = rule_texts(parsed)
    assert "Always run ruff before you commit" in texts
    assert "Never edit a migration once it is merged" in texts
    assert not any("models.py" in t and "ruff" in t for t in texts)
    # the lines keep their numbers in the file
    [unit] = [u for u in parsed.units if u.text == "Always run ruff before you commit"]
    assert (unit.location.line_start, unit.location.line_end) == (6, 6)


@pytest.mark.parametrize(
    "text",
    [
        # wrapped at the margin: the line before goes on into it
        "- Always use the client for calls to the\nAPI of the billing service\n",
        # an entry that is only a bold title: its body follows at the margin
        "1. **Approval Required**\nExplain the work and wait for my approval.\n",
        # Chinese wraps no line: the line after an entry's is its body
        "1. 当要求提交代码时执行\n先更新代码结构，更新README.md文档。\n",
        # the entry's own parts, each named by a short label
        "1. Preserve current behavior unless asked to change it.\n"
        "Do: keep existing defaults and side effects.\n"
        "Do not: silently change runtime behavior or config defaults.\n",
    ],
)
def test_lines_at_the_margin_that_go_on_an_entry_stay_in_it(text: str) -> None:
    assert [n.kind for n in blocks.parse(text, 1)] in (["bullet_list"], ["ordered_list"])


@pytest.mark.parametrize(
    ("line", "verb"),
    [
        ("After completing each step, state what changed and ask to proceed", True),
        ("If a task needs more than 5 steps, present the plan first", True),
        ("If differences are detected, flag them in tests before merging", True),
        ("If it fails, the build stops", False),
        ("When the cache is cold, it takes a minute", False),
        ("When a user logs in, tokens expire after an hour", False),
        ("In this case, unless the user asks, keep the scope small", False),
    ],
)
def test_a_verb_after_a_clause_that_says_when(line: str, verb: bool) -> None:
    from prism_memory.formats.rules_io.english import verb_after_clause

    assert verb_after_clause(line) is verb


@pytest.mark.parametrize(
    "line",
    [
        "La UI reside únicamente en `apps/tenant/core/templates/`.",
        "Os dados são acessados somente via API.",
        "I file statici vanno serviti esclusivamente da `static/`.",
    ],
)
def test_only_in_spanish_portuguese_and_italian_is_hard(line: str) -> None:
    assert cues.HARD.search(line)


def test_solo_is_not_only() -> None:
    assert not cues.HARD.search("Un solo servidor atiende las peticiones.")


def parsed_text(tmp_path: Path) -> str:
    return (tmp_path / "copilot-instructions.md").read_text(encoding="utf-8")


def test_a_subject_stops_at_the_code_its_lead_introduces(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        "## 运行时合规检测（建议）\n\n- 如果你的程序依赖 FFmpeg，建议启动时检测编译选项。\n"
        "- 可用判断代码示例：\n  ```cpp\n  bool has_gpl();\n  ```\n"
        "  在程序启动时调用并在检测到不合规构建时退出。\n",
        name="copilot-instructions.md",
    )
    unit = [u for u in parsed.units if u.kind is not None][-1]
    subject = subject_for(unit)
    assert subject == "运行时合规检测（建议）: 可用判断代码示例："
    # every part of it is source text
    assert all(part in parsed_text(tmp_path) for part in subject.split(": "))


def test_a_word_that_joins_after_a_clause_is_no_verb() -> None:
    from prism_memory.formats.rules_io.english import verb_after_clause

    assert not verb_after_clause("In this case, unless the user appears to be well-suited, ask")
    assert verb_after_clause("In other words, channel your inner maintainer.")


# -- the thirtieth round: an array written on its key's line, and a rule file of TOML tables --


def test_a_json_value_written_on_its_keys_line_is_one_entry(tmp_path: Path) -> None:
    parsed = parse(
        tmp_path,
        '{\n  "imports": {\n    "order": ["builtin", "external", "internal"],\n'
        '    "newlinesBetween": "always"\n  },\n  "steps": [\n'
        '    {"run": "ruff check"},\n    "Never push to main"\n  ]\n}\n',
        name=".cursorrules",
    )
    entries = {u.text: u for u in parsed.units}
    order = entries['order: ["builtin", "external", "internal"]']
    assert order.context == ("imports",)
    assert order.location.line_start == 3
    assert "newlinesBetween: always" in entries
    assert '{"run": "ruff check"}' in entries  # an object inside an array, as written
    assert entries["Never push to main"].kind is not None


TOML_RULES = """# Project conventions
# -------------------

[development_process]
planning_requirements = [
  "Validate the approach against framework_preferences first",
  "Don't read or edit .env",
  'Never commit generated files'
]

phases = [
  { phase: 1, name: "Architecture" },
  { phase: 2, name: "Types" }
]

[code_style.python]
indent_style = "spaces"
checks = [ "ruff", "mypy" ]
"""


def test_a_rule_file_of_toml_tables_is_read_entry_by_entry(tmp_path: Path) -> None:
    parsed = parse(tmp_path, TOML_RULES, name=".clinerules")
    by_text = {u.text: u for u in parsed.units}
    assert by_text["Don't read or edit .env"].kind is not None
    assert by_text["Never commit generated files"].kind is not None  # a literal string
    rule = by_text["Validate the approach against framework_preferences first"]
    assert rule.kind is not None
    assert rule.context == ("development_process", "planning_requirements")
    assert rule.location.line_start == 6  # the file's own line
    # an inline table stays as written; a pair is "key: value"; a dotted table nests
    assert by_text['{ phase: 1, name: "Architecture" }'].context[-1] == "phases"
    assert by_text["indent_style: spaces"].context == ("code_style.python",)
    assert 'checks: [ "ruff", "mypy" ]' in by_text
    # the comment is text the reader judges (descriptive here), its rule line is markup
    assert "Project conventions" in by_text
    assert not any("---" in u.text for u in parsed.units)


@pytest.mark.parametrize(
    "text",
    [
        # a multi-line string, a comment inside an array: shapes the reading does not know
        '[notes]\ntext = """\nAlways run the tests\n"""\n',
        '[rules]\nlist = [\n  # the first\n  "Always run the tests"\n]\n',
        # comments and a pair, but neither table nor array: not TOML enough to read so
        "# Always run the tests\nmode = strict\n",
    ],
)
def test_toml_the_reading_does_not_know_stays_markdown(tmp_path: Path, text: str) -> None:
    from prism_memory.formats.rules_io.tomlfile import as_markdown

    lines = [(i + 1, line) for i, line in enumerate(text.split("\n"))]
    assert as_markdown(lines) is None
    parsed = parse(tmp_path, text, name=".clinerules")
    # nothing lost: the line is in a unit, or (a "#" line read as Markdown) in its heading
    assert any("Always run the tests" in f"{u.context} {u.text}" for u in parsed.units)


# -- the thirty-first round: Japanese "must not" and "may", and the files to know -------------


def test_entries_under_a_japanese_must_not_heading_in_any_te_form_are_rules(
    tmp_path: Path,
) -> None:
    parsed = parse(
        tmp_path,
        "## やってはいけないこと\n\n- `node_modules` や `dist` を git に含める\n"
        "- Canvas 描画に外部ライブラリを使う\n\n"
        "## 実行してはならないコマンド\n\n- git push\n",
        name="CLAUDE.md",
    )
    # each carries the heading that says "must not", as under "Verboten"
    assert rule_texts(parsed) == [
        "やってはいけないこと\n`node_modules` や `dist` を git に含める",
        "やってはいけないこと\nCanvas 描画に外部ライブラリを使う",
        "実行してはならないコマンド\ngit push",
    ]


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("`components/` は `engine/` や `typing/` に依存してよい", True),
        ("英語の技術用語(API, PRなど)はそのままで構わない", True),
        ("`types/` はどこからでも import してもよい。", True),
        ("テストが通っていてよい状態を保つ仕組みがある", False),  # not at the end: no permission
    ],
)
def test_a_japanese_permission_instructs(line: str, hit: bool) -> None:
    assert bool(cues.IMPERATIVE.search(line)) is hit


@pytest.mark.parametrize(
    "heading",
    [
        "Wichtige Dateien zum ersten Lesen",
        "Important files",
        "重要文件",
        "Fichiers clés",
        "Archivos importantes",
        "Ключевые файлы",
    ],
)
def test_a_heading_that_lists_the_files_to_know_describes(tmp_path: Path, heading: str) -> None:
    parsed = parse(
        tmp_path,
        f"## {heading}\n\n- `src/bridge.py`: Bridge-Server, Event-Mapping, Streaming\n"
        "- `docker-compose.yml`: Standard-Compose-Setup\n",
    )
    assert rule_texts(parsed) == []
    assert len(parsed.units) == 2  # each is reported as descriptive, not lost


# -- the thirty-third round: Chinese "at least" ------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "修改 `ai-core`：至少运行 `:ai-core:assembleDebug`。",
        "正式发布前至少运行：",
        "每个函数至少写一个测试",
    ],
)
def test_at_least_in_chinese_is_hard(line: str) -> None:
    assert cues.HARD.search(line)
