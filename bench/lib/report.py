"""latest.md and the PNG plots from the results that ``run.py`` gathered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import many_report

BM25_RULES_NDCG = 0.155  # best BM25 reference on the rule benchmark (shared/bench/README.md)
BM25_LOCOMO_R5 = 0.512  # BM25 reference evidence recall@5 (bm25_reference_results.json)


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_f(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def plots(results: dict[str, Any], out_dir: Path) -> list[str]:
    """Latency against store size (log-log), one line per system. Paths written."""
    speed = results.get("speed") or {}
    sizes = speed.get("sizes") or {}
    if not sizes:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    systems = sorted({name for row in sizes.values() for name in row})
    written = []
    panels = [
        ("recall_no_embed", "recall, query vector given"),
        ("recall_with_embed", "recall, query embedded (MiniLM)"),
        ("write_one", "write one memorule (MiniLM)"),
    ]
    for metric, title in panels:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, stat in zip(axes, ("p50_ms", "p99_ms"), strict=True):
            for name in systems:
                xs = [int(n) for n in sizes if name in sizes[n]]
                ys = [sizes[str(n)][name][metric][stat] for n in xs]
                ax.plot(xs, ys, marker="o", label=name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("memories in the project")
            ax.set_ylabel(f"{stat.replace('_ms', '')} latency (ms)")
            ax.set_title(f"{title}: {stat.split('_')[0]}")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(str(path))
    return written


def _rules_rows(rules: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, run in (rules.get("runs") or {}).items():
        if not run:
            rows.append([name, "failed", None, None, None, None, None, None])
            continue
        g = run["scorer"]["groups"]["all"]
        rows.append(
            [
                name,
                g["recall@5"],
                g["ndcg@10"],
                g["leakage@10"],
                g["hit@5"],
                g["mrr@10"],
                run["query_latency"]["p50_ms"],
                run["load_seconds"],
            ]
        )
    return rows


def _n_rules(rules: dict[str, Any]) -> Any:
    run = (rules.get("runs") or {}).get("prism") or {}
    return run.get("n_rules_loaded")


def _locomo_rows(locomo: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, run in (locomo.get("runs") or {}).items():
        if not run:
            rows.append([name, "failed", None, None, None, None, None])
            continue
        a = run["eval"]["all"]
        rows.append(
            [
                name,
                a["recall@1"],
                a["recall@5"],
                a["recall@10"],
                a["recall@50"],
                run["query_latency"]["p50_ms"],
                run["add_seconds"],
            ]
        )
    return rows


def _speed_rows(speed: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for size, row in (speed.get("sizes") or {}).items():
        for name, r in row.items():
            rows.append(
                [
                    int(size),
                    name,
                    r["recall_no_embed"]["p50_ms"],
                    r["recall_no_embed"]["p99_ms"],
                    r.get("ratio_to_prism_no_embed_p50"),
                    r["recall_with_embed"]["p50_ms"],
                    r["recall_with_embed"]["p99_ms"],
                    r["write_one"]["p50_ms"],
                    r["write_one"]["p99_ms"],
                    (r.get("recall_after_write") or {}).get("p50_ms"),
                    r["rss_growth_mb"],
                    None if r["disk_bytes_per_1k"] is None else r["disk_bytes_per_1k"] / 1e6,
                    r["recall_no_embed"]["n"],
                ]
            )
    return rows


def bars(results: dict[str, Any]) -> list[list[Any]]:
    """Each bar the benchmarks were set, where we stand, and whether it holds."""
    out: list[list[Any]] = []
    speed = results.get("speed") or {}
    big = (speed.get("sizes") or {}).get("100000") or {}
    prism = big.get("prism")
    if prism:
        p = prism["recall_no_embed"]["p50_ms"]
        out.append(["recall p50 @100k, no query embedding", "≤ 5 ms", p, p <= 5])
        q = prism["recall_with_embed"]["p50_ms"]
        out.append(["recall p50 @100k, with query embedding", "≤ 25 ms", q, q <= 25])
        sizes = speed.get("sizes") or {}
        with_mem0 = [n for n in sizes if "mem0" in sizes[n] and "prism" in sizes[n]]
        if with_mem0:
            n = max(with_mem0, key=int)
            ratio = (
                sizes[n]["mem0"]["recall_no_embed"]["p50_ms"]
                / sizes[n]["prism"]["recall_no_embed"]["p50_ms"]
            )
            label = f"mem0 / Prism recall p50 @{int(n) // 1000}k"
            if n != "100000":
                label += " (mem0's largest store here)"
            out.append([label, "≥ 5×", round(ratio, 1), ratio >= 5])
        for lg in ("langgraph-memory", "langgraph-sqlite"):
            if lg in big:
                other = big[lg]["recall_no_embed"]["p50_ms"]
                out.append(
                    [f"{lg} / Prism recall p50 @100k", "> 1×", round(other / p, 2), other > p]
                )
    engines = (results.get("million") or {}).get("engines") or {}
    for engine, run in engines.items():
        if run and run.get("recall_no_embed"):
            p = run["recall_no_embed"]["p50_ms"]
            q = run["recall_with_embed"]["p50_ms"]
            where = f"@1M over 100 projects ({engine}; the 100k bar applied)"
            out.append([f"recall p50 {where}, no query embedding", "≤ 5 ms", p, p <= 5])
            out.append([f"recall p50 {where}, with query embedding", "≤ 25 ms", q, q <= 25])
    bulk = (speed.get("bulk_import") or {}).get("prism.remember_many")
    if bulk:
        out.append(
            [
                "bulk import, real model (remember_many)",
                "≥ 200/s",
                bulk["per_s"],
                bulk["per_s"] >= 200,
            ]
        )
    small = (speed.get("sizes") or {}).get("1000", {}).get("prism")
    if small:
        w = small["write_one"]["p50_ms"]
        out.append(["write p50 (one memorule, real model, 1k store)", "≤ 30 ms", w, w <= 30])
    rules = results.get("rules") or {}
    runs = rules.get("runs") or {}
    for name in ("prism", "prism (dev-tuned)"):
        run = runs.get(name)
        if run:
            g = run["scorer"]["groups"]["all"]
            peers_best = max(
                [
                    r["scorer"]["groups"]["all"]["ndcg@10"]
                    for n, r in runs.items()
                    if r and not n.startswith("prism")
                ]
                or [0.0]
            )
            ok = (
                g["ndcg@10"] >= 2 * BM25_RULES_NDCG
                and g["leakage@10"] == 0
                and g["ndcg@10"] > peers_best
            )
            out.append(
                [f"rules dev nDCG@10 ({name}), leakage 0, > peers", "≥ 0.310", g["ndcg@10"], ok]
            )
    loc = ((results.get("locomo") or {}).get("runs") or {}).get("prism")
    if loc:
        r5 = loc["eval"]["all"]["recall@5"]
        peers_r5 = [
            r["eval"]["all"]["recall@5"]
            for n, r in results["locomo"]["runs"].items()
            if r and n != "prism"
        ]
        ok = r5 > BM25_LOCOMO_R5 and all(r5 > x for x in peers_r5)
        out.append(["LoCoMo evidence recall@5, > peers", "> 0.512", r5, ok])
    return [[a, b, c, "yes" if d else "NO"] for a, b, c, d in out]


def _backend_line(backend: dict[str, Any] | None) -> str:
    if not backend:
        return "- Prism measured: (not recorded)"
    dirty = backend.get("uncommitted_backend_changes")
    where = (
        f"this repository at {backend['repo_commit']}"
        + (" with uncommitted backend changes" if dirty else "")
        if dirty is not None
        else f"`{backend['path']}` (PRISM_BACKEND; repository at {backend['repo_commit']})"
    )
    return f"- Prism measured: {where}"


def _defaults_note(tuned: dict[str, float]) -> str:
    """How the tuned weights compare with the product's defaults (read from its settings)."""
    from prism_memory.settings import Settings

    defaults = {k: Settings.model_fields[k].default for k in tuned}
    lexical = Settings.model_fields["rank_lexical"].default
    said = f"the product's defaults are `{json.dumps(defaults)}`"
    if defaults == tuned:
        said += " (the tuned ones adopted): the two Prism rows run the same weights"
    return (
        said + f"; lexical share `rank_lexical` {lexical}, chosen on this dev split and "
        "half of LoCoMo (bench/README.md, Hybrid relevance)."
    )


def _vectors_note(kind: str) -> str:
    if kind == "minilm-like":
        return (
            "Vectors (`--vectors minilm-like`): drawn from a Gaussian with the mean and "
            "covariance of MiniLM's embeddings of 2,000 shipped rules, so they have a text "
            "model's spectrum, which Prism's exact sketch pruning relies on (random vectors "
            "have none: Prism then scores every row). They lack real data's clusters, so a "
            "query's neighbours are farther than in real data and pruning skips fewer rows "
            "than it would there. Peers scan exactly and cost the same either way."
        )
    return "Vectors (`--vectors random`): random unit vectors (no structure to exploit)."


def _speed_settings(st: dict[str, Any], mode: Any) -> str:
    """What the speed run was asked to do (the quick run measures less: say so)."""
    if not st:
        return ""
    return (
        f"Run settings ({mode}): sizes {st.get('sizes')}; per system and size "
        f"{st.get('repeats')} recalls, {st.get('embed_repeats')} with embedding, "
        f"{st.get('write_repeats')} writes; caps {st.get('max_size') or 'none'}; a slow "
        f"system stops a phase after {st.get('budget_s', 60.0)} s (and >= 5 samples: see *n*); "
        f"bulk import of {st.get('bulk')} items; {st.get('mcp_repeats')} MCP cold start(s)."
    )


def _million_rows(million: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, r in million.get("engines", {}).items():
        rows.append(
            [
                name,
                r["memories"],
                f"{r['projects']} × {r['per_project']}",
                r.get("candidates"),
                r["load_s"],
                (r.get("storage_port") or {}).get("per_s"),
                (r.get("remember_many") or {}).get("per_s"),
                r["recall_no_embed"]["p50_ms"],
                r["recall_no_embed"]["p99_ms"],
                r["recall_with_embed"]["p50_ms"],
                r["recall_with_embed"]["p99_ms"],
                r["cold_first_recall"]["p50_ms"],
                r["cold_process_rss_mb"],
                r["peak_rss_mb"],
                r.get("postgres_server_pss_mb"),
                r["disk_mb"],
                round(r["disk_bytes_per_1k"] / 2**20, 3),
                f"{r['loadavg_start'][0]:.1f} → {r['loadavg_end'][0]:.1f}",
            ]
        )
    return rows


def _peers_at_100k(results: dict[str, Any]) -> str:
    """Why the peers are not in the 1M table, from this report's own 100k figures."""
    sizes = (results.get("speed") or {}).get("sizes") or {}
    row = sizes.get("100000") or {}
    said = []
    for name, r in row.items():
        if name != "prism":
            said.append(
                f"{name} recall p50 {_f(r['recall_no_embed']['p50_ms'], 0)} ms at 100k in one "
                f"namespace (fixture load {r['fixture_load_s']} s)"
            )
    mem0 = (results.get("speed") or {}).get("settings", {}).get("max_size", "")
    if "mem0" in mem0:
        said.append(f"mem0 stops at {mem0} (its local Qdrant loads ~60 points/s: ~4.6 h for 1M)")
    return "; ".join(said)


def _setting(name: str) -> Any:
    """A product setting's default, read from the backend being measured."""
    from prism_memory.settings import Settings

    return Settings.model_fields[name].default


def _real_section(results: dict[str, Any]) -> list[str]:
    real = results.get("real")
    if not real:
        return []
    rows = [
        [
            int(size),
            r["recall_no_embed_pruned"]["p50_ms"],
            r["recall_no_embed_pruned"]["p99_ms"],
            r["recall_no_embed_exact"]["p50_ms"],
            r["recall_no_embed_exact"]["p99_ms"],
            r["identical_results"],
        ]
        for size, r in real["sizes"].items()
    ]
    head = ["memories", "pruned p50 ms", "p99", "every row p50 ms", "p99", "same top-10"]
    return [
        "",
        "## Prism on real embeddings (`real_vectors.py`)",
        "",
        f"One project of real MiniLM embeddings: {real['corpus']:,} distinct texts of the "
        "shipped data (every rule, every sentence of the rules' bodies, every LoCoMo turn), "
        f"sampled to each size; {real['queries']} real queries (dev tasks and LoCoMo "
        "questions), query vectors precomputed (no embedding in the timing). *pruned*: the "
        f"default (`PRISM_RECALL_PRESELECT_ABOVE` {_setting('recall_preselect_above')}: "
        "rows the sketch proves out of reach "
        "are skipped); *every row*: `PRISM_RECALL_PRESELECT_ABOVE=0`. The two alternate on "
        "one database; *same top-10* counts queries whose ids matched.",
        "",
        _table(head, rows),
    ]


def _million_section(results: dict[str, Any]) -> list[str]:
    million = results.get("million")
    head = ["", "## 1M memories over 100 projects (one tenant; recall in one project)", ""]
    if not million:
        return [*head, "Not run (`make bench BENCH_ARGS=--million`, or `run.py --million`)."]
    skipped = million.get("skipped") or {}
    return (
        head
        + [
            _table(
                [
                    "engine",
                    "memories",
                    "projects × each",
                    "candidates",
                    "load s",
                    "storage port /s",
                    "remember_many /s",
                    "recall p50 ms",
                    "p99",
                    "recall+embed p50",
                    "p99",
                    "cold first recall ms",
                    "cold process RSS MB",
                    "loader peak RSS MB",
                    "PG server MB",
                    "disk MB",
                    "disk MB/1k",
                    "load avg",
                ],
                _million_rows(million),
            ),
            "",
            "- load: 99 projects through the storage port (complete memorules: memory, state, "
            "audit event, vector; 1,000 per transaction), the last through "
            "`BulkService.remember_many` (validation, near-duplicate scan against its "
            "project, 1,000 per call): *remember_many /s* is the service's bulk rate into a "
            "10k project of a 990k store. Synthetic 384-d vectors labelled as MiniLM's: no "
            "embedding in the load.",
            "- recall: warm, top-10 memorules in the middle project (*candidates*: what it sees "
            "of the 1M); *+embed*: MiniLM embeds the query in the call. *cold first recall*: a "
            "new process's first recall (median of 3; OS page cache warm), *cold process RSS*: "
            "that process after it. *PG server MB*: PSS summed over the server's processes.",
            "- peers: not run at 1M. From this report's 100k run: "
            + (_peers_at_100k(results) or "(no 100k speed figures in this report)")
            + ".",
        ]
        + ([f"- skipped: {json.dumps(skipped)}"] if skipped else [])
    )


def markdown(results: dict[str, Any], plot_paths: list[str]) -> str:
    m = results["machine"]
    parts = [
        "# Prism Memory benchmarks — latest run",
        "",
        f"- date: {results['date']} · mode: **{results['mode']}** · "
        f"elapsed: {results.get('elapsed_s')} s",
        f"- machine: {m['cpu']}, {m['cores']} cores (shared with other jobs: timings are "
        f"noisy; systems alternate within one process), {m['memory_gb']} GB, {m['os']}",
        f"- Python {m['python']}, SQLite {m['sqlite']}, load average at start {m['loadavg']}"
        + (f", at end {results['loadavg_end']}" if results.get("loadavg_end") else ""),
        "- versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v),
        _backend_line(m.get("backend")),
        f"- peers run: {', '.join(results['peers']) or 'none'}; skipped: "
        f"{json.dumps(results['peers_skipped']) if results['peers_skipped'] else 'none'}",
        f"- logs and prediction files: `{results['logs']}`",
        f"- steps run now: {', '.join(results.get('steps_run_now', []))}"
        + (
            (
                "; sections from earlier runs: "
                + ", ".join(
                    f"{k} {d}"
                    for k, d in sorted(results["section_dates"].items())
                    if d != results["date"]
                )
            )
            if results.get("section_dates")
            else f"; the other sections are from the run of {results['reused_from']}"
            if results.get("reused_from")
            else ""
        ),
    ]
    if results.get("step_times"):
        parts.append(
            "- time per step (wall / CPU s): "
            + ", ".join(f"{t['step']} {t['wall_s']} / {t['cpu_s']}" for t in results["step_times"])
        )
    parts += [
        "",
        "## Bars",
        "",
        _table(["bar", "target", "measured", "met"], bars(results)),
    ]
    rules = results.get("rules")
    if rules:
        parts += [
            "",
            "## Rule benchmark (dev split, 107 queries; scorer: shared score_recall_bench.py)",
            "",
            "Subset of the rules (quick run without a built store): NOT comparable."
            if rules.get("subset")
            else f"All {_n_rules(rules)} rules of rules.jsonl stored as memorules; `context` "
            "records skipped (no ground-truth id is one; memorule recall never returns notes).",
            "",
            _table(
                [
                    "system",
                    "recall@5",
                    "nDCG@10",
                    "leakage@10",
                    "hit@5",
                    "MRR@10",
                    "query p50 ms",
                    "load s",
                ],
                _rules_rows(rules),
            ),
            "",
            f"BM25 references (README): task only nDCG@10 0.021; scope filter + boost 0.155. "
            f"Dev-tuned weights: `{json.dumps(rules.get('tuned_weights'))}` (grid over "
            "PRISM_RANK_OVERLAP x PRISM_RANK_SCOPE on the dev split); "
            + _defaults_note(rules.get("tuned_weights") or {})
            + " Quality runs share one vector cache, so *load s* excludes embedding "
            "(Prism's store is built once and cached); query latency includes a cached "
            "query-vector lookup only.",
        ]
    locomo = results.get("locomo")
    if locomo:
        parts += [
            "",
            "## LoCoMo evidence recall (shared locomo_retrieval_eval.py)",
            "",
            "Two conversations only, Prism and BM25 only (quick run: the dense peers' rankings "
            "coincide with Prism's plain vector search; the full run has them)."
            if locomo.get("subset")
            else "10 conversations, 5,882 turns, 1,982 questions with evidence.",
            "",
            _table(
                [
                    "system",
                    "recall@1",
                    "recall@5",
                    "recall@10",
                    "recall@50",
                    "query p50 ms",
                    "add s",
                ],
                _locomo_rows(locomo),
            ),
            "",
            "BM25 reference (shipped): recall@1 0.295, recall@5 0.512, recall@10 0.584. "
            "The dense peers embed with the same MiniLM and search exactly, so their rankings "
            "coincide (Prism's was theirs before hybrid relevance: 0.329 at recall@5); Prism "
            "mixes in BM25 (`PRISM_RANK_LEXICAL_NOTE`, chosen on half of the conversations: "
            "bench/README.md). *add s* excludes embedding (shared vector cache).",
        ]
    speed = results.get("speed")
    if speed:
        parts += [
            "",
            "## Speed and scale",
            "",
            "One project; synthetic 384-d vectors; medians and p99 of alternating rounds.",
            "",
            _vectors_note((speed.get("settings") or {}).get("vectors", "random")),
            "",
            _speed_settings(speed.get("settings") or {}, results.get("mode")),
            "",
            _table(
                [
                    "memories",
                    "system",
                    "recall p50 ms",
                    "p99",
                    "× Prism",
                    "recall+embed p50",
                    "p99",
                    "write p50 ms",
                    "p99",
                    "recall after write p50",
                    "RSS +MB",
                    "disk MB/1k",
                    "n",
                ],
                _speed_rows(speed),
            ),
            "",
            "- recall: top-10, Prism `semantic_recall(source_type='memorule')` incl. fetching "
            "the records; peers' own search calls. *no embed*: the query vector is "
            "precomputed (MiniLM's embedding of the task with `minilm-like` vectors, a random "
            "one with `random`); *+embed*: MiniLM embeds the query inside the call.",
            "- write: one memorule (Prism `remember`, incl. embedding, near-duplicate scan, "
            "audit event) / one `add(infer=False)` / one `put`, on the store of that size. "
            "*recall after write*: the next recall (no embedding) right after each write, "
            "when Prism's per-process candidate cache has to catch up.",
            "- RSS +MB: resident memory growth while loading that size's increment (one "
            "process); disk: Prism file after a WAL checkpoint, mem0's folder (Qdrant local + "
            "history), LangGraph SQLite file.",
            f"- process peak RSS (ru_maxrss): {speed.get('peak_rss_mb')} MB",
            "",
            "### Bulk import (real model, empty store)",
            "",
            _table(
                ["path", "items", "seconds", "items/s"],
                [
                    [k, v["items"], v["seconds"], v["per_s"]]
                    for k, v in (speed.get("bulk_import") or {}).items()
                ],
            ),
            "",
            "### MCP cold start (`prism mcp`, stdio, new process, fresh database)",
            "",
            "```json",
            json.dumps(speed.get("mcp_cold_start"), indent=1),
            "```",
        ]
    parts += _real_section(results)
    parts += many_report.section(results.get("many"))
    parts += _million_section(results)
    if plot_paths:
        parts += ["", "## Plots", ""] + [f"- `{p}`" for p in plot_paths]
    parts += [
        "",
        "## Peers: configuration and what could not run offline",
        "",
        "- mem0 2.x open source `Memory`, `add(infer=False)`, default local vector store (Qdrant "
        "local mode), `MEM0_TELEMETRY=False`, embedder = Prism's MiniLM through mem0's "
        "`langchain` provider; LLM config required even with infer=False (dummy key, never "
        "called). Its hybrid extras need downloads at run time (fastembed `Qdrant/bm25`, "
        "spaCy `en_core_web_sm`): not installed, so mem0 ran semantic-only (its fallback).",
        "- LangGraph `InMemoryStore` and `SqliteStore` with `index={dims: 384, embed: MiniLM}`; "
        "the SQLite store's `sqlite-vec` needs extension loading, which this CPython lacks: "
        "it runs on a `pysqlite3-binary` connection. Context = namespaces (no `$in` filter).",
        "- BM25 = `bm25s`, English stop words, no stemming; context = weight mask.",
        "- Every peer gets the same context filter Prism applies (surface ∈ {context, general}; "
        "persona rules of the context's persona). An offline guard refused any non-loopback "
        "connection during every run.",
    ]
    return "\n".join(parts) + "\n"
