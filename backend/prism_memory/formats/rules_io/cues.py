"""Cues that hold across languages: the modal, imperative and preference markers of the
major languages rule files are written in, and the words of headings that name rules,
prohibitions, descriptions, examples and procedures.

English has its own, finer cues in :mod:`.english` and :mod:`.kinds` (an imperative verb
first, "only when", descriptive openers). These are the markers a reader of Chinese,
Japanese, Korean, Spanish, German, French, Portuguese or Russian relies on: a request form
(请, してください, 하세요,
imperative endings), a hard modal (必须, 必ず, 반드시, debe, muss, doit, deve, должен), a
prohibition (禁止, 不要, しない, 금지, nunca, niemals, jamais, nunca, никогда), a soft modal
(应该, べき, 해야, debería, sollte, devrait, deveria, следует) and a preference (优先, 推奨,
선호, preferir, bevorzugen, préférer, preferir, предпочтительно); the languages written
with spaces keep theirs in one table each (:mod:`.markers`). Structure does the rest:
a list entry under a heading that is not descriptive reads as a rule (see
:func:`.kinds.rule_likeness`).

Each pattern is a plain alternation with no nested repetition: linear in the text.
"""

from __future__ import annotations

import re
from typing import Final

from prism_memory.formats.rules_io import markers

# "must", "never", "always", prohibitions: Chinese, Japanese and Korean here, the languages
# written with spaces from their tables in :mod:`.markers`, and French "ne … pas".
HARD: Final = re.compile(
    r"必须|必需|务必|一定要|禁止|严禁|不要|不得|不能|不允许|不可以|不许|不准|始终|总是|永远|只能"
    r"|只允许|只用|只使用|仅使用|仅用"
    r"|至少"  # "at least": the least that must be done ("修改 X：至少运行 …")
    # "不可跳" (must not be skipped); not "不可能", "不可用", "不可变", "不可或缺", "不可避免"
    r"|不可(?!以|能|用|变|见|逆|控|或缺|避免|思议|否认|分割|靠)"
    # a line that opens with 不 and a verb ("不运行测试用例", "不引入 Room", "不改 namespace"):
    # don't; not the words that open a statement with 不 ("不同", "不仅", "不会", "不支持"),
    # nor Japanese 不要な / 不明 ("unneeded", "unclear")
    r"|^不(?!同|仅|过|少|断|足|是|会|久|论|管|但|然|一|必|再|可能|需要|支持|包括|要な|明|適|具合)"
    r"(?=[\u4e00-\u9fff])"
    r"|必ず|常に|絶対|してはいけない|しないでください|しないこと|しない[。．]?$|ないこと"
    r"|ないでください|禁止|必須|厳禁|のみ"
    r"|반드시|항상|절대|금지|하지 ?마|않는다|않도록|말 것|마세요|안 ?됨|필수"
    r"|\bne\s+\w+\s+pas\b|\bn'\w+\s+pas\b|" + markers.pattern("hard"),
    re.IGNORECASE | re.MULTILINE,
)
# "should", "ensure", "avoid", "need to".
SOFT: Final = re.compile(
    r"应该|应当|需要|都要|确保|避免|尽量|注意|保证"
    r"|べき|ようにする|ようにしてください|必要があ|確認する|避け|心がけ"
    r"|해야|하도록|확인|피하|지양|" + markers.pattern("soft"),
    re.IGNORECASE,
)
PREFER: Final = re.compile(
    r"优先|偏好|推荐|建议|尽可能|尽量|優先|推奨|望ましい|できるだけ|なるべく|선호|권장|가능하면|"
    + markers.pattern("prefer"),
    re.IGNORECASE,
)
# Korean syllables that end in ㄴ: a verb's plain present ("쓴다", "맞춘다", "둔다") is the
# stem with ㄴ and 다, the form Korean rule files write their instructions in
_KO_N_FINAL: Final = "".join(chr(0xAC00 + 28 * syllable + 4) for syllable in range(19 * 21))
# A request or imperative form: 请…, …してください, …하세요, and the instruction verbs
# (imperative or infinitive) that open a list entry in the Romance and Germanic languages
# and Russian (where an entry opening with an infinitive, "Запускать перед релизом", is an
# instruction).
IMPERATIVE: Final = re.compile(
    r"^请|请[使用务]|[てで]ください|ください[。．:：]?$|すること[。．]?$|ること[。．]?$|こと[。．]?$"
    r"|とする[。．]?$"
    # a Japanese permission ("… に依存してよい", "… はそのままで構わない"): a rule, as a
    # heading that permits makes its entries rules
    r"|[てで]も?(?:よい|良い|構わない|かまわない)[。．]?$"
    # a Chinese entry opening with a verb that only instructs (keep, follow, adopt)
    r"|^(?:保持|遵循|遵守|采用)"
    r"|하세요|하십시오|세요[.]?$|십시오|할 것[.]?$|한다[.]?$|합니다[.]?$"
    # any verb's plain present; not "된다" (what a thing becomes or is done to it)
    rf"|(?:(?!된)[{_KO_N_FINAL}]|는)다[.]?$"
    r"|줘(?:요)?[.!]?$|주세요[.!]?$"  # the informal request: "대답해줘", "포함해 주세요"
    r"|(?:작성|준수|중단|종료)(?:할 것|하기)?[.]?$"  # "주석은 한국어로 작성", a noun that instructs
    # Japanese plain and noun-final instructions: a case particle, then a kanji verbal noun
    # that ends the line, with or without する / します ("太字で強調", "lib/ 配下に配置",
    # "ユーザーに確認します"); not the nouns of a state ("に対応する", "に依存する"), of what a
    # thing offers ("ガイダンスを提供します", "README を参照": a pointer) or is used for
    # ("…時に使用します")
    r"|(?:を|(?<!場合)(?<!ため)(?<!用途)(?<!時)(?<!際)に|(?:場合|ため|用途|時|際)に(?!\s*使用)|で|は|へ)\s*"
    r"(?!対応|依存|該当|相当|関連|関係|存在|所属|由来|位置|発生|動作|提供|参照)"
    r"[\u4e00-\u9fff]{2}(?:する|します)?[。．]?$"
    r"|(?:を|に|で|は)(?:従う|書く|行う|守る|避ける)[。．]?$"
    r"|^(?:usa|use|utiliza|utilice|usar|utilizar|mantén|mantener|escribe|escriba|escrever"
    r"|agrega|añade|incluye|indica|resume|actualiza|responde|explica|realiza|sigue|seguir"
    r"|pregunta|justifica|reutiliza|verifica|revisa|ejecuta|crea|documenta|comenta"
    r"|haz|pon|elimina|borra|lee|define|separa|aplica|instala|traduce|sugiere|propón|limita"
    r"|valida|comprueba|prioriza|asegura|guarda"
    r"|nutze|verwende|halte|ergänze|schreibe|prüfe|dokumentiere|teste|beachte|stelle|führe"
    r"|utiliser|utilise|utilisez|écrire|écris|lire|lis|ajouter|ajoute|indiquer|indique"
    r"|proposer|regrouper|préserver|limiter|répondre|maintenir|tenir|vérifier|commenter"
    r"|prioriser|réfère|référez|exécuter|éviter|suivre|respecter|committer|étendre|mettre"
    r"|escreva|mantenha|evite|inclua|adicione|siga|verifique|execute|documente|responda"
    r"|descreva|resuma|indique|sugira|crie|leia|faça|altere|rode|explique|remova|atualize"
    r"|respeite|utilize|confirme|pergunte|informe|revise|instale|consulte|aplique|valide"
    r"|usa|utilizza|mantieni|scrivi|esegui|evita|aggiungi|aggiorna|controlla|segui|leggi"
    r"|spiega|traduci|fornisci|rispondi|mostra|chiedi|elenca|descrivi|includi|preferisci"
    r"|proponi|suggerisci|dividi|rimuovi|evidenzia|applica|imposta|definisci|riassumi"
    r"|riutilizza|ricorda|conferma|sii|fai|metti|usare|utilizzare|evitare|preferire"
    r"|используй|используйте|запускай|запускайте|указывай|выполняй|выполняйте|пиши"
    r"|пишите|проверяй|соблюдать|соблюдай|не)\b"
    r"|^(?:не\s+)?[а-яё]{3,}(?:ать|ять|ить|еть|уть)(?:ся)?(?![а-яё])",  # "Запускать перед …"
    re.IGNORECASE | re.MULTILINE,
)
# Headings: sections of rules, of prohibitions, of descriptions, of examples, of steps.
RULE_HEADING: Final = re.compile(
    r"规则|规范|要求|指南|约定|原则|标准|注意|守则|规约"
    r"|约束|准则|偏好|默认设置|硬性|红线|底线|铁律|鉄則"  # "十条红线": the red lines not to cross
    r"|ルール|規約|規則|指針|方針|推奨|注意|ガイドライン|基本設定|遵守|原則|命令|制約"
    r"|규칙|지침|원칙|규약|주의|가이드|컨벤션|제약|규정"
    r"|\b(?:reglas|normas|convenciones|directrices|requisitos|estilo|calidad|seguridad"
    r"|pautas|lineamientos|restricciones|est[áa]ndares|buenas\s+pr[áa]cticas|preferencias"
    r"|regeln|richtlinien|konventionen|grundprinzipien|vorgaben|präzision|erlaubt|allowed"
    r"|einschränkungen|vorschriften|standards|präferenzen"
    r"|permitted|autorisé|permitido|允许|許可|허용|разрешено"
    r"|règles|conventions|consignes|directives|exigences|instructions|normes|contraintes"
    r"|bonnes\s+pratiques|préférences|préférée?s?|preferit[aoei]|preferid[ao]s?|bevorzugte?"
    r"|regras|convenções|diretrizes|requisitos|padrões|estilo|restrições|boas\s+práticas"
    r"|preferências"
    # Italian
    r"|regole|regola|norme|linee\s+guida|convenzioni|direttive|requisiti|vincoli|istruzioni"
    r"|buone\s+pratiche|preferenze|stile"
    # principles, and what to do, in the other languages
    r"|principios|princípios|principes|principi|prinzipien"
    r"|cosa\s+fare|qué\s+hacer|à\s+faire|o\s+que\s+fazer"
    # settings the agent is to use by default ("Default settings", "Parametri di default",
    # "Valores por defecto"): its "Label: value" entries are conventions
    r"|defaults?|predefinit[ei]|por\s+defecto|par\s+défaut|por\s+padrão"
    r"|правила|соглашения|требования|стандарты|запреты|принципы|ограничения)\b",
    re.IGNORECASE,
)
# A heading that names conventions or a style ("Code style", "Code-Stil", "코딩 규칙"): its
# entries are conventions.
CONVENTION_HEADING: Final = re.compile(
    r"\b(?:conventions?|naming|code style|coding style|style guide|style|formatting|[\w-]*stil"
    r"|\w*konventionen|estilo|convenciones|convenções|nomenclatura|nommage|stile|convenzioni"
    r"|coding standards?|code standards?|coding rules)\b"
    r"|規約|コーディングルール|記述ルール|コードスタイル|约定|代码规范|编码规范|文档规范|命名规范"
    r"|代码风格|컨벤션|코딩 ?규칙|코드 ?스타일",
    re.I,
)
# A heading that names the project's stack ("Tech Stack", "技术栈", "Stack technique"): its
# entries name what the project uses (conventions). The whole heading, a number or an emoji
# before it and a parenthesis after it aside ("Call stack handling" names no stack).
STACK_HEADING: Final = re.compile(
    r"^[\W\d_]*(?:(?:the\s+|our\s+|project\s+)?(?:(?:key|core|main|primary)\s+)?"
    r"(?:tech(?:nology|nical)?\s*stack|stack"
    r"|technolog(?:y|ies)|tools?\s+(?:and|&)\s+technologies|stack\s+(?:technique|technologique"
    r"|tecnol[oó]gico|tecnico|tecnologico)|tecnolog[ií]as?(?:\s+utilizadas)?|technologien"
    r"|technologie-?stack|tecnologie|tecnologias)(?:\s*(?:&|and|/|und|y|et|e)\s*(?:tools|tooling"
    r"|outils|herramientas|werkzeuge|ferramentas))?(?:\s+(?:used|in\s+use|cible|utilisée?s?"
    r"|utilizad[ao]s|usad[ao]s|verwendet|utilizzat[ei]|clés|principales|principali|principais))?"
    # "Outils et technologies", "Herramientas y tecnologías", "Strumenti e tecnologie"
    r"|(?:outils|herramientas|ferramentas|strumenti|werkzeuge|tools)\s+(?:et|y|e|und|&)\s+"
    r"(?:technologies|tecnolog[ií]as|tecnologie|technologien)"
    r"|kerntechnologien|主要技术|核心技术|(?:主要|核心)?技术栈|(?:主な|主要)?技術スタック|使用技術"
    r"|(?:주요|핵심|사용)?\s*기술\s?스택|사용\s?기술"
    r"|стек(?:\s+технологий)?|технологии"
    # the environment the project is developed in ("**OS**: Windows 11", "Shell: bash")
    r"|(?:development\s+|dev\s+)?environment|environnement(?:\s+de\s+d[ée]veloppement)?"
    r"|entorno(?:\s+de\s+desarrollo)?|ambiente(?:\s+de\s+desenvolvimento|\s+di\s+sviluppo)?"
    r"|(?:entwicklungs)?umgebung|开发环境|运行环境|环境|開発環境|実行環境|環境|개발\s?환경|환경"
    r"|окружение|среда\s+разработки)\s*(?:[(（][^()（）\n]{0,60}[)）])?[\W_]*$",
    re.IGNORECASE,
)
# A heading that recommends ("Recommended workflow", "推奨事項", "Workflow recommandé"): its
# entries are preferences unless they say must.
RECOMMEND_HEADING: Final = re.compile(
    r"\b(?:recommend\w*|recommand\w*|empfohlen\w*|empfehlung\w*|recomendad\w*"
    r"|recomendaç\w*|raccomandat\w*|preferred|preferit[aoei]|preferid[ao]s?|préférée?s?"
    r"|bevorzugte?)|推奨|推荐|建议|권장|(?<![а-яё])рекоменд",
    re.I,
)
NEGATING_HEADING: Final = re.compile(
    r"\b(?:do not|don'?ts?|never|avoid|what to avoid|anti-?patterns?|forbidden|prohibited"
    r"|not allowed|restrictions|when not to|must not|pitfalls)\b"
    # Japanese "must not" in any verb's て-form ("やってはいけないこと", "実行してはならない")
    r"|禁止|不要|不得|避免|[てで]はいけない|[てで]はならない|しないこと|禁止事項|避ける"
    r"|금지|하지 말|피해야|"
    r"\b(?:verboten|nicht erlaubt|interdit|à éviter|ne pas|prohibido|evitar|no hacer"
    r"|proibido|evite|não faça|cosa\s+non\s+fare|qué\s+no\s+hacer|o\s+que\s+não\s+fazer"
    r"|da\s+evitare|evitare|vietato|non\s+fare)\b"
    r"|(?<![а-яё])(?:запреты|запрещено|нельзя|не делай)(?![а-яё])",
    re.IGNORECASE,
)
# a heading that asks why ("왜 이런 규칙이 필요한가?", "Warum?"): the reasons for the rules
# above it, even when it names them
WHY_HEADING: Final = re.compile(
    r"^\W*(?:why\b|warum\b|wieso\b|pourquoi\b|por\s*qu[ée]\b|perch[ée]\b|por\s+que\b|왜\s"
    r"|为什么|為什麼|なぜ|почему(?![а-яё]))",
    re.IGNORECASE,
)
# A heading over the files to know ("Key files", "Wichtige Dateien zum ersten Lesen",
# "重要文件"): a map of the code, whose "`path`: what it holds" entries describe; its
# "important" is no instruction to lead them.
FILES_HEADING: Final = re.compile(
    r"\b(?:(?:key|important|main|core) (?:files|classes|components)"
    r"|(?:wichtige|zentrale) dateien|fichiers (?:clés|importants|principaux)"
    r"|archivos (?:clave|importantes|principales)|file (?:chiave|importanti|principali)"
    r"|arquivos (?:importantes|principais|chave))\b"
    r"|重要文件|关键文件|核心文件|主要文件|重要なファイル|主要ファイル|주요 파일|핵심 파일"
    r"|(?<![а-яё])(?:ключевые|важные|основные) файлы(?![а-яё])",
    re.IGNORECASE,
)
DESCRIPTIVE_HEADING: Final = re.compile(
    r"概要|概述|简介|介绍|背景|架构|项目结构|目录结构|技术栈|参考|プロジェクト概要|概要|背景"
    r"|アーキテクチャ|構成|技術スタック|参考|개요|소개|배경|아키텍처|기술 스택|참고"
    r"|\b(?:übersicht|hintergrund|architektur|projektstruktur|aperçu|contexte|objectif|portée"
    # what the project aims at ("Obiettivo del Progetto", "Goals"): a goal, no rule
    r"|obiettiv[oi]|objetivos?|objectifs|goals?|ziele?|목표"
    r"|visión general|descripción|arquitectura|estructura|visão geral|arquitetura|estrutura"
    r"|referencias|références|referências|zukunft|zukünftige?|feuille de route|hoja de ruta"
    r"|roteiro|à compléter|a completar|por completar|zu ergänzen)\b"
    r"|将来|今後の|ロードマップ|路线图|未来|향후|로드맵|目标|目標"
    r"|(?<![а-яё])(?:обзор|описание|архитектура|структура|справочник)(?![а-яё])|"
    + FILES_HEADING.pattern
    + "|"
    + WHY_HEADING.pattern,
    re.IGNORECASE,
)
EXAMPLE_LEAD: Final = re.compile(
    r"^\W*(?:examples?|e\.g\.?|for example|sample|types include|types?|ejemplos?|tipos"
    r"|exemplos?|tipos|exemples?|beispiele?|typen|例|示例|例子|예시|예|примеры?|типы"
    r"|reasons?|rationale|why|理由|原因|이유|razón|razones|motivos?|gründe|grund|raisons?"
    r"|причин[аы])"
    r"(?:\s+\w+){0,3}\W*$",
    re.IGNORECASE,
)
PROCEDURE_HEADING: Final = re.compile(
    r"\b(?:workflow|procedure|process|steps|flow|how to|routine|checklist)\b"
    # setting a project up is one task in every language ("Setup Rápido", "Installation",
    # "Como rodar o projeto", "セットアップ")
    r"|\b(?:set-?up|set up|install|installation|getting started|quick ?start|instalación"
    r"|instalação|installazione|einrichtung|mise en place|como rodar|cómo ejecutar"
    r"|come avviare)\b|セットアップ|安装步骤|설치"
    r"|流程|步骤|手順|フロー|工程|절차|단계|순서|ablauf|schritte|vorgehen|processus|étapes"
    r"|proceso|pasos|processo|etapas|(?<![а-яё])(?:процесс|порядок|шаги)(?![а-яё])"
    # "Flujo de trabajo", "Flux de travail", "Flusso di lavoro", "Fluxo de trabalho"; a data
    # flow ("Flujo de datos") describes
    r"|\b(?:flujo\s+de\s+trabajo|flux\s+de\s+travail|flusso\s+di\s+lavoro"
    r"|fluxo\s+de\s+trabalho)\b|워크플로|작업\s*흐름"
    # a checklist in other languages ("작업 시작 체크리스트", "チェックリスト", "Checkliste")
    r"|체크리스트|チェックリスト|检查清单|检查表|\bcheckliste\b|чек-?лист"
    r"|\bpriorit\w*|\bprioridades\b|优先级|優先順位|우선순위",  # a ranking is one rule
    re.IGNORECASE,
)
# A heading over a ranking ("Priorities", "Prioridades", "优先级"): its numbered list is one
# rule however it is worded ("FUNCIONAL > PERFEITO" has no verb; the order is the rule).
RANKING_HEADING: Final = re.compile(
    r"\bpriorit\w*|\bprioridades\b|优先级|優先順位|우선순위|(?<![а-яё])приоритет",
    re.IGNORECASE,
)
COLON: Final = (":", "：")
# A heading that says when a task's steps are run ("Before any change", "Avant toute
# modification", "提交前", "コミットする前に", "커밋 전에"): it leads in like "Before any
# change:", so a numbered list under it is one procedure (:func:`.markdown._procedure_heading`).
WHEN_HEADING: Final = re.compile(
    markers.section_pattern("when", opening=True)
    # the word last: "…前", "…之后", "…後に", "… 전에"; not 目前, 名前, 午後, 最後, 今後
    + r"|(?<![目名午以最今])(?:之前|之后|前|后|後)に?\W*$|\s(?:전|후)에?\W*$",
    re.IGNORECASE,
)
# A heading over a template to fill ("Prompt template", "Vorlage", "テンプレート"): its
# entries are the template's fields, no rules unless one says must.
TEMPLATE_HEADING: Final = re.compile(
    markers.section_pattern("template")
    # and a form to fill in ("작업 요청서", "申請書")
    + r"|テンプレート|ひな形|雛形|模板|样板|템플릿|양식|요청서|신청서|서식|依頼書|申請書",
    re.IGNORECASE,
)
# A heading over a log ("In progress", "Known issues", "В работе", "进行中") or dated like a
# snapshot ("Current focus (June 2026)"): what was or is being done, no rules.
# A year or an ISO date, never part of a version ("v2026.1", "2026-rc") or a number.
DATE: Final = r"(?<![\w.-])(?:19|20)\d\d(?:-[01]\d(?:-[0-3]\d)?)?(?![\w.-])"
STATUS_HEADING: Final = re.compile(
    markers.section_pattern("status")
    + r"|进行中|進行中|진행 ?중|已知问题|既知の問題|알려진 문제|最近的?(?:更改|变更)|最近の変更"
    + r"|최근 변경|"
    + DATE,
    re.IGNORECASE,
)
# A heading that names work planned or done ("Next steps", "Backlog", "Future Services",
# "Already Completed", "下一步", "今後の予定"): its entries are work items, not rules, even
# when they open with an imperative ("Create authentication pages"). The whole heading, a
# number or an emoji before it and a parenthesis after it aside.
WORK_HEADING: Final = re.compile(
    r"^[\W\d_]*(?:(?:the\s+)?next(?:\s+\w+)?\s+steps|backlog|road\s?map|to-?do(?:\s+list)?"
    r"|future(?:\s+\w+)?|planned(?:\s+\w+)?|upcoming(?:\s+\w+)?|already\s+(?:completed|done"
    r"|implemented)|completed(?:\s+\w+)?|done|pr[oó]xim[oa]s\s+(?:pasos|passos|etapas)"
    r"|tareas\s+pendientes|pendientes|pend[eê]ncias|hoja\s+de\s+ruta|prochaines\s+[ée]tapes"
    r"|feuille\s+de\s+route|[àa]\s+faire|prossimi\s+passi|da\s+fare|n[äa]chste\s+schritte"
    r"|offene\s+punkte|bereits\s+erledigt|следующие\s+шаги|дорожная\s+карта"
    r"|下一步(?:计划|工作)?|待办(?:事项)?|后续计划|路线图|已完成|今後の(?:予定|課題)|次のステップ"
    r"|ロードマップ|完了済み|다음\s?단계|로드맵|향후\s?계획|완료된\s?작업)"
    r"\s*(?:[(（][^()（）\n]{0,60}[)）])?[\W_]*$",
    re.IGNORECASE,
)
# A list entry that names pending work ("TODO: Improve README", "FIXME: …").
WORK_ENTRY: Final = re.compile(r"^\W*(?:todo|fixme)\b\s*[:：]", re.IGNORECASE)
# A heading that names the form of what the agent writes ("Output format", "Response
# style", "出力形式", "응답 스타일"): its entries are conventions, however short.
FORM_HEADING: Final = re.compile(
    markers.section_pattern("form")
    + r"|形式|格式|書式|文体|口調|语气|风格|スタイル|스타일|형식|어조",
    re.IGNORECASE,
)
# A sentence about the file itself ("Follow these rules", "以下のルールにしたがってください").
ABOUT_FILE: Final = re.compile(
    r"\b(?:follow|apply|read)\s+(?:these|the following|this file'?s?)\s+"
    r"(?:rules|guidelines|instructions|conventions)\b"
    r"|以下の(?:ルール|規則|指示)|下面的规则|以下规则|如下规则|다음 규칙|아래 규칙"
    r"|\b(?:sigue|siga|seguir)\s+(?:estas|las siguientes)\s+(?:reglas|instrucciones)\b"
    r"|\b(?:folgende|diese)\s+regeln\b|\b(?:ces|les)\s+règles\s+(?:suivantes|ci-dessous)\b"
    r"|\b(?:estas|as seguintes)\s+regras\b|(?<![а-яё])(?:эти|следующие)\s+правила",
    re.IGNORECASE,
)
# A sentence whose subject is the file itself, in the other languages ("このファイルは…",
# "이 문서는…", "本文件…", "Ce fichier…", "Diese Datei…"), as "This file …" is in English.
THIS_FILE: Final = re.compile(
    r"^\W*(?:このファイル|本ファイル|このドキュメント|本ドキュメント|この文書|이\s*파일|이\s*문서"
    r"|본\s*문서|本文件|此文件|该文件|本文档|此文档|该文档"
    r"|(?:ce\s+(?:fichier|document)|diese\s+datei|dieses\s+dokument"
    r"|este\s+(?:archivo|arquivo|documento|fichero)|questo\s+(?:file|documento)"
    r"|(?:этот|данный)\s+(?:файл|документ))(?![\w]))",
    re.IGNORECASE,
)
# A persona ("You are a senior engineer", "你是…", "Du bist …"): who, not what to do.
PERSONA: Final = re.compile(
    r"^\W*(?:你是|您是|(?:you are|you're) an?\b|du bist eine?\b|(?:tú )?eres una?\b"
    r"|tu es une?\b|vous êtes une?\b|você é uma?\b|sei una?\b)",
    re.IGNORECASE,
)


# A sentence to the human who uses the assistant ("If you use Copilot Chat, ask in
# Spanish", "Si usas GitHub Copilot, …"): advice to the reader, not to the agent.
TO_THE_USER: Final = re.compile(
    r"\b(?:you\s+use|usas|utilizas|usi|utilizzi|utilisez|utilises|nutzt|verwendest|você\s+usa)"
    r"\s+(?:github\s+)?(?:copilot|claude|cursor|chatgpt|gemini|windsurf|cline|codex)\b",
    re.IGNORECASE,
)


def who_or_what_file(text: str) -> bool:
    """A sentence about the file itself or a persona: a statement, not an instruction."""
    return bool(ABOUT_FILE.search(text) or PERSONA.match(text) or THIS_FILE.match(text))


# An entry that shows an example: "Good: …", "Bad: …", "✅ …", "❌ …".
EXAMPLE_ENTRY: Final = re.compile(
    r"^\W*(?:good|bad|correct|incorrect|wrong|right|do|don'?t|正しい|悪い|良い例|悪い例|正确|错误"
    r"|좋은 ?예|나쁜 ?예|bien|mal|richtig|falsch|correcto|incorrecto|certo|errado"
    # an example given on its own line ("예시: feat: add …", "Example: `fix(api): …`")
    # ("Examples: Provide clear examples …" names a topic)
    r"|example|for example|e\.g\.|예시|예|例|示例|例子|範例|ejemplo|exemple|beispiel"
    r"|esempio|exemplo|пример)\s*[:：]",
    re.IGNORECASE,
)
# Unfilled template text: "[your project]", "[PROJECT_NAME]", "<TODO>", "{{name}}", "TBD",
# and the lines of Cursor's new-rule template left in a file.
# Looked for outside code spans only (``{{ }}`` in a code span is a template language);
# "<TICKET_ID>" in prose is a pattern a rule states, not a blank, so it is not one.
PLACEHOLDER: Final = re.compile(
    r"\[(?:(?i:your|my|insert|add|enter|describe|project|company|team|repo)\b[^\]\n]{0,50}"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|TODO|TBD|TBA|XXX|\.\.\.|…)\](?!\()"
    r"|<(?:TODO|TBD|(?i:your)[\w -]{0,40})>|\{\{\s*[\w.-]{1,40}\s*\}\}"
    r"|^\W*(?:TODO|TBD|TBA|FIXME|未定|待定|작성 예정|à compléter|por definir)\W*$"
    r"|^[^:：\n]{1,40}[:：][ \t]*(?:\.\.\.|…)[ \t]*$"  # "install: …", a value left blank
    # the text Cursor writes into a new rule, under "# Your rule content"
    r"|^\W*You can (?:@ files here|use markdown but dont have to)\W*$",
    re.MULTILINE,
)
# An exception to the rule before it, as a label ending in ":" ("Exceptions:", "**The only
# exceptions** (must meet all criteria):", "例外：", "Ausnahme: …"); "Unless told otherwise,
# …" is a conditional rule of its own, so "unless"/"except" alone are not.
EXCEPTION_LEAD: Final = re.compile(
    r"^\W*(?:the\s+only\s+)?(?:exceptions?|例外|除外|例外事項|예외|ausnahmen?|excepci[oó]n(?:es)?"
    r"|exce[çc][ãa]o|exce[çc][õo]es|(?<![а-яё])исключени[ея](?![а-яё]))(?![\w])[^:：\n]{0,60}[:：]",
    re.IGNORECASE,
)
_LINK: Final = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)|<https?://[^>\s]+>|https?://\S+")
_PATH_CODE: Final = re.compile(r"`[^`\s]*(?:/|\.[A-Za-z]{1,6})[^`\s]*`")
# A document in a code span ("`docs/standards/naming.md`"): read like a link. A pattern with
# a blank or a glob ("`plans/[name].md`", "`docs/*.md`") says where things go.
_DOC_CODE: Final = re.compile(r"`[^`\s\[\]<>{}*?]+\.(?:md|mdc|mdx|rst|txt|adoc)`", re.IGNORECASE)
_CODE_SPAN: Final = re.compile(r"`+[^`]*`+")
_LINK_LABEL: Final = re.compile(r"^[^:：\n]{1,48}[:：](?!//)\s*")
_PUNCT_ONLY: Final = re.compile(r"^[\W_]*$")


def placeholder(text: str) -> bool:
    """Unfilled template text outside code spans ("[your project]", "<TODO>", "{{name}}")."""
    return bool(PLACEHOLDER.search(_CODE_SPAN.sub("", text)))


def links_only(text: str) -> bool:
    """Only links (and file paths beside them), after an optional label ("API:
    [guide](docs/api.md)", "<https://…>", "Naming: `docs/standards/naming.md`"): a reading
    list, not an instruction. A folder or a file that is no document ("Tests:
    `tests/unit/`") says where things go, and a command in a code span ("Lint: `uv run ruff
    check`") is no path: both stay for the other cues."""
    first = text.strip().split("\n")[0].replace("**", "")
    if not (_LINK.search(first) or _DOC_CODE.search(first)):
        return False  # "Tests: `tests/unit/`" says where things go: a convention
    rest = _PATH_CODE.sub("", _LINK.sub("", _LINK_LABEL.sub("", first, count=1)))
    return bool(_PUNCT_ONLY.match(rest)) and "\n" not in text.strip()


# A lead-in that enumerates what its list holds ("… which includes:", "the source of truth
# for:", "包括：", "umfasst:"): its entries are the objects it names, not rules of their own.
ENUMERATING_LEAD: Final = re.compile(
    r"(?:\b(?:includes?|including|covers?|contains?|consists? of|such as|truth for|responsible"
    r" for|comprises?)|を含む|含みます|包括|包含|포함|incluye|contiene|umfasst|enthält|beinhaltet"
    r"|comprend|contient|inclui|contém|(?<![а-яё])(?:включает|содержит)(?![а-яё]))\s*[:：]\s*$",
    re.IGNORECASE,
)
# A lead-in that names what follows as rules ("Follow these rules for all commits:",
# "以下のルール："): a numbered list after it is independent rules, not the steps of a task.
RULES_LEAD: Final = re.compile(
    r"\b(?:rules|guidelines|principles|conventions|requirements|constraints|principes"
    r"|principi|principios|princípios|prinzipien|regole)\b"
    r"|ルール|規則|規約|原則|规则|规范|原则|규칙|원칙|约束|制約|제약"
    r"|\b(?:reglas|normas|regeln|richtlinien|règles|consignes|regras|diretrizes|contraintes"
    r"|restricciones|restrições|vincoli|einschränkungen)\b"
    r"|(?<![а-яё])(?:правила|требования|ограничения)(?![а-яё])",
    re.IGNORECASE,
)
# A lead-in that ends in a modal and "be" ("Every output must be:", "Ogni output dell'AI
# deve essere:", "Le code doit être :"): its entries are predicates, each a requirement of
# its own, not the objects of one rule ("Il codice deve essere scritto pensando a:").
PREDICATE_LEAD: Final = re.compile(
    r"(?:\b(?:must|should|shall|needs?\s+to|has\s+to)\s+(?:always\s+)?be"
    r"|\b(?:deve|devono|dovrebbe|dovrebbero)\s+(?:sempre\s+)?essere"
    r"|\b(?:doit|doivent|devrait|devraient)\s+(?:toujours\s+)?être"
    r"|\b(?:debe|deben|debería|deberían|deve|devem|deveria)\s+(?:siempre\s+|sempre\s+)?ser"
    r"|\b(?:muss|müssen|sollte|sollten|soll|sollen)\s+(?:immer\s+)?sein"
    r"|\b(?:sein|sein\s+muss|sein\s+müssen))\s*[:：]\s*$",
    re.IGNORECASE,
)
_VOCABULARY: Final = re.compile(
    r"^\W*(?P<label>[^:：`\n]{1,40})[:：]\s*(?:`[^`\n]+`\s*(?:[,、/|]|\b(?:and|or)\b)?\s*){2,}\W*$",
    re.IGNORECASE,
)


def vocabulary(text: str) -> bool:
    """A label that names kinds or examples over only code values ("Types: `feat`, `fix`,
    `docs`"): the values a rule elsewhere uses, no rule of its own."""
    found = _VOCABULARY.match(text.strip().replace("**", ""))
    return found is not None and EXAMPLE_LEAD.match(found["label"].strip()) is not None
