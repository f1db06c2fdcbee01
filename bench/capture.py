"""Capture detector quality and speed on the labelled operator messages in ``capture/``.

    .venv/bin/python bench/capture.py                 # both parts, the bars, the timing
    .venv/bin/python bench/capture.py --part tune --errors   # what tuning looks at
    .venv/bin/python bench/capture.py --json

Every labelled message goes through the real reader: it becomes the user entry of a small
Claude Code transcript, answering an assistant entry that used a tool (``after_action``) or
only wrote text, with a tool result in between that quotes rule-like text. Precision and
recall count lasting rules; kind accuracy is over the true positives. The held-out part
(``bench/capture/heldout.jsonl``) was never read while the cues were tuned: ``--errors`` refuses
to print its items.

Also checked: zero proposals when every rule of the set appears only as assistant text, tool
results or sidechain messages; and the time to read and detect a 2,000-entry transcript.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from prism_memory.capture.detector import detect
from prism_memory.capture.transcript import read_lines

ROOT = Path(__file__).resolve().parent

BARS = {"precision": 0.85, "recall": 0.70, "kind_accuracy": 0.75, "seconds_2000": 5.0}
SESSION = "0b9f3c1e-5d2a-4f7e-9c1a-2e6d8b4a7f10"


def load(part: str) -> list[dict[str, Any]]:
    with (ROOT / "capture" / f"{part}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _entry(kind: str, content: Any, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": "/home/op/prism",
        "isSidechain": False,
        "message": {"role": kind, "content": content},
        **extra,
    }


def transcript_for(
    item: dict[str, Any], parent: str | None = None, busy: int = 0
) -> list[dict[str, Any]]:
    """Assistant turn (a tool call, or text only), a tool result, then the operator message;
    ``busy`` extra tool calls and results before it (a working session's density)."""
    out: list[dict[str, Any]] = []
    for _ in range(busy):
        tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
        use = {
            "type": "tool_use",
            "id": tool_id,
            "name": "Bash",
            "input": {"command": "ls"},
        }
        call = _entry("assistant", [use], out[-1]["uuid"] if out else parent)
        result = _entry(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": "README.md src tests",
                }
            ],
            call["uuid"],
            toolUseResult={"stdout": "README.md src tests"},
        )
        out += [call, result]
    parent = out[-1]["uuid"] if out else parent
    if item["after_action"]:
        tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
        call = _entry(
            "assistant",
            [
                {
                    "type": "text",
                    "text": "I'll make that change. Always run the tests after.",
                },
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Edit",
                    "input": {"path": "a.py"},
                },
            ],
            parent,
        )
        result = _entry(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": "Never edit vendor/.",
                }
            ],
            call["uuid"],
            toolUseResult={"stdout": "ok"},
        )
        done = _entry("assistant", [{"type": "text", "text": "Done."}], result["uuid"])
        out += [call, result, done]
    else:
        out.append(_entry("assistant", "What would you like me to do?", parent))
    out.append(_entry("user", item["text"], out[-1]["uuid"]))
    return out


def score(items: list[dict[str, Any]]) -> dict[str, Any]:
    tp = fp = fn = kind_ok = 0
    errors = []
    for item in items:
        lines = [json.dumps(e) for e in transcript_for(item)]
        messages = read_lines(lines)
        # the reader drops client-made text (slash-command echoes, caveats): no detection
        found = detect(messages[0].text, messages[0].after_action) if messages else None
        if found and item["lasting"]:
            tp += 1
            kind_ok += found.kind.value == item["kind"]
            if found.kind.value != item["kind"]:
                errors.append(("kind", item, found.kind.value))
        elif found:
            fp += 1
            errors.append(("false_positive", item, found.kind.value))
        elif item["lasting"]:
            fn += 1
            errors.append(("miss", item, None))
    return {
        "messages": len(items),
        "lasting": sum(1 for i in items if i["lasting"]),
        "true_positives": tp,
        "false_positives": fp,
        "misses": fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
        "kind_accuracy": round(kind_ok / tp, 3) if tp else 0.0,
        "_errors": errors,
    }


def leaks(items: list[dict[str, Any]]) -> int:
    """Proposals from a transcript where every rule is assistant text, a tool result or a
    sidechain message: must be zero."""
    entries: list[dict[str, Any]] = []
    parent = None
    for item in items:
        if not item["lasting"]:
            continue
        tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
        said = _entry("assistant", [{"type": "text", "text": item["text"]}], parent)
        call = _entry(
            "assistant",
            [{"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}],
            said["uuid"],
        )
        result = _entry(
            "user",
            [{"type": "tool_result", "tool_use_id": tool_id, "content": item["text"]}],
            call["uuid"],
        )
        side = _entry("user", item["text"], result["uuid"], isSidechain=True)
        entries += [said, call, result, side]
        parent = result["uuid"]
    messages = read_lines([json.dumps(e) for e in entries])
    return sum(1 for m in messages if detect(m.text, m.after_action))


GOLDEN = ROOT.parent / "backend" / "tests" / "golden" / "claude_code_session.jsonl"


def golden_leaks() -> dict[str, int]:
    """Detections on the golden transcript whose entry is not a plain operator message
    (judged here independently of the reader: a main-chain ``user`` entry with no tool
    result and no client marker)."""
    from prism_memory.capture.transcript import read_file

    typed = set()
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        content = (e.get("message") or {}).get("content")
        blocks = content if isinstance(content, list) else []
        if (
            e.get("type") == "user"
            and not e.get("isSidechain")
            and not e.get("isMeta")
            and "toolUseResult" not in e
            and not any(b.get("type") == "tool_result" for b in blocks)
        ):
            typed.add(e["uuid"])
    found = [m for m in read_file(GOLDEN) if detect(m.text, m.after_action)]
    return {"detections": len(found), "leaked": sum(1 for m in found if m.uuid not in typed)}


def timing(items: list[dict[str, Any]], size: int = 2000) -> dict[str, Any]:
    """Read and detect over a transcript of ``size`` entries built from the set."""
    entries: list[dict[str, Any]] = []
    parent = None
    i = 0
    while len(entries) < size:
        chunk = transcript_for(items[i % len(items)], parent)
        entries += chunk
        parent = chunk[-1]["uuid"]
        i += 1
    text = "\n".join(json.dumps(e) for e in entries[:size]).encode()
    start = time.perf_counter()
    messages = read_lines(text.splitlines())
    found = [d for m in messages if (d := detect(m.text, m.after_action))]
    seconds = time.perf_counter() - start
    return {
        "entries": size,
        "operator_messages": len(messages),
        "detections": len(found),
        "seconds": round(seconds, 4),
    }


def end_to_end(
    items: list[dict[str, Any]], size: int = 2000, model: str = "minilm", busy: int = 0
) -> dict[str, Any]:
    """``prism capture claude-code`` as a user runs it, on a 2,000-entry transcript file: read,
    detect, embed every detection with the real model (loaded before the clock starts),
    compare with the queue, write the proposals and evidence into a fresh SQLite store."""
    import tempfile

    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.capture.proposals import candidates
    from prism_memory.capture.transcript import read_file
    from prism_memory.services.capture_service import CaptureService
    from prism_memory.settings import load_settings

    entries: list[dict[str, Any]] = []
    parent = None
    i = 0
    while len(entries) < size:
        chunk = transcript_for(items[i % len(items)], parent, busy)
        entries += chunk
        parent = chunk[-1]["uuid"]
        i += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_text("\n".join(json.dumps(e) for e in entries[:size]))
        services = build_services(load_settings(db=Path(tmp) / "p.db", embedder=model))
        try:
            services.embedder.embed(["warm up the model"])
            ctx = context_from(services.settings)
            service = CaptureService(services.store, services.embedder, services.memorules)
            start, cpu = time.perf_counter(), time.process_time()
            messages = read_file(path)
            report = service.capture(ctx, candidates(messages, "donna"), len(messages))
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            start = time.perf_counter()
            again = service.capture(ctx, candidates(read_file(path), "donna"), len(messages))
            recapture = time.perf_counter() - start
        finally:
            services.close()
    return {
        "entries": size,
        "busy": busy,
        "cpu_seconds": round(cpu, 3),
        "model": model,
        "operator_messages": report.messages,
        "proposed": report.count("proposed"),
        "evidence": report.count("evidence"),
        "seconds": round(seconds, 3),
        "recapture_seconds": round(recapture, 3),
        "recapture_new": again.count("proposed") + again.count("evidence"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("tune", "heldout", "both"), default="both")
    parser.add_argument("--errors", action="store_true", help="print the tune part's errors")
    parser.add_argument(
        "--heldout-errors",
        action="store_true",
        help="print the held-out part's errors (for the report, once tuning is over)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--no-end-to-end",
        action="store_true",
        help="skip the timed capture with the real model",
    )
    args = parser.parse_args()
    parts = ("tune", "heldout") if args.part == "both" else (args.part,)
    report: dict[str, Any] = {"parts": {}}
    for part in parts:
        report["parts"][part] = score(load(part))
    all_items = load("tune") + load("heldout")
    report["leaked_proposals"] = leaks(all_items)
    report["golden"] = golden_leaks()
    report["timing_2000"] = timing(all_items)
    if not args.no_end_to_end:
        # dense: every entry pair is an operator message of the set (a worst case);
        # working: four tool calls before each (one typed message per ~10 entries)
        report["end_to_end_2000"] = end_to_end(all_items)
        report["end_to_end_2000_working"] = end_to_end(all_items, busy=4)
    report["bars"] = BARS
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.errors:
        if "tune" not in report["parts"]:
            parser.error("--errors prints the tune part only")
        for why, item, got in report["parts"]["tune"]["_errors"]:
            want = item["kind"] or item["category"]
            print(f"{why:15} {item['id']} want={want} got={got} act={item['after_action']}")
            print(f"                {item['text']!r}")
    if args.heldout_errors:
        for why, item, got in report["parts"]["heldout"]["_errors"]:
            want = item["kind"] or item["category"]
            print(f"{why:15} {item['id']} want={want} got={got} act={item['after_action']}")
            print(f"                {item['text']!r}")
    for part in report["parts"].values():
        part.pop("_errors")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, r in report["parts"].items():
        print(
            f"{name:8} n={r['messages']:3} lasting={r['lasting']:3}  precision {r['precision']:.3f}"
            f"  recall {r['recall']:.3f}  kind accuracy {r['kind_accuracy']:.3f}"
            f"  (tp {r['true_positives']}, fp {r['false_positives']}, miss {r['misses']})"
        )
    g = report["golden"]
    print(
        f"golden transcript: {g['detections']} detections, {g['leaked']} from non-operator entries"
    )
    t = report["timing_2000"]
    print(
        f"leaked proposals (assistant text, tool results, sidechains): {report['leaked_proposals']}"
    )
    print(
        f"2,000-entry transcript: {t['operator_messages']} operator messages, "
        f"{t['detections']} detections in {t['seconds']:.3f} s (reader + detector)"
    )
    for name in ("end_to_end_2000", "end_to_end_2000_working"):
        if name not in report:
            continue
        e = report[name]
        print(
            f"end to end, {e['model']}, SQLite, {e['entries']} entries with "
            f"{e['operator_messages']} operator messages: {e['proposed']} proposed + "
            f"{e['evidence']} evidence in {e['seconds']:.2f} s ({e['cpu_seconds']:.2f} s CPU); "
            f"re-capture {e['recapture_seconds']:.2f} s, {e['recapture_new']} new"
        )
    print(f"load average {report['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
