"""Can the task-blind part of the brief be chosen better? A prior learned from other files.

With no task, the session-start brief carries the must-include and every-change tiers, then
the rest of the file in written order up to its budget (``brief_service.tiered``). This
study asks whether the rest could be ordered by how likely a rule is to matter to *some*
task, learned from the labels of other repositories:

* **the prior** — ridge regression from a rule's MiniLM vector (subject and body, the text
  recall embeds) to the share of its repository's tasks that label it must-follow or
  useful. Development repositories are scored leave-one-repository-out (the model never
  sees the file it scores); set-aside repositories by the model fit on every development
  repository. Reported: the correlation of prior and share *within* each repository
  (centred per file), since only the order inside a file matters to its brief.
* **delivered sets** — the tiers, then the first ``N`` other rules (written order, or the
  prior's order), then the prompt hook's choice (the title's ranking past what the brief
  holds: up to 8 rules scoring ≥ 0.15, the shipped defaults), scored as ``run.py`` scores
  them: recall of must-follow rules, precision of must-follow or useful. ``N`` counts
  rules, not tokens: a simulation of the brief's budget, not the hooks themselves.

    .venv/bin/python bench/tasks/prior.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402
from lib.paired import paired  # noqa: E402

RIDGE = 30.0  # chosen before the set-aside part was scored (dev LORO: 1, 10, 30, 100 within 0.04)
PROMPT_RULES, PROMPT_MIN = 8, 0.15  # the prompt hook's shipped defaults
REST_SIZES = (0, 5, 10, 15)


def gather() -> list[dict[str, Any]]:
    """Per repository: its rules (labelled keys, tier, written position, text) and tasks
    (labels, the title's ranking with scores)."""
    from prism_memory.services.brief_service import about_every_change, must_include

    sources = json.loads((HERE / "sources.json").read_text())["repos"]
    labels = run.load_labels()
    prism = str(Path(sys.executable).with_name("prism"))
    repos: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="real-prior-") as tmp:
        db = Path(tmp) / "store.db"
        imported = {s["repo"]: run.import_repo(prism, db, s) for s in sources}
        for source in sources:
            key_of = run.keys_of(imported[source["repo"]])
            access, me = run.operator(db, run.slug(source["repo"]))
            rules = [
                {
                    "id": str(m.memory.id),
                    "keys": key_of.get(str(m.memory.id), [f"?{m.memory.id}"]),
                    "position": position,
                    "tier": must_include(m) or about_every_change(m),
                    "text": m.state.embedding_text(),
                }
                for position, m in enumerate(run.no_task_brief(access, me).included)
            ]
            tasks = []
            for task in source["tasks"]:
                result = run.title_ranking(access, me, task["title"])
                must, relevant = run.label_sets(labels[task["ref"]])
                tasks.append(
                    {
                        "must": must,
                        "relevant": relevant,
                        "ranked": [(str(m.memory.id), m.score) for m in result.matches],
                    }
                )
            for rule in rules:
                rule["share"] = float(
                    np.mean([bool(set(rule["keys"]) & t["relevant"]) for t in tasks])
                )
            repos.append(
                {"repo": source["repo"], "split": source["split"], "rules": rules, "tasks": tasks}
            )
    return repos


def embed(repos: list[dict[str, Any]]) -> None:
    from prism_memory.embeddings.minilm import MiniLMEmbedder

    rules = [rule for repo in repos for rule in repo["rules"]]
    vectors = np.asarray(MiniLMEmbedder().embed([rule["text"] for rule in rules]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for rule, vector in zip(rules, vectors, strict=True):
        rule["vector"] = vector


def fit(rules: list[dict[str, Any]]) -> np.ndarray:
    x = np.hstack([np.stack([r["vector"] for r in rules]), np.ones((len(rules), 1))])
    y = np.array([r["share"] for r in rules])
    penalty = RIDGE * np.eye(x.shape[1])
    penalty[-1, -1] = 0.0  # the intercept is not shrunk
    return np.linalg.solve(x.T @ x + penalty, x.T @ y)


def score_priors(repos: list[dict[str, Any]]) -> None:
    dev = [r for r in repos if r["split"] == "dev"]
    for repo in repos:
        train = [rule for other in dev if other is not repo for rule in other["rules"]]
        weights = fit(train)
        for rule in repo["rules"]:
            rule["prior"] = float(np.append(rule["vector"], 1.0) @ weights)


def within_correlation(repos: list[dict[str, Any]]) -> float:
    prior, share = [], []
    for repo in repos:
        p = np.array([r["prior"] for r in repo["rules"]])
        s = np.array([r["share"] for r in repo["rules"]])
        prior += list(p - p.mean())
        share += list(s - s.mean())
    return round(float(np.corrcoef(prior, share)[0, 1]), 3)


def delivered(repos: list[dict[str, Any]], rest: int, by_prior: bool) -> dict[str, Any]:
    recall: dict[str, float] = {}
    precision: dict[str, float] = {}
    size: list[float] = []
    for repo in repos:
        others = [r for r in repo["rules"] if not r["tier"]]
        others.sort(key=lambda r: -r["prior"] if by_prior else r["position"])
        brief = [r for r in repo["rules"] if r["tier"]] + others[:rest]
        keys_of = {r["id"]: r["keys"] for r in repo["rules"]}
        in_brief = {r["id"] for r in brief}
        for t, task in enumerate(repo["tasks"]):
            ref = f"{repo['repo']}#{t}"
            beyond = [(i, s) for i, s in task["ranked"] if i in keys_of and i not in in_brief]
            added = [i for i, s in beyond if s >= PROMPT_MIN][:PROMPT_RULES]
            given = {k for r in brief for k in r["keys"]} | {k for i in added for k in keys_of[i]}
            if task["must"]:
                recall[ref] = len(task["must"] & given) / len(task["must"])
            precision[ref] = len(task["relevant"] & given) / len(given)
            size.append(float(len(given)))
    return {"recall": recall, "precision": precision, "rules": size}


def summary(row: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Means ± SE, and the paired difference against ``base`` (written order, same size)."""
    return {
        "recall": run.mean_se(list(row["recall"].values())),
        "precision": run.mean_se(list(row["precision"].values())),
        "rules": run.mean_se(row["rules"]),
        "paired_recall": paired(row["recall"], base["recall"]),
        "paired_precision": paired(row["precision"], base["precision"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    out: dict[str, Any] = {"load_average": {"start": os.getloadavg()}, "ridge": RIDGE}
    repos = gather()
    embed(repos)
    score_priors(repos)
    for split in ("dev", "set_aside"):
        part = [r for r in repos if r["split"] == split]
        rows: dict[str, Any] = {}
        for n in REST_SIZES:
            written = delivered(part, n, by_prior=False)
            rows[f"written order, rest {n}"] = summary(written, written)
            rows[f"prior order, rest {n}"] = summary(delivered(part, n, by_prior=True), written)
        out[split] = {"within_file_correlation": within_correlation(part), "delivered": rows}
        print(f"\n{split}: prior ~ share within files r = {out[split]['within_file_correlation']}")
        print("  delivered set            recall          precision       rules  paired Δ prec.")
        for name, row in rows.items():
            r, p, n, d = row["recall"], row["precision"], row["rules"], row["paired_precision"]
            print(
                f"  {name:<24} {r['mean']:.3f} ± {r['se']:.3f}   "
                f"{p['mean']:.3f} ± {p['se']:.3f}   {n['mean']:4.1f}  "
                f"{d['diff']:+.3f} ± {d['se']:.3f}"
            )
    out["load_average"]["end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
