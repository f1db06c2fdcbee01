"""``@path`` imports, the way Claude Code reads them in CLAUDE.md.

Claude Code's memory documentation: a CLAUDE.md can import other files with
``@path/to/import``; relative and absolute paths are allowed (``~/`` is the home folder);
relative paths resolve against the file that holds the import; imports are not evaluated
inside Markdown code spans or code blocks; imported files can import further files, at
most five hops deep.

Here :func:`imports_in` finds the imports of a parsed file (text tokens only: the parser
has already set code spans and fences apart), and :func:`resolve` turns one into a path.
The importer (:mod:`prism_memory.services.rules_import`) follows them, refusing cycles and a sixth
hop, and gives every imported file's rules their own file and line evidence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from prism_memory.formats.rules_io.blocks import Node, text_tokens

MAX_DEPTH: Final = 5
# "@" at the start or after white space (not in an e-mail address), then a path.
_IMPORT: Final = re.compile(r"(?:(?<=[\s(])|^)@(?P<path>[~./\w-][^\s`'\"<>()\[\]]*)")
_TRAILING: Final = ".,;:!?"
IMPORTING_NAMES: Final = frozenset({"CLAUDE.md", "CLAUDE.local.md"})


def imports_in(nodes: list[Node]) -> list[tuple[str, int]]:
    """``(target, line)`` for every ``@path`` outside code, in file order, each once."""
    found: dict[tuple[str, int], None] = {}
    _collect(nodes, found)
    return list(found)


def _collect(nodes: list[Node], found: dict[tuple[str, int], None]) -> None:
    for node in nodes:
        if node.inline is not None:
            raw, cursor, line = node.inline.content, 0, node.start
            for piece in text_tokens(node.inline):
                for match in _IMPORT.finditer(piece):
                    target = match["path"].rstrip(_TRAILING)
                    if "/" not in target and "." not in target:
                        continue  # "@claude", a mention: no file name
                    where = raw.find("@" + target, cursor)
                    if where >= 0:
                        line += raw.count("\n", cursor, where)
                        cursor = where
                    found.setdefault((target, line))
        _collect(node.children, found)


def follows_imports(path: Path) -> bool:
    """Whether Claude Code reads ``@path`` imports in this file (a CLAUDE.md)."""
    return path.name in IMPORTING_NAMES


def resolve(target: str, importer: Path) -> Path:
    """The file ``target`` names, relative to the folder of the file that imports it."""
    if target.startswith("~/"):
        return Path(target).expanduser()
    candidate = Path(target)
    return candidate if candidate.is_absolute() else importer.parent / candidate
