"""Score the adherence judge on the labelled Claude Code sessions: violation precision and
recall over (session, rule) pairs, on the dev part and on the held-out part separately.

Each session file is read by Prism's Claude Code reader (subagent files included) and judged
against every rule in ``rules.json``; ``labels.json`` holds the expected verdicts, written by
hand before the judge ran on these sessions (a rule a session does not list is expected
``not_exercised``)::

    .venv/bin/python bench/adherence/judge/score.py [--json] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from prism_memory.capture.claude_actions import read_session
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.adherence.judge import RuleChecks, judge

HERE = Path(__file__).resolve().parent


def load_rules() -> list[RuleChecks]:
    raw = json.loads((HERE / "rules.json").read_text(encoding="utf-8"))
    return [RuleChecks(r["id"], r["subject"], parse_checks(r["checks"])) for r in raw]


def score_part(
    part: str, labels: dict[str, dict[str, str]], rules: list[RuleChecks]
) -> dict[str, Any]:
    tp = fp = fn = agree = pairs = 0
    misses: list[dict[str, str]] = []
    for name in sorted(labels):
        session = read_session(HERE / "sessions" / part / f"{name}.jsonl")
        for verdict in judge(session, rules):
            rid = verdict.rule.memorule_id
            expected = labels[name].get(rid, "not_exercised")
            got = verdict.verdict
            pairs += 1
            agree += got == expected
            if got == "violated" and expected == "violated":
                tp += 1
            elif got == "violated":
                fp += 1
            elif expected == "violated":
                fn += 1
            if got != expected:
                misses.append({"session": name, "rule": rid, "expected": expected, "got": got})
    return {
        "sessions": len(labels),
        "pairs": pairs,
        "violations_labelled": tp + fn,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "verdict_agreement": round(agree / pairs, 4) if pairs else None,
        "misses": misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    labels = json.loads((HERE / "labels.json").read_text(encoding="utf-8"))
    rules = load_rules()
    report = {
        "parts": {part: score_part(part, labels[part], rules) for part in ("dev", "heldout")},
        "rules": len(rules),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for part, found in report["parts"].items():
        print(
            f"{part:8s} sessions {found['sessions']:3d}  pairs {found['pairs']:4d}  "
            f"violations {found['violations_labelled']:3d}  precision {found['precision']}  "
            f"recall {found['recall']}  verdicts agree {found['verdict_agreement']}"
        )
        for miss in found["misses"]:
            print(f"  miss: {miss}")
    print(f"load average (1 min): {report['load_average_1m']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
