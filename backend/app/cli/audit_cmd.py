"""Text for ``prism audit head`` and ``prism audit served``."""

from __future__ import annotations

from typing import Any

from app.services.ledger_service import parse_head

__all__ = ["parse_head", "render_head", "render_served"]


def render_head(data: dict[str, Any]) -> str:
    lines = []
    for name, label in (("audit", "audit chain"), ("served", "served receipts")):
        head = data[name]
        lines.append(f"{label}: {head['seq']}:{head['hash']}  ({head['at'] or 'empty'})")
    lines.append("keep the first line elsewhere; 'prism audit verify --head SEQ:HASH' checks it")
    return "\n".join(lines)


def render_served(data: dict[str, Any]) -> str:
    if not data["served"]:
        return "no served receipts"
    lines = []
    for r in data["served"]:
        lines.append(
            f"#{r['seq']:<6} {r['served_at']}  {r['tool']:<15} rank {r['rank']:<3} "
            f"memorule {r['memorule_id']} v{r['version']} (state {r['state_id'][:8]})  "
            f"to {r['persona'] or '-'} (session {r['session_id'][:8]})"
        )
    if data.get("next_cursor"):
        lines.append(f"more: --after {data['next_cursor']}")
    return "\n".join(lines)
