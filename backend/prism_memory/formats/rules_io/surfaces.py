"""Surfaces and file globs: the small known mapping between ``applies_to.surface`` and the
globs Cursor (``globs``) and Copilot (``applyTo``) use to pick the files a rule is for.

Only mappings that are unambiguous are known; anything else stays unmapped, and the rule is
then general (on import) or has no globs (on export).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

SURFACE_GLOBS: Final[dict[str, tuple[str, ...]]] = {
    "python": ("**/*.py", "**/*.pyi"),
    "typescript": ("**/*.ts", "**/*.tsx"),
    "javascript": ("**/*.js", "**/*.jsx", "**/*.mjs", "**/*.cjs"),
    "react": ("**/*.jsx", "**/*.tsx"),
    "go": ("**/*.go",),
    "rust": ("**/*.rs",),
    "java": ("**/*.java",),
    "kotlin": ("**/*.kt", "**/*.kts"),
    "csharp": ("**/*.cs",),
    "cpp": ("**/*.cpp", "**/*.cc", "**/*.cxx", "**/*.hpp", "**/*.hh"),
    "c": ("**/*.c", "**/*.h"),
    "ruby": ("**/*.rb",),
    "php": ("**/*.php",),
    "swift": ("**/*.swift",),
    "dart": ("**/*.dart",),
    "scala": ("**/*.scala",),
    "elixir": ("**/*.ex", "**/*.exs"),
    "sql": ("**/*.sql",),
    "markdown": ("**/*.md",),
    "terraform": ("**/*.tf", "**/*.tfvars"),
    "docker": ("**/Dockerfile", "**/*.dockerfile"),
    "shell": ("**/*.sh", "**/*.bash"),
    "powershell": ("**/*.ps1", "**/*.psm1"),
    "vue": ("**/*.vue",),
    "svelte": ("**/*.svelte",),
    "astro": ("**/*.astro",),
    "html": ("**/*.html",),
    "css": ("**/*.css", "**/*.scss"),
    "solidity": ("**/*.sol",),
    "github-actions": (".github/workflows/*.yml", ".github/workflows/*.yaml"),
}
# One surface per file extension, for globs that name an extension (src/**/*.py).
_BY_EXTENSION: Final[dict[str, str]] = {
    glob.rsplit(".", 1)[1]: surface
    for surface, globs in SURFACE_GLOBS.items()
    if surface not in ("react", "c", "github-actions", "docker")
    for glob in globs
    if glob.startswith("**/*.")
} | {"h": "c", "c": "c", "tsx": "typescript", "jsx": "javascript"}
_EXTENSION: Final = re.compile(r"\*\.(?P<ext>[A-Za-z0-9]+)$")
_ALL: Final = frozenset({"**", "**/*", "*", "**/*.*"})


def globs_for(surface: str | None) -> tuple[str, ...]:
    """The globs a surface maps to (empty when unknown or None)."""
    if surface is None:
        return ()
    return SURFACE_GLOBS.get(surface.strip().lower(), ())


def surface_for(globs: Iterable[str]) -> str | None:
    """The one surface a set of globs names, or None (none, several, or unknown).

    ``**/*`` and friends mean "every file": no surface.
    """
    wanted = [g.strip().removeprefix("./") for g in globs if g.strip()]
    wanted = [g for g in wanted if g not in _ALL]
    if not wanted:
        return None
    as_set = frozenset(wanted)
    for name, known in SURFACE_GLOBS.items():
        if as_set == frozenset(known):
            return name
    found = set()
    for glob in wanted:
        ext = _EXTENSION.search(glob)
        surface: str | None = _BY_EXTENSION.get(ext["ext"].lower()) if ext else None
        if surface is None:
            for name, known in SURFACE_GLOBS.items():
                if glob in known:
                    surface = name
        if surface is None:
            return None
        found.add(surface)
    return found.pop() if len(found) == 1 else None
