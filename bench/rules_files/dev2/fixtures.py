"""The importer's own test fixtures, labelled blind: whose reading do they share? (issue 30)

    python bench/rules_files/dev2/fixtures.py

``--learned`` fails 28 of the importer's tests when it is made the default (README, "The
thirty-fifth round"). Is that because the tests encode a reading only the team holds, or
because the model keeps what anyone would call description? ``fixtures/`` holds the 28
distinct texts those failing tests import (each as the file name the test gave it), labelled
by an engineer who had read neither the importer, nor its tests, nor the model
(``fixtures/labels.json``). This scores the default importer and ``--learned`` against those
labels as ``score.py`` scores the corpus, and lists every unit the two decide differently,
with whether it holds a label. Reads nothing outside the repository; writes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import score  # noqa: E402  (puts backend/ on the path)

from prism_memory.services.rules_import import read_rule_files  # noqa: E402

FIXTURES = HERE / "fixtures"


def main() -> int:
    cases = json.loads((FIXTURES / "labels.json").read_text(encoding="utf-8"))["cases"]
    totals = {"default": score.Score(), "--learned": score.Score()}
    differ: list[tuple[str, str, bool]] = []
    for case, entry in sorted(cases.items()):
        base = FIXTURES / case
        source = (base / entry["path"]).read_text(encoding="utf-8")
        labels = entry["rules"]
        units = {}
        for name, learned in (("default", False), ("--learned", True)):
            parsed = read_rule_files([base / entry["path"]], base, learned=learned)
            units[name] = [u for p in parsed for u in p.units]
            requests = [r for u in units[name] if (r := score.would_write(u))]
            totals[name].add(score.score_labels(labels, requests, source))
        texts = [score.label_norm(label["text"]) for label in labels]
        for plain, model in zip(units["default"], units["--learned"], strict=True):
            if (plain.kind is None) != (model.kind is None):
                body = score.label_norm(plain.text)
                labelled = any(t and t in body for t in texts)
                differ.append((case, " ".join(plain.text.split())[:70], labelled))
    for name, total in totals.items():
        figures = total.figures()
        print(
            f"{name:<10} labels {total.labels}, imported {total.imported}: "
            f"recall {figures['recall']}, precision {figures['precision']}"
        )
    held = sum(labelled for _, _, labelled in differ)
    print(f"units the two decide otherwise: {len(differ)}; holding a blind label: {held}")
    for case, text, labelled in differ:
        print(f"  {case} {'label' if labelled else '-    '} {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
