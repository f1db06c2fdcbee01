"""Export the memorules that apply to a context as files agents load.

Formats: every tool's own (:mod:`.tools`). Single files — ``agents-md`` (``AGENTS.md``),
``claude-md`` (``CLAUDE.md``), ``gemini-md``, ``copilot`` (``copilot-instructions.md``),
``cursorrules``, ``windsurfrules``, ``clinerules`` — hold every group; folder formats —
``cursor`` (``prism-*.mdc``), ``claude-rules``, ``copilot-instructions``
(``prism-*.instructions.md``), ``windsurf-rules``, ``cline-rules`` — write one file per
group, with the front matter its ``applies_to`` gives in that tool's keys, and the front
matter the rules' source file had beyond it (kept in their evidence, :class:`.Front`) laid
over it: import → export → import gives the same front matter. Rules are grouped by
``applies_to`` (and, in folder formats, that front matter; scope first,
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
from typing import Any, Final
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
from prism_memory.formats.rules_io.records import (
    ExportedFile,
    FileFormat,
    front_of,
    parse_tag,
)
from prism_memory.formats.rules_io.requests import body_digest, subject_for
from prism_memory.formats.rules_io.tools import TOOLS, Tool, format_by_path
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
    """The file formats ``export-rules`` writes: one per tool (see :mod:`.tools`)."""

    AGENTS_MD = "agents-md"
    CLAUDE_MD = "claude-md"
    CLAUDE_RULES = "claude-rules"
    GEMINI_MD = "gemini-md"
    CURSOR = "cursor"
    CURSORRULES = "cursorrules"
    COPILOT = "copilot"
    COPILOT_INSTRUCTIONS = "copilot-instructions"
    WINDSURF_RULES = "windsurf-rules"
    WINDSURFRULES = "windsurfrules"
    CLINERULES = "clinerules"
    CLINE_RULES = "cline-rules"

    @property
    def tool(self) -> Tool:
        return TOOLS[FileFormat(self.value)]

    def matches(self, path: str) -> bool:
        """Whether a file at ``path`` is in this format (by its path alone)."""
        return format_by_path(path) is FileFormat(self.value)


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


def render(
    fmt: ExportFormat, rules: Iterable[Rule], ctx: SessionContext, project: str | None = None
) -> list[ExportedFile]:
    """Render rules as the files of one format (see :func:`_render`); a rule whose subject
    re-importing the file would not give back has it stated in its marker, so import →
    export → import is a fixed point. ``project`` (the ``--project`` given, if any) is
    named in the header, so ``export-rules --check`` checks the same project."""
    rules = list(rules)
    files = _render(fmt, rules, ctx, set(), project)
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
    return _render(fmt, rules, ctx, stated, project) if stated else files


def _render(
    fmt: ExportFormat,
    rules: Iterable[Rule],
    ctx: SessionContext,
    stated: set[UUID],
    project: str | None = None,
) -> list[ExportedFile]:
    """Render rules as the files of one format, in a stable order.

    Args:
        fmt: the format.
        rules: the memorules (memory and current state).
        ctx: the context they were selected for (named in the header comment).
        stated: rules whose marker states their subject.
        project: the project named in the header.
    """
    tool = fmt.tool
    header = _header(fmt, ctx, project)
    if tool.file_name is None:
        groups = _groups(rules, tool)
        names = _file_names([(applies, front) for applies, front, _ in groups], tool.suffix)
        return [
            ExportedFile(
                names[i],
                render_front_matter(tool, front)
                + header
                + _group_text(applies, members, 1, stated),
                len(members),
            )
            for i, (applies, front, members) in enumerate(groups)
        ]
    groups = _groups(rules, None)
    title = tool.file_name
    body = "".join(_group_text(applies, members, 2, stated) for applies, _, members in groups)
    if not groups:
        body = "\n_No memorules apply to this context._\n"
    count = sum(len(m) for _, _, m in groups)
    return [ExportedFile(title, f"# {title}\n\n{header}{body}", count)]


Group = tuple[dict[str, str], dict[str, Any], list[Rule]]


def _groups(rules: Iterable[Rule], tool: Tool | None) -> list[Group]:
    """Rules by ``applies_to`` and, for a folder format's ``tool``, the front matter their
    file gets (so rules from files with other front matter keep to their own file)."""
    by_key: dict[str, Group] = {}
    for memory, state in rules:
        applies = state.applies_to.to_dict() if state.applies_to else {}
        front = front_matter_for(tool, applies, state) if tool is not None else {}
        key = json.dumps([applies, front], sort_keys=True)
        by_key.setdefault(key, (applies, front, []))[2].append((memory, state))
    return [by_key[k] for k in sorted(by_key, key=lambda k: _group_order(by_key[k][0], k))]


def front_matter_for(tool: Tool, applies: dict[str, str], state: MemoryState) -> dict[str, Any]:
    """The front matter a rule's file gets in ``tool``'s format: what its ``applies_to``
    gives, with the front matter its source file kept laid over it — all of it when the
    source was a file of the same tool, its ``description`` when the tool has one."""
    out = tool.derive(applies, _safe(_title(applies)).replace(":", " -"))
    kept = front_of(state.evidence_signal_id)
    if kept is None:
        return out
    if kept.tool == tool.fmt.value:
        laid = kept.values
    elif "description" in tool.keys and isinstance(kept.values.get("description"), str):
        laid = {"description": kept.values["description"]}
    else:
        laid = {}
    for key, value in laid.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _group_order(applies: dict[str, str], key: str = "") -> tuple[object, ...]:
    """Broad scopes first; inside a scope, general rules before narrower ones."""
    scope = Scope(applies["scope"]) if "scope" in applies else Scope.PROJECT
    named = [applies.get(k) or "" for k in APPLIES_TO_KEYS]
    return (_SCOPE_ORDER[scope], sum(1 for v in named if v), *named, "scope" in applies, key)


def _header(fmt: ExportFormat, ctx: SessionContext, project: str | None = None) -> str:
    named = " ".join(
        [f"project={project}"] * bool(project)
        + [f"{k}={ctx.value(k)}" for k in APPLIES_TO_KEYS if ctx.value(k)]
    )
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


# A text the front matter reader (and YAML) reads back as the same text, unquoted.
_PLAIN: Final = re.compile(r"[A-Za-z0-9_][\w .,/()+-]*")
_PLAIN_GLOBS: Final = re.compile(r"[\w*./{},?!\[\]@+-]+(?:, ?[\w*./{},?!\[\]@+-]+)*")
_WORDS: Final = frozenset({"true", "false", "yes", "no", "on", "off", "null", "~"})


def render_front_matter(tool: Tool, values: dict[str, Any]) -> str:
    """``---`` front matter in the tool's own style (Cursor and Windsurf globs unquoted, as
    they write them; Copilot's ``applyTo`` one quoted text; ``paths`` a list), or "" when
    there is none. Every value reads back as written."""
    if not values:
        return ""
    lines = ["---"]
    for key, value in values.items():
        if isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, list):
            lines.append(f"{key}:" if value else f"{key}: []")
            lines.extend(f"  - {_quoted(str(item))}" for item in value)
        else:
            text = str(value)
            globs_plain = key == tool.scope_key and tool.fmt in (
                FileFormat.CURSOR,
                FileFormat.WINDSURF_RULES,
            )
            plain = _PLAIN_GLOBS if globs_plain else _PLAIN
            bare = plain.fullmatch(text) and text.lower() not in _WORDS and text[:1] != "["
            lines.append(f"{key}: {text if bare else _quoted(text)}")
    return "\n".join([*lines, "---", ""])


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _file_names(groups: list[tuple[dict[str, str], dict[str, Any]]], suffix: str) -> list[str]:
    stems = []
    for applies, _ in groups:
        scope = applies.get("scope", "project")
        parts = [scope, *(applies[k] for k in APPLIES_TO_KEYS if applies.get(k))]
        stems.append("prism-" + "-".join(_slug(p) for p in parts))
    names = []
    for stem, group in zip(stems, groups, strict=True):
        if stems.count(stem) > 1:
            digest = hashlib.sha256(json.dumps(group, sort_keys=True).encode()).hexdigest()
            stem = f"{stem}-{digest[:8]}"
        names.append(f"{stem}{suffix}")
    return names


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def _safe(text: str) -> str:
    """One line, no comment terminator: for headings, comments and front matter values."""
    return " ".join(text.split()).replace("-->", "—>")
