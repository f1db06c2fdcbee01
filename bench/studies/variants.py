"""What the ranking-variant studies share (``feedback.py``, ``subject_field.py``,
``first_sentence_once.py``): the load average they record, a topic's mean nDCG@10, and the
LoCoMo tuning half loaded into a Prism store whose ``recall`` a script has hooked, with one
PRED.jsonl per cell."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lib.common as common


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def topic_mean(queries: list[dict[str, Any]], per_q: dict[str, Any], topic: str) -> float:
    """nDCG@10 over the queries of one topic (the vague tasks: ``general-guidelines``)."""
    vals = [per_q[q["qid"]]["ndcg@10"] for q in queries if q.get("topic") == topic]
    return round(sum(vals) / len(vals), 4)


@dataclass
class LocomoTune:
    """The LoCoMo tuning half, every turn a note in ``system`` (``locomo.make_system``)."""

    system: Any
    convs: dict[str, Any]
    samples: list[str]
    installed: Any = None  # what the install hook returned

    @classmethod
    def load(cls, out_dir: Path, prefix: str, install: Callable[[Any, Any], Any]) -> LocomoTune:
        """Build the store, call ``install(store, embedder)`` (a script's recall hook) before
        any turn is written, then write the turns."""
        import locomo

        largs = locomo.parse_args(["--out", str(out_dir / "cell.jsonl"), "--half", "tune"])
        convs = locomo.evaluator(largs.eval).load(str(locomo.data_dir(largs)))
        samples = locomo.select(sorted(convs), largs)
        embedder = common.CachedEmbedder(common.make_embedder("minilm"))
        system = locomo.make_system(largs, embedder, Path(tempfile.mkdtemp(prefix=prefix)))
        installed = install(system.svc.store, embedder)
        for sample in samples:
            turns, _ = convs[sample]
            system.add(sample, [(did, text, {"sample": sample}) for did, text, _ in turns])
        return cls(system, convs, samples, installed)

    def predict(self, path: Path) -> Path:
        """Every question of the half recalled as the store ranks now, written to ``path``."""
        import locomo

        lines = []
        for sample in self.samples:
            for i, q in enumerate(self.convs[sample][1]):
                ranked = self.system.search(sample, str(q["question"]), locomo.K)
                lines.append({"sample": sample, "qa_index": i, "ranked": ranked})
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    def recall_at(self, pred: Path, k: int) -> dict[str, float]:
        import locomo

        per_q: dict[str, float] = locomo.recall_at(self.convs, self.samples, pred, k)
        return per_q


def ranked_page(cands: Any, req: Any, preselect: int, lexical: Any) -> Any:
    """The product's ``rank`` over ``cands`` for ``req``, with a variant's lexical hits (and
    whatever else the caller swapped into ``cands``), as the store's ``RankedPage``."""
    from prism_memory.domain.ranking import rank
    from prism_memory.trigraph.port import RankedPage

    w = req.weights
    found = rank(
        cands, req.context, req.vector, w, req.top_k, req.include_inapplicable, preselect,
        lexical=lexical,
    )  # fmt: skip
    return RankedPage(found, len(cands))
