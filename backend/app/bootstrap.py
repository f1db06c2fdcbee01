"""The composition root: the one place that picks adapters from settings."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from app.domain.ids import new_id, uuid_for
from app.domain.records import SessionContext
from app.embeddings.port import Embedder
from app.errors import FieldError, InvalidInput
from app.services.memorule_service import MemoruleService
from app.services.memory_service import MemoryService
from app.settings import Settings
from app.trigraph.port import TriGraphStore


@dataclass
class Services:
    """Everything a front door needs, wired."""

    settings: Settings
    store: TriGraphStore
    embedder: Embedder
    memory: MemoryService
    memorules: MemoruleService

    def close(self) -> None:
        self.store.close()


def build_store(settings: Settings) -> TriGraphStore:
    """The storage engine the settings select (SQLite unless a database URL is given)."""
    if settings.database_url:
        raise InvalidInput(
            [
                FieldError(
                    "database_url",
                    "unsupported",
                    "the PostgreSQL engine is not available in this build; "
                    "unset PRISM_DATABASE_URL "
                    "to use the embedded SQLite engine",
                )
            ]
        )
    from app.trigraph.sqlite import SQLiteStore

    return SQLiteStore(settings.db_path(), synchronous=settings.sqlite_synchronous)


def build_embedder(settings: Settings) -> Embedder:
    """The embedding model the settings select (loaded lazily, on first use)."""
    if settings.embedder == "fake":
        from app.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    from app.embeddings.minilm import MiniLMEmbedder

    return MiniLMEmbedder(threads=settings.embed_threads)


def build_services(settings: Settings, *, migrate: bool = True) -> Services:
    """Wire services from settings; apply pending migrations unless told not to."""
    store = build_store(settings)
    if migrate:
        store.migrate()
    embedder = build_embedder(settings)
    memorules = MemoruleService(store, embedder, settings.near_duplicate_threshold)
    memory = MemoryService(store, embedder, memorules, settings.ranking_weights())
    return Services(settings, store, embedder, memory, memorules)


def context_from(
    settings: Settings,
    *,
    session_id: UUID | None = None,
    persona: str | None = None,
    surface: str | None = None,
    specialization: str | None = None,
) -> SessionContext:
    """A session context from settings, with optional narrower values on top.

    Raises:
        InvalidInput: a tenant, project or session id that is neither a UUID nor a slug.
    """
    errors = []
    ids: dict[str, UUID] = {}
    for name in ("tenant", "project"):
        try:
            ids[name] = uuid_for(name, getattr(settings, name))
        except ValueError as exc:
            errors.append(FieldError(name, "invalid_format", str(exc)))
    sid = session_id
    if sid is None and settings.session_id:
        try:
            sid = UUID(settings.session_id)
        except ValueError:
            errors.append(FieldError("session_id", "invalid_format", "session id must be a UUID"))
    for label, value in (
        ("persona", persona or settings.persona),
        ("surface", surface or settings.surface),
        ("specialization", specialization or settings.specialization),
    ):
        if value is not None and (len(value) > 100 or not value.strip()):
            errors.append(
                FieldError(label, "invalid_format", f"'{label}' must be 1 to 100 characters")
            )
    if errors:
        raise InvalidInput(errors)
    return SessionContext(
        tenant_id=ids["tenant"],
        project_id=ids["project"],
        session_id=sid or new_id(),
        persona=persona or settings.persona,
        surface=surface or settings.surface,
        specialization=specialization or settings.specialization,
    )
