"""The write and read contracts as validators: raw mappings in, typed records out.

Every validator collects ALL field errors and raises one :class:`InvalidInput`.
Bounds are documented in the README ("Limits") and live here, once.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from app.domain.characters import forbidden_character, printable
from app.domain.records import (
    AppliesTo,
    Confidence,
    Kind,
    MemoruleKind,
    MemoruleWrite,
    NoteWrite,
    RecallQuery,
    Scope,
    SourceType,
)
from app.errors import FieldError, InvalidInput

E = TypeVar("E", MemoruleKind, Confidence, Scope, SourceType, Kind)
F = TypeVar("F", MemoruleKind, Confidence, Scope)

SUBJECT_MIN: Final = 4
SUBJECT_MAX: Final = 300
MEMORULE_BODY_MIN: Final = 10
BODY_MAX: Final = 16_000
APPLIES_VALUE_MAX: Final = 100
EVIDENCE_MAX: Final = 200
NAMESPACE_MAX: Final = 100
IDEMPOTENCY_KEY_MAX: Final = 200
REASON_MAX: Final = 2_000
QUERY_MAX: Final = 4_000
TOP_K_MAX: Final = 100
FILTER_LIST_MAX: Final = 5

NAMESPACE_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
NOTE_FIELDS: Final = frozenset(
    {"kind", "body", "content", "subject", "namespace", "idempotency_key"}
)
MEMORULE_FIELDS: Final = frozenset(
    {
        "kind",
        "memorule_kind",
        "subject",
        "body",
        "applies_to",
        "evidence_signal_id",
        "confidence",
        "namespace",
        "idempotency_key",
        "corrects",
        "strict",
    }
)
APPLIES_TO_FIELDS: Final = ("persona", "surface", "specialization", "scope")
RECALL_FIELDS: Final = frozenset(
    {
        "query",
        "top_k",
        "namespace",
        "source_type",
        "memorule_kind",
        "confidence",
        "include_inapplicable",
    }
)


class _Collector:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, field: str, code: str, message: str, **details: Any) -> None:
        self.errors.append(FieldError(field, code, message, details))

    def raise_if_any(self) -> None:
        if self.errors:
            raise InvalidInput(self.errors)

    def unknown(self, raw: Mapping[str, Any], allowed: frozenset[str], where: str = "") -> None:
        for key in sorted(set(raw) - allowed, key=str):
            name = printable(str(key))
            self.add(
                f"{where}{name}",
                "unknown_field",
                f"'{name}' is not a field of this request",
                allowed=sorted(allowed),
            )

    def text(
        self,
        raw: Mapping[str, Any],
        name: str,
        *,
        required: bool,
        min_len: int = 1,
        max_len: int,
        single_line: bool = False,
        label: str | None = None,
    ) -> str | None:
        label = label or name
        if name not in raw or raw[name] is None:
            if required:
                self.add(label, "missing", f"'{label}' is required")
            return None
        value = raw[name]
        if not isinstance(value, str):
            self.add(label, "wrong_type", f"'{label}' must be a string", expected="string")
            return None
        value = value.strip()
        if (problem := forbidden_character(value)) is not None:
            self.add(label, "invalid_characters", f"'{label}' contains {problem}")
            return None
        if single_line and ("\n" in value or "\r" in value):
            self.add(label, "invalid_characters", f"'{label}' must be a single line")
            return None
        if len(value) < min_len:
            code = "empty" if not value else "too_short"
            self.add(
                label,
                code,
                f"'{label}' must be at least {min_len} characters",
                min=min_len,
                actual=len(value),
            )
            return None
        if len(value) > max_len:
            self.add(
                label,
                "too_long",
                f"'{label}' must be at most {max_len} characters",
                max=max_len,
                actual=len(value),
            )
            return None
        return value

    def choice(self, value: Any, enum: type[E], label: str) -> E | None:
        allowed = [e.value for e in enum]
        if not isinstance(value, str) or value not in allowed:
            self.add(
                label,
                "invalid_choice",
                f"'{label}' must be one of {', '.join(allowed)}",
                allowed=allowed,
            )
            return None
        return enum(value)

    def namespace(self, raw: Mapping[str, Any]) -> str | None:
        value = self.text(raw, "namespace", required=False, max_len=NAMESPACE_MAX, single_line=True)
        if value is not None and not NAMESPACE_PATTERN.match(value):
            self.add(
                "namespace",
                "invalid_format",
                "'namespace' takes letters, digits and . _ : / - and starts with one of the "
                "first two",
            )
            return None
        return value


def _kind(c: _Collector, raw: Mapping[str, Any]) -> Kind | None:
    if raw.get("kind") is None:
        return Kind.NOTE
    return c.choice(raw["kind"], Kind, "kind")


def validate_remember(raw: Mapping[str, Any]) -> NoteWrite | MemoruleWrite:
    """Validate a ``prism_remember`` request.

    Args:
        raw: the request as the caller sent it (JSON object). ``kind`` defaults to
            ``note``.

    Returns:
        A :class:`NoteWrite` or a :class:`MemoruleWrite`.

    Raises:
        InvalidInput: with every field error found.
    """
    c = _Collector()
    if not isinstance(raw, Mapping):
        c.add("", "wrong_type", "the request must be a JSON object")
        c.raise_if_any()
    kind = _kind(c, raw)
    if kind is None:
        c.raise_if_any()
    if kind is Kind.NOTE:
        return _validate_note(c, raw)
    return _validate_memorule(c, raw)


def _validate_note(c: _Collector, raw: Mapping[str, Any]) -> NoteWrite:
    extra = set(raw) - NOTE_FIELDS
    for key in sorted(extra, key=str):
        hint = " (memorule fields need kind='memorule')" if key in MEMORULE_FIELDS else ""
        name = printable(str(key))
        c.add(
            name,
            "unknown_field",
            f"'{name}' is not a field of a note{hint}",
            allowed=sorted(NOTE_FIELDS),
        )
    if "body" in raw and "content" in raw:
        c.add("content", "conflict", "give 'body' or its alias 'content', not both")
    source = "content" if "content" in raw and "body" not in raw else "body"
    body = c.text(raw, source, required=True, max_len=BODY_MAX, label=source)
    subject = c.text(raw, "subject", required=False, max_len=SUBJECT_MAX, single_line=True)
    namespace = c.namespace(raw)
    idem = c.text(
        raw, "idempotency_key", required=False, max_len=IDEMPOTENCY_KEY_MAX, single_line=True
    )
    c.raise_if_any()
    assert body is not None
    return NoteWrite(
        body=body, subject=subject, namespace=namespace or "default", idempotency_key=idem
    )


def _validate_applies_to(c: _Collector, raw: Mapping[str, Any]) -> AppliesTo | None:
    if "applies_to" not in raw or raw["applies_to"] is None:
        c.add(
            "applies_to",
            "missing",
            "'applies_to' is required: an object with at least one of "
            "persona, surface, specialization, scope",
        )
        return None
    value = raw["applies_to"]
    if not isinstance(value, Mapping):
        c.add("applies_to", "wrong_type", "'applies_to' must be an object", expected="object")
        return None
    before = len(c.errors)
    c.unknown(value, frozenset(APPLIES_TO_FIELDS), "applies_to.")
    present = [k for k in APPLIES_TO_FIELDS if value.get(k) is not None]
    if not present:
        c.add(
            "applies_to",
            "empty",
            "'applies_to' needs at least one of persona, surface, specialization, scope",
        )
    values: dict[str, str | None] = {}
    for key in ("persona", "surface", "specialization"):
        values[key] = c.text(
            value,
            key,
            required=False,
            max_len=APPLIES_VALUE_MAX,
            single_line=True,
            label=f"applies_to.{key}",
        )
    scope = None
    if value.get("scope") is not None:
        scope = c.choice(value["scope"], Scope, "applies_to.scope")
    if scope is Scope.PERSONA and not values["persona"]:
        c.add(
            "applies_to.persona",
            "required_by_scope",
            "scope 'persona' needs 'applies_to.persona': whose rule is it?",
        )
    if len(c.errors) > before:
        return None
    return AppliesTo(scope=scope, **values)


def _validate_memorule(c: _Collector, raw: Mapping[str, Any]) -> MemoruleWrite:
    c.unknown(raw, MEMORULE_FIELDS)
    kind = None
    if raw.get("memorule_kind") is None:
        c.add(
            "memorule_kind",
            "missing",
            "'memorule_kind' is required",
            allowed=[k.value for k in MemoruleKind],
        )
    else:
        kind = c.choice(raw["memorule_kind"], MemoruleKind, "memorule_kind")
    subject = c.text(
        raw, "subject", required=True, min_len=SUBJECT_MIN, max_len=SUBJECT_MAX, single_line=True
    )
    body = c.text(raw, "body", required=True, min_len=MEMORULE_BODY_MIN, max_len=BODY_MAX)
    applies_to = _validate_applies_to(c, raw)
    evidence = c.text(
        raw, "evidence_signal_id", required=False, max_len=EVIDENCE_MAX, single_line=True
    )
    confidence = Confidence.INFERRED
    if raw.get("confidence") is not None:
        confidence = c.choice(raw["confidence"], Confidence, "confidence") or confidence
    namespace = c.namespace(raw)
    key = c.text(
        raw, "idempotency_key", required=False, max_len=IDEMPOTENCY_KEY_MAX, single_line=True
    )
    corrects = None
    if raw.get("corrects") is not None:
        corrects = parse_uuid(c, raw["corrects"], "corrects")
        if corrects is not None and kind is not None and kind is not MemoruleKind.CORRECTION:
            c.add(
                "corrects",
                "not_allowed",
                "only a 'correction' memorule can name a memorule it corrects",
            )
    strict = raw.get("strict", False)
    if not isinstance(strict, bool):
        c.add("strict", "wrong_type", "'strict' must be true or false", expected="boolean")
    c.raise_if_any()
    assert kind and subject and body and applies_to
    return MemoruleWrite(
        memorule_kind=kind,
        subject=subject,
        body=body,
        applies_to=applies_to,
        confidence=confidence,
        evidence_signal_id=evidence,
        namespace=namespace or "default",
        idempotency_key=key,
        corrects=corrects,
        strict=bool(strict),
    )


def whole_number(value: Any) -> Any:
    """A JSON number with no fraction as an ``int`` (``13.0`` is 13, as JSON Schema's
    ``integer`` says); anything else unchanged, for the caller to judge."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def parse_uuid(c: _Collector, value: Any, label: str) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        c.add(label, "invalid_format", f"'{label}' must be a memory id (a UUID)")
        return None


def _choices(
    c: _Collector, raw: Mapping[str, Any], name: str, enum: type[F], skip_blank: bool = False
) -> tuple[F, ...]:
    """A filter of one value or a list of values, each one of ``enum`` (repeats once).

    ``skip_blank``: empty strings count as not given (an HTML form's empty choice).
    """
    value = raw.get(name)
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or len(items) > FILTER_LIST_MAX:
        c.add(
            name,
            "wrong_type",
            f"'{name}' must be a value or a list of at most {FILTER_LIST_MAX} values",
            allowed=[e.value for e in enum],
        )
        return ()
    out = [c.choice(item, enum, name) for item in items if not (skip_blank and item == "")]
    return tuple(dict.fromkeys(o for o in out if o is not None))


def validate_recall(raw: Mapping[str, Any]) -> RecallQuery:
    """Validate a ``semantic_recall`` request.

    Args:
        raw: ``query`` (may be empty), ``top_k``, ``namespace``, ``source_type``,
            ``memorule_kind``, ``confidence``, ``include_inapplicable``.

    Returns:
        A :class:`RecallQuery`.

    Raises:
        InvalidInput: with every field error found.
    """
    c = _Collector()
    c.unknown(raw, RECALL_FIELDS)
    query = c.text(raw, "query", required=False, min_len=0, max_len=QUERY_MAX) or ""
    top_k = whole_number(raw.get("top_k", 10))
    if top_k is None:
        top_k = 10
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        c.add("top_k", "wrong_type", "'top_k' must be a whole number", expected="integer")
    elif not 1 <= top_k <= TOP_K_MAX:
        c.add(
            "top_k",
            "out_of_range",
            f"'top_k' must be between 1 and {TOP_K_MAX}",
            min=1,
            max=TOP_K_MAX,
            actual=top_k,
        )
    namespace = c.namespace(raw)
    source_type = SourceType.MEMORY
    if raw.get("source_type") is not None:
        source_type = c.choice(raw["source_type"], SourceType, "source_type") or source_type
    kinds = _choices(c, raw, "memorule_kind", MemoruleKind)
    confidences = _choices(c, raw, "confidence", Confidence)
    include = raw.get("include_inapplicable", False)
    if not isinstance(include, bool):
        c.add(
            "include_inapplicable",
            "wrong_type",
            "'include_inapplicable' must be true or false",
            expected="boolean",
        )
    c.raise_if_any()
    return RecallQuery(
        query=query,
        top_k=int(top_k),
        namespace=namespace,
        source_type=source_type,
        memorule_kinds=kinds,
        confidences=confidences,
        include_inapplicable=bool(include),
    )
