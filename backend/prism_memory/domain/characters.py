"""The one rule for the characters of any text Prism accepts, at every door.

Refused (README "Limits"): C0 controls but tab and newline, DEL, C1 controls
(U+0080-U+009F), and lone surrogates (they have no UTF-8 form: neither engine can store them,
and a JSON encoder chokes on them).

Bidirectional controls (the embedding, override and isolate controls U+202A-U+202E,
U+2066-U+2069, and the marks U+200E, U+200F, U+061C) are accepted: right-to-left text needs
some of them, and a rule file imported with them keeps them and reports each one visibly
(``prism_memory.formats.rules_io.reading``), and the Cypher export writes them escaped. Refusing
them here would make ``prism import-rules`` lose text that the other doors then could not
write back. (The console shows them as they are: see the README's "Limits".)
"""

from __future__ import annotations

import re
from typing import Final

_FORBIDDEN: Final = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\ud800-\\udfff]")


# What validators strip from the ends of a text: spaces, tab, line breaks (LF, CR) and the
# Unicode space separators. Never a control character: Python's ``str.strip()`` would also drop
# U+000B, U+000C, U+001C-U+001F and U+0085 from the ends, silently; here they stay, and the
# one rule refuses them with a field error (issue #32, D11).
EDGE_SPACE_CLASS: Final = (
    " \\t\\n\\r\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
EDGE_SPACE: Final = (
    " \t\n\r\u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)


def strip_edges(value: str) -> str:
    """``value`` without the spaces and line breaks around it (never a control character)."""
    return value.strip(EDGE_SPACE)


def forbidden_character(value: str) -> str | None:
    """What is wrong with ``value``'s characters under the one rule (None: nothing).

    Returns:
        e.g. ``"a control character (U+0000)"``, naming the first offending character.
    """
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    point = ord(found.group())
    what = "a lone surrogate" if 0xD800 <= point <= 0xDFFF else "a control character"
    return f"{what} (U+{point:04X})"


def printable(value: str) -> str:
    """``value`` with every forbidden character written as ``\\uXXXX`` (for messages)."""
    return _FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


# The class of forbidden characters, as regex text for a JSON Schema ``pattern``. Lone
# surrogates are left out: they are not Unicode scalar values, so no JSON Schema regex
# dialect (nor a UTF-8 client) can name them; the validators still refuse them.
_FORBIDDEN_CLASS: Final = r"\x00-\x08\x0b-\x1f\x7f-\x9f"


def text_pattern(*, min_len: int, max_len: int, single_line: bool) -> str:
    """The JSON Schema ``pattern`` of a text field, exactly as the validators judge it.

    Validators strip surrounding spaces (:func:`strip_edges`), then refuse forbidden
    characters (and line breaks in one-line fields) in what remains and bound its length: so
    the pattern allows those spaces around a core of ``min_len`` to ``max_len`` characters
    that starts and ends with neither. (``maxLength`` would count the spaces too.) The space
    class is spelled out: the ``\\s`` of Python's regexes and of ECMA's differ on controls.
    """
    edge = rf"[^{EDGE_SPACE_CLASS}{_FORBIDDEN_CLASS}]"
    inner = rf"[^\n{_FORBIDDEN_CLASS}]" if single_line else rf"[^{_FORBIDDEN_CLASS}]"
    if min_len >= 2:
        core = rf"{edge}{inner}{{{min_len - 2},{max_len - 2}}}{edge}"
    else:
        core = rf"{edge}(?:{inner}{{0,{max_len - 2}}}{edge})?"
        core = f"(?:{core})?" if min_len == 0 else core
    return rf"^[{EDGE_SPACE_CLASS}]*{core}[{EDGE_SPACE_CLASS}]*$"
