"""Export the memorules that apply to a context as files agents load.

Formats: ``agents-md`` (``AGENTS.md``), ``claude-md`` (``CLAUDE.md``), ``cursor`` (one
``.cursor/rules/prism-*.mdc`` per group). Rules are grouped by ``applies_to`` (scope first,
then persona, surface, specialization) and, inside a group, under the heading they came
from (the context their subject names: ``Testing: Always run…``), so an exported file reads
like its source: rules without a heading first, then each heading in the order of its first
rule; rules keep their source order (file, line), then the order they were written in (ids
are time-ordered). Every rule carries ``<!-- prism:id=... v=N kind=K -->`` so a later
``import-rules`` maps it back and keeps its kind; each group states its ``applies_to`` in a
``prism:applies_to`` comment. Same store, same context → byte-identical output: nothing in
it depends on the clock.

Which memorules: the active ones recall would return for the context with an empty query
(same visibility and applicability rules), all of them — read through the store, since
``semantic_recall``'s ``top_k`` stops at 100.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Final
from uuid import UUID

from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    AppliesTo,
    Kind,
    Memory,
    MemoryState,
    Scope,
    SessionContext,
    Status,
)
from prism_memory.formats.rules_io.formats import parse_rule_file
from prism_memory.formats.rules_io.reading import SourceText
from prism_memory.formats.rules_io.records import ExportedFile, parse_tag
from prism_memory.formats.rules_io.requests import body_digest, subject_for
from prism_memory.formats.rules_io.surfaces import globs_for
from prism_memory.trigraph.dump import MemoryDump
from prism_memory.trigraph.port import TriGraphStore

_SCOPE_ORDER: Final = {Scope.GLOBAL: 0, Scope.ORG: 1, Scope.PROJECT: 2, Scope.PERSONA: 3}
_SCOPE_TITLES: Final = {
    Scope.GLOBAL: "Global rules",
    Scope.ORG: "Organisation rules",
    Scope.PROJECT: "Project rules",
    Scope.PERSONA: "Persona rules",
}
_FENCE_START: Final = ("```", "~~~")

Rule = tuple[Memory, MemoryState]


class ExportFormat(StrEnum):
    """The file formats ``export-rules`` writes."""

    AGENTS_MD = "agents-md"
    CLAUDE_MD = "claude-md"
    CURSOR = "cursor"


def applicable_memorules(store: TriGraphStore, ctx: SessionContext) -> list[Rule]:
    """Every active memorule that applies to ``ctx``: what recall returns with an empty
    query, without recall's ``top_k`` bound (read through the store's ``dump``).

    Visibility (DESIGN §6): ``global``/``org`` rules from every project of the tenant,
    ``project`` (or no scope) rules of the context's project, ``persona`` rules of the
    context's persona in its project. Applicability: no ``applies_to`` key names another
    value than the context does.
    """
    rules: list[Rule] = []
    for item in store.dump(ctx.tenant_id):
        if not isinstance(item, MemoryDump) or not item.states:
            continue
        memory, state = item.memory, item.states[-1]
        active_rule = memory.kind is Kind.MEMORULE and memory.status is Status.ACTIVE
        if active_rule and _visible(memory, state, ctx) and _applicable(state, ctx):
            rules.append((memory, state))
    return rules


def _visible(memory: Memory, state: MemoryState, ctx: SessionContext) -> bool:
    applies = state.applies_to or AppliesTo()
    if applies.scope in (Scope.GLOBAL, Scope.ORG):
        return True
    if memory.project_id != ctx.project_id:
        return False
    if applies.scope is Scope.PERSONA:
        persona = normalise_key(ctx.persona)
        return persona is not None and normalise_key(applies.persona) == persona
    return True


def _applicable(state: MemoryState, ctx: SessionContext) -> bool:
    applies = state.applies_to or AppliesTo()
    for key in APPLIES_TO_KEYS:
        wanted = normalise_key(ctx.value(key))
        named = normalise_key(getattr(applies, key))
        if wanted is not None and named is not None and named != wanted:
            return False
    return True


def render(fmt: ExportFormat, rules: Iterable[Rule], ctx: SessionContext) -> list[ExportedFile]:
    """Render rules as the files of one format (see :func:`_render`); a rule whose subject
    re-importing the file would not give back has it stated in its marker, so import →
    export → import is a fixed point."""
    rules = list(rules)
    files = _render(fmt, rules, ctx, set())
    subjects = {  # rules imported from a rule file: their subject came from its structure
        memory.id: state.subject or ""
        for memory, state in rules
        if parse_tag(state.evidence_signal_id) is not None
    }
    stated: set[UUID] = set()
    for exported in files:
        parsed = parse_rule_file(SourceText(exported.name, exported.text, []))
        for unit in parsed.units:
            if unit.marker is None or unit.marker.memory_id not in subjects:
                continue
            if subject_for(unit) != subjects[unit.marker.memory_id]:
                stated.add(unit.marker.memory_id)
    return _render(fmt, rules, ctx, stated) if stated else files


def _render(
    fmt: ExportFormat, rules: Iterable[Rule], ctx: SessionContext, stated: set[UUID]
) -> list[ExportedFile]:
    """Render rules as the files of one format, in a stable order.

    Args:
        fmt: the format.
        rules: the memorules (memory and current state).
        ctx: the context they were selected for (named in the header comment).
    """
    groups = _groups(rules)
    header = _header(fmt, ctx)
    if fmt is ExportFormat.CURSOR:
        names = _file_names([applies for applies, _ in groups])
        return [
            ExportedFile(
                names[i],
                _front_matter(applies) + header + _group_text(applies, members, 1, stated),
                len(members),
            )
            for i, (applies, members) in enumerate(groups)
        ]
    title = "AGENTS.md" if fmt is ExportFormat.AGENTS_MD else "CLAUDE.md"
    body = "".join(_group_text(applies, members, 2, stated) for applies, members in groups)
    if not groups:
        body = "\n_No memorules apply to this context._\n"
    count = sum(len(m) for _, m in groups)
    return [ExportedFile(title, f"# {title}\n\n{header}{body}", count)]


def _groups(rules: Iterable[Rule]) -> list[tuple[dict[str, str], list[Rule]]]:
    by_key: dict[str, tuple[dict[str, str], list[Rule]]] = {}
    for memory, state in rules:
        applies = state.applies_to.to_dict() if state.applies_to else {}
        key = json.dumps(applies, sort_keys=True)
        by_key.setdefault(key, (applies, []))[1].append((memory, state))
    return [by_key[k] for k in sorted(by_key, key=lambda k: _group_order(by_key[k][0]))]


def _group_order(applies: dict[str, str]) -> tuple[object, ...]:
    """Broad scopes first; inside a scope, general rules before narrower ones."""
    scope = Scope(applies["scope"]) if "scope" in applies else Scope.PROJECT
    named = [applies.get(k) or "" for k in APPLIES_TO_KEYS]
    return (_SCOPE_ORDER[scope], sum(1 for v in named if v), *named, "scope" in applies)


def _header(fmt: ExportFormat, ctx: SessionContext) -> str:
    named = " ".join(f"{k}={ctx.value(k)}" for k in APPLIES_TO_KEYS if ctx.value(k))
    return (
        f"<!-- prism:export format={fmt.value}{' ' + _safe(named) if named else ''} -->\n"
        "<!-- Written by `prism export-rules`: each rule keeps its memorule id. Edit a rule and "
        "run `prism import-rules` on this file to record a new version. -->\n"
    )


def _title(applies: dict[str, str]) -> str:
    scope = Scope(applies["scope"]) if "scope" in applies else Scope.PROJECT
    parts = [f"{k} {applies[k]}" for k in APPLIES_TO_KEYS if applies.get(k)]
    return _SCOPE_TITLES[scope] + (f" ({', '.join(parts)})" if parts else "")


def _group_text(
    applies: dict[str, str], members: list[Rule], level: int, with_subject: set[UUID]
) -> str:
    marks = "#" * level
    lines = [f"\n{marks} {_safe(_title(applies))}\n\n"]
    stated = json.dumps(applies, sort_keys=True, ensure_ascii=True).replace(">", "\\u003e")
    lines.append(f"<!-- prism:applies_to {stated} -->\n")
    sections: dict[str, list[Rule]] = {}
    for rule in sorted(members, key=_source_order):
        sections.setdefault(heading_of(rule[1]), []).append(rule)
    for heading in sorted(sections, key=lambda h: (h != "", list(sections).index(h))):
        if heading:
            lines.append(f"\n{marks}# {_safe(heading)}\n\n")
        elif len(sections) > 1 or level == 1:
            lines.append("\n")
        lines.extend(
            _rule_text(memory, state, memory.id in with_subject)
            for memory, state in sections[heading]
        )
    return "".join(lines)


def heading_of(state: MemoryState) -> str:
    """The heading a rule came from: its subject's ``Context:`` prefix, when the importer
    added it (the body does not itself start with it), else ``""``."""
    subject, body = state.subject or "", " ".join(state.body.split())
    head, sep, _ = subject.partition(": ")
    if not sep or not head or body.lower().startswith(head.lower()) or len(head) > 60:
        return ""
    return head


def _source_order(rule: Rule) -> tuple[object, ...]:
    memory, state = rule
    where = parse_tag(state.evidence_signal_id)
    if where is None:
        return (1, "", 0, str(memory.id))
    return (0, where.path, where.line_start, str(memory.id))


def _rule_text(memory: Memory, state: MemoryState, state_subject: bool = False) -> str:
    kind = f" kind={state.memorule_kind.value}" if state.memorule_kind else ""
    if state_subject:  # JSON without "<" or ">": the comment cannot end early
        quoted = json.dumps(state.subject or "", ensure_ascii=False)
        quoted = quoted.replace("<", "\\u003c").replace(">", "\\u003e")
        kind += f" h={body_digest(state.body)} s={quoted}"
    marker = f"<!-- prism:id={memory.id} v={state.version}{kind} -->"
    body = state.body.strip().split("\n")
    rest = "".join(f"\n  {line}" if line else "\n" for line in body[1:])
    if body[0].lstrip().startswith(_FENCE_START):  # a fence's info string can't hold it
        return f"{marker}\n- {body[0]}{rest}\n"
    return f"- {body[0]} {marker}{rest}\n"


def _front_matter(applies: dict[str, str]) -> str:
    globs = globs_for(applies.get("surface"))
    description = _safe(_title(applies)).replace(":", " -")
    lines = ["---", f"description: Prism memorules - {description}"]
    if globs:
        lines += [f"globs: {','.join(globs)}", "alwaysApply: false"]
    elif applies.get("surface"):
        lines += ["alwaysApply: false"]
    else:
        lines += ["alwaysApply: true"]
    return "\n".join([*lines, "---", ""])


def _file_names(groups: list[dict[str, str]]) -> list[str]:
    stems = []
    for applies in groups:
        scope = applies.get("scope", "project")
        parts = [scope, *(applies[k] for k in APPLIES_TO_KEYS if applies.get(k))]
        stems.append("prism-" + "-".join(_slug(p) for p in parts))
    names = []
    for stem, applies in zip(stems, groups, strict=True):
        if stems.count(stem) > 1:
            digest = hashlib.sha256(json.dumps(applies, sort_keys=True).encode()).hexdigest()
            stem = f"{stem}-{digest[:8]}"
        names.append(f"{stem}.mdc")
    return names


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def _safe(text: str) -> str:
    """One line, no comment terminator: for headings, comments and front matter values."""
    return " ".join(text.split()).replace("-->", "—>")
