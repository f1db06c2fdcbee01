"""Tables in rule files: a table of rules becomes rules, row by row.

A row whose cells (past the first, which names the thing) instruct — an imperative, a
hard or soft modal, a preference, in any of the languages :mod:`.cues` knows — and that
reads as a rule is one rule, its text the row as written; the header and the other rows
stay descriptive stretches, so nothing of the table is left out.
"""

from __future__ import annotations

from prism_memory.formats.rules_io.blocks import Node
from prism_memory.formats.rules_io.drafts import State, add, span
from prism_memory.formats.rules_io.kinds import evidence, rule_likeness


def table(state: State, node: Node) -> None:
    """A table: each row whose cells (past the first) instruct is a rule, as written; the
    other rows, with the header, stay descriptive stretches."""
    lines = span(state, node)
    context, run = state.context(), lines[:2]
    for number, row in lines[2:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        instructs = any(
            (ev := evidence(cell)).imperative or ev.hard or ev.soft or ev.prefer
            for cell in cells[1:]
            if cell
        )
        if instructs and rule_likeness(" ".join(cells), context, state.fmt, list_entry=True) >= 0.5:
            if run:
                add(state, run, context, None, descriptive=True)
            run = []
            add(state, [(number, row)], context, None, row.strip(), list_entry=True)
        else:
            run.append((number, row))
    if run:
        add(state, run, context, None, descriptive=True)
