"""Precision and recall of the checks ``prism checks propose`` derives from rule text.

The labelled set (``proposal_sentences.json`` beside this file) holds real rule sentences from
public rule files (CLAUDE.md, AGENTS.md, Cursor, Copilot; each names its GitHub repository and
path), each with the checks a careful operator would attach, or none, and for each check the
commands or paths that must trigger it and those that must not. It was labelled before the
proposer was written; a third of it (``"split": "held_out"``, fixed by a hash of source and
text) was never looked at while tuning.

What counts as a correct proposal: a proposed check of the same kind as an expected check of
the same sentence that triggers on every one of that check's must-trigger examples and on none
of its must-not examples (commands by ``re.search`` on the whole command, as the judge does;
paths by the judge's own globs, relative to the session's folder; for ``require_before`` both
its ``command`` and its ``before`` pattern; for ``require_edit_with`` both ``edit`` and
``also``). Each expected check is matched at most once. Precision = correct proposals / all
proposals; recall = matched expected checks / all expected checks. A check proposed for a
sentence that has none is wrong. The reference check of every label is verified first: it
must pass ``parse_checks`` and its own examples.

    python bench/adherence/proposals_score.py [--json] [--show-errors]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "backend"))

from prism_memory.domain.adherence.checks import Check, parse_checks  # noqa: E402
from prism_memory.domain.adherence.paths import glob_matches, session_path  # noqa: E402
from prism_memory.domain.adherence.propose import propose  # noqa: E402

CWD = "/repo"  # the session folder the example paths are relative to


def _parts(check: Check) -> dict[str, tuple[str, str]]:
    """Each pattern of a check by the example key that tests it: (pattern, 'regex'|'glob')."""
    if check.kind == "forbid_command":
        return {"forbid_command": (check.pattern, "regex")}
    if check.kind == "forbid_edit":
        return {"forbid_edit": (check.pattern, "glob")}
    if check.kind == "require_before":
        assert check.trigger is not None
        return {"command": (check.pattern, "regex"), "before": (check.trigger, "regex")}
    assert check.trigger is not None
    return {"edit": (check.trigger, "glob"), "also": (check.pattern, "glob")}


def _fires(pattern: str, how: str, example: str) -> bool:
    if how == "regex":
        return re.search(pattern, example) is not None
    return glob_matches(pattern, session_path(example, CWD))


def satisfies(check: Check, expected: dict[str, Any]) -> bool:
    """Whether ``check`` is the expected check: same kind, right on every example."""
    ((kind, _),) = expected["check"].items()
    if check.kind != kind:
        return False
    parts = _parts(check)
    for key, examples in expected["examples"].items():
        pattern, how = parts[key]
        if not all(_fires(pattern, how, e) for e in examples["match"]):
            return False
        if any(_fires(pattern, how, e) for e in examples["no_match"]):
            return False
    return True


def score(items: list[dict[str, Any]]) -> dict[str, Any]:
    proposed = correct = expected_total = matched = 0
    errors: list[dict[str, Any]] = []
    for item in items:
        checks = parse_checks(propose(item["text"]))
        expected = item["expected"]
        expected_total += len(expected)
        used: set[int] = set()
        for check in checks:
            proposed += 1
            hit = next(
                (i for i, e in enumerate(expected) if i not in used and satisfies(check, e)),
                None,
            )
            if hit is None:
                errors.append({"id": item["id"], "text": item["text"], "wrong": check.to_json()})
            else:
                used.add(hit)
                correct += 1
        matched += len(used)
        for i, e in enumerate(expected):
            if i not in used:
                errors.append({"id": item["id"], "text": item["text"], "missed": e["check"]})
    return {
        "sentences": len(items),
        "sentences_with_checks": sum(1 for i in items if i["expected"]),
        "expected": expected_total,
        "proposed": proposed,
        "correct": correct,
        "precision": round(correct / proposed, 3) if proposed else None,
        "recall": round(matched / expected_total, 3) if expected_total else None,
        "errors": errors,
    }


def verify_labels(items: list[dict[str, Any]]) -> None:
    """Every reference check parses and is right on its own examples (or the set is wrong)."""
    for item in items:
        for e in item["expected"]:
            (check,) = parse_checks([e["check"]])
            if not satisfies(check, e):
                raise SystemExit(f"label {item['id']} ({item['text'][:60]!r}): reference fails")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--show-errors", action="store_true", help="list wrong and missed checks")
    args = parser.parse_args()
    data = json.loads((HERE / "proposal_sentences.json").read_text(encoding="utf-8"))
    items = data["items"]
    verify_labels(items)
    report = {
        split: score([i for i in items if i["split"] == split]) for split in ("dev", "held_out")
    }
    if args.json:
        if not args.show_errors:
            for part in report.values():
                part.pop("errors")
        print(json.dumps(report, indent=1, ensure_ascii=False))
        return
    for split, part in report.items():
        print(
            f"{split:9} sentences {part['sentences']:3} "
            f"(with checks {part['sentences_with_checks']:2})"
            f"  expected {part['expected']:2}  proposed {part['proposed']:2}"
            f"  correct {part['correct']:2}  precision {part['precision']}  recall {part['recall']}"
        )
        if args.show_errors:
            for err in part["errors"]:
                print("   ", json.dumps(err, ensure_ascii=False))


if __name__ == "__main__":
    main()
