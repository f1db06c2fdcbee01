"""Count a failing hook in the store it reads (:mod:`prism_memory.trigraph.hook_failures`).

Called from a hook's fail-open path with the hook's flags; light (no settings model, no
domain): the guard calls it too. Never raises and never makes a store.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


def count_failure(flags: Mapping[str, Any], hook: str) -> bool:
    """Add one failure of ``hook`` (one of ``HOOKS``) to the store ``flags`` (``db``,
    ``database_url``; else the environment, else the default file) name.

    Returns:
        Whether it was counted (see the module for what cannot be).
    """
    try:
        from prism_memory.locations import store_location

        db, url = store_location(
            {k: str(flags[k]) for k in ("db", "database_url") if flags.get(k) is not None}
        )
        when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if url:
            from prism_memory.trigraph.postgres.hook_failures import record as on_postgres

            return on_postgres(url, hook, when)
        from prism_memory.trigraph.sqlite.hook_failures import record as on_sqlite

        return on_sqlite(db, hook, when)
    except Exception:  # a hook's failure path must not fail: the count is best effort
        return False
