"""The real-task benchmark: what Claude Code is given on real tasks, through the real hooks.

Every repository's rule file of ``sources.json`` is imported (``prism import-rules``, a
subprocess) into its own project of one tenant, so the other twenty projects are
distractors. For each task (a pull-request title of that repository):

* **delivered** — Claude Code's two hooks run as subprocesses, exactly as
  ``prism hooks install claude-code`` configures them: ``SessionStart`` (source ``startup``)
  then ``UserPromptSubmit`` with the task title as the prompt, one new session per task.
  The rule ids in their ``additionalContext`` are what the model is given. Scored against
  the hand labels (``labels.txt``): recall of must-follow rules, precision (share of the
  delivered rules labelled must-follow or useful), tokens (characters / 4, as the brief
  counts them), rules the prompt hook added.
* **touched** (``--touch``) — then ``PreToolUse`` for an ``Edit`` of each file the task's
  own change touched (``touched.json``, the first :data:`TOUCHED_MAX` in git's order), as
  the agent's first touch of each: what those hooks add is delivered too; their tokens are
  counted apart (``touch_tokens``; ``tokens`` stays session start + prompt).
* **ranking** — ``semantic_recall(query=title, source_type='memorule', top_k=10)`` in the
  project: nDCG@10 (gain 2 must-follow, 1 useful) and recall@5 of the must-follow rules.

Tasks with no must-follow rule count in precision and tokens, not in recall. Means come
with their standard errors over tasks; ``--compare OLD.json`` adds the paired difference
(bench/lib/paired.py) per metric and split. The load average is recorded at start and end.

    .venv/bin/python bench/tasks/run.py --out /tmp/real.json [--hook-arg=--token-budget=800]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from lib.paired import paired  # noqa: E402

ID = re.compile(r"id `([0-9a-f-]{36})`")
CHARS_PER_TOKEN = 4
METRICS = (
    "recall",
    "precision",
    "tokens",
    "prompt_added",
    "touch_added",
    "touch_tokens",
    "ndcg10",
    "recall5",
)
TOUCHED_MAX = 10  # files per task given to the PreToolUse hook (bench/tasks/README.md)


def slug(repo: str) -> str:
    return repo.replace("/", "__")


def load_labels() -> dict[str, dict[str, Any]]:
    """``labels.txt`` as {task ref: {"must": {key: reason}, "useful": set}}."""
    labels: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for raw in (HERE / "labels.txt").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            current = labels.setdefault(line[1:].strip(), {"must": {}, "useful": set()})
        elif line.startswith("must ") and current is not None:
            key, _, reason = line[5:].partition(" ")
            current["must"][key] = reason
        elif line.startswith("useful ") and current is not None:
            current["useful"].update(line[7:].split())
        else:
            raise ValueError(f"labels.txt: cannot read {raw!r}")
    return labels


def import_repo(
    prism: str, db: Path, source: dict[str, Any], project: str | None = None
) -> dict[str, list[str]]:
    """Import one rule file into its project; the memorule ids of each labelled key.

    A labelled rule is the imported rule at the same lines with the same subject; failing
    that (the importer has since changed how it words a subject or where it cuts a list),
    the imported rule at the same lines, else the shortest one whose lines hold it: its
    text is what the model is given. Several labelled keys may then share one rule. When
    no imported rule holds it because the importer now cuts it into several, its key
    passes to every piece inside its lines (delivering a piece delivers the key, as
    delivering a rule that holds several keys delivers each).
    ``project``: import into this project instead of the repository's own.
    """
    path = HERE / "files" / slug(source["repo"]) / source["path"]
    out = subprocess.run(
        [
            prism,
            "import-rules",
            "--json",
            "--db",
            str(db),
            "--project",
            project or slug(source["repo"]),
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    items = [i for i in json.loads(out)["items"] if i["record"] == "memorule"]
    rules = json.loads((HERE / "rules" / f"{slug(source['repo'])}.json").read_text())["rules"]
    return labelled_ids(rules, items)


def labelled_ids(rules: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each labelled key's memorule ids among the imported ``items`` (see import_repo)."""
    by_place = {(tuple(i["lines"]), i["subject"]): i["id"] for i in items}
    ids: dict[str, list[str]] = {}
    for rule in rules:
        first, last = rule["lines"]
        found = by_place.get((tuple(rule["lines"]), rule["subject"]))
        pieces = [found] if found is not None else []
        if not pieces:
            holding = sorted(
                (i["lines"][1] - i["lines"][0], i["lines"] != rule["lines"], i["id"])
                for i in items
                if i["lines"][0] <= first and last <= i["lines"][1]
            )
            pieces = [holding[0][2]] if holding else []
        if not pieces:
            pieces = [i["id"] for i in items if first <= i["lines"][0] and i["lines"][1] <= last]
        if pieces:
            ids[rule["key"]] = pieces
    return ids


def keys_of(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """Memorule id -> the labelled keys it holds (one, or several when the importer
    made one rule of lines labelled as several)."""
    found: dict[str, list[str]] = {}
    for key, rule_ids in sorted(ids.items()):
        for rule_id in rule_ids:
            found.setdefault(rule_id, []).append(key)
    return found


def as_keys(rule_ids: list[str], key_of: dict[str, list[str]]) -> list[str]:
    """Labelled keys of the rule ids, in order, each once (a key whose rule the importer cut
    in pieces stands where its first piece does); ``?<id>`` for a rule no label names (each
    such rule counts once, as an irrelevant one: a bare "?" made several count as one)."""
    return list(dict.fromkeys(key for i in rule_ids for key in key_of.get(i, [f"?{i}"])))


IN_PROCESS = False
ONE_PROJECT = "one-team"  # --one-project: the project every file is imported into


def hook(
    prism: str,
    db: Path,
    project: str,
    state: Path,
    cwd: Path,
    payload: dict[str, Any],
    extra: list[str],
) -> tuple[str, str]:
    """One hook call as Claude Code makes it: JSON on stdin, JSON (or nothing) on stdout.

    With ``--in-process`` (grids only) the same ``prism`` command runs through click's test
    runner in this process: the same code, without the process start.
    """
    argv = [
        "brief",
        "--hook",
        "claude-code",
        "--db",
        str(db),
        "--project",
        project,
        "--state-dir",
        str(state),
        *extra,
    ]
    if IN_PROCESS:
        from click.testing import CliRunner

        from prism_memory.cli.main import cli

        ran = CliRunner().invoke(cli, [*argv, "--deadline", "600"], input=json.dumps(payload))
        stdout, stderr = ran.stdout, ran.stderr
    else:
        done = subprocess.run(
            [prism, *argv],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=cwd,
            check=True,
        )
        stdout, stderr = done.stdout, done.stderr
    if not stdout.strip():
        return "", stderr
    return json.loads(stdout)["hookSpecificOutput"]["additionalContext"], stderr


def ndcg(ranked: list[str], gains: dict[str, int], k: int = 10) -> float:
    dcg = sum(gains.get(r, 0) / math.log2(i + 2) for i, r in enumerate(ranked[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def operator(db: Path, project: str) -> tuple[Any, Any]:
    """The store's ``AccessService`` and the local operator acting in ``project``, as the CLI
    builds them (the benchmark's scripts ask the store in-process through these)."""
    from prism_memory.bootstrap import build_services, context_from
    from prism_memory.cli.acting import as_operator
    from prism_memory.settings import load_settings

    services = build_services(load_settings(db=db, project=project), migrate=False)
    return as_operator(services, context_from(services.settings))


NO_TASK_ROOM = 20_000  # tokens: the whole no-task brief, every tier


def no_task_brief(access: Any, me: Any) -> Any:
    """The project's session-start brief (no task) with room for every rule."""
    from prism_memory.domain.contract.recall import BriefCreate

    request = BriefCreate.parse({"task": "", "token_budget": NO_TASK_ROOM, "top_k": 100})
    return access.brief(me.key, me.ctx, request)


def recaller(db: Path) -> Any:
    """``semantic_recall`` in-process (one model load for every task), as the CLI runs it."""
    cache: dict[str, Any] = {}

    def recall(project: str, query: str) -> list[str]:
        from prism_memory.domain.contract.recall import RecallCreate

        if project not in cache:
            cache[project] = operator(db, project)
        access, me = cache[project]
        result = access.recall(
            me.key,
            me.ctx,
            RecallCreate.parse({"query": query, "top_k": 10, "source_type": "memorule"}),
        )
        return [str(m.memory.id) for m in result.matches]

    return recall


def title_ranking(access: Any, me: Any, title: str) -> Any:
    """``semantic_recall`` of a task title over the project's rules, every rule ranked (top 100):
    what the studies (``frontier.py``, ``prior.py``) read the title's ranking from."""
    from prism_memory.domain.contract.recall import RecallCreate

    request = RecallCreate.parse({"query": title, "top_k": 100, "source_type": "memorule"})
    return access.recall(me.key, me.ctx, request)


def label_sets(label: dict[str, Any]) -> tuple[set[str], set[str]]:
    """A task's must-follow keys and its relevant ones (must-follow or useful)."""
    must = set(label["must"])
    return must, must | set(label["useful"])


def mean_se(values: list[float]) -> dict[str, float]:
    n = len(values)
    if n == 0:
        return {"mean": float("nan"), "se": float("nan"), "n": 0}
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return {"mean": round(mean, 4), "se": round(math.sqrt(var / n), 4), "n": n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--prism", default=str(Path(sys.executable).with_name("prism")))
    parser.add_argument(
        "--hook-arg",
        action="append",
        default=[],
        help="an extra flag for both hook commands, e.g. --hook-arg=--token-budget=800",
    )
    parser.add_argument("--compare", type=Path, help="an earlier --out to pair against")
    parser.add_argument(
        "--touch",
        action="store_true",
        help="after the prompt, a PreToolUse hook for an Edit of each file the task's own change "
        f"touched (touched.json, at most {TOUCHED_MAX} per task)",
    )
    parser.add_argument("--no-ranking", action="store_true", help="skip semantic_recall")
    parser.add_argument(
        "--one-project",
        action="store_true",
        help="a team's store: every file of the part in one project (the other files' rules "
        "are in the brief's way, not in a project of their own)",
    )
    parser.add_argument(
        "--split", choices=("dev", "set_aside"), help="only this part (tuning uses dev alone)"
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="hooks through click's runner in this process (grids; the "
        "reported figures run them as subprocesses)",
    )
    args = parser.parse_args()
    global IN_PROCESS
    IN_PROCESS = args.in_process
    sources = json.loads((HERE / "sources.json").read_text())["repos"]
    if args.split:
        sources = [s for s in sources if s["split"] == args.split]
    labels = load_labels()
    touched = json.loads((HERE / "touched.json").read_text()) if args.touch else {}
    load_start = os.getloadavg()
    started = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="real-tasks-") as tmp:
        db, state, cwd = Path(tmp) / "store.db", Path(tmp) / "state", Path(tmp) / "cwd"
        cwd.mkdir()
        shared = ONE_PROJECT if args.one_project else None
        keys_by_repo = {s["repo"]: import_repo(args.prism, db, s, shared) for s in sources}
        recall = None if args.no_ranking else recaller(db)
        for source in sources:
            ids = keys_by_repo[source["repo"]]
            key_of = keys_of(ids)
            project = shared or slug(source["repo"])
            for task in source["tasks"]:
                label = labels[task["ref"]]
                session = str(uuid.uuid4())
                base = {"session_id": session, "transcript_path": "", "cwd": str(cwd)}
                start_ctx, _ = hook(
                    args.prism,
                    db,
                    project,
                    state,
                    cwd,
                    {**base, "hook_event_name": "SessionStart", "source": "startup"},
                    args.hook_arg,
                )
                prompt_ctx, prompt_err = hook(
                    args.prism,
                    db,
                    project,
                    state,
                    cwd,
                    {**base, "hook_event_name": "UserPromptSubmit", "prompt": task["title"]},
                    args.hook_arg,
                )
                touch_ctx = ""
                for path in touched.get(task["ref"], [])[:TOUCHED_MAX]:
                    context, _ = hook(
                        args.prism,
                        db,
                        project,
                        state,
                        cwd,
                        {
                            **base,
                            "hook_event_name": "PreToolUse",
                            "tool_name": "Edit",
                            "tool_input": {"file_path": str(cwd / path)},
                        },
                        args.hook_arg,
                    )
                    touch_ctx += context
                briefed = as_keys(ID.findall(start_ctx), key_of)
                added = as_keys(ID.findall(prompt_ctx), key_of)
                by_touch = as_keys(ID.findall(touch_ctx), key_of)
                delivered = set(briefed) | set(added) | set(by_touch)
                must, useful = set(label["must"]), label["useful"]
                row: dict[str, Any] = {
                    "ref": task["ref"],
                    "repo": source["repo"],
                    "split": source["split"],
                    "must": sorted(must),
                    "briefed": briefed,
                    "added": added,
                    "ceiling": len(must & set(ids)) / len(must) if must else None,
                    "recall": len(must & delivered) / len(must) if must else None,
                    "precision": len(delivered & (must | useful)) / len(delivered)
                    if delivered
                    else 0.0,
                    "tokens": math.ceil((len(start_ctx) + len(prompt_ctx)) / CHARS_PER_TOKEN),
                    "prompt_added": len(added),
                    "touched": by_touch,
                    "touch_added": len(by_touch) if args.touch else None,
                    "touch_tokens": math.ceil(len(touch_ctx) / CHARS_PER_TOKEN)
                    if args.touch
                    else None,
                    "prompt_stderr": prompt_err.strip()[-300:],
                }
                if recall is not None:
                    ranked = as_keys(recall(project, task["title"]), key_of)
                    gains = {k: 2 for k in must} | {k: 1 for k in useful - must}
                    row["ndcg10"] = ndcg(ranked, gains) if gains else None
                    row["recall5"] = len(must & set(ranked[:5])) / len(must) if must else None
                    row["ranked"] = ranked
                rows.append(row)
                print(
                    f"{task['ref']}: recall {row['recall']} added {len(added)} "
                    f"tokens {row['tokens']}",
                    file=sys.stderr,
                )
    summary: dict[str, Any] = {}
    splits = [args.split] if args.split else ["dev", "set_aside"]
    for split in splits:
        part = [r for r in rows if r["split"] == split]
        summary[split] = {m: mean_se([r[m] for r in part if r.get(m) is not None]) for m in METRICS}
        summary[split]["ceiling"] = mean_se(
            [r["ceiling"] for r in part if r["ceiling"] is not None]
        )
    result = {
        "hook_args": args.hook_arg,
        "touch": args.touch,
        "one_project": args.one_project,
        "in_process": args.in_process,
        "load_average": {"start": load_start, "end": os.getloadavg()},
        "wall_s": round(time.time() - started, 1),
        "summary": summary,
        "rows": rows,
    }
    if args.compare:
        old = {r["ref"]: r for r in json.loads(args.compare.read_text())["rows"]}
        result["paired"] = {split: {} for split in splits}
        for split in splits:
            for m in METRICS:
                new = {
                    r["ref"]: r[m]
                    for r in rows
                    if r["split"] == split and r.get(m) is not None and r["ref"] in old
                }
                before = {k: v[m] for k, v in old.items() if v.get(m) is not None}
                if len(set(new) & set(before)) >= 2:
                    result["paired"][split][m] = paired(new, before)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        json.dumps(
            {
                k: result[k]
                for k in (
                    "hook_args",
                    "load_average",
                    "wall_s",
                    "summary",
                    *(["paired"] if args.compare else []),
                )
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
