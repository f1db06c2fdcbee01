"""How well ``prism import-rules`` reads real rule files: the labelled corpus in ``rules_files/``.

    python bench/rules_files.py                     # both splits, a table
    python bench/rules_files.py --split holdout --details
    python bench/rules_files.py --json bench/results/rules_files.json

Every file of ``bench/rules_files/corpus`` is read with Prism's importer exactly as
``prism import-rules <folder>`` reads it (``@path`` imports included), without writing
anything: a unit counts as *imported* when the importer would write it as a memorule
(it has a kind and its request passes the same validation ``prism_remember`` applies).
The units are scored against the hand-written labels beside each file:

- recall: labelled rules found — a label is found when its text (backticks, ``*``, ``#``,
  case and white space ignored) lies inside one imported rule's body; each imported rule
  finds at most one label, so two rules merged into one count once;
- precision: imported rules that found a label;
- kind accuracy: found labels whose imported rule has the labelled kind;
- garbling: imported rules with a line of their body, or a part of their subject, that is
  not in the source once Markdown syntax is removed (``__init__`` turned into ``init``,
  text invented or rejoined across lines).

Needs only the product's own dependencies; reads nothing outside the repository.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "rules_files"
# --backend DIR scores another checkout's importer (how the "before" figures were taken).
_BACKEND = next(
    (sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--backend"),
    str(ROOT.parent / "backend"),
)
sys.path.insert(0, _BACKEND)

from prism_memory.domain import validation  # noqa: E402
from prism_memory.errors import InvalidInput  # noqa: E402
from prism_memory.formats.rules_io.records import Unit  # noqa: E402
from prism_memory.formats.rules_io.requests import memorule_request  # noqa: E402
from prism_memory.services.rules_import import read_rule_files  # noqa: E402

_DROP = re.compile(r"[`*#]")


def norm(text: str) -> str:
    """Text with Markdown's backticks, emphasis stars and heading marks removed, lowered."""
    return " ".join(_DROP.sub("", text).lower().split())


@dataclass
class Score:
    """Counts for one file or a sum of files."""

    labels: int = 0
    imported: int = 0
    found: int = 0
    kind_right: int = 0
    garbled: int = 0
    missed: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    wrong_kind: list[str] = field(default_factory=list)
    garbled_items: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        self.labels += other.labels
        self.imported += other.imported
        self.found += other.found
        self.kind_right += other.kind_right
        self.garbled += other.garbled

    def figures(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "imported": self.imported,
            "recall": round(self.found / self.labels, 3) if self.labels else None,
            "precision": round(self.found / self.imported, 3) if self.imported else None,
            "kind_accuracy": round(self.kind_right / self.found, 3) if self.found else None,
            "garbled": self.garbled,
        }


def would_write(unit: Unit) -> dict[str, Any] | None:
    """The memorule request an import would send for ``unit``, or None (note or invalid)."""
    if unit.kind is None:
        return None
    request = memorule_request(unit, {})
    try:
        validation.validate_remember(request)
    except InvalidInput:
        return None
    return request


def garbled(request: dict[str, Any], source: str) -> list[str]:
    """The parts of a request's body and subject that are not in the (normalised) source."""
    plain = norm(source)
    bad = []
    for line in request["body"].split("\n"):
        piece = norm(line).rstrip(":").strip()
        if piece and piece not in plain:
            bad.append(line.strip())
    for part in re.split(r":\s+", request["subject"]):
        piece = norm(part.removesuffix("…")).rstrip(" .:;,").strip()
        if piece and piece not in plain:
            bad.append(f"subject: {part}")
    return bad


def score_file(labels: list[dict[str, str]], requests: list[dict[str, Any]], source: str) -> Score:
    """Match labels to imported rules one to one, in file order (see the module doc)."""
    score = Score(labels=len(labels), imported=len(requests))
    bodies = [norm(r["body"]) for r in requests]
    taken: set[int] = set()
    for label in labels:
        text = norm(label["text"])
        hit = next((i for i, b in enumerate(bodies) if i not in taken and text in b), None)
        if hit is None:
            score.missed.append(label["text"])
            continue
        taken.add(hit)
        score.found += 1
        if requests[hit]["memorule_kind"] == label["kind"]:
            score.kind_right += 1
        else:
            score.wrong_kind.append(
                f"{label['kind']} -> {requests[hit]['memorule_kind']}: {label['text'][:70]}"
            )
    for i, request in enumerate(requests):
        if i not in taken:
            score.extra.append(request["subject"])
        bad = garbled(request, source)
        if bad:
            score.garbled += 1
            score.garbled_items.extend(bad)
    return score


def corpus_files() -> list[dict[str, Any]]:
    manifest: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())["files"]
    return manifest


def run(split: str) -> tuple[dict[str, Score], Score]:
    """Score every file of ``split`` (``dev``, ``holdout`` or ``all``)."""
    files = [f for f in corpus_files() if split in ("all", f["split"])]
    by_dir: dict[str, list[dict[str, Any]]] = {}
    for f in files:
        by_dir.setdefault(f["dir"], []).append(f)
    per_file: dict[str, Score] = {}
    total = Score()
    for folder, entries in sorted(by_dir.items()):
        base = CORPUS / "corpus" / folder
        parsed = read_rule_files([base / e["path"] for e in entries], base)
        units: dict[str, list[Unit]] = {}
        seen: set[tuple[str, int, int, str]] = set()
        for p in parsed:
            for unit in p.units:
                key = (
                    unit.location.path,
                    unit.location.line_start,
                    unit.location.line_end,
                    unit.text,
                )
                if key not in seen:
                    seen.add(key)
                    units.setdefault(unit.location.path, []).append(unit)
        for e in entries:
            label_file = base / (e["path"] + ".labels.json")
            labels = json.loads(label_file.read_text())["rules"]
            requests = [r for u in units.get(e["path"], []) if (r := would_write(u))]
            source = (base / e["path"]).read_text(encoding="utf-8")
            score = score_file(labels, requests, source)
            per_file[f"{folder}/{e['path']}"] = score
            total.add(score)
    return per_file, total


def _table(rows: Iterable[tuple[str, Score]]) -> str:
    lines = [
        f"{'file':<72} {'labels':>6} {'imp':>4} {'recall':>6} {'prec':>6} {'kind':>6} {'garb':>4}"
    ]
    for name, s in rows:
        f = s.figures()
        cells = [
            f[k] if f[k] is not None else "-" for k in ("recall", "precision", "kind_accuracy")
        ]
        lines.append(
            f"{name[:72]:<72} {s.labels:>6} {s.imported:>4} "
            + " ".join(f"{c:>6}" for c in cells)
            + f" {s.garbled:>4}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=["dev", "holdout", "all"], default="all")
    p.add_argument("--details", action="store_true", help="list misses, extras, wrong kinds")
    p.add_argument("--json", type=Path, help="write the figures to this file")
    p.add_argument("--backend", help="the backend/ folder whose importer to score")
    args = p.parse_args(argv)
    splits = ["dev", "holdout"] if args.split == "all" else [args.split]
    out: dict[str, Any] = {"files": {}, "splits": {}}
    overall = Score()
    for split in splits:
        per_file, total = run(split)
        overall.add(total)
        out["splits"][split] = total.figures()
        out["files"].update({k: v.figures() for k, v in per_file.items()})
        print(f"== {split}: {len(per_file)} files")
        print(_table(sorted(per_file.items())))
        print(f"{split} total: {json.dumps(total.figures())}\n")
        if args.details:
            for name, s in sorted(per_file.items()):
                for kind, items in (
                    ("missed", s.missed),
                    ("extra", s.extra),
                    ("kind", s.wrong_kind),
                    ("garbled", s.garbled_items),
                ):
                    for item in items:
                        print(f"  {name}: {kind}: {item[:140]!r}")
    if len(splits) > 1:
        out["splits"]["all"] = overall.figures()
        print(f"all: {json.dumps(overall.figures())}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
