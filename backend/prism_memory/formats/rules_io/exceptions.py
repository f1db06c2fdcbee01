"""Exceptions stay with the rule they qualify.

An "Exceptions:" label ("**Exception:** build commands with no native equivalent", "The
only exceptions (must meet all criteria):" and its list, "例外：", "Ausnahmen:") right after
a rule of the same section is part of that rule: it joins the rule's body and lines instead
of standing alone as a rule (or a description) of its own. "Unless told otherwise, …" is a
conditional rule, not an exception label (see :data:`.cues.EXCEPTION_LEAD`). Nothing is
attached to a Prism export's marked rule.
"""

from __future__ import annotations

from prism_memory.formats.rules_io.blocks import Line, Node, comments_in, strip_comments
from prism_memory.formats.rules_io.cues import COLON, EXCEPTION_LEAD
from prism_memory.formats.rules_io.drafts import State, join, report_inline, span

LISTS = ("bullet_list", "ordered_list")


def attach_exception(state: State, lines: list[Line], text: str) -> bool:
    """An "Exceptions:" paragraph, list or entry right after a rule of the same section
    qualifies that rule: it joins its body (and its lines) instead of standing alone."""
    last = state.drafts[-1] if state.drafts else None
    if (
        last is None
        or last.kind is None
        or last.section != state.section
        or not lines
        or not EXCEPTION_LEAD.match(text.replace("**", ""))
    ):
        return False
    gap = lines[0][0] - last.end - 1
    last.lines = [*last.lines, *lines]
    last.text = last.text + ("\n" if gap <= 0 else "\n\n") + text
    return True


def exception_paragraph(state: State, para: Node, following: Node | None) -> int:
    """An "Exceptions:" paragraph (with the list it introduces) after a rule joins it: the
    number of nodes taken, 0 when it is no exception of a rule."""
    comments = comments_in(para.inline)
    text = strip_comments(join(span(state, para)), comments)
    if state.pending is not None or "prism:" in text:
        return 0
    lines, nodes = span(state, para), 1
    if following is not None and following.kind in LISTS and text.rstrip().endswith(COLON):
        lines, nodes = [*lines, *span(state, following)], 2
        text = text + "\n" + join(span(state, following))
    if not attach_exception(state, lines, text):
        return 0
    report_inline(state, para, comments)
    return nodes
