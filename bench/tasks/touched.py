"""Record the files each real task's own change touched (run once, by hand; see README.md).

Every task of ``sources.json`` names the squash-merge commit that closed it. The files that
commit changed (``git show --name-only --first-parent``, in git's order) are what a session
doing that task would read and edit; ``run.py --touch`` gives them to Claude Code's
``PreToolUse`` hook one by one, as the agent's first touch of each file. Written to
``touched.json`` as ``{ref: [path, ...]}``, at most :data:`KEPT` paths per task (one task
changed 15,791 files).

    python bench/tasks/touched.py --git owner/name=/path/to/clone ...
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEPT = 50


def changed(clone: Path, commit: str) -> list[str]:
    """The paths ``commit`` changed against its first parent, in git's order."""
    out = subprocess.run(
        ["git", "-C", str(clone), "show", "--name-only", "--format=", "--first-parent", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.split("\n") if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--git",
        action="append",
        required=True,
        metavar="OWNER/NAME=PATH",
        help="a local clone (or bare git directory) of one repository of sources.json",
    )
    args = parser.parse_args()
    clones = dict(item.split("=", 1) for item in args.git)
    sources = json.loads((HERE / "sources.json").read_text())["repos"]
    missing = [s["repo"] for s in sources if s["repo"] not in clones]
    if missing:
        parser.error(f"no clone given for {', '.join(missing)}")
    touched = {
        task["ref"]: changed(Path(clones[source["repo"]]), task["commit"])[:KEPT]
        for source in sources
        for task in source["tasks"]
    }
    (HERE / "touched.json").write_text(json.dumps(touched, indent=1) + "\n")
    print(f"{len(touched)} tasks, {sum(map(len, touched.values()))} paths -> touched.json")


if __name__ == "__main__":
    main()
