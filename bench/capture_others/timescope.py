"""Does a message's time scope tell lasting rules from one-off steering? Dev parts only.

    .venv/bin/python bench/capture_others/timescope.py                # cues, variants, CV
    .venv/bin/python bench/capture_others/timescope.py --show dev2    # dev2's candidates, read
    .venv/bin/python bench/capture_others/timescope.py --json results_timescope.json

Reads ``bench/capture/tune.jsonl`` (ours) and the other people's dev parts ``dev.jsonl`` and
``dev2.jsonl``; never the set-aside parts or the project's held-out split.

1. **Per cue**: the shipped detector's proposals on each part, by kind and by the cues of the
   sentence that carried them, true against false positives.
2. **Time-scope features** of the operator's own words (``detector.clean`` first, client tags
   dropped): *standing* markers (always, never, from now on, going forward, in future, every
   time, whenever, by default, in this repo, don't ever, remember, wherever, on purpose, an
   instruction file such as CLAUDE.md), *one-off* markers (this PR / change / file / branch,
   here, now, for now, just, let's, can you, instead), questions, and whether the message is a
   task description (long, several sentences, a list) rather than a reaction.
3. **Variants** that gate the detector's candidates with them (no fitted parameter: scored on
   each part as is), and a logistic score over the features (fitted: grouped 5-fold
   cross-validation by source file, threshold chosen on the training folds for precision
   >= 0.90, applied to the held-out fold).

``results_timescope.json`` was made against the detector before the shipped gates (commit
407b0bb: ``PYTHONPATH`` pointed at an export of it). Run against today's detector, "current"
already carries them and the second pass (without ``we have``) changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import learned
import numpy as np
import numpy.typing as npt
from learned import PARTS, fit, recall_at_precision  # the learned attempt's parts and fit
from score import transcript_for  # the same transcripts as the scorer

from prism_memory.capture import cues, detector
from prism_memory.capture.detector import Detection, clean, detect
from prism_memory.capture.transcript import read_lines

HERE = Path(__file__).resolve().parent
SEED = 20261206
FOLDS = 5
Array = npt.NDArray[np.float64]


# Client-made text inside a user entry: IDE context tags and a blocked hook's message.
_CLIENT_TAG = re.compile(r"<(ide_[a-z_]+|task-notification)>.*?</\1>", re.S)
_HOOK_STOP = re.compile(r"^\s*operation stopped by hook:", re.I)
# A standing rule: the instruction outlives this change.
STANDING = re.compile(
    r"\b(always|never(?! mind)|from now on|going forward|in (the )?future|next time|"
    r"every time|each time|whenever|wherever|by default|any ?more|don't ever|do not ever|"
    r"at all times|as a rule|in general|generally|on purpose|explicitly|"
    r"in (this|our|the) (repo|repository|project|codebase)|"
    r"remember|keep in mind|have in mind|"
    r"claude\.md|agents\.md|memory file)\b"
)
# A one-off: the instruction is about this change, this moment, this object.
ONE_OFF = re.compile(
    r"\b(this (pr|change|file|branch|commit|function|test|one|time|session|issue|part)|"
    r"these (changes|files|tests)|that (change|file|one)|here|now|for now|just|let's|lets|"
    r"can you|could you|can we|please|instead|again|yet|first|then|\w+\.(go|py|ts|js|md|json|sh)|"
    r"line \d+|#\d+|option \w)\b"
)
# The narrower one-off markers, read in the sentence that carried the proposal.
CARRIER_ONE_OFF = re.compile(
    r"\b(this (pr|change|file|branch|commit|function|test|session|issue|part)|these changes|"
    r"now|for now|let's|lets|can you|could you|can we|how about|line \d+|#\d+|option \w|"
    r"\w+\.(go|py|ts|js|json|sh|yaml|toml))\b"
)
# A request to write a lesson into the agent's instruction file: lasting by intent.
PERSIST = re.compile(
    r"\b(add|update|put|include|write|document|note|record)\b[^.?!\n]{0,60}"
    r"\b(claude|agents)\.md\b|\b(claude|agents)\.md\b[^.?!\n]{0,80}\bagain\b"
)
_ADDRESSED = re.compile(
    r"\b(you|your|we|our|us|claude|agents?|let's|i want|i'd like|"
    r"in (this|our|the) (repo|repository|project|codebase))\b|^(please )?(remember|keep in mind)\b"
)
# The markers that put an instruction beyond this change on their own (not always/never,
# which operators also use to specify what the program does).
STRONG = re.compile(
    r"\b(from now on|going forward|in (the )?future|next time|every time|whenever|wherever|"
    r"remember (to|when|that)|keep in mind|have in mind)\b"
)
_LIST = re.compile(r"^\s*(\d+[.)]|[-*+]|[a-z]\))\s", re.M)
_PASTE = re.compile(r"\b(high|medium|low) severity\b|^\s*[+-]\s{2,}|=== ", re.I | re.M)


@dataclass(frozen=True)
class Scope:
    """What a message's own words say about how long it should hold."""

    standing: int  # standing markers in sentences that state something
    one_off: int  # one-off markers anywhere in the operator's words
    question: bool  # it asks (a sentence ends with '?')
    task: bool  # a task description: long, several sentences or a list
    pasted: bool  # review-bot output, diff or log pasted in
    client: bool  # only client-made text (a blocked hook's message)
    chars: int
    strong: bool  # a stating sentence addressed to the agent or team with a strong marker
    persist: bool  # asks to write something into CLAUDE.md / AGENTS.md


def operator_words(text: str) -> str:
    return clean(_CLIENT_TAG.sub(" ", text))


def scope_of(text: str) -> Scope:
    words = operator_words(text)
    sentences = detector._sentences(words)
    stating = [s for s in sentences if detector._states_something(s)]
    low = words.lower().replace("’", "'")
    # a standing marker counts where the sentence addresses the agent or the team, not where
    # it describes the program ("the function always returns ..." is a code specification)
    standing = sum(
        len(STANDING.findall(s.low))
        for s in stating
        if "imperative" in s.cues or _ADDRESSED.search(s.low)
    )
    return Scope(
        standing=standing,
        one_off=len(ONE_OFF.findall(low)),
        question=any("question" in s.cues for s in sentences),
        task=len(words) > 280 or len(sentences) > 3 or bool(_LIST.search(words)),
        pasted=bool(_PASTE.search(text)),
        client=bool(_HOOK_STOP.match(text)),
        chars=len(words.strip()),
        persist=bool(PERSIST.search(low)),
        strong=any(
            STRONG.search(s.low) and ("imperative" in s.cues or _ADDRESSED.search(s.low))
            for s in stating
        ),
    )


def carrier_one_off(found: Detection) -> bool:
    low = found.subject.lower().replace("’", "'")
    return bool(CARRIER_ONE_OFF.search(low)) and not STANDING.search(low)


# ---------------------------------------------------------------- variants (no fitted parameter)


def v_current(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    return found is not None


def v_client(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """Client-made and pasted text proposes nothing."""
    return found is not None and not sc.client and not sc.pasted


def v_reaction(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """...and a task description proposes only with a standing marker."""
    return v_client(found, sc, after_action) and (not sc.task or sc.standing > 0)


def v_scope(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """...and one-off wording outweighing standing wording vetoes."""
    return v_reaction(found, sc, after_action) and sc.standing >= min(sc.one_off, 1)


def v_standing(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """Only candidates with a standing marker."""
    return v_client(found, sc, after_action) and sc.standing > 0


def v_carrier(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """reaction, and a carrier sentence with a one-off marker and no standing one vetoes."""
    return v_reaction(found, sc, after_action) and not (found and carrier_one_off(found))


def v_persist(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """reaction, plus requests to write into the instruction file."""
    return v_reaction(found, sc, after_action) or (sc.persist and not sc.client)


def v_carrier_persist(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    return v_carrier(found, sc, after_action) or (sc.persist and not sc.client)


def v_persist_strong(found: Detection | None, sc: Scope, after_action: bool) -> bool:
    """persist, plus stating sentences addressed to the agent with a strong standing marker."""
    return v_persist(found, sc, after_action) or (sc.strong and not sc.client and not sc.pasted)


VARIANTS = {
    "current": v_current,
    "client": v_client,
    "reaction": v_reaction,
    "scope": v_scope,
    "standing": v_standing,
    "carrier": v_carrier,
    "persist": v_persist,
    "carrier+persist": v_carrier_persist,
    "persist+strong": v_persist_strong,
}

# ---------------------------------------------------------------- the fitted score

KINDS = ("correction", "feedback", "preference", "convention", "behavioral_rule")


def features(found: Detection | None, sc: Scope, after_action: bool) -> list[float]:
    return [
        float(found is not None),
        *(float(found is not None and found.kind.value == k) for k in KINDS),
        min(sc.standing, 3) / 3,
        min(sc.one_off, 5) / 5,
        float(sc.question),
        float(sc.task),
        float(sc.pasted or sc.client),
        float(after_action),
        float(np.log1p(sc.chars)) / 6,
        float(sc.persist),
        float(sc.strong),
        float(found is not None and carrier_one_off(found)),
    ]


def threshold_for(score: Array, y: Array, floor: float) -> float:
    """The lowest threshold whose precision on these items is still >= floor (else +inf)."""
    best = float("inf")
    tp = fp = 0
    for i in np.argsort(-score):
        tp, fp = tp + int(y[i]), fp + int(not y[i])
        if tp / (tp + fp) >= floor:
            best = float(score[i])
    return best


def cross_validated(
    x: Array, y: Array, groups: list[str], trained: Array, floor: float
) -> tuple[Array, Array]:
    """Out-of-fold scores and decisions; each fold's threshold comes from its training folds."""
    names = sorted(set(groups))
    np.random.RandomState(SEED).shuffle(names)
    fold_of = {g: i % FOLDS for i, g in enumerate(names)}
    fold = np.array([fold_of[g] for g in groups])
    score, decide = np.zeros(len(y)), np.zeros(len(y), dtype=bool)
    for i in range(FOLDS):
        train, test = (fold != i) & trained, fold == i
        mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
        w, b = fit((x[train] - mu) / sd, y[train], 3.0)
        in_train = ((x[train] - mu) / sd) @ w + b
        cut = threshold_for(in_train, y[train], floor)
        score[test] = ((x[test] - mu) / sd) @ w + b
        decide[test] = score[test] >= cut
    return score, decide


# ---------------------------------------------------------------- running it


def possession_dropped() -> None:
    """The convention cue without ``we have``: possession states how the work is now."""
    cues.RAW["convention"] = cues.RAW["convention"].replace("|work|have|tag|", "|work|tag|")
    cues.compiled.cache_clear()


def load() -> list[dict[str, Any]]:
    """``learned.load``'s items, each with the detector's finding and its time scope."""
    items = learned.load()
    for item in items:
        messages = read_lines([json.dumps(e) for e in transcript_for(item)])
        item["_found"] = detect(messages[0].text, messages[0].after_action) if messages else None
        item["_scope"] = scope_of(item["text"])
    return items


def figures(decided: list[bool], items: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(1 for d, it in zip(decided, items, strict=True) if d and it["lasting"])
    fp = sum(1 for d, it in zip(decided, items, strict=True) if d and not it["lasting"])
    fn = sum(1 for d, it in zip(decided, items, strict=True) if not d and it["lasting"])
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
        "tp": tp,
        "fp": fp,
        "missed": fn,
    }


def per_cue(items: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """For each kind and carrier cue of the shipped detector's proposals: tp and fp."""
    table: dict[str, Counter[str]] = {}
    for it in items:
        found = it["_found"]
        if found is None:
            continue
        verdict = "tp" if it["lasting"] else "fp"
        for key in (f"kind:{found.kind.value}", *(f"cue:{c}" for c in found.cues)):
            table.setdefault(key, Counter())[verdict] += 1
    return {k: {"tp": v["tp"], "fp": v["fp"]} for k, v in sorted(table.items())}


def variants(items: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for name, gate in VARIANTS.items():
        table[name] = {}
        line = f"  {name:15}"
        for part in PARTS:
            rows = [it for it in items if it["part"] == part]
            decided = [gate(it["_found"], it["_scope"], it["after_action"]) for it in rows]
            f = figures(decided, rows)
            table[name][part] = f
            line += f"  {part} {f['precision']:.3f}/{f['recall']:.3f} "
            line += f"({f['tp']}/{f['fp']}/{f['missed']})"
        print(line)
    return table


def selected_by_cv(shipped: list[dict[str, Any]], dropped: list[dict[str, Any]]) -> dict[str, Any]:
    """Each fold's variant (gate x cue set) is the one with the best F1 on the other folds of
    the other people's dev parts; its decisions on the held-out fold are pooled."""
    others = [i for i, it in enumerate(shipped) if it["part"] != "tune"]
    names = sorted({shipped[i]["group"] for i in others})
    np.random.RandomState(SEED).shuffle(names)
    fold_of = {g: k % FOLDS for k, g in enumerate(names)}
    choices = [(cue_set, gate) for cue_set in ("shipped", "dropped") for gate in VARIANTS]
    decided: dict[int, bool] = {}
    picked = []
    for k in range(FOLDS):
        train = [i for i in others if fold_of[shipped[i]["group"]] != k]
        test = [i for i in others if fold_of[shipped[i]["group"]] == k]

        def f1(choice: tuple[str, str], rows: list[int]) -> float:
            pool = shipped if choice[0] == "shipped" else dropped
            gate = VARIANTS[choice[1]]
            hits = [
                gate(pool[i]["_found"], pool[i]["_scope"], pool[i]["after_action"]) for i in rows
            ]
            tp = sum(1 for h, i in zip(hits, rows, strict=True) if h and pool[i]["lasting"])
            return 2 * tp / max(1, sum(hits) + sum(1 for i in rows if pool[i]["lasting"]))

        best = max(choices, key=lambda c: f1(c, train))
        picked.append(f"{best[1]} ({best[0]} cues)")
        pool = shipped if best[0] == "shipped" else dropped
        gate = VARIANTS[best[1]]
        for i in test:
            decided[i] = gate(pool[i]["_found"], pool[i]["_scope"], pool[i]["after_action"])
    result: dict[str, Any] = {"picked_per_fold": picked}
    for part in ("dev", "dev2"):
        rows = [i for i in others if shipped[i]["part"] == part]
        f = figures([decided[i] for i in rows], [shipped[i] for i in rows])
        result[part] = f
        print(
            f"  {part:5} P {f['precision']:.3f} R {f['recall']:.3f} "
            f"({f['tp']}/{f['fp']}/{f['missed']})"
        )
    print(f"  picked: {', '.join(picked)}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--show", choices=("dev", "dev2"), help="print a dev part's items")
    args = parser.parse_args()
    items = load()
    out: dict[str, Any] = {"per_cue": {}, "variants": {}, "fitted": {}, "selected": {}}
    for part in PARTS:
        rows = [it for it in items if it["part"] == part]
        out["per_cue"][part] = per_cue(rows)
        print(f"\n{part}: the shipped detector's proposals, by kind and carrier cue (tp / fp)")
        for key, c in out["per_cue"][part].items():
            print(f"  {key:22} {c['tp']:3} / {c['fp']:3}")
    print("\nvariants (no fitted parameter), precision / recall (tp / fp / missed)")
    out["variants"]["shipped cues"] = variants(items)
    shipped = items
    possession_dropped()
    items = load()
    print("the same, with the convention cue's 'we have' dropped")
    out["variants"]["without 'we have'"] = variants(items)
    print("\nchoosing the variant by grouped 5-fold CV (best F1 on the training folds)")
    out["selected"] = selected_by_cv(shipped, items)
    x = np.array([features(it["_found"], it["_scope"], it["after_action"]) for it in items])
    y = np.array([float(it["lasting"]) for it in items])
    part_of = np.array([it["part"] for it in items])
    groups = [it["group"] for it in items]
    print("\nlogistic score over the features, grouped 5-fold CV, threshold for P >= 0.90")
    for train_on in ("others", "all"):
        trained = part_of != "tune" if train_on == "others" else np.ones(len(y), dtype=bool)
        score, decide = cross_validated(x, y, groups, trained, 0.90)
        out["fitted"][train_on] = {}
        for part in PARTS:
            m = part_of == part
            rows = [it for it, keep in zip(items, m, strict=True) if keep]
            f = figures(list(decide[m]), rows)
            f["recall_at_precision_0.90"] = round(recall_at_precision(score[m], y[m], 0.90), 3)
            out["fitted"][train_on][part] = f
            print(
                f"  trained on {train_on:6} {part:5} P {f['precision']:.3f} R {f['recall']:.3f} "
                f"({f['tp']}/{f['fp']}/{f['missed']})  best recall at P>=0.90 "
                f"{f['recall_at_precision_0.90']:.3f}"
            )
    if args.show:
        for it in items:
            if it["part"] != args.show:
                continue
            found, sc = it["_found"], it["_scope"]
            if found is None and not it["lasting"]:
                continue
            marks = {n: g(found, sc, it["after_action"]) for n, g in VARIANTS.items()}
            print(
                f"{'L' if it['lasting'] else '-'} {found.kind.value if found else 'none':15} "
                f"{''.join('x' if marks[n] else '.' for n in VARIANTS)} "
                f"st{sc.standing} oo{sc.one_off} q{int(sc.question)} t{int(sc.task)} "
                f"{it['id']} {it['text'][:150]!r}"
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
