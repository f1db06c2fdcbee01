"""The modal markers of the languages written with spaces, as one table per language.

Each language has the same three families: **hard** (must, never, always, forbidden, only),
**soft** (should, ensure, avoid, it is necessary) and **prefer** (prefer, recommended, if
possible). A form is a word or a few words matched whole (spaces match any white space);
a form ending in ``*`` is a stem ("предпочт*"). :mod:`.cues` joins these tables with the
markers of Chinese, Japanese and Korean, which need no word boundaries, into its ``HARD``,
``SOFT`` and ``PREFER`` patterns; a test enumerates every language and family.

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
        hard=("sempre", "nunca", "deve", "devem", "obrigatório", "proibido", "não"),
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
            "müssen",
            "darf",
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
            "sollten",
            "soll",
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
            "не",
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
# The words that open a heading saying when a task's steps are run ("Before any change",
# "Avant toute modification", "Nach dem Merge"): the heading leads in like "Before any
# change:" does, so the numbered list under it is the steps of one task. One table per
# language written with spaces; Chinese, Japanese and Korean put the word last
# (:data:`.cues.WHEN_HEADING`).
BEFORE_AFTER: Final[dict[str, tuple[str, ...]]] = {
    "en": ("before", "after", "prior to", "ahead of"),
    "es": ("antes de", "antes del", "después de", "después del"),
    "pt": ("antes de", "antes do", "antes da", "depois de", "depois do", "após"),
    "fr": ("avant", "après", "avant de", "avant toute"),
    "it": ("prima di", "prima del", "dopo", "dopo il", "dopo la"),
    "de": ("vor dem", "vor der", "vor jedem", "nach dem", "nach der", "nach jedem", "bevor"),
    "ru": ("перед", "после", "до начала", "по завершении"),
}
# Cyrillic has no \b that tells its letters from the Latin ones around a code span.
_CYRILLIC: Final = frozenset({"ru"})
_CYRILLIC_LETTER: Final = "а-яё"


def _form(form: str) -> str:
    stem = form.endswith("*")
    body = r"\s+".join(re.escape(word) for word in form.rstrip("*").split())
    return body + (r"\w*" if stem else "")


def heading_opener() -> str:
    """One alternation of every language's :data:`BEFORE_AFTER` forms, anchored at the start
    of a heading (after any marks or emoji) and ended by a word boundary."""
    parts = []
    for language, forms in BEFORE_AFTER.items():
        alternation = "|".join(_form(f) for f in forms)
        end = rf"(?![{_CYRILLIC_LETTER}])" if language in _CYRILLIC else r"\b"
        parts.append(rf"(?:{alternation}){end}")
    return r"^[\W\d_]*(?:" + "|".join(parts) + ")"


def pattern(family: str) -> str:
    """One alternation of every language's forms of ``family`` ("hard", "soft",
    "prefer"), each language between its own word boundaries."""
    parts = []
    for language, markers in MARKERS.items():
        forms = "|".join(_form(f) for f in getattr(markers, family))
        if language in _CYRILLIC:
            letter = _CYRILLIC_LETTER
            parts.append(rf"(?<![{letter}])(?:{forms})(?![{letter}])")
        else:
            parts.append(rf"\b(?:{forms})\b")
    return "|".join(parts)
