"""What the console's pages show, computed from service records (no I/O, no HTML)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from prism_memory.domain.records import Confidence, Enforcement, MemoruleKind, Scope
from prism_memory.errors import FieldError, InvalidInput

KINDS = tuple(k.value for k in MemoruleKind)
CONFIDENCES = tuple(c.value for c in Confidence)
SCOPES = tuple(s.value for s in Scope)
ENFORCEMENTS = tuple(e.value for e in Enforcement)
STATUSES = ("active", "retired", "all")
APPLIES_KEYS = ("persona", "surface", "specialization", "scope")
# The fields a version may change, in the order the page shows them.
VERSION_FIELDS = (
    "subject",
    "body",
    "memorule_kind",
    "applies_to",
    "confidence",
    "evidence_signal_id",
    "checks",
    "enforcement",
)


PAGE_SIZE = 50
_FILTER_MAX = 200  # longer values are cut before validation reports them as too long


@dataclass(frozen=True)
class ListFilters:
    """The memorule list's filters as typed in the query string (blank means any).

    Kept as text, so the form shows back exactly what was asked; the listing's validator
    (:class:`prism_memory.domain.listing.ListRequest`) judges them and names every bad one.
    """

    q: str = ""
    kind: str = ""
    confidence: str = ""
    persona: str = ""
    surface: str = ""
    scope: str = ""
    status: str = "active"
    pinned: str = ""
    cursor: str = ""

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> ListFilters:
        def text(name: str, default: str = "") -> str:
            return params.get(name, default).strip()[:_FILTER_MAX]

        return cls(
            q=params.get("q", "").strip()[:500],
            kind=text("kind"),
            confidence=text("confidence"),
            persona=text("persona"),
            surface=text("surface"),
            scope=text("scope"),
            status=text("status", "active") or "active",
            pinned=text("pinned"),
            cursor=text("cursor"),
        )

    def list_request(self, limit: int = PAGE_SIZE) -> dict[str, Any]:
        """The listing request: memorules only, one page after ``cursor``."""
        return {
            "source_type": "memorule",
            "status": self.status,
            "memorule_kind": self.kind,
            "confidence": self.confidence,
            "scope": self.scope,
            "persona": self.persona,
            "surface": self.surface,
            "pinned": self.pinned,
            "cursor": self.cursor,
            "limit": limit,
        }

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
        """Whether a recall match passes the applies_to and pin filters (search only)."""
        if self.pinned.lower() == "true" and not match.get("pinned"):
            return False
        applies = match.get("applies_to") or {}
        for name in ("persona", "surface"):
            wanted = getattr(self, name)
            if wanted and str(applies.get(name) or "").strip().lower() != wanted.lower():
                return False
        scope = applies.get("scope") or "project"
        return not self.scope or scope == self.scope

    def url(self, project: str, cursor: str = "") -> str:
        """The list page with these filters (and ``cursor``: the page after it)."""
        query = {
            "project": project,
            "q": self.q,
            "kind": self.kind,
            "confidence": self.confidence,
            "persona": self.persona,
            "surface": self.surface,
            "scope": self.scope,
            "status": self.status,
            "pinned": self.pinned,
            "cursor": cursor,
        }
        return "/memorules?" + urlencode({k: v for k, v in query.items() if v})


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
    if isinstance(value, list):  # a rule's checks
        return checks_text(value) or "—"
    return str(value)


def checks_text(checks: Sequence[Any] | None) -> str:
    """A rule's checks as the edit form shows them: a JSON list, one check a line."""
    if not checks:
        return ""
    return "[\n" + ",\n".join(f"  {json.dumps(c, ensure_ascii=False)}" for c in checks) + "\n]"


def check_lines(checks: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, str]]:
    """Each check as (kind, what it says), for the rule page."""
    out = []
    for check in checks or []:
        for kind, value in check.items():
            if isinstance(value, Mapping):
                out.append((kind, "  ".join(f"{k}: {v}" for k, v in value.items())))
            else:
                out.append((kind, str(value)))
    return out


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


# The edit form's inputs: name -> the validator's field name (applies_to keys nest).
EDIT_FIELDS = {
    "subject": "subject",
    "body": "body",
    "memorule_kind": "memorule_kind",
    "confidence": "confidence",
    "persona": "applies_to.persona",
    "surface": "applies_to.surface",
    "specialization": "applies_to.specialization",
    "scope": "applies_to.scope",
    "evidence_signal_id": "evidence_signal_id",
    "checks": "checks",
    "enforcement": "enforcement",
    "reason": "reason",
}


def edit_changes(current: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """The fields an edit form changes: every input that differs from the current version.

    A cleared input is sent as cleared (an empty subject is refused by the validator, an
    empty evidence id removes the link), never silently kept.
    """
    changes: dict[str, Any] = {}
    for name in ("subject", "body", "memorule_kind", "confidence"):
        if name in form:
            value = form[name].replace("\r\n", "\n").strip()
            if value != (current.get(name) or ""):
                changes[name] = value
    if "evidence_signal_id" in form:
        evidence = form["evidence_signal_id"].strip() or None
        if evidence != current.get("evidence_signal_id"):
            changes["evidence_signal_id"] = evidence
    if any(key in form for key in APPLIES_KEYS):
        applies = {k: form.get(k, "").strip() for k in APPLIES_KEYS}
        applies = {k: v for k, v in applies.items() if v}
        if applies != (current.get("applies_to") or {}):
            changes["applies_to"] = applies
    if "checks" in form:
        checks = _checks_input(form["checks"])
        if checks != (current.get("checks") or []):
            changes["checks"] = checks
    if "enforcement" in form:
        enforcement = form["enforcement"].strip()
        if enforcement != (current.get("enforcement") or Enforcement.REMIND.value):
            changes["enforcement"] = enforcement
    return changes


def _checks_input(text: str) -> Any:
    """The checks input: blank is none; else JSON (the contract judges what it holds).

    Raises:
        InvalidInput: the text is no JSON.
    """
    if not text.strip():
        return []
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            [FieldError("checks", "invalid_json", f"'checks' must be a JSON list: {exc}")]
        ) from None


def form_values(current: Mapping[str, Any], form: Mapping[str, str] | None) -> dict[str, str]:
    """What the edit form shows: the submitted values after a refusal, else the current ones."""
    applies = current.get("applies_to") or {}
    shown_now = {
        "subject": current.get("subject") or "",
        "body": current.get("body") or "",
        "memorule_kind": current.get("memorule_kind") or "",
        "confidence": current.get("confidence") or "",
        "evidence_signal_id": current.get("evidence_signal_id") or "",
        "checks": checks_text(current.get("checks")),
        "enforcement": current.get("enforcement") or Enforcement.REMIND.value,
        "reason": "",
        **{k: applies.get(k) or "" for k in APPLIES_KEYS},
    }
    if form is None:
        return shown_now
    return {k: form.get(k, v) for k, v in shown_now.items()}


def errors_by_input(errors: Sequence[FieldError]) -> dict[str, list[str]]:
    """Field errors keyed by the form input they belong to (others under ``""``)."""
    inputs = {field: name for name, field in EDIT_FIELDS.items()}
    out: dict[str, list[str]] = {}
    for e in errors:
        name = inputs.get(e.field.split(".")[0] if e.field.startswith("checks") else e.field)
        if name is None:
            name = "applies_to" if e.field.startswith("applies_to") else ""
        out.setdefault(name, []).append(e.message)
    return out
