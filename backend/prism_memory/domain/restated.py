"""Query words that only restate the session context (DESIGN §6 relevance, issue 19).

A session whose surface is ``go`` recalls rules that apply to Go; its task text saying "The
Go dashboard is slow" adds nothing inside that scope, yet a rule that also says "Go" would
win relevance on that word alone (lexically and in the embedding), over a rule about slow
dashboards. Applicability already counts the match (``overlap``), so relevance is scored
against the query without the words that restate a context value.

A run of one to :data:`RUN_MAX` consecutive words restates a value when, lowercased and
joined without separators, it spells the value without its separators: surface ``go``
drops "Go", ``nextjs`` drops "Next.js", ``azure-devops`` drops "Azure DevOps",
``power-platform`` drops "Power Platform". A word that is only part of a value ("Azure"
for ``azure-devops``) stays: it names something narrower or broader than the context.
Which keys count is a setting (``PRISM_RANK_RESTATED``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise
from typing import Final

from prism_memory.domain.records import SessionContext

RUN_MAX: Final = 3  # "Azure DevOps Pipelines" spells at most three words of a value
_WORD: Final = re.compile(r"\w+")
_SEPARATORS: Final = re.compile(r"[\W_]+")
_SPACES: Final = re.compile(r"\s+")
_GAP: Final = re.compile(r"[ .\-/]?")


def compact(value: str) -> str:
    """A value as compared with query words: lowercase, separators removed."""
    return _SEPARATORS.sub("", value.lower())


def without_restated(query: str, context: SessionContext, keys: Iterable[str]) -> str:
    """``query`` without the runs of words that restate the context's values of ``keys``.

    The rest of the text is kept as written (punctuation included), with the spaces the
    removed words leave collapsed; a query made only of such words becomes empty.
    """
    values = {compact(v) for k in keys if (v := context.value(k))}
    values.discard("")
    if not values or not query.strip():
        return query
    words = list(_WORD.finditer(query))
    drop: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        taken = 0
        for run in range(min(RUN_MAX, len(words) - i), 0, -1):
            span = words[i : i + run]
            if _joined(query, span) and compact("".join(w.group() for w in span)) in values:
                taken = run
                break
        if taken:
            drop.append((words[i].start(), words[i + taken - 1].end()))
            i += taken
        else:
            i += 1
    if not drop:
        return query
    parts, at = [], 0
    for start, end in drop:
        parts.append(query[at:start])
        at = end
    parts.append(query[at:])
    return _SPACES.sub(" ", "".join(parts)).strip()


def _joined(text: str, span: list[re.Match[str]]) -> bool:
    """The words of ``span`` are one name: at most one space, ``.``, ``-`` or ``/`` between
    each two ("Next.js", "Azure DevOps"; not "Azure. DevOps")."""
    return all(_GAP.fullmatch(text[a.end() : b.start()]) for a, b in pairwise(span))
