"""Reading rule files safely: text only, bounded, hidden characters made visible.

Rule text is data. Nothing here runs, imports or evaluates anything a file says. A file is
refused when it is over :data:`MAX_FILE_BYTES` or :data:`MAX_LINES`, holds a NUL byte
(binary) or is not UTF-8: the limits keep the whole import of any file that passes them to
seconds and bounded memory (the Markdown parser is pure Python and linear in the text).
Characters that hide text from a human reviewer (bidi controls, zero-width characters, tag
characters, control characters) are kept — the rule text is not rewritten — and reported,
one warning per character (the first :data:`HIDDEN_WARNINGS_MAX` of a file, then one
summary), with the character escaped so the warning itself shows it.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from prism_memory.errors import FieldError, InvalidInput
from prism_memory.formats.rules_io.records import FileWarning

MAX_FILE_BYTES: Final = 262_144  # 256 KiB: the largest real rule file seen is ~60 KB
MAX_LINES: Final = 10_000  # the longest real rule file seen has ~1,500 lines
MAX_UNITS: Final = 2_000  # rules and descriptive stretches of one file; real ones hold < 300
MAX_FILES: Final = 2_000
HIDDEN_WARNINGS_MAX: Final = 20  # per file; the rest are counted in one warning
RULE_SUFFIXES: Final = (".md", ".mdc")
RULE_NAMES: Final = frozenset({".cursorrules", ".windsurfrules", ".clinerules"})
_SKIP_DIRS: Final = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})

# Invisible or direction-changing characters used to hide instructions ("Trojan Source",
# ASCII smuggling with tag characters).
_HIDDEN_RANGES: Final = (
    (0x202A, 0x202E),  # LRE, RLE, PDF, LRO, RLO
    (0x2066, 0x2069),  # LRI, RLI, FSI, PDI
    (0x200B, 0x200F),  # zero-width space / non-joiner / joiner, LRM, RLM
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x061C, 0x061C),  # Arabic letter mark
    (0x00AD, 0x00AD),  # soft hyphen
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x2028, 0x2029),  # line and paragraph separators
    (0xFEFF, 0xFEFF),  # zero-width no-break space (a BOM inside text)
    (0xE0000, 0xE007F),  # tag characters
)
_HIDDEN: Final = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f"  # control characters but tab and newline
    + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _HIDDEN_RANGES)
    + "]"
)


@dataclass(frozen=True)
class SourceText:
    """A rule file's text (newlines normalised to ``\\n``, a leading BOM dropped)."""

    path: str
    text: str
    warnings: list[FileWarning]


def display_path(path: Path, cwd: Path) -> str:
    """The path as reports and evidence show it: relative to ``cwd`` when inside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def expand_paths(paths: Sequence[Path]) -> list[Path]:
    """Files to import: files as given; directories searched for rule files, sorted.

    Raises:
        InvalidInput: a path that does not exist, or more than :data:`MAX_FILES` files.
    """
    out: list[Path] = []
    errors: list[FieldError] = []
    for path in paths:
        if path.is_dir():
            out.extend(_rule_files_under(path))
        elif path.is_file():
            out.append(path)
        else:
            errors.append(
                FieldError("path", "not_found", f"{path}: no such file", {"path": str(path)})
            )
    if len(out) > MAX_FILES:
        errors.append(
            FieldError(
                "path",
                "too_many_files",
                f"{len(out)} files to import; at most {MAX_FILES} at once",
                {"max": MAX_FILES, "actual": len(out)},
            )
        )
    if errors:
        raise InvalidInput(errors)
    return list(dict.fromkeys(out))


def _rule_files_under(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):  # does not follow symlinked folders
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(RULE_SUFFIXES) or name in RULE_NAMES:
                found.append(Path(folder) / name)
    return found


def read_rule_file(path: Path, shown: str) -> SourceText:
    """Read one rule file as UTF-8 text, refusing binaries and oversize files.

    Args:
        path: the file.
        shown: its display path (for errors and warnings).

    Raises:
        InvalidInput: ``too_large``, ``binary_file``, ``not_utf8`` or ``unreadable``, with the
            path and the offending size or byte offset.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise rejected(shown, "unreadable", f"cannot read it: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        size = path.stat().st_size
        raise rejected(
            shown,
            "too_large",
            f"{size} bytes; rule files are at most {MAX_FILE_BYTES} bytes (256 KiB)",
            max_bytes=MAX_FILE_BYTES,
            actual=size,
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise rejected(
            shown, "binary_file", f"NUL byte at offset {nul}: not a text file", offset=nul
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise rejected(
            shown, "not_utf8", f"not UTF-8 text (byte offset {exc.start})", offset=exc.start
        ) from None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.count("\n") + 1
    if lines > MAX_LINES:
        raise rejected(
            shown,
            "too_many_lines",
            f"{lines} lines; rule files are at most {MAX_LINES} lines",
            max_lines=MAX_LINES,
            actual=lines,
        )
    return SourceText(shown, text, hidden_characters(shown, text.split("\n")))


def rejected(shown: str, code: str, why: str, **details: object) -> InvalidInput:
    """The error that refuses one file, with its path and the details of why."""
    return InvalidInput([FieldError("path", code, f"{shown}: {why}", {"path": shown, **details})])


def is_hidden(ch: str) -> bool:
    """True for a character that hides or reorders text for a human reader."""
    return _HIDDEN.fullmatch(ch) is not None


def escape_hidden(text: str) -> str:
    """``text`` with every hidden character written as ``\\uXXXX`` (``\\UXXXXXXXX``)."""
    return _HIDDEN.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    cp = ord(found.group())
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def hidden_characters(
    shown: str, lines: Iterable[str], first_line: int = 1, limit: int = HIDDEN_WARNINGS_MAX
) -> list[FileWarning]:
    """One warning per hidden character — file, line, column, code point, name, excerpt —
    for the first ``limit`` of them; then one ``hidden_unicode_more`` warning that counts the
    rest and the lines they are on (a file of zero-width characters makes ``limit + 1``
    warnings, not one per character)."""
    out: list[FileWarning] = []
    more = more_lines = 0
    for number, line in enumerate(lines, first_line):
        if _HIDDEN.search(line) is None:
            continue
        if len(out) >= limit:
            more += len(_HIDDEN.findall(line))
            more_lines += 1
            continue
        for found in _HIDDEN.finditer(line):
            if len(out) >= limit:
                more += 1 + len(_HIDDEN.findall(line, found.end()))
                more_lines += 1
                break
            out.append(_hidden_warning(shown, number, line, found.start()))
    if more:
        out.append(
            FileWarning(
                "hidden_unicode_more",
                shown,
                None,
                f"{shown}: {more} more hidden characters on {more_lines} lines "
                f"(the first {limit} are reported one by one; all are kept in the text)",
                {"count": more, "lines": more_lines},
            )
        )
    return out


def _hidden_warning(shown: str, number: int, line: str, index: int) -> FileWarning:
    ch, column = line[index], index + 1
    cp = ord(ch)
    code = "control_character" if cp < 0xA0 else "hidden_unicode"
    name = unicodedata.name(ch, "CONTROL CHARACTER")
    excerpt = escape_hidden(line[max(0, index - 29) : index + 30])
    return FileWarning(
        code,
        shown,
        number,
        f"{shown}:{number}:{column}: U+{cp:04X} {name} in "
        f'"{excerpt}" (kept in the text; check what it hides)',
        {"column": column, "codepoint": f"U+{cp:04X}", "name": name, "excerpt": excerpt},
    )
