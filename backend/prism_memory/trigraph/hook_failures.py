"""Hook failures, counted in the store the hooks read (issue 29).

Client hooks (``prism brief --hook``, the ``PreToolUse`` guard, the capture and adherence
``Stop`` hooks) are short processes of their own that fail open: a failure leaves the agent's
session as it would be without Prism and is said on stderr (or in the hook's log file). Each
such failure also adds one to its hook's row of ``hook_failure`` (SQLite migration 8,
PostgreSQL migration 9), in the same store, so a server on that store shows them on
``/metrics`` (``prism_hook_failures_total{hook}``).

Only failures that can still reach the store are counted: a store that cannot be opened, a
locked SQLite file past its busy timeout, an unreachable PostgreSQL, a schema older than the
table, or a brief hook killed by its deadline leave the count as it was (the stderr line and
the log file remain). Skips (no store yet, input that is not a hook call, nothing applies)
are not failures. The table holds no tenant, project, key or text: a count per hook.

Adapters: :mod:`prism_memory.trigraph.sqlite.hook_failures`,
:mod:`prism_memory.trigraph.postgres.hook_failures`.
"""

from __future__ import annotations

from typing import Final, Protocol

# The hooks whose failures are counted (the metric's label values: bounded).
HOOKS: Final = ("brief", "guard", "capture", "adherence")


class HookFailureCounts(Protocol):
    """The failures of each hook recorded in one store."""

    def counts(self) -> dict[str, int]:
        """Failures recorded per hook (hooks never failed are absent).

        Raises:
            StorageError: the engine failed or the table is not there (not migrated).
        """
        ...
