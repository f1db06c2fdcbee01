"""What a client hook knows about the project it runs in: ``.prism.toml``, the surface the
project's files suggest, and the Prism session a client's session maps to.

A hook gets no ``PRISM_*`` variables unless the user put them in the client's settings, so
the project can say who and where it is in a ``.prism.toml`` at its root (or any folder
above the hook's working directory)::

    persona = "donna"
    project = "prism-memory"
    surface = "python"          # omit to derive it from the project's files
    specialization = "backend"
    tenant = "default"
    derive_surface = true       # false: never guess the surface

Precedence, highest first: the command's flags, ``PRISM_*`` variables, ``.prism.toml``,
the derived surface.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple

CONFIG_NAME: Final = ".prism.toml"
CONFIG_MAX_BYTES: Final = 65_536
CONTEXT_KEYS: Final = ("tenant", "project", "persona", "surface", "specialization")
# Marker files at a project's root and the one surface each names. The surface is derived
# only when the markers found name exactly one surface (a repository with pyproject.toml
# and package.json names none), because a wrong surface hides the rules of the right one.
SURFACE_MARKERS: Final[dict[str, str]] = {
    "pyproject.toml": "python",
    "setup.py": "python",
    "setup.cfg": "python",
    "requirements.txt": "python",
    "tsconfig.json": "typescript",
    "package.json": "javascript",
    "go.mod": "go",
    "Cargo.toml": "rust",
    "pom.xml": "java",
    "build.gradle": "java",
    "build.gradle.kts": "kotlin",
    "Gemfile": "ruby",
    "composer.json": "php",
    "mix.exs": "elixir",
    "pubspec.yaml": "dart",
    "Package.swift": "swift",
}
# tsconfig.json next to package.json is a TypeScript project, not two surfaces.
_SUBSUMES: Final = {"typescript": "javascript"}
# Fixed forever: a client session id that is not a UUID maps to uuid5(this, "client:id").
CLIENT_SESSION_NAMESPACE: Final = uuid.UUID("6b1f3a52-93c4-5d0e-9a57-0c6f1e2d4b18")


class ProjectConfig(NamedTuple):
    """A project's ``.prism.toml`` (empty when there is none) and where it was found.

    A named tuple, not a dataclass: the hooks' fast paths read it, and ``dataclasses``
    imports ``inspect`` (about a third of such a hook's own start-up).

    Attributes:
        root: the project's root: the folder holding ``.git`` (or the start folder).
        path: the ``.prism.toml`` read, if any.
        values: its context values (``tenant``, ``project``, ``persona``, ``surface``,
            ``specialization``), as given.
        derive_surface: whether a missing surface may be derived from marker files.
    """

    root: Path
    path: Path | None = None
    values: Mapping[str, str] = MappingProxyType({})
    derive_surface: bool = True

    def derived_surface(self) -> str | None:
        """The one surface the root's marker files name, or None (none, several, or off)."""
        if not self.derive_surface:
            return None
        return surface_of(self.root)


def with_project_config(
    options: Mapping[str, Any], config: ProjectConfig, environ: Mapping[str, str]
) -> dict[str, Any]:
    """``options`` (a command's flags, None where not given) completed from ``config``: a
    value the flags and the ``PRISM_*`` variables leave open comes from ``.prism.toml``,
    then a missing surface from the project's files."""
    merged = dict(options)
    for key, value in config.values.items():
        if merged.get(key) is None and f"PRISM_{key.upper()}" not in environ:
            merged[key] = value
    if merged.get("surface") is None and "PRISM_SURFACE" not in environ:
        merged["surface"] = config.derived_surface()
    return merged


def find_project_config(start: Path) -> ProjectConfig:
    """The ``.prism.toml`` in ``start`` or the nearest folder above it, up to the project root.

    The project root is the nearest folder holding ``.git``; without one the search goes up
    to the file-system root and the root is ``start`` itself.

    Raises:
        InvalidInput: the file is unreadable, too large, not TOML, or holds an unknown key
            or a value of the wrong type (every problem at once).
    """
    start = start.resolve()
    root: Path | None = None
    found: Path | None = None
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if found is None and candidate.is_file():
            found = candidate
        if (folder / ".git").exists():
            root = folder
            break
    if root is None:
        root = found.parent if found is not None else start
    if found is None:
        return ProjectConfig(root)
    values, derive = _read(found)
    return ProjectConfig(root, found, values, derive)


def _read(path: Path) -> tuple[dict[str, str], bool]:
    # here, not at import: a hook in a project without a .prism.toml never needs the errors
    from prism_memory.errors import FieldError, InvalidInput

    label = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput([FieldError(CONFIG_NAME, "unreadable", f"{label}: {exc}")]) from None
    if len(raw) > CONFIG_MAX_BYTES:
        raise InvalidInput(
            [
                FieldError(
                    CONFIG_NAME,
                    "too_large",
                    f"{label} is over {CONFIG_MAX_BYTES} bytes",
                    {"max": CONFIG_MAX_BYTES, "actual": len(raw)},
                )
            ]
        )
    import tomllib  # only when a project has a .prism.toml (hooks start without one)

    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput([FieldError(CONFIG_NAME, "invalid_toml", f"{label}: {exc}")]) from None
    errors = []
    values: dict[str, str] = {}
    derive = True
    for key, value in data.items():
        if key == "derive_surface":
            if not isinstance(value, bool):
                errors.append(
                    FieldError(
                        f"{CONFIG_NAME}.{key}", "wrong_type", f"'{key}' must be true or false"
                    )
                )
            else:
                derive = value
        elif key in CONTEXT_KEYS:
            if not isinstance(value, str) or not value.strip():
                errors.append(
                    FieldError(
                        f"{CONFIG_NAME}.{key}", "wrong_type", f"'{key}' must be a non-empty string"
                    )
                )
            else:
                values[key] = value
        else:
            errors.append(
                FieldError(
                    f"{CONFIG_NAME}.{key}",
                    "unknown_field",
                    f"'{key}' is not a {CONFIG_NAME} setting",
                    {"allowed": [*CONTEXT_KEYS, "derive_surface"]},
                )
            )
    if errors:
        raise InvalidInput(errors)
    return values, derive


def surface_of(root: Path) -> str | None:
    """The one surface the marker files in ``root`` name, or None."""
    named = {surface for marker, surface in SURFACE_MARKERS.items() if (root / marker).is_file()}
    for narrower, broader in _SUBSUMES.items():
        if narrower in named:
            named.discard(broader)
    return named.pop() if len(named) == 1 else None


def session_uuid(client: str, session_id: str) -> uuid.UUID:
    """The Prism session a client's session maps to, the same every time.

    A session id that is a UUID (Claude Code's are) is used as it is, so Prism's audit
    events and served receipts name the session the client shows; anything else maps to
    ``uuid5(CLIENT_SESSION_NAMESPACE, "<client>:<session_id>")``.
    """
    try:
        return uuid.UUID(session_id)
    except ValueError:
        return uuid5(CLIENT_SESSION_NAMESPACE, f"{client}:{session_id}")


def uuid5(namespace: uuid.UUID, name: str) -> uuid.UUID:
    """``uuid.uuid5``, computed with CPython's built-in SHA-1 when there is one: ``uuid5``
    imports ``hashlib``, which loads OpenSSL (5-10 ms of a hook's start-up)."""
    data = namespace.bytes + name.encode("utf-8")
    try:
        import _sha1  # type: ignore[import-not-found]
    except ImportError:  # an interpreter built without it
        import hashlib

        return uuid.UUID(bytes=hashlib.sha1(data).digest()[:16], version=5)
    return uuid.UUID(bytes=bytes(_sha1.sha1(data).digest())[:16], version=5)
