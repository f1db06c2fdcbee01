"""A keep/skip decision learned from hand-labelled rule files (``import-rules --learned``).

The splitter decides what is a rule from cues of form (modals, imperatives, negating
headings, list shape) in every language it knows. Where those cues are silent, people who
label real rule files still call many units rules: a stack written as bare names, a
placement ("Parsers go in …"), a convention stated as a fact. This module re-decides every
unit of a file with a logistic regression trained on such labels (``data/learned.json``
says on which): its features are the importer's own decision and score, the unit's shape,
place among its siblings, length, format, the cue flags of the unit and of its heading, a few
marks of punctuation, and hashed character 2–4-grams of its heading path and of its first 40
characters, so it needs no word list of any language. A unit it keeps is a rule; every other
is descriptive text. A unit that carries a ``prism:id`` marker (an exported rule) and every
unit of a ``prism`` export are never re-decided, so exports import back as they were.

How it was chosen, and what it gives on files nobody tuned on:
``bench/rules_files/dev2/README.md`` (the thirty-fourth and thirty-fifth rounds); the same
features are what ``bench/rules_files/dev2/learned.py`` trains and scores.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import astuple, dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prism_memory.domain import validation
from prism_memory.domain.contract.bounds import MEMORULE_BODY_MIN
from prism_memory.errors import InvalidInput
from prism_memory.formats.rules_io.headings import kind_of_heading, negating
from prism_memory.formats.rules_io.kinds import classify, evidence, prose, rule_likeness
from prism_memory.formats.rules_io.records import FileFormat, Unit
from prism_memory.formats.rules_io.requests import memorule_request

if TYPE_CHECKING:
    import numpy as np

WEIGHTS = Path(__file__).with_name("data") / "learned.json"
THRESHOLD = 0.5  # kept iff the model's probability reaches it
BUCKETS = 2048  # hashed character n-grams, per part (heading path, first 40 characters)
SHAPES = ("bullet", "ordered", "checkbox", "table", "code", "html", "paragraph")
FORMATS = tuple(f.value for f in FileFormat)
_BULLET = re.compile(r"^\s*[-*+]\s")
_ORDERED = re.compile(r"^\s*\d{1,3}[.)]\s")
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[[ xX]\]\s")
_LABEL = re.compile(r"^\W{0,4}[^\s:：]{1,30}(?:\s[^\s:：]{1,30}){0,3}\s?[:：]\s")


@dataclass(kw_only=True)
class Seen:
    """One unit as the model sees it: what the splitter made of it, and where it sits."""

    unit: Unit
    fmt: str
    shape: str
    kept: bool  # the splitter would write it as a rule
    likeness: float
    siblings: int = 1
    position: int = 0
    share_kept: float = 0.0


def writes(unit: Unit) -> bool:
    """The splitter made ``unit`` a rule that would pass validation."""
    if unit.kind is None:
        return False
    try:
        validation.validate_remember(memorule_request(unit, {}))
    except InvalidInput:
        return False
    return True


def _first_line(unit: Unit, lines: Sequence[str]) -> str:
    start = unit.location.line_start
    return lines[start - 1] if 0 < start <= len(lines) else ""


def shape(unit: Unit, lines: Sequence[str]) -> str:
    """The shape of the line a unit starts on: a list entry of some kind, a table row, …"""
    first = _first_line(unit, lines)
    if _CHECKBOX.match(first):
        return "checkbox"
    if _ORDERED.match(first):
        return "ordered"
    if _BULLET.match(first):
        return "bullet"
    stripped = first.lstrip()
    if stripped.startswith("|"):
        return "table"
    if stripped.startswith(("```", "~~~")) or first.startswith("    "):
        return "code"
    if stripped.startswith(("<", ">")):
        return "html"
    return "paragraph"


def seen(units: Sequence[Unit], fmt: FileFormat, lines: Sequence[str]) -> list[Seen]:
    """Every unit of one file as the model sees it, siblings counted."""
    rows = []
    for unit in units:
        form = shape(unit, lines)
        listed = form in ("bullet", "ordered", "checkbox", "table")
        likeness = rule_likeness(unit.text, unit.context, fmt.family, unit.lead, listed)
        rows.append(
            Seen(unit=unit, fmt=fmt.value, shape=form, kept=writes(unit), likeness=likeness)
        )
    siblings(rows)
    return rows


def siblings(rows: Sequence[Seen]) -> None:
    """Siblings: the run of consecutive units under the same heading path."""
    runs: list[list[Seen]] = []
    for row in rows:
        if runs and runs[-1][-1].unit.context == row.unit.context:
            runs[-1].append(row)
        else:
            runs.append([row])
    for run in runs:
        kept = sum(r.kept for r in run)
        for position, row in enumerate(run):
            row.siblings, row.position = len(run), position
            others = len(run) - 1
            row.share_kept = (kept - row.kept) / others if others else 0.5


def _code(unit: Unit, lines: Sequence[str]) -> bool:
    """The unit starts on a line indented as CommonMark's code blocks are (a tab, or four
    spaces): its text is kept as written, tabs and trailing spaces included, which a rule's
    body written back by ``export-rules`` cannot reproduce; it stays description."""
    return _first_line(unit, lines).startswith(("\t", "    "))


def promote(unit: Unit) -> Unit:
    """The rule the splitter would make of a unit it left as description."""
    heading = unit.context[-1] if unit.context else ""
    kind = kind_of_heading(heading) or classify(unit.text, unit.context)
    text = unit.text
    if len(text.strip()) < MEMORULE_BODY_MIN and unit.context:
        text = f"{heading}:\n{text}"  # as the splitter keeps a short rule's heading
    return replace(unit, kind=kind, text=text, kind_from_heading=False)


def _grams(text: str, salt: str) -> list[int]:
    text = f"\x02{text.lower()}\x03"
    out = []
    for n in (2, 3, 4):
        for i in range(len(text) - n + 1):
            out.append(zlib.crc32(f"{salt}{text[i : i + n]}".encode()) % BUCKETS)
    return out


def _dense(row: Seen) -> list[float]:
    unit = row.unit
    text = unit.text
    flat = prose(text)
    heading = unit.context[-1] if unit.context else ""
    ev = [float(b) for b in astuple(evidence(text))]
    hv = [float(b) for b in astuple(evidence(heading))] if heading else [0.0] * len(ev)
    first = text.split("\n", 1)[0]
    indent = len(first) - len(first.lstrip())
    body = text.lstrip("-*+ 0123456789.)")
    return [
        1.0,
        float(row.kept),
        min(row.likeness, 1.5),
        float(row.likeness >= 0.5),
        *[float(row.shape == s) for s in SHAPES],
        *[float(row.fmt == f) for f in FORMATS],
        math.log1p(len(flat)) / 7,
        math.log1p(text.count("\n")) / 4,
        min(indent, 8) / 8,
        math.log1p(row.siblings) / 4,
        row.position / max(1, row.siblings - 1),
        float(row.position == 0),
        float(row.position == row.siblings - 1),
        row.share_kept,
        min(len(unit.context), 6) / 6,
        float(not unit.context),
        float(bool(unit.lead)),
        float(unit.kind_from_heading),
        *ev,
        *hv,
        float(negating(heading)) if heading else 0.0,
        float(flat.rstrip().endswith((":", "："))),
        float(heading.rstrip().endswith((":", "："))),
        float("`" in text),
        float("```" in text or "~~~" in text),
        float(body.startswith("`")),
        float(bool(_LABEL.match(flat))),
        float(body.startswith("**")),
        float("](" in text),
        float(flat.rstrip().endswith(("?", "？"))),
    ]


def features(rows: Sequence[Seen]) -> np.ndarray:
    """One row of features per unit (column 0 is the bias)."""
    import numpy as np

    dense = np.array([_dense(r) for r in rows], dtype=np.float64)
    hashed = np.zeros((len(rows), 2 * BUCKETS), dtype=np.float64)
    for i, row in enumerate(rows):
        for b in _grams(" / ".join(row.unit.context), "h"):
            hashed[i, b] += 1.0
        for b in _grams(prose(row.unit.text)[:40], "t"):
            hashed[i, BUCKETS + b] += 1.0
        for part in (slice(0, BUCKETS), slice(BUCKETS, 2 * BUCKETS)):
            norm = np.linalg.norm(hashed[i, part])
            if norm:
                hashed[i, part] /= norm
    return np.hstack([dense, hashed])


def probabilities(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.asarray(1.0 / (1.0 + np.exp(-(x @ weights))))


@cache
def shipped() -> tuple[np.ndarray, dict[str, Any]]:
    """The weights in the package, and what they were trained on."""
    import numpy as np

    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    return np.array(data["weights"], dtype=np.float64), data["trained"]


def decide(units: list[Unit], fmt: FileFormat, lines: Sequence[str]) -> list[Unit]:
    """``units`` re-decided by the shipped model: kept ones rules, the others description.

    Exported rules (a ``prism:id`` marker) keep the splitter's decision.
    """
    open_units = [i for i, u in enumerate(units) if u.marker is None]
    if not open_units:
        return units
    rows = seen(units, fmt, lines)
    weights, _ = shipped()
    p = probabilities(weights, features(rows))
    out = list(units)
    for i in open_units:
        keep = bool(p[i] >= THRESHOLD)
        if keep and not rows[i].kept and units[i].kind is None and not _code(units[i], lines):
            candidate = promote(units[i])
            if writes(candidate):
                out[i] = candidate
        elif not keep and rows[i].kept:
            out[i] = replace(units[i], kind=None, kind_from_heading=False)
    return out
