"""Single values every door checks the same way: texts, reasons, idempotency keys.

The operation models in :mod:`prism_memory.domain.contract` check whole requests; these check
the loose arguments around them (an update's ``reason``, a retry's ``idempotency_key``)
with the same rules and the same field errors. (An audit filter's times: the audit
queries' ``Instant``, :mod:`prism_memory.domain.contract.audit`.)
"""

from __future__ import annotations

from typing import Any

from prism_memory.domain.contract.base import checked
from prism_memory.domain.contract.bounds import IDEMPOTENCY_KEY_MAX
from prism_memory.domain.contract.checks import Text
from prism_memory.domain.contract.lifecycle import Reason


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
