"""1M memories over 100 projects of one tenant (10k each), recall in one project: Prism only.

The peers' local stores cannot hold this here in reasonable time (mem0's Qdrant local
mode and LangGraph's InMemoryStore scan in Python; see the 100k figures).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import common
import speed_fixtures as fx
from peers import SwitchEmbedder

PROJECTS = 100
PER_PROJECT = 10_000


def million(table: Any, real: Any, repeats: int, queries: list[str]) -> dict[str, Any]:
    from prism_system import build, context, settings_for

    work = Path(tempfile.mkdtemp(prefix="bench-million-"))
    switch = SwitchEmbedder(table)
    svc = build(settings_for(work / "prism.db", "minilm"), switch)
    started = time.perf_counter()
    for p in range(PROJECTS):
        ctx = context(f"million-{p}")
        matrix = common.synthetic_matrix(PER_PROJECT, seed=p)
        texts = [fx.text_of(p * PER_PROJECT + i) for i in range(PER_PROJECT)]
        fx.prism_load(svc, ctx, p * PER_PROJECT, texts, matrix)
        if p % 10 == 9:
            common.progress(f"million: {(p + 1) * PER_PROJECT} loaded")
    load_s = time.perf_counter() - started
    ctx = context("million-42")
    request = {"top_k": 10, "source_type": "memorule"}
    svc.memory.recall(ctx, {**request, "query": queries[0]})
    no_embed, with_embed = [], []
    for i in range(repeats):
        switch.inner = table
        t = time.perf_counter()
        svc.memory.recall(ctx, {**request, "query": queries[i % len(queries)]})
        no_embed.append(time.perf_counter() - t)
        switch.inner = real
        t = time.perf_counter()
        svc.memory.recall(ctx, {**request, "query": queries[(i + 1) % len(queries)]})
        with_embed.append(time.perf_counter() - t)
    svc.close()
    size = common.dir_size(work)
    return {
        "memories": PROJECTS * PER_PROJECT,
        "projects": PROJECTS,
        "fixture_load_s": round(load_s, 1),
        "recall_no_embed": common.summary_ms(no_embed),
        "recall_with_embed": common.summary_ms(with_embed),
        "disk_bytes_per_1k": round(size * 1000 / (PROJECTS * PER_PROJECT)),
    }
