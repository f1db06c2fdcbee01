"""Split a rule file's Markdown into units: one per rule, plus stretches of descriptive text.

The blocks come from markdown-it-py (:mod:`.blocks`); the text of a unit is always the
source as written (list marker and indent removed), so nothing inside it is reinterpreted.

- A list item is one rule, with its sub-items (exceptions, examples, the objects of "This
  includes:"). When the item is only a lead-in or a label ("Package Management",
  "All changes need to:"), each entry under it is a rule of its own that carries the
  lead-in as its first line, and the label as context.
- A paragraph ending in ":" before a list is the lead-in of every entry of that list —
  unless the entries are only short objects of it ("Include:" + "What changed"), which
  stay with it as one rule.
- A paragraph splits into sentences; an instruction starts a rule and the descriptive
  sentences after it stay with it; descriptive sentences before any instruction make one
  descriptive unit.
- Headings are context; so is a plain-text heading, a line of a few words with no
  sentence end right before a list ("Key terms", "Absolutely forbidden"), for that list.
  A code block stays with the rule before it (same section, right
  after it or after a rule ending with ':'). Tables are descriptive.
- HTML comments, in blocks or inline, are left out and reported with their line; other
  raw HTML is text. ``@path`` in the text (never in code) is collected as an import.
- Prism's comments: ``<!-- prism:id=UUID v=N kind=K -->`` (at the end of an item's first
  line, or on the line before it) maps a rule back to its memorule; ``<!-- prism:applies_to
  {...} -->`` states ``applies_to`` until the next heading of its level or above;
  ``<!-- prism:export ... -->`` marks a file Prism wrote.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from prism_memory.formats.rules_io.blocks import (
    Line,
    Node,
    as_list_items,
    comments_in,
    html_comments,
    is_comment,
    item_lines,
    parse,
    plain_inline,
    strip_comments,
    without_tag_lines,
)
from prism_memory.formats.rules_io.cues import (
    COLON,
    EXAMPLE_LEAD,
    PREDICATE_LEAD,
    PROCEDURE_HEADING,
    RANKING_HEADING,
    RULES_LEAD,
    WHEN_HEADING,
)
from prism_memory.formats.rules_io.drafts import (
    MARKER,
    Split,
    State,
    add,
    join,
    line_at,
    marker_of,
    report_inline,
    span,
    trailing_marker,
    without_imports,
)
from prism_memory.formats.rules_io.exceptions import attach_exception, exception_paragraph
from prism_memory.formats.rules_io.headings import kind_of_heading, unqualified
from prism_memory.formats.rules_io.imports import imports_in
from prism_memory.formats.rules_io.kinds import RULE_THRESHOLD, evidence, rule_likeness
from prism_memory.formats.rules_io.lists import (
    commands_to_run,
    describing,
    is_lead,
    objects_only,
    vocabulary_list,
)
from prism_memory.formats.rules_io.records import FileWarning, Marker
from prism_memory.formats.rules_io.sentences import line_spans, points_back, sentence_spans
from prism_memory.formats.rules_io.tables import table

_APPLIES: Final = re.compile(r"<!--\s*prism:applies_to\s+(?P<json>\{.*\})\s*-->", re.DOTALL)
_EXPORT: Final = re.compile(r"<!--\s*prism:export\b")
_APPLIES_KEYS: Final = ("persona", "surface", "specialization", "scope")
_LISTS: Final = ("bullet_list", "ordered_list")
_CHECKBOX: Final = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[[ xX]\]\s")
MIN_BOXES: Final = 2


def split_markdown(
    path: str,
    lines: list[Line],
    applies_to: dict[str, str],
    fmt: str = "markdown",
    threshold: float = RULE_THRESHOLD,
) -> Split:
    """Split Markdown lines (with their file line numbers) into units.

    Args:
        path: the display path, for locations and warnings.
        lines: the body's lines, front matter removed.
        applies_to: ``applies_to`` the front matter stated (a ``prism:applies_to`` comment
            replaces it for the rules after it).
        fmt: the file's dialect, a prior for the rule classifier.
        threshold: the :func:`~.kinds.rule_likeness` from which a piece is a rule.
    """
    if not lines:
        return Split([], [], False)
    exported = any(_EXPORT.search(text) for _, text in lines[:40])
    texts = without_tag_lines([text for _, text in lines])  # "<law>": markup
    lines = [(number, text) for (number, _), text in zip(lines, texts, strict=True)]
    state = State(path, fmt, dict(lines), threshold=threshold, applies_to=dict(applies_to))
    state.exported = exported
    nodes = parse("\n".join(as_list_items(texts)), lines[0][0])
    state.imports = imports_in(nodes)
    _blocks(state, nodes)
    state.comments_summary()
    units = [d.freeze(path) for d in state.drafts if d.text.strip()]
    return Split(units, state.warnings, state.exported, state.imports)


_BOLD_ONLY: Final = re.compile(r"\*\*[^*\n]{1,60}\*\*[:：]?")  # "**Build Process**"


def _blocks(state: State, nodes: list[Node]) -> None:
    i = 0
    while i < len(nodes):
        node = nodes[i]
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if node.kind == "heading":
            _heading(state, node)
        elif node.kind == "html_block":
            _html(state, node)
        elif node.kind == "paragraph":
            taken = exception_paragraph(state, node, following)
            if taken:
                i += taken - 1
            elif (
                following is not None
                and following.kind in _LISTS
                and (title := _plain_heading(state, node))
            ):
                _under_plain_heading(state, title, following)
                i += 1
            elif (
                following is not None and following.kind in _LISTS and _ends_with_colon(state, node)
            ):
                _lead_and_list(state, node, following)
                i += 1
            else:
                _paragraph(state, node)
        elif node.kind == "ordered_list" and _procedure_heading(state, node):
            heading = state.headings[-1][1] if state.headings else ""
            _procedure(state, [], node, "", boxes=RANKING_HEADING.search(heading) is not None)
        elif _checklist(state, node):
            _procedure(state, [], node, "", boxes=True)
        elif node.kind in _LISTS:
            _list(state, node, state.context(), "")
        elif node.kind in ("fence", "code_block"):
            _code(state, node)
        elif node.kind == "table":
            table(state, node)
        elif node.kind == "blockquote":  # its text without the "> " marks
            for number in range(node.start, node.end + 1):
                state.lines[number] = re.sub(r"^\s{0,3}>\s?", "", state.lines.get(number, ""))
            _blocks(state, node.children)
        i += 1


def _heading(state: State, node: Node) -> None:
    _enter(state, node.level, plain_inline(node.inline))
    if state.applies_stated and node.level <= state.applies_level:
        state.applies_to, state.applies_stated = {}, False


def _enter(state: State, level: int, text: str) -> None:
    state.headings = [(lv, t) for lv, t in state.headings if lv < level]
    state.headings.append((level, text))
    state.section += 1
    state.section_kind = kind_of_heading(text)


# A plain-text heading: a line of a few words, no sentence end, right before a list ("Key
# terms", "Absolutely forbidden (quick list)", "Key Principles" in a .cursorrules).
_PLAIN_HEADING_CHARS: Final = 60
_PLAIN_HEADING_WORDS: Final = 8
_SENTENCE_END: Final = re.compile(r"[.!?。！？:：;；,，、…]\s*$")


def _under_plain_heading(state: State, title: str, lst: Node) -> None:
    """``lst`` under ``title``, a plain-text heading one level below the last heading; the
    heading ends with the list."""
    saved = state.headings, state.section_kind
    level = state.headings[-1][0] + 1 if state.headings else 2
    _enter(state, min(6, max(2, level)), title)
    _blocks(state, [lst])
    state.headings, state.section_kind = saved


def _plain_heading(state: State, node: Node) -> str | None:
    """The text of ``node``, a paragraph right before a list, when it is that list's heading
    written without "#": one line of a few words, capitalised (or in a script without case),
    no sentence end, no emphasis or code of its own, and no imperative at its start ("Use
    these commands" leads in). It heads that list alone; its line is markup."""
    text = state.lines.get(node.start, "").strip()
    if node.start != node.end or not text or len(text) > _PLAIN_HEADING_CHARS:
        return None
    main = unqualified(text)
    first = main[:1]
    if (
        not first.isalpha()
        or (first.isascii() and not first.isupper())
        or len(main.split()) > _PLAIN_HEADING_WORDS
        or _SENTENCE_END.search(text)
        or any(mark in text for mark in ("`", "*", "_", "[", "<", "|", "#"))
    ):
        return None
    said = evidence(main)
    return None if said.imperative or said.grammatical or said.question else text


def _html(state: State, node: Node) -> None:
    text = node.token.content.strip()
    if _EXPORT.search(text):
        state.exported = True
    elif marker := MARKER.fullmatch(text):
        state.pending = marker_of(marker)
    elif applies := _APPLIES.fullmatch(text):
        _applies_comment(state, node, applies["json"])
    elif is_comment(text):
        state.comment(node.start, text)
    else:  # raw HTML an agent reads as text: its comments out, the rest a unit
        found, line, cursor = html_comments(text), node.start, 0
        for at, comment in found:
            line += text.count("\n", cursor, at)
            cursor = at
            state.comment(line, comment)
        comments = [comment for _, comment in found]
        lines = span(state, node)
        add(state, lines, state.context(), None, text=strip_comments(join(lines), comments))


def _applies_comment(state: State, node: Node, raw: str) -> None:
    stated = _applies(raw)
    if stated is None:
        state.warnings.append(
            FileWarning(
                "bad_prism_comment",
                state.path,
                node.start,
                f"{state.path}:{node.start}: prism:applies_to is not a JSON object of "
                "persona/surface/specialization/scope; ignored",
            )
        )
        return
    state.applies_to, state.applies_stated = stated, True
    state.applies_level = state.headings[-1][0] if state.headings else 0


def _applies(text: str) -> dict[str, str] | None:
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not set(value) <= set(_APPLIES_KEYS):
        return None
    if not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): str(v) for k, v in value.items()}


# -- adding units ----------------------------------------------------------------------


def _paragraph(state: State, node: Node, upto: int | None = None) -> None:
    lines = span(state, node)
    comments = comments_in(node.inline)
    report_inline(state, node, comments)
    if state.pending is not None:
        add(state, lines, state.context(), state.pending, strip_comments(join(lines), comments))
        state.pending = None
        return
    text = strip_comments("\n".join(t for _, t in lines), comments)
    if upto is not None:
        text = text[:upto].rstrip()
    if not without_imports(text):
        return  # only "@AGENTS.md": an import, not a rule
    context = state.context()
    offsets, position = [], 0
    for line in text.split("\n"):
        offsets.append(position)
        position += len(line) + 1
    groups: list[tuple[int, int, bool]] = []  # start, end, is_rule
    # lines written as a list without its marks: each line (its sentences) a unit of its own
    entries = line_spans(text)
    spans = (
        [(b + s, b + e) for b, end in entries for s, e in sentence_spans(text[b:end])]
        if entries
        else sentence_spans(text)
    )
    for start, end in spans:
        piece = text[start:end]
        same_line = bool(groups) and line_at(offsets, start) == line_at(offsets, groups[-1][1] - 1)
        # a line's first sentence is the entry; the ones after it rule by their own wording
        entry = bool(entries) and not same_line
        rule = rule_likeness(piece, context, state.fmt, list_entry=entry) >= state.threshold
        # a line that points back ("This includes: …") goes on with the line before it
        joins = bool(groups) and (not entries or same_line or points_back(piece))
        if joins and (not rule or points_back(piece)):
            groups[-1] = (groups[-1][0], end, groups[-1][2])
        else:
            groups.append((start, end, rule))
    for start, end, rule in groups:
        first, last = line_at(offsets, start), line_at(offsets, end - 1)
        piece = text[start:end].strip()
        add(
            state,
            lines[first : last + 1],
            context,
            None,
            piece,
            descriptive=not rule,
            list_entry=bool(entries),
        )


def _lead_and_list(state: State, para: Node, lst: Node) -> None:
    """A paragraph ending in ':' and the list it introduces."""
    text = strip_comments(join(span(state, para)), comments_in(para.inline))
    spans = sentence_spans(text)
    lead_start = spans[-1][0] if spans else 0
    lead = text[lead_start:].strip()
    boxes = _checklist(state, lst)
    # numbered entries that each forbid or require ("1. 禁止 git add -A …") are rules of
    # their own, as under a heading that leads in (:func:`_procedure_heading`)
    numbered = lst.kind == "ordered_list" and not RULES_LEAD.search(lead)
    steps = (numbered and not _mostly_hard(state, [lst])) or boxes
    if steps or EXAMPLE_LEAD.match(lead.rstrip(":：")):
        if lead_start > 0:
            _paragraph(state, para, upto=lead_start)
        else:
            report_inline(state, para, comments_in(para.inline))
        if steps:  # a procedure: its steps stay one rule, in order
            lead_lines = span(state, para)[text[:lead_start].count("\n") :]
            _procedure(state, lead_lines, lst, lead, boxes=boxes)
        else:  # "Examples:", "Types include:": they illustrate, they do not rule
            lines = span(state, para) + span(state, lst)
            add(
                state,
                lines,
                state.context(),
                None,
                lead + "\n" + join(span(state, lst)),
                descriptive=True,
            )
        return
    if objects_only(state.lines, lst, lead, state.threshold):
        report_inline(state, para, comments_in(para.inline))
        lines = span(state, para) + span(state, lst)
        merged = text + "\n" + join(span(state, lst))
        run = commands_to_run(state.lines, lst, lead)  # the commands to run then: a rule
        add(state, lines, state.context(), None, merged, lead_in=lead, force=run)
        return
    entries = [join(item_lines(i, state.lines, set())) for i in lst.children]
    rules = sum(
        1 for e in entries if rule_likeness(e, state.context(), state.fmt) >= state.threshold
    )
    predicates = PREDICATE_LEAD.search(lead) is not None  # "… deve essere:": each entry rules
    if (
        not predicates
        and rule_likeness(lead, state.context(), state.fmt) >= state.threshold
        and 2 * rules < len(entries)
    ):
        # a rule of its own ("…each may only import from layers below it:") over entries
        # that mostly describe: the paragraph is one rule, the entries stand alone
        _paragraph(state, para)
        _list(state, lst, state.context(), "")
        return
    if lead_start > 0:
        _paragraph(state, para, upto=lead_start)
    else:
        report_inline(state, para, comments_in(para.inline))
    _list(state, lst, state.context(), lead)


def _list(state: State, lst: Node, context: tuple[str, ...], lead: str) -> None:
    items = [i for i in lst.children if i.kind == "list_item"]
    own = [join(item_lines(i, state.lines, _nested_lines(i))) for i in items]
    rules = sum(
        1 for t in own if rule_likeness(t, context, state.fmt, lead, True) >= state.threshold
    )
    among = len(items) > 1 and 2 * rules >= len(items)
    marked = state.exported or any("prism:id=" in t for t in own)  # Prism wrote these rules
    if not marked and (
        vocabulary_list(own) or (not lead and describing(own, context, rules))
    ):  # a vocabulary ("`feat`: new feature"), a specification
        for item in items:
            add(state, span(state, item), context, None, descriptive=True)
        return
    for item in items:
        whole = item_lines(item, state.lines, set())
        text = join(whole)
        if state.pending is None and "prism:" not in text and attach_exception(state, whole, text):
            continue  # "Exception: …" qualifies the entry before it
        _item(state, item, context, lead, among)


def _nested_lines(item: Node) -> set[int]:
    return {n for c in item.children if c.kind in _LISTS for n in range(c.start, c.end + 1)}


def _item(
    state: State, item: Node, context: tuple[str, ...], lead: str, among: bool = False
) -> None:
    nested = [c for c in item.children if c.kind in _LISTS]
    comment_blocks = [
        c for c in item.children if c.kind == "html_block" and is_comment(c.token.content)
    ]
    for block in comment_blocks:
        state.comment(block.start, block.token.content)
    inline = [c.inline for c in item.children if c.kind == "paragraph"]
    comments = [c for token in inline for c in comments_in(token)]
    for child in item.children:
        if child.kind == "paragraph":
            report_inline(state, child, comments_in(child.inline))
    skip = {n for block in comment_blocks for n in range(block.start, block.end + 1)}
    whole = item_lines(item, state.lines, skip)
    marker, whole = _item_marker(state, whole)
    if marker is not None:
        add(state, whole, context, marker, strip_comments(join(whole), comments))
        return
    own_skip = skip | {n for lst in nested for n in range(lst.start, lst.end + 1)}
    own = item_lines(item, state.lines, own_skip)
    own_text = strip_comments(join(own), comments)
    if not without_imports(own_text):
        return
    if nested and EXAMPLE_LEAD.match(own_text.replace("**", "").rstrip(":： ")):
        add(state, whole, context, None, strip_comments(join(whole), comments), descriptive=True)
        return
    objects = all(objects_only(state.lines, lst, own_text, state.threshold) for lst in nested)
    # a label ending in ":" over entries that each carry a hard modal ("Verify strictly
    # (assume nothing):" over "ALWAYS read …", "NEVER say …") leads them, whatever its mood
    ruled = _label_colon(own_text) and _mostly_hard(state, nested)
    # a bold label over entries that rule ("**Build Process**" over "Run `npm run build`"):
    # context like "**Package Management**", not a rule whose first word is "Build"
    labelled = _title_label(own_text) and _mostly_rules(state, nested, context)
    if nested and (is_lead(own_text) or ruled or labelled) and not objects:
        label = own_text.rstrip(":").replace("**", "").strip()
        carried = own_text if not lead else f"{lead}\n{own_text}"
        for lst in nested:
            _list(state, lst, (*context, label), carried)
        return
    text = strip_comments(join(whole), comments)
    run = bool(nested) and all(commands_to_run(state.lines, lst, own_text) for lst in nested)
    add(
        state,
        whole,
        context,
        None,
        text,
        lead=lead,
        list_entry=True,
        among_rules=among,
        force=run,
    )


def _item_marker(state: State, lines: list[Line]) -> tuple[Marker | None, list[Line]]:
    marker, state.pending = state.pending, None
    found, rest = trailing_marker(lines[0][1]) if lines else (None, "")
    if found is not None:
        marker = marker_of(found)
        lines = [(lines[0][0], rest), *lines[1:]]
    return marker, lines


def _code(state: State, node: Node) -> None:
    lines = span(state, node)
    last = state.drafts[-1] if state.drafts else None
    if last is not None and last.section == state.section:
        gap = node.start - last.end - 1
        if gap <= 1 or last.text.rstrip().endswith(COLON):
            last.lines = [*last.lines, *lines]
            last.text = last.text + ("\n" if gap == 0 else "\n\n") + join(lines)
            return
    context = state.context()
    # the only content under a heading that is itself an instruction ("Run before you
    # commit", "진행 후에 반드시 해야할 것"): the commands are that rule
    cue = evidence(context[-1]) if context else None
    words = len(context[-1].split()) if context else 0
    instruction = cue is not None and (
        cue.hard or cue.soft or ((cue.imperative or cue.grammatical) and words >= 3)
    )
    add(state, lines, context, None, force=instruction, descriptive=not instruction)


def _ends_with_colon(state: State, node: Node) -> bool:
    return _label_colon(strip_comments(join(span(state, node)), comments_in(node.inline)))


def _label_colon(text: str) -> bool:
    return text.rstrip().rstrip("*_").rstrip().endswith(COLON)  # "**Principes :**" too


def _procedure_heading(state: State, lst: Node) -> bool:
    """The last heading names a task, or leads in like a paragraph ending in ':' does
    ("Como rodar o projeto localmente:"), unless it names rules ("Git & Workflow
    Richtlinien", as a lead-in that names rules does) or most entries carry a hard modal
    ("**ALWAYS** check …", "**NEVER** run …"): rules of their own."""
    heading = state.headings[-1][1].rstrip() if state.headings else ""
    if PROCEDURE_HEADING.search(heading) and not RULES_LEAD.search(heading):
        return True
    leads = heading.endswith(COLON) or WHEN_HEADING.search(heading) is not None
    if not leads or RULES_LEAD.search(heading):
        return False
    return not _mostly_hard(state, [lst], third=True)


def _title_label(text: str) -> bool:
    """Bold text only, two words or more, each capitalised, or one run of letters of a
    script without case ("**语言选择**"), no modal ("**Build Process**", "**Release
    Checklist**"): a label, whatever its first word could mean. An instruction in
    bold ("**NE JAMAIS lancer `pnpm dev`**", "**Install dependencies**") is not one."""
    found = _BOLD_ONLY.fullmatch(text.strip())
    if found is None:
        return False
    words = re.findall(r"[^\W\d_]+", found[0])
    said = evidence(found[0])
    # a script without case: one run of 2 to 12 letters ("**语言选择**", "**团队交流**")
    uncased = len(words) == 1 and 2 <= len(words[0]) <= 12 and not words[0].isascii()
    uncased = uncased and words[0].upper() == words[0].lower()
    return (
        uncased or (len(words) >= 2 and all(w[0].isupper() for w in words if len(w) > 2))
    ) and not (said.hard or said.soft or said.prefer)


def _mostly_rules(state: State, lists: list[Node], context: tuple[str, ...]) -> bool:
    """Most entries of ``lists`` read as rules on their own."""
    entries = [join(item_lines(i, state.lines, set())) for lst in lists for i in lst.children]
    ruling = sum(
        1 for e in entries if rule_likeness(e, context, state.fmt, "", True) >= state.threshold
    )
    return 2 * ruling > len(entries)


def _mostly_hard(state: State, lists: list[Node], third: bool = False) -> bool:
    """Most entries of ``lists`` carry a hard modal each ("SEMPRE …", "**NEVER** …"): rules
    of their own, not the steps or the objects of the line above them. With ``third`` (a list
    under a heading that leads in, "## Antes de cambiar código"), a third of them is enough:
    a step of a procedure seldom forbids."""
    entries = [join(item_lines(i, state.lines, set())) for lst in lists for i in lst.children]
    hard = sum(1 for e in entries if evidence(e).hard)
    return 3 * hard >= len(entries) if third else 2 * hard > len(entries)


def _checklist(state: State, node: Node) -> bool:
    """A list of boxes to tick ("- [ ] Tests pass"): the checks of one step, one rule."""
    items = [i for i in node.children if i.kind == "list_item"]
    return (
        node.kind in _LISTS
        and len(items) >= MIN_BOXES
        and all(_CHECKBOX.match(state.lines.get(i.start, "")) for i in items)
    )


def _procedure(
    state: State, lead_lines: list[Line], lst: Node, lead: str, boxes: bool = False
) -> None:
    """An ordered list of steps (after a lead-in ending in ':' or under a heading that
    names a workflow), or a checklist: one rule, its steps in order, with the lead-in as
    first line. A checklist (``boxes``) is a rule however its boxes are worded ("- [ ]
    Tests pass"): they are what to check; so is a ranking under a priorities heading."""
    lines = [*lead_lines, *span(state, lst)]
    body = strip_comments(join(span(state, lst)), [])  # line ends trimmed, as an entry's
    text = f"{lead}\n{body}" if lead else body
    add(state, lines, state.context(), None, text, list_entry=True, force=boxes)
