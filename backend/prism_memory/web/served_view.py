"""The console's view of served receipts: for one memorule, the sessions it was served to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServedSession:
    """One session that was served a memorule: when, which versions, how often, best rank."""

    session_id: str
    persona: str | None
    first: str
    last: str
    versions: list[int] = field(default_factory=list)
    times: int = 0
    best_rank: int = 0


def sessions(receipts: Iterable[Mapping[str, Any]]) -> list[ServedSession]:
    """Receipts (oldest first) grouped by session, the most recently served first."""
    by_session: dict[str, ServedSession] = {}
    for r in receipts:
        s = by_session.get(r["session_id"])
        if s is None:
            s = ServedSession(r["session_id"], r["persona"], r["served_at"], r["served_at"])
            s.best_rank = r["rank"]
            by_session[r["session_id"]] = s
        s.last = r["served_at"]
        s.times += 1
        s.best_rank = min(s.best_rank, r["rank"])
        if r["version"] not in s.versions:
            s.versions.append(r["version"])
    return sorted(by_session.values(), key=lambda s: s.last, reverse=True)
