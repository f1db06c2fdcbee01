"""Where Prism keeps its store: a light module (no pydantic), so that a process that only needs
the location (the ``PreToolUse`` guard) does not load the settings model."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_db_path() -> Path:
    """``prism.db`` in the user's data directory (e.g. ``~/.local/share/prism-memory``)."""
    from platformdirs import user_data_path

    return user_data_path("prism-memory", appauthor=False) / "prism.db"


def store_location(flags: Mapping[str, str | None]) -> tuple[Path, str | None]:
    """The SQLite file and the PostgreSQL URL (None: SQLite) a hook reads, as the settings
    resolve them: a flag (``db``, ``database_url``), then ``PRISM_DB``/``PRISM_DATABASE_URL``
    (in any case), then the default file."""
    environ = {key.upper(): value for key, value in os.environ.items()}
    db = flags.get("db") or environ.get("PRISM_DB") or None
    url = flags.get("database_url") or environ.get("PRISM_DATABASE_URL") or None
    return (Path(db).expanduser() if db else default_db_path()), url
