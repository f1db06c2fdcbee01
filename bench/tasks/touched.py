"""Record the files each real task's own change touched (run once, by hand; see README.md).

Every task of ``sources.json`` names the squash-merge commit that closed it. The files that
commit changed (``git show --name-only --first-parent``, in git's order) are what a session
doing that task would read and edit; ``run.py --touch`` gives them to Claude Code's
``PreToolUse`` hook one by one, as the agent's first touch of each file. Written to
``touched.json`` as ``{ref: [path, ...]}``, at most :data:`KEPT` paths per task (one task
changed 15,791 files).

``--edits`` also writes ``touched_edits.json``, ``{ref: {path: text}}``: for each task's first
:data:`EDITED` paths, the lines that commit added to the file (``--unified=0``, in order,
at most :data:`EDIT_CHARS` characters). It stands for what the agent's edit would write, the
``new_string`` of an ``Edit`` (``touch_study.py`` asks with it).

    python bench/tasks/touched.py --git owner/name=/path/to/clone ... [--edits]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEPT = 50
EDITED = 10  # run.TOUCHED_MAX: the files a task's touches play
EDIT_CHARS = 1000


def changed(clone: Path, commit: str) -> list[str]:
    """The paths ``commit`` changed against its first parent, in git's order."""
    out = subprocess.run(
        ["git", "-C", str(clone), "show", "--name-only", "--format=", "--first-parent", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.split("\n") if line]


def added(clone: Path, commit: str, path: str) -> str:
    """The lines ``commit`` added to ``path`` against its first parent, joined."""
    show = ["show", "--format=", "--first-parent", "--unified=0", commit, "--", path]
    out = subprocess.run(
        ["git", "-C", str(clone), *show],
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout
    lines = [line[1:] for line in out.split("\n") if line[:1] == "+" and line[:3] != "+++"]
    return "\n".join(lines)[:EDIT_CHARS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--git",
        action="append",
        required=True,
        metavar="OWNER/NAME=PATH",
        help="a local clone (or bare git directory) of one repository of sources.json",
    )
    parser.add_argument(
        "--edits", action="store_true", help="also write touched_edits.json (the added lines)"
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
    if args.edits:
        edits = {
            task["ref"]: {
                path: added(Path(clones[source["repo"]]), task["commit"], path)
                for path in touched[task["ref"]][:EDITED]
            }
            for source in sources
            for task in source["tasks"]
        }
        (HERE / "touched_edits.json").write_text(json.dumps(edits, indent=1) + "\n")
        print(f"{sum(map(len, edits.values()))} files' added lines -> touched_edits.json")


if __name__ == "__main__":
    main()
