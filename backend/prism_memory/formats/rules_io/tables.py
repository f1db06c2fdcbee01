"""Tables in rule files: a table of rules becomes rules, row by row.

A row whose cells (past the first, which names the thing) instruct — an imperative, a
hard or soft modal, a preference, in any of the languages :mod:`.cues` knows — and that
reads as a rule (the row as a whole, or its advice cell alone: "Используй `x` для …" after
the cells naming the tool) is one rule, its text the row as written; a cell that is only a
value ("`.test.ts`") gives no advice, and a cell under a header that names a description
("Description", "Rôle", "说明") says what its thing is or does, so it instructs only with a
hard modal ("| `/commit` | Commit avec message français |" describes the command). A
column headed "when to update" ("MAJ", "Update", "Aggiornamento", "更新") says when to
update the row's file: each row with a cell there is a rule, however short the cell; so is
each row of a table whose first column names a situation ("场景", "When"): what to use or do
then; and so is each row that pairs a task with the command that does it ("| Build |
`npm run build` |"), a convention. The header and the other rows stay descriptive
stretches, so nothing of the table is left out.
"""

from __future__ import annotations

import re
from typing import Final

from prism_memory.formats.rules_io.blocks import Node
from prism_memory.formats.rules_io.drafts import State, add, span
from prism_memory.formats.rules_io.kinds import command_row, evidence, rule_likeness

_CODE: Final = re.compile(r"`+[^`]*`+")
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
ADVICE_WORDS: Final = 2  # a cell of advice says something beyond a value (`.test.ts`)
_DESCRIPTION_HEADER: Final = re.compile(
    r"^\W*(?:descriptions?|what it does|purpose|meaning|rôle|role|descripción|descrição"
    r"|descrizione|beschreibung|bedeutung|описание|назначение|说明|描述|説明|설명)\W*$",
    re.IGNORECASE,
)

_UPDATE_HEADER: Final = re.compile(
    r"^\W*(?:(?:when\s+to\s+)?update[sd]?(?:\s+when)?|maj|mise\s+à\s+jour|aggiornamento"
    r"|actualización|atualização|aktualisierung|更新(?:时机|タイミング)?|업데이트)\W*$",
    re.IGNORECASE,
)

# A first column headed by a situation ("场景", "When", "Situación"): each row maps one
# situation to what the agent uses or does ("| 写 HTML/CSS/UI | `frontend-design` |").
_SITUATION_HEADER: Final = re.compile(
    r"^\W*(?:场景|情况|情形|状況|場面|상황|경우|situations?|scenarios?|when|cases?|situaci[oó]n"
    r"|cu[aá]ndo|quand|wann|situation|quando|situa[çc][ãa]o|situazione|ситуация|когда)\W*$",
    re.IGNORECASE,
)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def table(state: State, node: Node) -> None:
    """A table: each row whose cells (past the first) instruct is a rule, as written; the
    other rows, with the header, stay descriptive stretches."""
    lines = span(state, node)
    context, run = state.context(), lines[:2]
    header = _cells(lines[0][1]) if lines else []
    describing = {i for i, h in enumerate(header) if _DESCRIPTION_HEADER.match(h)}
    updating = {i for i, h in enumerate(header) if i > 0 and _UPDATE_HEADER.match(h)}
    situations = bool(header) and _SITUATION_HEADER.match(header[0]) is not None
    for number, row in lines[2:]:
        cells = _cells(row)
        advice = [
            cell
            for i, cell in enumerate(cells)
            if i > 0
            and len(_WORD.findall(_CODE.sub("", cell))) >= ADVICE_WORDS  # not a bare value
            and (
                (ev := evidence(cell)).hard
                or (
                    i not in describing
                    and (ev.imperative or ev.grammatical or ev.soft or ev.prefer)
                )
            )
        ]
        # when to update the row's file, or the row as a whole, or its advice cell alone
        # ("Используй `x` для …" after the cells that name the tool): each reads as a rule
        update = any(cells[i].strip("`* ") for i in updating if i < len(cells))
        # or what to use or do in the row's situation
        then = situations and len(cells) > 1 and bool(cells[1].strip("`*→-> "))
        if (
            update
            or then
            or command_row(row)  # "| Build | `npm run build` |": the command for a task
            or (
                advice
                and any(
                    rule_likeness(text, context, state.fmt, list_entry=True) >= state.threshold
                    for text in (" ".join(cells), *advice)
                )
            )
        ):
            if run:
                add(state, run, context, None, descriptive=True)
            run = []
            add(state, [(number, row)], context, None, row.strip(), list_entry=True, force=True)
        else:
            run.append((number, row))
    if run:
        add(state, run, context, None, descriptive=True)
