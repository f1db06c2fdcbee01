"""The listing contract: filters and keyset pages over a project's memories, newest first.

``validate_list`` takes a raw mapping (a JSON object, or query-string values: repeated
parameters as lists, numbers as digit strings) and returns a :class:`ListQuery` or raises one
:class:`InvalidInput` with every field error. A cursor is opaque to callers: the last id of a
page, base64url-encoded (``next_cursor`` of a page; pass it back as ``cursor``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from app.domain.ranking import normalise_key
from app.domain.records import Confidence, MemoruleKind, Scope, SourceType, Status
from app.domain.validation import APPLIES_VALUE_MAX, _choices, _Collector
from app.errors import FieldError, InvalidInput

LIMIT_DEFAULT: Final = 50
LIMIT_MAX: Final = 200
STATUSES: Final = ("active", "retired", "all")
APPLIES_FILTERS: Final = ("persona", "surface", "specialization")
LIST_FIELDS: Final = frozenset(
    {
        "status",
        "source_type",
        "namespace",
        "memorule_kind",
        "confidence",
        "scope",
        *APPLIES_FILTERS,
        "cursor",
        "limit",
    }
)
_CURSOR: Final = re.compile(r"^[A-Za-z0-9_-]{22}$")
_INTEGER: Final = re.compile(r"^-?[0-9]+$")


@dataclass(frozen=True)
class ListQuery:
    """A validated listing request. ``status`` None lists active and retired alike."""

    status: Status | None = Status.ACTIVE
    source_type: SourceType = SourceType.MEMORY
    namespace: str | None = None
    memorule_kinds: tuple[MemoruleKind, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    scopes: tuple[Scope, ...] = ()
    applies: dict[str, str] = field(default_factory=dict)
    before: UUID | None = None
    limit: int = LIMIT_DEFAULT


def encode_cursor(memory_id: UUID) -> str:
    """The cursor of the page that follows ``memory_id`` (the last id of a page)."""
    return base64.urlsafe_b64encode(memory_id.bytes).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> UUID:
    """The id a cursor carries.

    Raises:
        InvalidInput: not a cursor this service gave out.
    """
    if _CURSOR.match(cursor):
        try:
            return UUID(bytes=base64.urlsafe_b64decode(cursor + "=="))
        except (binascii.Error, ValueError):
            pass
    raise InvalidInput([_bad_cursor()])


def _bad_cursor() -> FieldError:
    return FieldError(
        "cursor",
        "invalid_format",
        "'cursor' must be the next_cursor of an earlier page (22 characters of base64url)",
    )


def validate_list(raw: Mapping[str, Any]) -> ListQuery:
    """Validate a listing request.

    Args:
        raw: ``status`` (active | retired | all; default active), ``source_type`` (memory =
            notes and memorules, memorule), ``namespace``, ``memorule_kind``, ``confidence``
            and ``scope`` (a value or a list), ``persona``/``surface``/``specialization``
            (the value a memorule's applies_to names, case-insensitive), ``cursor``, ``limit``
            (1 to LIMIT_MAX, default LIMIT_DEFAULT).

    Returns:
        A :class:`ListQuery`.

    Raises:
        InvalidInput: with every field error found.
    """
    c = _Collector()
    c.unknown(raw, LIST_FIELDS)
    # A blank value is no filter (a query string's ``?persona=``, a form's empty field).
    raw = {k: v for k, v in raw.items() if not (isinstance(v, str) and not v.strip())}
    status: Status | None = Status.ACTIVE
    value = raw.get("status")
    if value is not None:
        if value not in STATUSES:
            c.add(
                "status",
                "invalid_choice",
                f"'status' must be one of {', '.join(STATUSES)}",
                allowed=list(STATUSES),
            )
        status = None if value == "all" else Status(value) if value in STATUSES else status
    source_type = SourceType.MEMORY
    if raw.get("source_type") is not None:
        source_type = c.choice(raw["source_type"], SourceType, "source_type") or source_type
    namespace = c.namespace(raw)
    kinds = _choices(c, raw, "memorule_kind", MemoruleKind, skip_blank=True)
    confidences = _choices(c, raw, "confidence", Confidence, skip_blank=True)
    scopes = _choices(c, raw, "scope", Scope, skip_blank=True)
    applies: dict[str, str] = {}
    for key in APPLIES_FILTERS:
        text = c.text(raw, key, required=False, max_len=APPLIES_VALUE_MAX, single_line=True)
        if (normal := normalise_key(text)) is not None:
            applies[key] = normal
    before = None
    cursor = raw.get("cursor")
    if isinstance(cursor, str):
        try:
            before = decode_cursor(cursor.strip())
        except InvalidInput as exc:
            c.errors.extend(exc.errors)
    elif cursor is not None and not isinstance(cursor, str):
        c.add("cursor", "wrong_type", "'cursor' must be a string", expected="string")
    limit = _limit(c, raw.get("limit"))
    c.raise_if_any()
    return ListQuery(
        status=status,
        source_type=source_type,
        namespace=namespace,
        memorule_kinds=kinds,
        confidences=confidences,
        scopes=scopes,
        applies=applies,
        before=before,
        limit=limit,
    )


def _limit(c: _Collector, value: Any) -> int:
    if value is None:
        return LIMIT_DEFAULT
    if isinstance(value, str) and _INTEGER.match(value.strip()):
        # A query string's number; a huge one is just out of range (no 10,000-digit ints).
        value = int(value) if len(value.strip()) <= 10 else LIMIT_MAX + 1
    if isinstance(value, bool) or not isinstance(value, int):
        c.add("limit", "wrong_type", "'limit' must be a whole number", expected="integer")
        return LIMIT_DEFAULT
    if not 1 <= value <= LIMIT_MAX:
        c.add(
            "limit",
            "out_of_range",
            f"'limit' must be between 1 and {LIMIT_MAX}",
            min=1,
            max=LIMIT_MAX,
            actual=value,
        )
        return LIMIT_DEFAULT
    return value
