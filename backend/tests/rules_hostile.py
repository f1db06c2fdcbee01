"""Hostile rule files: inputs shaped to make the importer's expressions and loops retry
every offset (catastrophic backtracking), or its reports grow with the input.

:data:`NAMED` holds the shapes an independent probe found (issue 32, D7) and the other
expressions of the same shape, each at the size named there or at the importer's limits;
:func:`fuzzed` mixes the pieces those shapes are made of at random (a fixed seed). Used by
``tests/test_rules_hostile.py`` and ``bench/rules_files/hostile.py`` (time and peak memory).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from prism_memory.formats.rules_io.reading import MAX_FILE_BYTES, MAX_LINES, MAX_UNITS

LIMIT = MAX_FILE_BYTES - 64  # just under the size limit
LINES = MAX_LINES - 1


def _fill(piece: str, size: int = LIMIT) -> str:
    """``piece`` repeated to about ``size`` bytes of UTF-8."""
    return piece * max(1, size // len(piece.encode()))


NAMED: dict[str, Callable[[], str]] = {
    # the probe's four files (issue 32, D7)
    "bold_then_sentences_10k": lambda: "a" * 9000 + "**. A" * 200 + "\n",
    "comment_openers_20000": lambda: "<!--" * 20_000 + "\n",
    "backticks_10000": lambda: "Use " + "`" * 10_000 + " now.\n",
    "zero_width_700k": lambda: "\u200b" * 240_000 + "\n",  # over the limit: refused
    # the same shapes at the limits
    "zero_width_at_limit": lambda: _fill("\u200b") + "\n",
    "zero_width_per_line": lambda: "- Use x\u200b now\n" * LINES,
    "bold_then_sentences_at_limit": lambda: "a" * 60_000 + _fill("**. A", LIMIT - 60_000),
    "sentences_at_limit": lambda: _fill("Use x now. "),
    "one_letter_sentences": lambda: _fill("a. "),
    "comment_openers_in_item": lambda: "- Use x " + _fill("<!--", LIMIT - 16) + "\n",
    "closed_comments_inline": lambda: "- Use x " + _fill("<!-- c -->", LIMIT - 16) + "\n",
    "comment_blocks": lambda: "<!-- c -->\n\n" * (LINES // 2),
    "backtick_runs": lambda: "- Use " + "".join("`" * i + " x " for i in range(1, 700)) + "\n",
    "backticks_at_limit": lambda: "- Use " + "`" * (LIMIT - 8) + "\n",
    "backticks_then_text": lambda: "``" + _fill("a` ", LIMIT - 8) + "\n",
    "spaces_before_marker": lambda: "- Use x" + " " * (LIMIT - 16) + "y\n",
    "front_matter_spaces": lambda: "---\nglobs: a" + " " * (LIMIT - 40) + "b\n---\n- Use x.\n",
    "front_matter_item_spaces": lambda: "---\nglobs:\n  - a" + " " * (LIMIT - 40) + "b\n---\n",
    "long_word_style": lambda: "- Use " + "a" * (LIMIT - 16) + "\n",
    "long_number_chars": lambda: "- Use " + "1" * (LIMIT - 16) + "\n",
    "command_words": lambda: "- Use the " + _fill("command ", LIMIT - 16) + "\n",
    "at_imports": lambda: _fill("@a/b.md "),
    "emphasis_openers": lambda: _fill("*a "),
    "link_openers": lambda: _fill("[a]("),
    "list_items_at_line_limit": lambda: "- Use x now\n" * LINES,
    "table_rows_at_line_limit": lambda: "|a|b|\n|-|-|\n" + "|Use x|y|\n" * (LINES - 3),
    "nested_lists": lambda: "".join("  " * (i % 30) + "- Use x\n" for i in range(LINES // 2)),
    "nested_quotes": lambda: "> " * 5000 + "Use x.\n",
    "lead_ins": lambda: "Do this:\n\n- Use x\n\n" * (LINES // 4),
    "headings": lambda: "## Rules\n" * LINES,
    "code_fences": lambda: "- Use x:\n\n```\na\n```\n" * (LINES // 6),
    "items_at_the_unit_limit": lambda: "- Use x now\n" * MAX_UNITS,
    "over_the_line_limit": lambda: "x\n" * (MAX_LINES + 1),  # refused
}
REFUSED = {
    "zero_width_700k": "too_large",
    "over_the_line_limit": "too_many_lines",
    "zero_width_per_line": "too_many_units",
    "sentences_at_limit": "too_many_units",
    "list_items_at_line_limit": "too_many_units",
    "lead_ins": "too_many_units",
}

_PIECES = (
    "**", "*", "_", "`", "```", "<!--", "-->", ". ", "! ", "? ", "A", "a", "1.", "e.g.",
    "\u200b", "\u202e", "- ", "1. ", "\n", "\n\n", "# ", "> ", "|", ":", "@x/y.md", " ",
    "[", "](", "<", ">", "\\", "Use ", "Never ", "must ", "command ", "prism:id=",
    "---\n", "globs: ", "    ", "\t",
)  # fmt: skip


def fuzzed(count: int, seed: int = 32) -> dict[str, str]:
    """``count`` files of random runs of :data:`_PIECES`, from 1 KB to the size limit."""
    rng = random.Random(seed)
    out = {}
    for n in range(count):
        size = rng.choice([1_000, 10_000, 60_000, LIMIT])
        parts, total = [], 0
        while total < size:
            piece = rng.choice(_PIECES) * rng.choice([1, 1, 2, 10, 100, 2000])
            parts.append(piece)
            total += len(piece.encode())
        text = "".join(parts).encode()[:size].decode(errors="ignore")
        lines = text.split("\n")
        out[f"fuzz_{n:02d}"] = "\n".join(lines[:LINES])
    return out
