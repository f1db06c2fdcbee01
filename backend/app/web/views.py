"""What the console's pages show, computed from service records (no I/O, no HTML)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.records import Confidence, MemoruleKind, Scope

KINDS = tuple(k.value for k in MemoruleKind)
CONFIDENCES = tuple(c.value for c in Confidence)
SCOPES = tuple(s.value for s in Scope)
STATUSES = ("active", "retired", "all")
# The fields a version may change, in the order the page shows them.
VERSION_FIELDS = (
    "subject",
    "body",
    "memorule_kind",
    "applies_to",
    "confidence",
    "evidence_signal_id",
)


@dataclass(frozen=True)
class ListFilters:
    """The memorule list's filters, as read from the query string (blank means any)."""

    q: str = ""
    kind: str = ""
    confidence: str = ""
    persona: str = ""
    surface: str = ""
    scope: str = ""
    status: str = "active"

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> ListFilters:
        def pick(name: str, allowed: Sequence[str], default: str = "") -> str:
            value = params.get(name, default).strip()
            return value if value in allowed else default

        return cls(
            q=params.get("q", "").strip()[:500],
            kind=pick("kind", KINDS),
            confidence=pick("confidence", CONFIDENCES),
            persona=params.get("persona", "").strip()[:100],
            surface=params.get("surface", "").strip()[:100],
            scope=pick("scope", SCOPES),
            status=pick("status", STATUSES, "active"),
        )

    def recall_request(self, top_k: int) -> dict[str, Any]:
        """The ``semantic_recall`` request: memorules only, applicable or not."""
        raw: dict[str, Any] = {
            "query": self.q,
            "top_k": top_k,
            "source_type": "memorule",
            "include_inapplicable": True,
        }
        if self.kind:
            raw["memorule_kind"] = self.kind
        if self.confidence:
            raw["confidence"] = self.confidence
        return raw

    def keeps(self, match: Mapping[str, Any]) -> bool:
        """Whether a recall match passes the applies_to filters."""
        applies = match.get("applies_to") or {}
        for name in ("persona", "surface"):
            wanted = getattr(self, name)
            if wanted and str(applies.get(name) or "").lower() != wanted.lower():
                return False
        scope = applies.get("scope") or "project"
        return not self.scope or scope == self.scope


@dataclass(frozen=True)
class Change:
    """One field a version changed."""

    field: str
    before: str
    after: str


def shown(value: Any) -> str:
    """A field value as text (``applies_to`` as ``key=value`` pairs)."""
    if value is None:
        return "—"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()) if v is not None) or "—"
    return str(value)


def version_changes(versions: Sequence[Mapping[str, Any]]) -> list[list[Change]]:
    """For each version (oldest first), what it changed from the one before (first: none)."""
    out: list[list[Change]] = []
    for i, version in enumerate(versions):
        if i == 0:
            out.append([])
            continue
        before = versions[i - 1]
        out.append(
            [
                Change(name, shown(before.get(name)), shown(version.get(name)))
                for name in VERSION_FIELDS
                if before.get(name) != version.get(name)
            ]
        )
    return out


def edit_changes(current: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """The fields an edit form changes (blank or unchanged fields are left out)."""
    changes: dict[str, Any] = {}
    for name in ("subject", "body", "memorule_kind", "confidence"):
        value = form.get(name, "").replace("\r\n", "\n").strip()
        if value and value != (current.get(name) or ""):
            changes[name] = value
    return changes
