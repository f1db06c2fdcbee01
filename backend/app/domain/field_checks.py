"""Single values every door checks the same way: texts, reasons, idempotency keys, times.

The operation models in :mod:`app.domain.contract` check whole requests; these check
the loose arguments around them (an update's ``reason``, a retry's ``idempotency_key``, an
audit filter's times) with the same rules and the same field errors.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from app.domain.contract.base import checked
from app.domain.contract.bounds import AUDIT_CURSOR_MAX as AUDIT_CURSOR_MAX
from app.domain.contract.bounds import IDEMPOTENCY_KEY_MAX
from app.domain.contract.checks import Text
from app.domain.contract.lifecycle import Reason
from app.errors import FieldError, InvalidInput

# RFC 3339's date-time (what JSON Schema's "date-time" format names): an offset is required.
_RFC3339: Final = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$"
)


def check_text(
    value: Any,
    label: str,
    *,
    required: bool = False,
    max_len: int,
    single_line: bool = False,
) -> str | None:
    """One free-text value under the contract's rules (stripped; blank counts as absent).

    Args:
        value: what the caller sent (None: not given).
        label: the field's name in errors.
        required: refuse a missing or blank value.
        max_len: the longest value accepted.
        single_line: refuse line breaks.

    Returns:
        The stripped text, or None when absent.

    Raises:
        InvalidInput: the value's one field error.
    """
    text = checked(Text(max_len, required=required, line=single_line), value, label)
    return text or None


def check_reason(reason: Any, *, required: bool) -> str | None:
    """An update's, retire's or restore's ``reason`` (at most ``REASON_MAX`` characters).

    Raises:
        InvalidInput: missing (when required), not text, forbidden characters, too long.
    """
    text: str | None = checked(Reason(required=required), reason, "reason")
    return text


def check_idempotency_key(value: Any) -> str | None:
    """An optional ``idempotency_key`` (one line, at most ``IDEMPOTENCY_KEY_MAX``).

    Raises:
        InvalidInput: not text, forbidden characters, a line break, too long.
    """
    return check_text(value, "idempotency_key", max_len=IDEMPOTENCY_KEY_MAX, single_line=True)


def to_utc(value: datetime | None, label: str) -> datetime | None:
    """A time filter in UTC (naive means UTC), refusing instants outside years 1-9999.

    ``9999-12-31T23:59:59-14:00`` is a valid ISO 8601 string whose UTC instant does not fit
    a ``datetime``; it is a field error, not a crash.

    Raises:
        InvalidInput: the instant cannot be expressed in UTC.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise InvalidInput(
            [
                FieldError(
                    label,
                    "out_of_range",
                    f"'{label}' is outside the years 1 to 9999 once converted to UTC",
                )
            ]
        ) from None


def parse_instant(text: str | None, label: str) -> datetime | None:
    """An RFC 3339 date-time (``2026-12-01T09:30:00Z``, offset required) as UTC.

    Raises:
        InvalidInput: not an RFC 3339 date-time, no such date or time, or outside years
            1 to 9999 once in UTC.
    """
    if text is None:
        return None
    value = None
    if _RFC3339.match(text):
        try:
            value = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        except ValueError:
            value = None
    if value is None:
        raise InvalidInput(
            [
                FieldError(
                    label,
                    "invalid_format",
                    f"'{label}' must be an RFC 3339 date-time with an offset, "
                    "e.g. 2026-12-01T09:30:00Z",
                )
            ]
        )
    return to_utc(value, label)
