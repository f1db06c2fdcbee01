"""The many-projects section of latest.md, from ``many_projects.py``'s results."""

from __future__ import annotations

from typing import Any


def _ms(summary: dict[str, Any] | None, key: str = "p50_ms") -> str:
    if not summary or summary.get(key) is None:
        return "—"
    return f"{summary[key]:,.1f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def section(many: dict[str, Any] | None) -> list[str]:
    """Recall over many projects, cold starts, RSS and writes into cold projects."""
    head = ["", "## Many projects, restarts (`bench/many_projects.py`)", ""]
    if not many:
        return [*head, "Not run (`python bench/run.py --only many`, or `--many-projects`)."]
    st = many.get("settings", {})
    body = many["many"]
    lines = [
        *head,
        f"One tenant, {st.get('projects')} projects × {st.get('per_project')} memorules, "
        f"{many.get('vectors')} vectors, no query embedding; systems take turns in one "
        f"loop. Load average {_load(many.get('loadavg_start'))} at start, "
        f"{_load(many.get('loadavg_end'))} at end.",
        "",
    ]
    rows = [
        [name, _ms(r), _ms(r, "p99_ms"), f"{r['cache_mb']:.0f}" if "cache_mb" in r else "—"]
        for name, r in body["recall"].items()
    ]
    lines += _table(["recall (top 10)", "p50 ms", "p99 ms", "cache MB held"], rows)
    lines += ["", "Writes (one memorule through the service):", ""]
    lines += _table(
        ["engine", "into a cold project p50", "p99", "into a warm project p50", "p99"],
        [
            [e, _ms(w["cold"]), _ms(w["cold"], "p99_ms"), _ms(w["warm"]), _ms(w["warm"], "p99_ms")]
            for e, w in body["write"].items()
        ],
    )
    lines += ["", "Cold starts (a new process per sample; its first recall in one project):", ""]
    lines += _table(
        [
            "engine, memories",
            "first recall p50 ms",
            "its CPU ms",
            "second",
            "RSS before → after MB",
            "loading process's first recall ms",
        ],
        [
            [
                name,
                _ms(c["first_recall"]),
                _ms(c.get("first_recall_cpu")),
                _ms(c["second_recall"]),
                f"{c['rss_before_mb']:.0f} → {c['rss_after_mb']:.0f}",
                f"{c['loading_process_first_recall_ms']:,.0f}",
            ]
            for name, c in many.get("cold", {}).items()
        ],
    )
    cycle = body.get("cycle_process", {})
    if cycle:
        lines += ["", "A new process recalling once in every project (default cache budget):", ""]
        lines += _table(
            ["engine", "all recalls s", "RSS after MB"],
            [[e, f"{c['cycle_s']:.1f}", f"{c['cycle_rss_mb']:.0f}"] for e, c in cycle.items()],
        )
    return lines


def _load(avg: Any) -> str:
    return f"{avg[0]:.1f}" if avg else "—"
