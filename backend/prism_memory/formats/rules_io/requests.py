"""What a unit becomes: a ``prism_remember`` request (memorule or note), with its subject.

- subject: the innermost context ("Testing") and the rule's first sentence, whole (or cut
  at a word boundary with an ellipsis), at most 300 characters; a note's subject ends with
  its source tag so a later import finds it again.
- evidence (memorules): ``file:<path>#L<start>-L<end>``, then the file's kept front matter
  (``fm=TOOL {...}``, :class:`.records.Front`) when it has some; confidence ``asserted``
  (the file claims it; nobody observed it).
- idempotency key: a hash of the whole request and the writer's context, so a retried or
  concurrent import of the same rule at the same place writes it once, and any difference
  makes a new key (never an idempotency conflict).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.records import SessionContext
from prism_memory.domain.validation import SUBJECT_MAX, SUBJECT_MIN
from prism_memory.formats.rules_io.records import Location, Unit, comparable, parse_tag
from prism_memory.formats.rules_io.sentences import code_spans, sentence_spans

SENTENCE_MAX: Final = 160
CONTEXT_MAX: Final = 60
_SUB_ENTRY: Final = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|^\s*>")
_NOTE_TAG: Final = re.compile(r"\((?P<tag>file:[^()]+#L\d+-L\d+)\)$")
_BOX: Final = re.compile(r"^(?:[-*+]\s+)?\[[ xX]\]\s+")  # a checklist's box: markup


def first_sentence(text: str) -> str:
    """A rule's first sentence of prose, whole; longer than :data:`SENTENCE_MAX`, cut at a
    word boundary with an ellipsis. Source line breaks are spaces: never a cut. The first
    paragraph only: a blank line, a sub-list or a code block ends it."""
    prose: list[str] = []
    fenced = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            if prose and not fenced:
                break  # code after the prose ends its paragraph: what follows is another
            fenced = not fenced
            continue
        if prose and not fenced and (not stripped or _SUB_ENTRY.match(line)):
            break  # the first paragraph only: a sub-list or a blank line ends it
        if not fenced and stripped and not stripped.startswith("|"):
            prose.append(stripped)
    if not prose:  # a table or code only: its first line, as written
        prose = [" ".join(text.strip().split("\n", 1)[0].split())]
    flat = _BOX.sub("", _unbold(" ".join(" ".join(prose).split())), count=1)
    spans = sentence_spans(flat)
    sentence = flat[: spans[0][1]] if spans else flat
    return shorten(sentence.rstrip().rstrip(":.").rstrip(), SENTENCE_MAX)


def body_digest(body: str) -> str:
    """A short digest of a rule's body, tying a subject stated in an export to that body."""
    return hashlib.sha256(comparable(body).encode()).hexdigest()[:12]


def subject_for(unit: Unit) -> str:
    """``Context: first sentence`` (4 to 300 characters, one line); the context is the
    innermost heading (or list label) the rule sits under. An exported rule whose marker
    states its subject keeps it while its body is the one exported."""
    marker = unit.marker
    if marker is not None and marker.subject and marker.digest == body_digest(unit.text):
        return marker.subject
    text = unit.text
    lead: list[str] = []
    if unit.lead and text.startswith(unit.lead):
        text = text[len(unit.lead) :].lstrip("\n")
        lead = _lead_parts(unit.lead)
    sentence = first_sentence(text)
    context = " ".join(unit.context[-1].split()).rstrip(" :：") if unit.context else ""
    if context.lower() in (part.lower() for part in lead):
        context = ""  # the entry's title, which the lead already names in its place
    context = shorten(context, CONTEXT_MAX)  # compared whole: a long label is the lead too
    parts = [p for p in (context, *lead) if p]
    parts = [p for i, p in enumerate(parts) if p.lower() not in (q.lower() for q in parts[:i])]
    if parts and sentence.lower().startswith(parts[-1].lower()):
        parts.pop()
    subject = ": ".join([*parts, sentence])
    if len(subject) < SUBJECT_MIN:
        subject = subject.ljust(SUBJECT_MIN, ".")
    return shorten(subject, SUBJECT_MAX)


def _lead_parts(lead: str) -> list[str]:
    """A lead as the parts of a path: a line ending in ":" or a bold title line ends a part
    ("样式核心规范：" then "**复杂样式编写**"); a lead wrapped over lines stays one part."""
    parts, current = [], ""
    for line in lead.split("\n"):
        bare = line.strip()
        title = bare.startswith("**") and bare.endswith("**")
        if title and current:
            parts.append(current)
            current = ""
        current = f"{current} {line}" if current else line
        if title or bare.endswith((":", "：")):
            parts.append(current)
            current = ""
    parts.append(current)
    return [
        part
        for text in parts
        if (part := " ".join(text.replace("**", "").split()).rstrip(" :：").strip())
    ]


def _unbold(text: str) -> str:
    """``**`` emphasis removed outside code spans (code is never touched)."""
    out, last = [], 0
    for start, end in code_spans(text):
        out.append(text[last:start].replace("**", ""))
        out.append(text[start:end])
        last = end
    out.append(text[last:].replace("**", ""))
    return "".join(out)


def note_subject(unit: Unit) -> str:
    """A note's subject: what it is about and where it came from, ``... (file:X#L1-L2)``."""
    tag = unit.location.tag()
    head = shorten(subject_for(unit), SUBJECT_MAX - len(tag) - 3)
    return f"{head} ({tag})"


def note_location(subject: str | None) -> Location | None:
    """The source location a note's subject names, if it came from a rule file."""
    found = _NOTE_TAG.search(subject or "")
    return parse_tag(found["tag"]) if found else None


def applies_to_for(unit: Unit, overrides: dict[str, str]) -> dict[str, str]:
    """``applies_to`` for a new memorule: the file's, then the importer's options on top.

    A rule that would name nothing gets ``scope='project'`` (what no scope means anyway).
    """
    applies = {**unit.applies_to, **overrides}
    return applies or {"scope": "project"}


def memorule_request(unit: Unit, overrides: dict[str, str]) -> dict[str, Any]:
    """The ``prism_remember`` request for a rule unit (no idempotency key yet)."""
    assert unit.kind is not None
    return {
        "kind": "memorule",
        "memorule_kind": unit.kind.value,
        "subject": subject_for(unit),
        "body": unit.text,
        "applies_to": applies_to_for(unit, overrides),
        "evidence_signal_id": unit.evidence(),
        "confidence": "asserted",
    }


def note_request(unit: Unit) -> dict[str, Any]:
    """The ``prism_remember`` request for descriptive text kept as a note."""
    return {"kind": "note", "subject": note_subject(unit), "body": unit.text}


def idempotency_key(ctx: SessionContext, op: str, payload: dict[str, Any]) -> str:
    """A key that names exactly this request by this writer in this project."""
    canonical = json.dumps(
        {"op": op, "project": str(ctx.project_id), "persona": ctx.persona, "request": payload},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return f"rules-import:{op}:" + hashlib.sha256(canonical.encode()).hexdigest()[:48]


def update_key(ctx: SessionContext, memory_id: UUID, version: int, payload: dict[str, Any]) -> str:
    """The idempotency key of one update of one version of a memory."""
    return idempotency_key(ctx, "update", {"id": str(memory_id), "from": version, **payload})


def shorten(text: str, limit: int) -> str:
    """``text`` if it fits, else cut at the last word boundary with ``…`` (never mid-word)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"
