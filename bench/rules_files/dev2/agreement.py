"""How far two labellers agree on the same rule files, and the importer against each (issue 30).

A second labeller labelled files of the corpus blind, from the file alone, without the
first labeller's labels (``agreement/<dir>/<path>.labels.json``, the same format). Two
labels name the same instruction when their texts, found in the file's text (backticks,
``*``, case and white space ignored, as ``score.py`` reads labels), overlap; each label is
matched at most once, in file order. Figures, per language and in total:

- **second vs first**: the share of the first labeller's labels the second also labelled
  (recall, taking the first as truth), the share of the second's labels the first also
  labelled (precision), and how often the two agree on the kind of a matched label;
- **importer vs first**, **importer vs second**: ``score.py``'s recall and precision of
  ``prism import-rules`` on the same files against each labeller.

Where the labellers disagree as often as the importer misses, a target above their
agreement measures the labeller, not the importer.

    python bench/rules_files/dev2/agreement.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import score  # noqa: E402


def spans(labels: list[dict[str, str]], source: str) -> list[tuple[int, int] | None]:
    """Each label's place in the file's text (None: its text is not in the file)."""
    text = score.label_norm(source)
    out: list[tuple[int, int] | None] = []
    after: dict[str, int] = {}
    for label in labels:
        needle = score.label_norm(label["text"])
        at = text.find(needle, after.get(needle, 0)) if needle else -1
        if at < 0 and needle:
            at = text.find(needle)  # a repeated label past the text's last occurrence
        if at < 0:
            out.append(None)
            continue
        after[needle] = at + len(needle)
        out.append((at, at + len(needle)))
    return out


def match(
    first: list[tuple[int, int] | None], second: list[tuple[int, int] | None]
) -> list[tuple[int, int]]:
    """Pairs (i, j) of overlapping labels, each label at most once, earliest first."""
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for i, a in enumerate(first):
        if a is None:
            continue
        for j, b in enumerate(second):
            if j in taken or b is None:
                continue
            if a[0] < b[1] and b[0] < a[1]:
                pairs.append((i, j))
                taken.add(j)
                break
    return pairs


def ratio(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    manifest = json.loads((HERE / "manifest.json").read_text())["files"]
    totals: dict[str, dict[str, int]] = {}
    files: dict[str, Any] = {}
    for entry in manifest:
        second_path = HERE / "agreement" / entry["dir"] / (entry["path"] + ".labels.json")
        if not second_path.exists():
            continue
        base = HERE / "corpus" / entry["dir"]
        source = (base / entry["path"]).read_text(encoding="utf-8")
        first = json.loads((base / (entry["path"] + ".labels.json")).read_text())["rules"]
        second = json.loads(second_path.read_text())["rules"]
        first_at, second_at = spans(first, source), spans(second, source)
        pairs = match(first_at, second_at)
        parsed = score.read_rule_files([base / entry["path"]], base)
        requests = [
            r
            for p in parsed
            if p.path == entry["path"]
            for u in p.units
            if (r := score.would_write(u))
        ]
        vs_first = score.score_labels(first, requests, source)
        vs_second = score.score_labels(second, requests, source)
        row = {
            "first": len(first),
            "second": len(second),
            "matched": len(pairs),
            "kind_same": sum(first[i]["kind"] == second[j]["kind"] for i, j in pairs),
            "not_in_file": sum(s is None for s in [*first_at, *second_at]),
            "imported": len(requests),
            "importer_found_first": vs_first.found,
            "importer_found_second": vs_second.found,
            "importer_matched_first": vs_first.imported - len(vs_first.extra),
            "importer_matched_second": vs_second.imported - len(vs_second.extra),
        }
        files[f"{entry['dir']}/{entry['path']}"] = {"language": entry["language"], **row}
        for key in (entry["language"], "total"):
            bucket = totals.setdefault(key, {})
            for name, value in row.items():
                bucket[name] = bucket.get(name, 0) + value
    summary = {
        key: {
            "files": sum(1 for f in files.values() if key in ("total", f["language"])),
            "labels_first": t["first"],
            "labels_second": t["second"],
            "second_vs_first_recall": ratio(t["matched"], t["first"]),
            "second_vs_first_precision": ratio(t["matched"], t["second"]),
            "kind_agreement": ratio(t["kind_same"], t["matched"]),
            "importer_vs_first": [
                ratio(t["importer_found_first"], t["first"]),
                ratio(t["importer_matched_first"], t["imported"]),
            ],
            "importer_vs_second": [
                ratio(t["importer_found_second"], t["second"]),
                ratio(t["importer_matched_second"], t["imported"]),
            ],
            "labels_not_found_in_file": t["not_in_file"],
        }
        for key, t in sorted(totals.items())
    }
    print("group files first second | 2nd vs 1st: recall prec kind | importer vs 1st | vs 2nd")
    for key, s in summary.items():
        print(
            f"{key:<6} {s['files']:>5} {s['labels_first']:>6} {s['labels_second']:>6} | "
            f"{s['second_vs_first_recall']} {s['second_vs_first_precision']} "
            f"{s['kind_agreement']} | "
            f"{s['importer_vs_first']} | {s['importer_vs_second']}  (not in file: "
            f"{s['labels_not_found_in_file']})"
        )
    if args.json:
        out = {"load_average": os.getloadavg(), "summary": summary, "files": files}
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
