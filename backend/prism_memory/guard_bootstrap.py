"""The composition root of the ``PreToolUse`` guard process (``prism guard claude-code``).

The guard runs before every Bash command and file edit of an agent, as a fresh process, so it
wires only what it needs: where the store is and who is acting (the same precedence as every
hook: flags, then ``PRISM_*`` variables, then the project's ``.prism.toml``, then the surface
its files name), and the engine's light read of the rules with checks
(:class:`~prism_memory.trigraph.port.AdherenceStore`). No settings model, no services, no
embedding model: :mod:`prism_memory.bootstrap` wires those for every other process.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from prism_memory.domain.ids import uuid_for
from prism_memory.domain.records import SessionContext
from prism_memory.errors import FieldError, InvalidInput
from prism_memory.locations import store_location
from prism_memory.services.project_config import CONTEXT_KEYS, find_project_config

if TYPE_CHECKING:  # the port module imports numpy; the guard never runs it
    from prism_memory.trigraph.port import AdherenceStore

ENV_PREFIX: Final = "PRISM_"  # as prism_memory.settings reads them


@dataclass(frozen=True)
class GuardSettings:
    """Where the guard reads rules, and the context it judges in."""

    db: Path
    database_url: str | None
    tenant: str
    project: str
    persona: str | None = None
    surface: str | None = None
    specialization: str | None = None

    def context(self, session_id: uuid.UUID) -> SessionContext:
        """The session context of the guarded session.

        Raises:
            InvalidInput: a tenant or project that is neither a UUID nor a slug.
        """
        ids: dict[str, uuid.UUID] = {}
        errors = []
        for name in ("tenant", "project"):
            try:
                ids[name] = uuid_for(name, getattr(self, name))
            except ValueError as exc:
                errors.append(FieldError(name, "invalid_format", str(exc)))
        if errors:
            raise InvalidInput(errors)
        return SessionContext(
            tenant_id=ids["tenant"],
            project_id=ids["project"],
            session_id=session_id,
            persona=self.persona,
            surface=self.surface,
            specialization=self.specialization,
        )


def guard_settings(flags: Mapping[str, str | None], start: Path) -> GuardSettings:
    """Flags first, then ``PRISM_*`` variables, then the ``.prism.toml`` found from ``start``,
    then the surface the project's files name.

    Raises:
        InvalidInput: an unreadable or invalid ``.prism.toml``.
    """
    environ = {key.upper(): value for key, value in os.environ.items()}
    values: dict[str, str | None] = {}
    for name in CONTEXT_KEYS:
        given = flags.get(name)
        values[name] = given if given else environ.get(f"{ENV_PREFIX}{name.upper()}") or None
    config = find_project_config(start)
    for key, value in config.values.items():
        if values.get(key) is None:
            values[key] = value
    if values.get("surface") is None:
        values["surface"] = config.derived_surface()
    db, url = store_location(flags)
    return GuardSettings(
        db=db,
        database_url=url,
        tenant=values.get("tenant") or "default",
        project=values.get("project") or "default",
        persona=values.get("persona"),
        surface=values.get("surface"),
        specialization=values.get("specialization"),
    )


def build_rules_reader(settings: GuardSettings) -> AdherenceStore:
    """The engine's light read of the rules with checks (PostgreSQL when a URL is set)."""
    if settings.database_url:
        from prism_memory.trigraph.postgres.rules_reader import PostgresRulesReader

        return PostgresRulesReader(settings.database_url)
    from prism_memory.trigraph.sqlite.rules_reader import SQLiteRulesReader

    return SQLiteRulesReader(settings.db)
