"""Neighbour smoothing for notes: is a note relevant when the notes written beside it are?

Hypothesis (issue 31, item 4): notes written one after another in a project (a
conversation's turns, an agent's running log) are context for each other, so the answer to
a question often sits in the turn after the one the question's words match. Section
smoothing made a memorule's relevance partly its section's (``studies/section_smoothing.py``);
the analogue for notes, which have no subject heading, is their neighbours in writing order
within the same project.

The study takes the recall window exactly as the product ranked it before neighbour
smoothing shipped (``semantic_recall`` with ``top_k`` 100, the window section smoothing
uses, at the shipped settings with ``PRISM_RANK_NEIGHBOURS=0``; "today" in its results)
on LoCoMo's TUNING HALF only (conversations 26, 30, 41, 42, 43; the held-out half is never
run), and re-scores each note of the window::

    relevance' = (1 − μ)·own + μ·f(relevance of the notes within ±w of it in writing order)

that is ``score' = score + confidence_weight · w_relevance · μ · (f − own)``, as section
smoothing moves a score. ``own`` is the note's hybrid relevance
(``(1 − w_lexical_note)·cosine + w_lexical_note·lexical``), recovered from its unrounded score
and its score's other parts (checked against ``why`` to 1e-5). Writing order is the order the
turns are written (one project per conversation; LoCoMo's notes carry no other context, so
neighbours cross the conversation's session breaks as writing order does). A neighbour
outside the window counts as relevance **0**: getting its own relevance is not cheap in the
product (PostgreSQL scores only what it preselects; the window is what either engine hands
back), so the study measures what could be shipped. ``f`` is ``max`` or ``mean`` over the
(up to 2w) neighbours that exist in the conversation (the note itself is not its own
neighbour). The re-scored window is re-sorted (score rounded to 1e-9, ties keep the
product's order) and its first 50 are the prediction, scored as ``bench/locomo.py`` scores
(``locomo.recall_at``, the shipped evaluator's count).

The grid and the choosing rule, fixed before the grid was run:

- μ ∈ {0.1, 0.2, 0.3, 0.4, 0.5} × w ∈ {1, 2} × f ∈ {max, mean}: 20 cells;
- the pick is the cell with the best recall@5 (all cells have μ ≤ 0.5: a note's own text
  weighs at least as much as its neighbours'); ties go to the smaller μ, then the smaller
  w, then max before mean;
- it is kept (implemented in both engines) only if its recall@5 gain over today's ranking
  (0.609, the same questions at μ 0) is more than 2 paired SEs over the 997 questions;
  otherwise the product is not touched and the negative result is recorded.

μ 0 must reproduce ``bench/locomo.py --half tune`` byte for byte (checked: the run is
rejected otherwise). Memorules are untouched by construction (the study re-scores notes
only and changes no product code: the rule benchmark is not affected).

Also recorded, descriptive only (no choice rests on it): how many evidence turns missed by
today's top 5 sit within ±1 / ±2 turns of a top-5 turn — the ceiling the hypothesis plays for.

``--order`` asks what the pick costs where writing order says nothing, and whether a gate
can keep that cost off while keeping the gain (added after the pick, 2026-12-07). The same
windows, with each conversation's turns given shuffled places (seeds 1 and 2): the notes
are then a bank of separate facts whose neighbours are unrelated. For each, the pick (max,
±2, μ 0.3) with the product's own order test (``domain.neighbours.order_excess``: how much
closer together the window's best 20 notes sit than 20 of its notes drawn at random)
gating it at 0 (no gate), 0.1, 0.15 and 0.2. This part was read before the gate's default
(0.15) was chosen; the held-out half was not run.

``--cost-only`` times what the shipped smoothing costs a recall: the tuning half's first
2,000 turns as one project of 2,000 notes, recalled (top 10, query vectors cached: no
embedding timed) by two services on the one store, neighbour smoothing off
(``rank_neighbours`` 0) and on (the shipped settings), taking turns question by question,
``--rounds`` passes over the questions; SQLite and a throwaway PostgreSQL. It reports each
round's p50 and their median.

    R=bench/results/studies
    python bench/studies/neighbours.py --json-out $R/neighbours.json
    python bench/studies/neighbours.py --cost-only --json-out $R/neighbours_cost.json
    python bench/studies/neighbours.py --order --json-out $R/neighbours_order.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import mean, median
from types import SimpleNamespace
from typing import Any

# bench/ on the path: the shared helpers (lib) and the benchmarks this study drives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lib.common as common
import locomo
from lib.paired import paired
from variants import LocomoTune, load_average

MUS = (0.1, 0.2, 0.3, 0.4, 0.5)
WIDTHS = (1, 2)
FUNCS: dict[str, Callable[[Sequence[float]], float]] = {"max": max, "mean": mean}
WINDOW = 100  # the recall window section smoothing re-ranks (PRISM_RANK_SECTION_WINDOW)
KS = (1, 5, 10)
SE_RULE = 2.0
GATES = (0.0, 0.1, 0.15, 0.2)  # --order: the order test's thresholds (0: no gate)
SHUFFLES = (1, 2)  # --order: seeds of the shuffled places


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--pred-dir", type=Path, default=None, help="keep every cell's PRED.jsonl")
    p.add_argument("--cost-only", action="store_true", help="only time recall off against on")
    p.add_argument(
        "--order", action="store_true", help="the pick with shuffled order and with the gate"
    )
    p.add_argument("--rounds", type=int, default=7, help="--cost-only: passes over the questions")
    p.add_argument("--notes", type=int, default=2000, help="--cost-only: notes in the project")
    return p.parse_args(argv)


@dataclass(frozen=True)
class Entry:
    """One note of a question's recall window, in the product's order."""

    key: str  # the LoCoMo turn id
    position: int  # its place in writing order within the conversation
    score: float  # the product's score, unrounded
    own: float  # its hybrid relevance
    lift: float  # confidence_weight · w_relevance: what one unit of relevance is worth


@dataclass(frozen=True)
class Question:
    sample: str
    qa_index: int
    window: list[Entry]
    turns: int  # the conversation's length, for the neighbours at its ends


def windows(tune: LocomoTune, w_relevance: float, alpha: float) -> list[Question]:
    """Every question's recall window (top ``WINDOW``), as the product ranks it."""
    from lib.prism_system import context

    from prism_memory.domain.contract.recall import validate_recall

    recalls = tune.system.svc.memory.recalls
    out = []
    worst = 0.0
    for sample in tune.samples:
        turns, qa = tune.convs[sample]
        position = {did: i for i, (did, _, _) in enumerate(turns)}
        ctx = context(f"locomo-{sample}")
        for i, q in enumerate(qa):
            request = {"query": str(q["question"]), "top_k": WINDOW, "source_type": "memory"}
            result = recalls.recall(ctx, validate_recall(request))
            entries = []
            for m in result.matches:
                key = tune.system.keys[str(m.memory.id)]
                why = m.why
                lift = why["confidence_weight"] * w_relevance
                rest = why["confidence_weight"] * (
                    why["overlap"] + why["scope_bonus"] + why["prior"]
                )
                own = (m.score - rest) / lift
                shown = (1 - alpha) * why["relevance"] + alpha * why["lexical"]
                worst = max(worst, abs(own - shown))
                entries.append(Entry(key, position[key], m.score, own, lift))
            out.append(Question(sample, i, entries, len(turns)))
    if worst > 1e-5:
        raise SystemExit(f"own relevance and why disagree by {worst}")
    common.progress(f"windows: {len(out)} questions (own vs why: {worst:.1e})")
    return out


def rescore(
    q: Question, mu: float, width: int, func: Callable[[Sequence[float]], float]
) -> list[str]:
    """The question's first ``locomo.K`` turn ids after neighbour smoothing (μ 0: as is)."""
    scores = [e.score for e in q.window]
    if mu > 0.0:
        in_window = {e.position: e.own for e in q.window}
        for j, e in enumerate(q.window):
            around = [
                in_window.get(p, 0.0)
                for p in range(e.position - width, e.position + width + 1)
                if p != e.position and 0 <= p < q.turns
            ]
            if around:
                scores[j] = e.score + e.lift * mu * (func(around) - e.own)
    order = sorted(range(len(scores)), key=lambda j: (-round(scores[j], 9), j))
    return [q.window[j].key for j in order[: locomo.K]]


def excess(q: Question, width: int) -> float:
    """The product's order test on a question's window (``domain.neighbours.order_excess``)."""
    from prism_memory.domain.neighbours import NotePlace, order_excess

    ranked = [SimpleNamespace(applicable=True, memory_id=e.key) for e in q.window]
    places = {e.key: NotePlace("default", e.position) for e in q.window}
    return order_excess(ranked, places, width)  # type: ignore[arg-type]


def shuffled(questions: list[Question], seed: int) -> list[Question]:
    """The windows with each conversation's turns at shuffled places (one draw each)."""
    moved: dict[str, list[int]] = {}
    out = []
    for q in questions:
        if q.sample not in moved:
            moved[q.sample] = list(range(q.turns))
            random.Random(f"{seed}-{q.sample}").shuffle(moved[q.sample])
        at = moved[q.sample]
        out.append(replace(q, window=[replace(e, position=at[e.position]) for e in q.window]))
    return out


def order_study(
    tune: LocomoTune, questions: list[Question], today: Path, work: Path
) -> dict[str, Any]:
    """The pick on ordered and shuffled places, with the order test gating it."""
    mu, width, func = 0.3, 2, FUNCS["max"]
    variants = {"ordered": questions}
    variants.update({f"shuffled {seed}": shuffled(questions, seed) for seed in SHUFFLES})
    out: dict[str, Any] = {}
    for name, qs in variants.items():
        tests = [excess(q, width) for q in qs]
        out[name] = {"order_excess_mean": round(mean(tests), 4), "gates": {}}
        for gate in GATES:
            lines = [
                {
                    "sample": q.sample,
                    "qa_index": q.qa_index,
                    "ranked": rescore(q, mu if gate == 0 or t >= gate else 0.0, width, func),
                }
                for q, t in zip(qs, tests, strict=True)
            ]
            pred = work / f"order-{name.replace(' ', '-')}-{gate}.jsonl"
            pred.write_text("".join(json.dumps(line) + "\n" for line in lines))
            row = cell(tune, pred, today)
            row["smoothed"] = sum(gate == 0 or t >= gate for t in tests)
            out[name]["gates"][str(gate)] = row
            common.progress(f"{name}, gate {gate}: R@5 {row['recall@5']}")
    return out


def predict(questions: list[Question], path: Path, mu: float, width: int, func_name: str) -> Path:
    func = FUNCS[func_name]
    lines = [
        {"sample": q.sample, "qa_index": q.qa_index, "ranked": rescore(q, mu, width, func)}
        for q in questions
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def cell(tune: LocomoTune, pred: Path, base: Path | None) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for k in KS:
        new = tune.recall_at(pred, k)
        row[f"recall@{k}"] = round(mean(new.values()), 4)
        if base is not None:
            row[f"recall@{k} vs today"] = paired(new, tune.recall_at(base, k))
    return row


def near_misses(tune: LocomoTune, questions: list[Question]) -> dict[str, Any]:
    """Evidence turns outside today's top 5, and how many of them are within ±1 / ±2 turns
    of a top-5 turn (descriptive: what neighbours could reach at best)."""
    missed = near1 = near2 = 0
    for q in questions:
        turns, qa = tune.convs[q.sample]
        valid = {did: i for i, (did, _, _) in enumerate(turns)}
        evidence = {
            x for e in qa[q.qa_index].get("evidence", []) for x in re.split(r"[;,\s]+", e) if x
        }
        top = {e.position for e in q.window[:5]}
        for did in evidence & set(valid):
            if valid[did] in top:
                continue
            missed += 1
            gap = min((abs(valid[did] - p) for p in top), default=10**9)
            near1 += gap <= 1
            near2 += gap <= 2
    return {
        "evidence_turns_missed_by_top5": missed,
        "within_1_of_a_top5_turn": near1,
        "within_2_of_a_top5_turn": near2,
    }


def shipped_eval(pred: Path) -> dict[str, float]:
    """The shipped evaluator's headline on ``pred`` (all ten conversations' loader, tune
    half's questions: it scores the questions ``pred`` holds)."""
    largs = locomo.parse_args(["--out", str(pred), "--half", "tune"])
    folder = locomo.data_dir(largs)
    subset = Path(tempfile.mkdtemp(prefix="bench-neighbours-eval-"))
    convs = locomo.evaluator(largs.eval).load(str(folder))
    for sample in locomo.select(sorted(convs), largs):
        (subset / f"{sample}.json").symlink_to(folder / f"{sample}.json")
    cmd = [sys.executable, str(largs.eval), "--data", str(subset), "--pred", str(pred)]
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return {k: report["all"][k] for k in ("n", "recall@1", "recall@5", "recall@10")}


def cost(notes: int, rounds: int) -> dict[str, Any]:
    """Recall p50 with neighbour smoothing off and on, on one store of ``notes`` notes."""
    from lib.prism_system import PrismNotes, context, settings_for

    from prism_memory.domain.contract.recall import validate_recall
    from prism_memory.services.memory_deps import MemoryDeps
    from prism_memory.services.memory_rooms import MemoryRooms

    largs = locomo.parse_args(["--out", "/dev/null", "--half", "tune"])
    convs = locomo.evaluator(largs.eval).load(str(locomo.data_dir(largs)))
    samples = locomo.select(sorted(convs), largs)
    turns = [(did, text, {}) for s in samples for did, text, _ in convs[s][0]][:notes]
    questions = [str(q["question"]) for s in samples for q in convs[s][1]]
    embedder = common.CachedEmbedder(common.make_embedder("minilm"))
    embedder.embed(questions)  # cached before timing: no embedding is timed
    out: dict[str, Any] = {"notes": len(turns), "questions": len(questions), "rounds": rounds}
    out["load_average"] = {"start": load_average()}
    for engine in ("sqlite", "postgres"):
        pg = argparse.Namespace(engine=engine, database_url="")
        with common.postgres_for(pg):
            db = Path(tempfile.mkdtemp(prefix="bench-neighbours-cost-")) / "notes.db"
            system = PrismNotes(db, "minilm", embedder, None, pg.database_url)
            system.add("cost", turns)
            on = system.svc.memory
            off_weights = settings_for(db, "minilm", {"rank_neighbours": 0}).ranking_weights()
            deps = on.deps
            off = MemoryRooms(
                MemoryDeps(deps.store, embedder, deps.memorules, off_weights, deps.preselect_above)
            )
            services = {"off": off, "on": on}
            ctx = context("locomo-cost")
            times: dict[str, list[list[float]]] = {name: [] for name in services}
            for q in questions[:20]:  # warm-up
                for svc in services.values():
                    svc.recalls.recall(ctx, validate_recall({"query": q, "top_k": 10}))
            for r in range(rounds):
                for name in services:
                    times[name].append([])
                for i, q in enumerate(questions):
                    order = list(services) if (r + i) % 2 == 0 else list(reversed(services))
                    request = validate_recall({"query": q, "top_k": 10})
                    for name in order:
                        started = time.perf_counter()
                        services[name].recalls.recall(ctx, request)
                        times[name][-1].append(time.perf_counter() - started)
            system.close()
        row: dict[str, Any] = {}
        for name, per_round in times.items():
            p50s = [common.summary_ms(t)["p50_ms"] for t in per_round]
            row[name] = {
                "p50_ms_median_of_rounds": round(median(p50s), 3),
                "p50_ms_per_round": p50s,
                "all": common.summary_ms([x for t in per_round for x in t]),
            }
        out[engine] = row
        medians = [row[name]["p50_ms_median_of_rounds"] for name in ("off", "on")]
        common.progress(f"{engine}: p50 {medians[0]} -> {medians[1]} ms")
    out["load_average"]["end"] = load_average()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.cost_only:
        result = cost(args.notes, args.rounds)
        print(json.dumps(result, indent=1))
        common.save_report(result, args.json_out, echo=False)
        return result
    work = args.pred_dir or Path(tempfile.mkdtemp(prefix="bench-neighbours-"))
    work.mkdir(parents=True, exist_ok=True)
    started_load = load_average()
    # The windows are ranked as before neighbour smoothing shipped: the study smooths them.
    os.environ["PRISM_RANK_NEIGHBOURS"] = "0"
    tune = LocomoTune.load(work, "bench-neighbours-", lambda store, embedder: None)
    w = tune.system.svc.memory.deps.weights  # the shipped ranking weights
    questions = windows(tune, w.relevance, w.lexical_note)
    # μ 0 is today's ranking: it must be what bench/locomo.py predicts, byte for byte.
    today = predict(questions, work / "today.jsonl", 0.0, 1, "max")
    reference = tune.predict(work / "locomo-py.jsonl")
    if today.read_bytes() != reference.read_bytes():
        raise SystemExit("μ 0 does not reproduce bench/locomo.py's prediction")
    if args.order:
        started = load_average()
        result = {
            "half": "tune",
            "pick": "max/w2/0.3",
            "questions": len(questions),
            "gates": list(GATES),
            "shuffle_seeds": list(SHUFFLES),
            "load_average": {"start": started},
            "today": cell(tune, today, None),
            **order_study(tune, questions, today, work),
        }
        result["load_average"]["end"] = load_average()
        tune.system.close()
        common.save_report(result, args.json_out, echo=False)
        return result
    cells: dict[str, dict[str, Any]] = {}
    for func_name in FUNCS:
        for width in WIDTHS:
            for mu in MUS:
                name = f"{func_name}/w{width}/{mu}"
                pred = predict(
                    questions, work / f"{func_name}-w{width}-{mu}.jsonl", mu, width, func_name
                )
                cells[name] = {"mu": mu, "w": width, "f": func_name, **cell(tune, pred, today)}
                common.progress(f"{name}: R@5 {cells[name]['recall@5']}")
    order = {name: i for i, name in enumerate(FUNCS)}
    pick = max(
        cells,
        key=lambda n: (
            cells[n]["recall@5"],
            -cells[n]["mu"],
            -cells[n]["w"],
            -order[cells[n]["f"]],
        ),
    )
    gain = cells[pick]["recall@5 vs today"]
    kept = gain["diff"] > SE_RULE * gain["se"]
    pick_pred = work / f"{cells[pick]['f']}-w{cells[pick]['w']}-{cells[pick]['mu']}.jsonl"
    result: dict[str, Any] = {
        "half": "tune",
        "conversations": tune.samples,
        "questions": len(questions),
        "window": WINDOW,
        "outside_window": "relevance 0",
        "rule": (
            "best recall@5 over mu 0.1-0.5 x w 1,2 x f max,mean (ties: smaller mu, smaller w, "
            f"max); kept only if its recall@5 gain over today is > {SE_RULE} paired SEs"
        ),
        "load_average": {"start": started_load},
        "today": {**cell(tune, today, None), "shipped_evaluator": shipped_eval(today)},
        "mu0_is_locomo_py_byte_for_byte": True,
        "grid": cells,
        "pick": pick,
        "pick_shipped_evaluator": shipped_eval(pick_pred),
        "kept": kept,
        "near_misses": near_misses(tune, questions),
    }
    result["load_average"]["end"] = load_average()
    tune.system.close()
    print(
        json.dumps(
            {k: result[k] for k in ("today", "pick", "kept")} | {"cell": cells[pick]}, indent=1
        )
    )
    common.save_report(result, args.json_out, echo=False)
    return result


if __name__ == "__main__":
    main()
