"""The modal markers of the languages written with spaces, and the words their headings use
to say what a section is, as one table per language.

Each language has the same three families: **hard** (must, never, always, forbidden, only),
**soft** (should, ensure, avoid, it is necessary) and **prefer** (prefer, recommended, if
possible). A form is a word or a few words matched whole (spaces match any white space);
a form ending in ``*`` is a stem ("предпочт*"). :mod:`.cues` joins these tables with the
markers of Chinese, Japanese and Korean, which need no word boundaries, into its ``HARD``,
``SOFT`` and ``PREFER`` patterns; a test enumerates every language and family.

The section words (:data:`SECTIONS`) have the same structure in every language too: when a
task runs (before, after), a template, a status log, the form of what the agent writes; a
test enumerates them as well.

Each compiled pattern is one alternation between word boundaries: linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Markers:
    """The modal markers of one language (see the module doc)."""

    hard: tuple[str, ...]
    soft: tuple[str, ...]
    prefer: tuple[str, ...]


MARKERS: Final[dict[str, Markers]] = {
    "es": Markers(
        hard=(
            "siempre",
            "nunca",
            "jamás",
            "debe",
            "deben",
            "debes",
            "debemos",
            "obligatorio",
            "prohibido",
            "no uses",
            "no utilices",
            "no hagas",
            "no rompas",
            "no incluyas",
            "no reformatees",
            "no agregues",
            "no modifiques",
            "no crees",
            "únicamente",
            "exclusivamente",
            "solamente",
        ),
        soft=(
            "debería",
            "deberían",
            "asegúrate",
            "asegurar",
            "evita",
            "evitar",
            "evite",
            "hay que",
            "es necesario",
        ),
        prefer=(
            "prefiere",
            "preferir",
            "prefiera",
            "preferible",
            "preferiblemente",
            "recomendado",
            "recomendable",
            "si es posible",
            "cuando sea posible",
            "siempre que sea posible",
        ),
    ),
    "pt": Markers(
        hard=(
            "sempre",
            "nunca",
            "deve",
            "devem",
            "obrigatório",
            "proibido",
            "não",
            "somente",
            "exclusivamente",
            "apenas",
        ),
        soft=(
            "deveria",
            "deveriam",
            "garanta",
            "garantir",
            "certifique",
            "evitar",
            "mantenha",
            "é necessário",
            "precisa",
        ),
        prefer=(
            "prefira",
            "preferencialmente",
            "recomendado",
            "de preferência",
            "sempre que possível",
            "quando possível",
            "quando fizer sentido",
        ),
    ),
    "fr": Markers(
        hard=(
            "toujours",
            "jamais",
            "doit",
            "doivent",
            "obligatoire",
            "interdit",
            "uniquement",
            "exclusivement",
        ),
        soft=(
            "il faut",
            "devrait",
            "devraient",
            "assure",
            "assurez",
            "assurer",
            "éviter",
            "évite",
            "évitez",
            "veiller",
        ),
        prefer=(
            "préférer",
            "préférez",
            "privilégier",
            "privilégiez",
            "recommandé",
            "de préférence",
            "plutôt que",
            "si possible",
            "quand c'est pertinent",
            "lorsque c'est pertinent",
        ),
    ),
    "it": Markers(
        hard=(
            "sempre",
            "deve",
            "devono",
            "dobbiamo",
            "obbligatorio",
            "obbligatoria",
            "vietato",
            "vietata",
            "mai",
            "esclusivamente",
            "soltanto",
            "unicamente",
        ),
        soft=(
            "dovrebbe",
            "dovrebbero",
            "assicurati",
            "assicurarsi",
            "evita",
            "evitare",
            "è necessario",
            "bisogna",
        ),
        prefer=(
            "se possibile",
            "quando possibile",
            "preferire",
            "preferibilmente",
            "raccomandato",
            "consigliato",
        ),
    ),
    "de": Markers(
        hard=(
            "immer",
            "niemals",
            "nie",
            "muss",
            "musst",
            "müssen",
            "darf",
            "darfst",
            "dürfen",
            "verboten",
            "kein",
            "keine",
            "keinen",
            "nur",
            "ausschließlich",
        ),
        soft=(
            "sollte",
            "solltest",
            "sollten",
            "soll",
            "sollst",
            "sollen",
            "sicherstellen",
            "stelle sicher",
            "vermeide",
            "vermeiden",
            "achte",
        ),
        prefer=(
            "bevorzugt",
            "bevorzuge",
            "bevorzugen",
            "bevorzugte",
            "möglichst",
            "empfohlen",
            "vorzugsweise",
            "wenn möglich",
            "falls möglich",
        ),
    ),
    "ru": Markers(
        hard=(
            "всегда",
            "никогда",
            "нельзя",
            "запрещено",
            "запрещается",
            "обязательно",
            "должен",
            "должна",
            "должны",
            "только",
        ),
        soft=(
            "следует",
            "нужно",
            "необходимо",
            "убедись",
            "убедитесь",
            "избегай",
            "избегайте",
            "избегать",
        ),
        prefer=("предпочт*", "рекоменд*", "по возможности", "лучше"),
    ),
}


@dataclass(frozen=True)
class SectionWords:
    """What a heading in one language says about the section under it (see
    :data:`SECTIONS`)."""

    when: tuple[str, ...]
    template: tuple[str, ...]
    status: tuple[str, ...]
    form: tuple[str, ...]


# What a heading says about its section, one table per language written with spaces, each
# with the same three families; Chinese, Japanese and Korean are in :mod:`.cues`.
# - **when**: the words that open a heading saying when a task's steps are run ("Before
#   any change", "Avant toute modification", "Nach dem Merge"): it leads in like "Before
#   any change:" does, so the numbered list under it is the steps of one task;
# - **template**: a template or form to fill ("Prompt template", "Vorlage"): its entries are
#   the fields, no rules;
# - **status**: work in progress, recent changes, known problems: a log, no rules;
# - **form**: the form of what the agent writes (format, response style, tone): its entries
#   are conventions, however short ("Brief answers", "Code blocks with their language").
SECTIONS: Final[dict[str, SectionWords]] = {
    "en": SectionWords(
        when=("before", "after", "prior to", "ahead of"),
        template=("template", "templates", "boilerplate", "skeleton"),
        status=("in progress", "work in progress", "recent changes", "known issues"),
        form=("format", "formatting", "response style", "tone"),
    ),
    "es": SectionWords(
        when=("antes de", "antes del", "después de", "después del"),
        template=("plantilla", "plantillas", "esqueleto", "machote"),
        status=("en curso", "en progreso", "cambios recientes", "problemas conocidos"),
        form=("formato", "formato de salida", "estilo de respuesta", "tono"),
    ),
    "pt": SectionWords(
        when=("antes de", "antes do", "antes da", "depois de", "depois do", "após"),
        template=("template", "templates", "gabarito", "esqueleto"),
        status=("em andamento", "em progresso", "mudanças recentes", "problemas conhecidos"),
        form=("formato", "formatação", "estilo de resposta", "tom de voz"),
    ),
    "fr": SectionWords(
        when=("avant", "après", "avant de", "avant toute"),
        template=("gabarit", "canevas", "template", "trame"),
        status=("en cours", "travaux en cours", "changements récents", "problèmes connus"),
        form=("format", "mise en forme", "style de réponse", "ton"),
    ),
    "it": SectionWords(
        when=("prima di", "prima del", "dopo", "dopo il", "dopo la"),
        template=("template", "templates", "traccia", "schema da compilare"),
        status=("in corso", "lavori in corso", "modifiche recenti", "problemi noti"),
        form=("formato", "formattazione", "stile di risposta", "tono"),
    ),
    "de": SectionWords(
        when=("vor dem", "vor der", "vor jedem", "nach dem", "nach der", "nach jedem", "bevor"),
        template=("vorlage", "vorlagen", "template", "schablone"),
        status=("in arbeit", "aktueller stand", "letzte änderungen", "bekannte probleme"),
        form=("format", "formatierung", "antwortstil", "tonfall"),
    ),
    "ru": SectionWords(
        when=("перед", "после", "до начала", "по завершении"),
        template=("шаблон", "шаблоны", "заготовка", "бланк"),
        status=("в работе", "недавние изменения", "известные проблемы", "текущий статус"),
        form=("формат", "форматирование", "стиль ответа", "тон"),
    ),
}
# Cyrillic has no \b that tells its letters from the Latin ones around a code span.
_CYRILLIC: Final = frozenset({"ru"})
_CYRILLIC_LETTER: Final = "а-яё"


# German written without its own letters ("muessen", "ausschliesslich", "pruefen"): the
# same words, as keyboards and tools without umlauts make people write them
_GERMAN_ASCII: Final = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def german_ascii(forms: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``forms`` and, after each that has one, its spelling without umlauts or ß."""
    return tuple(dict.fromkeys(f for form in forms for f in (form, form.translate(_GERMAN_ASCII))))


def _forms(language: str, forms: tuple[str, ...]) -> tuple[str, ...]:
    return german_ascii(forms) if language == "de" else forms


def _form(form: str) -> str:
    stem = form.endswith("*")
    body = r"\s+".join(re.escape(word) for word in form.rstrip("*").split())
    return body + (r"\w*" if stem else "")


def section_pattern(family: str, opening: bool = False) -> str:
    """One alternation of every language's :data:`SECTIONS` forms of ``family`` ("when",
    "template", "status"), each between its language's word boundaries; with ``opening``,
    anchored at the start of a heading (after any marks, numbers or emoji)."""
    parts = []
    for language, words in SECTIONS.items():
        alternation = "|".join(_form(f) for f in _forms(language, getattr(words, family)))
        if language in _CYRILLIC:
            start, end = rf"(?<![{_CYRILLIC_LETTER}])", rf"(?![{_CYRILLIC_LETTER}])"
        else:
            start, end = r"\b", r"\b"
        parts.append(rf"{'' if opening else start}(?:{alternation}){end}")
    joined = "|".join(parts)
    return rf"^[\W\d_]*(?:{joined})" if opening else joined


def pattern(family: str) -> str:
    """One alternation of every language's forms of ``family`` ("hard", "soft",
    "prefer"), each language between its own word boundaries."""
    parts = []
    for language, markers in MARKERS.items():
        forms = "|".join(_form(f) for f in _forms(language, getattr(markers, family)))
        if language in _CYRILLIC:
            letter = _CYRILLIC_LETTER
            parts.append(rf"(?<![{letter}])(?:{forms})(?![{letter}])")
        else:
            parts.append(rf"\b(?:{forms})\b")
    return "|".join(parts)
