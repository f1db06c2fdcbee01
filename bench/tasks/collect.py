"""Build the real-task set's data from local git clones (run once, by hand; see README.md).

For each repository of ``sources.json``: the rule file at the clone's HEAD is copied under
``files/`` (provenance: repo, path, commit, licence line), the rules ``prism import-rules``
makes of it are listed in ``rules/<slug>.json`` (keys r001... in file order, matched to the imported
memorules by line range and subject),
and five pull-request titles are drawn from the repository's own history (squash-merge
subjects ending in ``(#N)``, the newest 300 of them, releases/dependency bumps/reverts left
out) with a fixed seed, so the choice of tasks is not the labeller's.

    python bench/tasks/collect.py --git owner/name=/path/to/clone ... [--prism .venv/bin/prism]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_PER_REPO = 5
NEWEST = 300
SKIP = re.compile(
    r"\b(bump|release|releases|deps|dependabot|renovate|changelog|version|revert|typo|"
    r"sync|merge branch|lock ?file|pre-commit autoupdate)\b",
    re.IGNORECASE,
)
PR = re.compile(r"^(?P<title>.+?)\s*\(#(?P<number>\d+)\)$")


def slug(repo: str) -> str:
    return repo.replace("/", "__")


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    ).stdout


def licence_line(clone: Path) -> str:
    names = git(clone, "ls-tree", "--name-only", "HEAD").split("\n")
    for name in names:
        if re.match(r"^(LICEN[SC]E|COPYING)", name, re.IGNORECASE):
            text = git(clone, "show", f"HEAD:{name}")
            first = next((x.strip() for x in text.splitlines() if x.strip()), "")
            return f"{name}: {first[:120]}"
    return "(no licence file at the repository's root)"


def tasks_of(clone: Path, repo: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    for line in git(clone, "log", "--format=%H%x09%s", "-5000").splitlines():
        sha, _, subject = line.partition("\t")
        match = PR.match(subject.strip())
        if match is None or SKIP.search(subject):
            continue
        found.append({"title": match["title"], "ref": f"{repo}#{match['number']}", "commit": sha})
        if len(found) == NEWEST:
            break
    rng = random.Random(f"real-tasks:{repo}")
    picked = sorted(rng.sample(range(len(found)), TASKS_PER_REPO))
    return [found[i] for i in picked]


def rules_of(prism: str, path: Path) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [prism, "import-rules", "--dry-run", "--json", "--db", f"{tmp}/s.db", str(path)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    items = [i for i in json.loads(out)["items"] if i["record"] == "memorule"]
    return [
        {
            "key": f"r{n:03d}",
            "lines": i["lines"],
            "kind": i["memorule_kind"],
            "subject": i["subject"],
        }
        for n, i in enumerate(items, 1)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--git", action="append", default=[], help="owner/name=CLONE")
    parser.add_argument("--prism", default="prism")
    args = parser.parse_args()
    clones = dict(item.split("=", 1) for item in args.git)
    sources = json.loads((HERE / "sources.json").read_text())
    for source in sources["repos"]:
        repo, path = source["repo"], source["path"]
        if repo not in clones:
            continue
        clone = Path(clones[repo])
        target = HERE / "files" / slug(repo) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(git(clone, "show", f"HEAD:{path}"), encoding="utf-8")
        source["commit"] = git(clone, "rev-parse", "HEAD").strip()
        source["licence"] = licence_line(clone)
        rules = rules_of(args.prism, target)
        (HERE / "rules").mkdir(exist_ok=True)
        (HERE / "rules" / f"{slug(repo)}.json").write_text(
            json.dumps({"repo": repo, "path": path, "rules": rules}, indent=1) + "\n"
        )
        source["tasks"] = tasks_of(clone, repo)
    (HERE / "sources.json").write_text(json.dumps(sources, indent=1) + "\n")


if __name__ == "__main__":
    main()
