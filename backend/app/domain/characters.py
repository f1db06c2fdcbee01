"""The one rule for the characters of any text Prism accepts, at every door.

Refused (README "Limits"): C0 controls but tab and newline, DEL, C1 controls
(U+0080-U+009F), lone surrogates (they have no UTF-8 form: neither engine can store them,
and a JSON encoder chokes on them) and the bidirectional embedding, override and isolate
controls (U+202A-U+202E, U+2066-U+2069), which make text read differently from what it says
("Trojan Source"). The bidi *marks* (U+200E, U+200F, U+061C) stay allowed: mixed
right-to-left text needs them and they reorder nothing by themselves.
"""

from __future__ import annotations

import re
from typing import Final

_FORBIDDEN: Final = re.compile(
    "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\ud800-\\udfff\\u202a-\\u202e\\u2066-\\u2069]"
)


def forbidden_character(value: str) -> str | None:
    """What is wrong with ``value``'s characters under the one rule (None: nothing).

    Returns:
        e.g. ``"a control character (U+0000)"``, naming the first offending character.
    """
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    point = ord(found.group())
    if 0xD800 <= point <= 0xDFFF:
        what = "a lone surrogate"
    elif point >= 0x2000:
        what = "a bidirectional control"
    else:
        what = "a control character"
    return f"{what} (U+{point:04X})"


def printable(value: str) -> str:
    """``value`` with every forbidden character written as ``\\uXXXX`` (for messages)."""
    return _FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
