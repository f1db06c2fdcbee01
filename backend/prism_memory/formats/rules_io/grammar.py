"""Instruction forms that a word list in :mod:`.cues` cannot hold: the grammar of an
instruction in German, Spanish, Portuguese, French, Italian and Chinese.

- German: an imperative at the start, in the du form ("Verwende …", "Schreibe …", any
  "-iere" verb: "Dokumentiere …") or the Sie form ("Verwenden Sie …"); an infinitive at the
  end of the line ("Tests vor dem Commit ausführen.", "… nicht umschreiben"); and "nicht"
  as a prohibition in either ("Frage nicht …", "… nicht committen").
- Spanish and Portuguese: an infinitive at the start ("Usar …", "Evitar …", "Instalar
  dependências: …") and "no" + infinitive as a prohibition ("No usar …", "No añadir …").
- French: an infinitive ("Lire les fichiers", "Ne pas utiliser …") or a "-ez" imperative
  ("Vérifiez …") at the start. Italian: an infinitive at the start, "non" + infinitive.
- In every one of them, the instruction may follow a clause that says when ("Antes de
  editar, verifique …", "Avant de …, lancez …", "Wenn …, strukturiere …", "与我交流时使用中文").
- "X en lugar de Y" / "statt" / "au lieu de" / "em vez de" / "invece di" states which way
  is the project's, as "X over Y" does in English: a convention ("plutôt que", rather than,
  weighs one against the other: a preference, see :mod:`.cues`).
- After a Spanish, Portuguese or Italian clause that says when (a parenthesis in it may
  hold commas), the main clause opens with its verb: a word ending like a second-person
  imperative there is one ("Al final de cada plan, lista …", "Quando …, traduci …").
- A list entry that opens with a negation and no verb is a prohibition: "Pas de …",
  "Aucun …", "Nessun …", "Niente …", "Sin …", "Nada de …", "Sem …", "No …"
  (:func:`verbless_negation`).

A word is read as an infinitive or imperative only with the language's own small words
around it (articles, prepositions), so an English line ("Docker runs the stack", "Other
files …") is never read as Spanish or French; a Spanish or Portuguese "-ar"/"-ir" word,
which English rarely ends a word with (the few nouns that do are listed), needs only one.
Every pattern is linear in its text.
"""

from __future__ import annotations

import re
from typing import Final

from prism_memory.formats.rules_io import cues
from prism_memory.formats.rules_io.markers import german_ascii

_L: Final = r"a-zà-öø-ÿœ"  # lower-case letters of the Latin-script languages here

# The small words that say which language a line is in (whole words, case-insensitive).
_GERMAN: Final = re.compile(
    r"\b(?:der|die|das|den|dem|des|und|oder|für|mit|nicht|keine?[mnrs]?|im|zum|zur|vor|nach"
    r"|bei|auf|aus|von|ist|sind|wird|immer|nur|auch|eine?[mnrs]?|sie|du|dich|dir|wenn"
    r"|fuer|ueber|muessen|koennen)\b"
    r"|[äöüß]",
    re.IGNORECASE,
)
_IBERIAN: Final = re.compile(
    r"\b(?:el|los|las|del|para|con|por|que|una|al|y|de|en|la|lo|se|su|sus|sin|como|da|dos"
    r"|das|em|na|nos|nas|os|ao|aos|uma|ou|pelo|pela|não|antes|después|após|depois|cuando"
    r"|quando)\b",
    re.IGNORECASE,
)
_FRENCH: Final = re.compile(
    r"\b(?:le|la|les|des|du|de|un|une|et|ou|pour|avec|dans|sur|que|au|aux|en|est|pas|ne)\b"
    r"|\b[ldjnsc]'",
    re.IGNORECASE,
)
_ITALIAN: Final = re.compile(
    r"\b(?:il|lo|gli|della|delle|degli|dei|con|che|non|una|nel|nella|sempre|mai|di|per|le|la"
    r"|un|del|al|ai|alla|da|dal|sul|sulla|ogni|questo|questa|solo|anche|più|tra|fra|ed"
    r"|senza|prima|dopo|oppure)\b",
    re.IGNORECASE,
)

_NUMBER: Final = re.compile(r"^\d{1,3}[.)]\s+")
# A clause that says when, before the instruction it conditions.
_CLAUSE: Final = re.compile(
    r"^(?:antes\s+de|después\s+de|al|cuando|si|mientras|avant\s+de|après|quand|lorsque"
    r"|pour|depois\s+de|após|quando|se|ao|bevor|nachdem|wenn|falls|sobald|bei|vor|nach"
    r"|prima\s+di|dopo)\b(?:[^,.;:!?\n()]|\([^()\n]{0,60}\)){1,90},\s*",
    re.IGNORECASE,
)
_ZH_VERBS: Final = (
    "使用|采用|遵循|保持|运行|执行|添加|编写|调用|检查|确认|参考|更新|创建|删除|避免|输出|回复"
    "|说明|阅读|读取|查看|提交|记录|列出|告知|询问|用|请"
)
# then at once, or first ("…时，立即读取…", "…时，先执行…")
_ZH_AT_ONCE: Final = r"(?:先|立即|立刻|马上|首先|直接)?"
_ZH_WHEN: Final = re.compile(
    rf"^[^，。,；;：:\n]{{1,24}}?(?:时|時|之前|之后|以前|以后|前|后)[，,]?\s*{_ZH_AT_ONCE}(?:{_ZH_VERBS})"
    # a clause opened by 当 ("when") may run long before its 时
    rf"|^当[^。；;\n]{{1,90}}?时[，,]\s*{_ZH_AT_ONCE}(?:{_ZH_VERBS})"
)

# A Chinese line that opens with an instruction verb ("使用中文跟我对话", "添加中文注释"),
# unless the verb heads a label ("使用方法：", "运行环境:").
_ZH_FIRST: Final = re.compile(
    r"^(?:使用|采用|遵循|保持|运行|执行|添加|编写|调用|检查|确认|创建|删除|避免|输出|回复|阅读"
    r"|查看|列出|告知|询问|忽略)(?![^，。,；;\s]{0,6}[:：])"
)

# German.
_DE_VERBS: Final = (
    "verwende|nutze|benutze|schreibe|halte|führe|prüfe|überprüfe|teste|lies|lese|gib|nimm"
    "|erstelle|füge|entferne|lösche|ändere|vermeide|achte|beachte|befolge|stelle|arbeite"
    "|triff|wähle|erkläre|frage|committe|pushe|lege|nenne|setze|baue|starte|halte|behalte"
    "|bleibe|sei|denke|antworte|beschreibe|ergänze|fasse|gehe|mache|melde|sorge|speichere"
    "|trenne|vergiss|übernimm|öffne|folge|bevorzuge|markiere|kennzeichne|frag|schau|suche"
    "|finde|zeige|verweise|nimm|lass|lasse|rufe|hole|schließe|vermeide|bestätige|behebe"
    "|hilf|sieh|sprich"  # strong verbs: "Hilf bei der Planung", "Sprich Deutsch"
)
_DE_VERBS_ASCII: Final = "|".join(german_ascii(_DE_VERBS.split("|")))  # "fuehre", "pruefe"
_DE_IMPERATIVE: Final = re.compile(
    rf"^(?:{_DE_VERBS_ASCII}|[{_L}]{{3,}}iere)\b"  # "Verwende …", "Dokumentiere …"
    rf"|^[{_L}]{{2,}}(?:en|ern|eln)\s+sie\b",  # "Verwenden Sie …"
    re.IGNORECASE,
)
_DE_PREFIX: Final = (
    "ab|an|auf|aus|bei|ein|mit|nach|vor|zu|zurück|weg|hinzu|um|fest|frei|dar|her|hin|los"
    "|über|unter|durch|wieder|zusammen|voran|ver|ent|zer"
)
_DE_LAST_WORD: Final = re.compile(rf"([{_L}]+)[\s.!)]*$")
_DE_INFINITIVES: Final = (
    "verwenden|nutzen|benutzen|schreiben|halten|prüfen|testen|lesen|löschen|ändern"
    "|committen|pushen|befolgen|beachten|setzen|nennen|fragen|bauen|starten|trennen"
    "|speichern|laden|nehmen|geben|machen|bleiben|behalten|folgen|achten|sorgen|melden"
    "|stellen|legen|erstellen|entfernen|ergänzen|verfassen|halten|einhalten|vermeiden"
    "|schreiben|vergessen|erklären|wählen|fragen|arbeiten|bevorzugen|berücksichtigen"
)
_DE_INFINITIVE: Final = re.compile(
    rf"^(?:{'|'.join(german_ascii(_DE_INFINITIVES.split('|')))})$"  # "pruefen" too
    rf"|^[{_L}]{{3,}}ieren$|^(?:{'|'.join(german_ascii(_DE_PREFIX.split('|')))})"
    rf"[{_L}]{{3,}}(?:en|ern|eln)$"
)
# A finite verb ends a subordinate clause ("…, die geändert werden"), or a word that only
# looks like an infinitive ("zusammen", "vorhanden"): not an instruction.
_DE_FINITE: Final = frozenset(
    german_ascii(
        """
    werden können müssen sollen dürfen haben wollen mögen gelten enthalten lassen zusammen
    anderen vorhanden verschieden verschiedenen zufrieden einzelnen mittleren unteren
    vorgestern entsprechenden
    """.split()  # noqa: SIM905 - a word list reads better as words
    )
)
_DE_SUBJECT: Final = re.compile(
    r"^(?:der|die|das|dies\w*|diese[mnrs]?|ein\w*|wir|es|er|ich|man|unser\w*|jede[mnrs]?)\b",
    re.IGNORECASE,
)

# A short entry without German's small words: "Datenbanktabellen analysieren", "TODOs
# anpassen", "neue Erkenntnisse dokumentieren"; English's small words say it is not German.
_BARE_WORDS: Final = 6
_ENGLISH_SMALL: Final = re.compile(
    r"\b(?:the|a|an|and|or|to|of|in|on|for|with|is|are|be|it|this|that|by|as|at|from)\b",
    re.IGNORECASE,
)


def _bare_german(text: str) -> bool:
    line = text.strip().split("\n", 1)[0]
    words = line.split()
    return 2 <= len(words) <= _BARE_WORDS and not _ENGLISH_SMALL.search(line)


# Spanish and Portuguese; French; Italian.
_ROMANCE_NOT_VERB: Final = frozenset(
    """
    cualquier qualquer mejor melhor mayor maior menor lugar similar particular popular
    regular anterior posterior exterior interior superior inferior par bar mar mujer mulher
    ayer hogar nivel poder placer taller premier dernier fichier dossier entier papier clavier
    calendrier hier métier quartier cahier panier chantier avenir plaisir loisir désir notre
    votre autre entre titre ordre nombre membre cadre chapitre livre lettre centre super
    pour sur leur leurs never other either neither after under over user server docker
    whether later rather ever however whenever wherever order number layer better clear
    year per her their our your for or are were where there here more before core store
    future feature structure architecture software hardware share care sure compare
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_ENGLISH_AR: Final = frozenset(
    """
    calendar grammar sugar dollar solar cellular modular tabular scalar radar sidebar
    toolbar navbar avatar webinar seminar pillar polar circular linear nuclear familiar
    peculiar singular lunar vinegar collar cedar guitar star car bar war far sir stir affair
    repair despair chair hair pair air fair stair
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_FIRST_WORD: Final = re.compile(rf"^(?:(?:no|não|ne\s+pas|ne\s+jamais|non)\s+)?([{_L}]+)(\s*:?)")
_IBERIAN_INFINITIVE: Final = re.compile(r"^[a-zñçáéíóú]{2,}(?:ar|er|ir|ír)$")
_FRENCH_INFINITIVE: Final = re.compile(rf"^[{_L}]{{2,}}(?:er|ir|re|ez)$")
_ITALIAN_INFINITIVE: Final = re.compile(rf"^[{_L}]{{2,}}(?:are|ere|ire)$")
_ROMANCE_PROHIBITION: Final = re.compile(
    rf"(?:^|[\s:;,(])(?P<no>no|não|non)\s+(?P<verb>[{_L}]{{2,}}(?:ar|er|ir|ír|are|ere|ire))\b"
    r"|\bne\s+(?:pas|jamais|plus)\b",
    re.IGNORECASE,
)
# A Spanish or Italian imperative of the second person ("Investiga el problema", "Preséntame
# un plan", "Comprueba que …", "Verifica sempre …"): a word ending in a vowel right before an
# article, "que"/"che" or "siempre"/"sempre". A noun is not followed by an article; the
# determiners, pronouns, prepositions and adverbs that are (and end in a vowel) are listed.
_IMPERATIVE_BEFORE: Final = re.compile(
    rf"^([{_L}]{{3,}}[aeio])\s+(?:el|la|los|las|lo|un|una|unos|unas|que|il|gli|i|le|uno"
    r"|che|siempre|sempre|todo|todos|todas|tutti|tutte|tutto)\b",
    re.IGNORECASE,
)
_NOT_IMPERATIVE: Final = frozenset(
    """
    toda todo todas todos cada otra otro otras otros esta este estas estos esa ese esas esos
    aquella aquel aquello misma mismo mismas mismos nuestra nuestro vuestra vuestro alguna
    alguno ninguna ninguno cualquiera sobre entre desde hasta para contra durante mediante
    ante tras donde cuando como mientras aunque porque pero siempre nunca solo sólo ahora
    luego antes después también tampoco aquí allí muy mucho mucha poco poca tanto tanta
    casi quizá mientras dove quando come mentre anche sempre dopo prima sopra sotto dentro
    fuori senza questa questo queste questi quella quello tutta ogni ciascuna ciascuno
    nessuna nessuno alcuna alcuno altra altro altre altri stessa stesso nostra nostro vostra
    vostro perché però oppure ancora molto molta troppo quanto cosa ecco ovvero cioè nella
    nelle negli della delle degli dalla dalle dagli alla alle agli sulla sulle sugli una uno
    esto eso ello ella ellos ellas nosotros usted ustedes quien quienes cuya cuyo cuyas
    cuyos donde adonde porque pues sino mediante incluso salvo excepto según hacia bajo
    are were there where here more before the some none once since while like these those
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_NON_ASCII: Final = re.compile(r"[à-öø-ÿœ]", re.IGNORECASE)
_DE_NICHT: Final = re.compile(r"\bnicht\b", re.IGNORECASE)

# "X en lugar de Y": which way is the project's.
INSTEAD: Final = re.compile(
    r"\b(?:en\s+lugar\s+de|en\s+vez\s+de|em\s+vez\s+de|ao\s+invés\s+de|au\s+lieu\s+de"
    r"|anstelle\s+von|anstatt|statt|invece\s+di|anziché)\b",
    re.IGNORECASE,
)


# A short label before the instruction ("Analizar: Investiga el problema", "Debug: Fornisci
# …"): the instruction is what follows it.
_LABEL: Final = re.compile(r"^[^\W\d][\w .'’/&-]{0,40}?[:：]\s+(?=\S)")


def _main_clause(text: str) -> str:
    """The text after a list number, a short label and a leading clause that says when
    ("1. Antes de editar, …", "Verificar: comprueba …")."""
    text = _NUMBER.sub("", text.strip(), count=1)
    return _CLAUSE.sub("", _LABEL.sub("", text, count=1), count=1)


def _german_instruction(text: str) -> bool:
    if not (_GERMAN.search(text) or _bare_german(text)):
        return False
    if _DE_IMPERATIVE.match(text):
        return True
    line = re.split(r"(?<=[.!?;])\s|\n|\s[—–]\s|\s\d{1,3}[.)]\s", text, maxsplit=1)[0]
    if _DE_SUBJECT.match(line) or len(line.split()) < 2:
        return False
    # the last word of the line, or of its first part before a comma ("…, außer …")
    for part in (line, line.split(", ", 1)[0]):
        last = _DE_LAST_WORD.search(part.split(" (", 1)[0].rstrip(" .,;:"))
        word = last.group(1) if last else ""
        if word.islower() and word not in _DE_FINITE and _DE_INFINITIVE.match(word):
            return True
    return False


def _spoken(context: re.Pattern[str], text: str, after: str = "") -> bool:
    """Two small words of the language, or one and a letter English does not write, or one
    right after the verb ("Lire les fichiers")."""
    hits = len(context.findall(text))
    return hits >= 2 or (hits == 1 and bool(_NON_ASCII.search(text) or context.match(after)))


def _second_person(text: str) -> bool:
    found = _IMPERATIVE_BEFORE.match(text)
    if found is None or found.group(1).lower() in _NOT_IMPERATIVE | _HAPPENS:
        return False
    after = text[len(found.group(1)) :].lstrip()
    return _spoken(_IBERIAN, text, after) or _spoken(_ITALIAN, text, after)


# After a Spanish, Portuguese or Italian clause that says when, the main clause opens with
# its verb ("Al final de cada plan, lista las preguntas", "Quando …, traduci …"): a word
# ending like a second-person imperative there is one, unless it is a determiner or one of
# the verbs that describe what happens ("Cuando falla, aparece un aviso").
_ROMANCE_WHEN: Final = re.compile(
    r"^(?:antes\s+de|después\s+de|al|cuando|si|mientras|depois\s+de|após|quando|se|ao"
    r"|prima\s+di|dopo)\b",
    re.IGNORECASE,
)
_VERB_AFTER_WHEN: Final = re.compile(rf"^([{_L}]{{3,}}[aei])\b")
_HAPPENS: Final = frozenset(
    """
    viene vengono tiene tienen puede pueden pode podem existe existen parece sembra rimane
    queda fica aparece appare esiste resulta risulta sucede succede ocurre accade
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def _after_when(text: str) -> bool:
    """An imperative right after a Spanish, Portuguese or Italian clause that says when."""
    line = _LABEL.sub("", _NUMBER.sub("", text.strip(), count=1), count=1)
    clause = _CLAUSE.match(line)
    if clause is None or not _ROMANCE_WHEN.match(line):
        return False
    verb = _VERB_AFTER_WHEN.match(line[clause.end() :].lower())
    if verb is None or verb[1] in _NOT_IMPERATIVE or verb[1] in _HAPPENS:
        return False
    return _spoken(_IBERIAN, line) or _spoken(_ITALIAN, line)


def _romance_instruction(text: str) -> bool:
    if _second_person(text):
        return True
    first = _FIRST_WORD.match(text.lower())
    if first is None or first.group(2).strip() == ":" or first.group(1) in _ROMANCE_NOT_VERB:
        return False
    if first.group(1) in _ENGLISH_AR:  # "Sidebar en la parte …": a noun
        return False
    word, after = first.group(1), text[first.end() :].lstrip()
    # an "-ar"/"-ir" word is no English one ("Controller … en masse" ends in "-er"): one
    # Spanish or Portuguese small word beside it is enough ("Documentar todo en …")
    iberian = bool(_IBERIAN_INFINITIVE.match(word))
    return bool(
        (iberian and _spoken(_IBERIAN, text, after))
        or (iberian and not word.endswith("er") and len(_IBERIAN.findall(text)) == 1)
        or (_FRENCH_INFINITIVE.match(word) and _spoken(_FRENCH, text, after))
        or (_ITALIAN_INFINITIVE.match(word) and _spoken(_ITALIAN, text, after))
    )


# A list entry that opens with a negation and no verb ("Pas de dépendances nouvelles",
# "Nessun commento superfluo", "Sin punto y coma", "Sem `any`", "No inline styles"): what
# must not be there. "Sin embargo" (however), "no longer", "no one" and an entry that says
# something is not there yet ("No offline mode yet") are not.
_VERBLESS_NO: Final = re.compile(
    r"^(?:pas\s+(?:de\s|d['’])|aucune?\s|nessun[oa]?\s|nessun['’]|niente\s|nada\s+de\s"
    r"|ningún\s|ninguna\s|sin\s(?!embargo\b)|sem\s|nenhuma?\s"
    r"|no\s(?!longer\b|one\b|matter\b|need\b|more\b|doubt\b|problem\b|later\b|less\b"
    r"|sooner\b|further\b|sé\b|es\b|está\b|hay\b|se\b|lo\b|la\b|le\b|[\d.,:;!?)]))",
    re.IGNORECASE,
)
_NOT_YET: Final = re.compile(
    r"\b(?:yet|planned|todavía|aún|ancora|encore|ainda|noch|pour l'instant|por ahora|per ora)\b",
    re.IGNORECASE,
)


def verbless_negation(text: str) -> bool:
    """``text`` (a list entry) opens with a negation and a noun, no verb: a prohibition
    ("Pas de …", "Aucun …", "Nessun …", "Niente …", "Sin …", "Nada de …", "Sem …",
    "No …")."""
    main = _LABEL.sub("", _NUMBER.sub("", text.strip(), count=1), count=1)
    return bool(_VERBLESS_NO.match(main)) and not _NOT_YET.search(main)


def infinitive_label(text: str) -> bool:
    """A label that is itself the task over only its command ("Instalar dependências:
    `npm install`", "Avviare il server: `npm start`"): a Spanish or Portuguese "-ar"/"-ir"
    infinitive that no English noun is, or an Italian one with an Italian small word
    ("Middleware: `express`" is English)."""
    label = _NUMBER.sub("", text.strip(), count=1).split(":", 1)[0]
    word = label.split()[0].lower() if label.split() else ""
    if word in _ENGLISH_AR or word in _ROMANCE_NOT_VERB or word.endswith("er"):
        return False
    italian = _ITALIAN_INFINITIVE.match(word) and _ITALIAN.search(label)
    return bool(_IBERIAN_INFINITIVE.match(word) or italian)


def instruction(text: str) -> bool:
    """``text`` (a rule's opening, without its label) opens with an instruction in one of
    the languages above, after an optional clause that says when."""
    if _ZH_WHEN.match(text.strip()) or _ZH_FIRST.match(text.strip()) or _after_when(text):
        return True
    main = _main_clause(text)
    if any(_opens_instruction(c) for c in _LATER_CLAUSE.split(main)[1:]):
        return True  # "Notazione coerente; definire i simboli alla prima occorrenza"
    if not main or main == text.strip():
        return bool(main) and (_german_instruction(main) or _romance_instruction(main))
    return _opens_instruction(main)


# A later clause of an entry, after ";" ("Notazione coerente; definire i simboli …"): a
# name or a state first, then what to do.
_LATER_CLAUSE: Final = re.compile(r"\s*[;；]\s+")


def _opens_instruction(text: str) -> bool:
    return bool(
        cues.IMPERATIVE.search(text) or _german_instruction(text) or _romance_instruction(text)
    )


def prohibition(text: str) -> bool:
    """A prohibition by grammar: "No usar …", "Não usar …", "Ne pas …", "Non usare …", or
    German "nicht" in an instruction ("Frage nicht …", "… nicht committen")."""
    for found in _ROMANCE_PROHIBITION.finditer(text):
        no, verb = found.group("no"), (found.group("verb") or "").lower()
        if no is None:  # "ne pas", "ne jamais"
            return _spoken(_FRENCH, text)
        if verb in _ROMANCE_NOT_VERB:
            continue
        if no.lower() == "non":
            if _spoken(_ITALIAN, text):
                return True
        elif not verb.endswith("er") or _spoken(_IBERIAN, text) or no.lower() == "não":
            return True  # "no longer", "no other": English, unless the line is Spanish
    return bool(_DE_NICHT.search(text)) and _german_instruction(_main_clause(text))
