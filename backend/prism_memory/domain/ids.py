"""Identifiers: time-ordered UUIDs for records, stable UUIDs for human slugs."""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

_SLUG_NAMESPACE = uuid.UUID("6f1d9c1e-5b7a-4c2e-9f0a-94c0a5e0b094")
SLUG_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def new_id() -> uuid.UUID:
    """A UUIDv7: 48-bit Unix milliseconds, then a 12-bit counter and random bits.

    Ids minted in one process sort in creation order even within one millisecond.
    """
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            _counter += 1
            if _counter > 0xFFF:
                _last_ms += 1
                _counter = 0
            ms = _last_ms
        else:
            _last_ms = ms
            _counter = 0
        counter = _counter
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= counter << 64
    value |= 0b10 << 62
    value |= rand
    return uuid.UUID(int=value)


def uuid_for(kind: str, name: str) -> uuid.UUID:
    """The UUID a human name stands for.

    Args:
        kind: what is named (``tenant``, ``project``); the same slug names
            different UUIDs for different kinds.
        name: a UUID (returned as it is) or a slug such as ``acme``.

    Returns:
        The UUID itself, or a stable UUIDv5 of the slug (case-insensitive).

    Raises:
        ValueError: ``name`` is neither a UUID nor a slug.
    """
    try:
        return uuid.UUID(name)
    except ValueError:
        pass
    if not SLUG_PATTERN.match(name):
        raise ValueError(f"{kind} must be a UUID or a slug of letters, digits, '.', '_', '-'")
    return uuid.uuid5(_SLUG_NAMESPACE, f"prism:{kind}:{name.lower()}")
