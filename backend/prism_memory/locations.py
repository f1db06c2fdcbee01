"""Where Prism keeps its embedded store by default: a light module (no pydantic), so that a
process that only needs the path (the ``PreToolUse`` guard) does not load the settings model."""

from __future__ import annotations

from pathlib import Path


def default_db_path() -> Path:
    """``prism.db`` in the user's data directory (e.g. ``~/.local/share/prism-memory``)."""
    from platformdirs import user_data_path

    return user_data_path("prism-memory", appauthor=False) / "prism.db"
