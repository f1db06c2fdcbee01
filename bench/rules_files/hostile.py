"""Time and peak memory of ``prism import-rules --dry-run`` on hostile rule files (issue 32, D7).

    python bench/rules_files/hostile.py                       # every named file
    python bench/rules_files/hostile.py --only backticks_10000 --timeout 120
    python bench/rules_files/hostile.py --backend OTHER/backend   # another checkout's importer

Each file of ``backend/tests/rules_hostile.py`` (the shapes an independent probe found, and the
other expressions of the same shape at the importer's limits) is written to a temporary
folder and imported with a dry run, as a user runs it: a real ``python -m prism_memory``
process under ``/usr/bin/time -v`` on a fresh SQLite file. Reported per file: its size, the
elapsed time and the peak resident memory of that process, what happened (imported with N
rules, refused with its error code, or killed at the timeout) and how many warnings the
report holds. Figures are single runs; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "backend" / "tests"))
sys.path.insert(0, str(ROOT / "backend"))

from rules_hostile import NAMED  # noqa: E402


def run_one(backend: Path, folder: Path, name: str, timeout: float) -> dict[str, object]:
    path = folder / f"{name}.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_DB=str(folder / f"{name}.db"),
        PRISM_EMBEDDER="fake",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(backend),
    )
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "prism_memory"]
    cmd += ["import-rules", path.name, "--dry-run", "--json"]
    row: dict[str, object] = {"file": name, "bytes": path.stat().st_size}
    try:
        proc = subprocess.run(
            cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return row | {"outcome": f"killed at {timeout:.0f} s", "seconds": None, "peak_mb": None}
    elapsed = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    seconds = None
    if elapsed:
        hours, minutes, secs = elapsed.groups()
        seconds = int(hours or 0) * 3600 + int(minutes) * 60 + float(secs)
    row |= {"seconds": seconds, "peak_mb": round(int(peak[1]) / 1024, 1) if peak else None}
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return row | {"outcome": f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"}
    if "error" in data:
        codes = sorted({f["code"] for f in data["error"].get("fields", [])})
        return row | {"outcome": "refused " + ",".join(codes)}
    rules = sum(f["rules"] for f in data["files"])
    return row | {"outcome": f"imported ({rules} rules)", "warnings": len(data["warnings"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", type=Path, default=ROOT / "backend")
    p.add_argument("--only", nargs="*", help="names of files to run (default: all)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--json", type=Path, help="write the rows to this file")
    args = p.parse_args(argv)
    names = args.only or list(NAMED)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in names:
            (folder / f"{name}.md").write_text(NAMED[name](), encoding="utf-8")
            row = run_one(args.backend.resolve(), folder, name, args.timeout)
            rows.append(row)
            secs = f"{row['seconds']:.2f} s" if row["seconds"] is not None else "-"
            peak = f"{row['peak_mb']} MB" if row["peak_mb"] is not None else "-"
            warn = row.get("warnings", "-")
            print(
                f"{name:<32} {row['bytes']:>8} B {secs:>9} {peak:>9} warnings {warn!s:>4}  "
                f"{row['outcome']}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
