"""The composition root: the one place that picks adapters from settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from prism_memory.domain.contract.bounds import APPLIES_VALUE_MAX
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import SessionContext
from prism_memory.embeddings.port import Embedder
from prism_memory.errors import FieldError, InvalidInput, StorageError
from prism_memory.services.brief_service import BriefService
from prism_memory.services.ledger_service import LedgerService
from prism_memory.services.memorule_service import MemoruleService
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.services.memory_rooms import MemoryRooms
from prism_memory.settings import Settings
from prism_memory.trigraph.keys import ApiKeyStore
from prism_memory.trigraph.ledger import AuditLedger
from prism_memory.trigraph.port import TriGraphStore

if TYPE_CHECKING:
    from prism_memory.services.access_service import AccessService
    from prism_memory.services.auth_service import AuthService


@dataclass
class Services:
    """Everything a front door needs, wired."""

    settings: Settings
    store: TriGraphStore
    embedder: Embedder
    memory: MemoryRooms
    memorules: MemoruleService
    brief: BriefService
    ledger: LedgerService

    def close(self) -> None:
        """Write pending served receipts, then release the engine."""
        try:
            self.ledger.close()
        finally:
            self.store.close()


def build_store(settings: Settings) -> TriGraphStore:
    """The storage engine the settings select (SQLite unless a database URL is given)."""
    if settings.database_url:
        try:
            from prism_memory.trigraph.postgres.store import PostgresStore
        except ImportError as exc:  # the PostgreSQL driver is an extra of the install
            if (exc.name or "").split(".")[0] not in ("psycopg", "psycopg_pool"):
                raise
            raise StorageError(
                "a postgresql:// database URL needs the PostgreSQL driver, which is not "
                "installed: pip install 'prism-memory[postgres]'"
            ) from None

        return PostgresStore(settings.database_url)
    from prism_memory.trigraph.sqlite.store import SQLiteStore

    return SQLiteStore(
        settings.db_path(),
        synchronous=settings.sqlite_synchronous,
        cache_mb=settings.recall_cache_mb,
    )


def build_embedder(settings: Settings) -> Embedder:
    """The embedding model the settings select (loaded lazily, on first use)."""
    if settings.embedder == "fake":
        from prism_memory.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    from prism_memory.embeddings.minilm import MiniLMEmbedder

    return MiniLMEmbedder(threads=settings.embed_threads)


def build_services(settings: Settings, *, migrate: bool = True) -> Services:
    """Wire services from settings; apply pending migrations unless told not to."""
    store = build_store(settings)
    if migrate:
        store.migrate()
    embedder = build_embedder(settings)
    ledger = build_ledger(store)
    writer = None
    if settings.served_receipts:
        from prism_memory.services.receipt_writer import ReceiptWriter

        writer = ReceiptWriter(ledger, settings.served_receipts_interval_s)
    audit = LedgerService(ledger, writer)
    memorules = MemoruleService(store, embedder, settings.near_duplicate_threshold, audit)
    memory = MemoryRooms(
        MemoryDeps(
            store,
            embedder,
            memorules,
            settings.ranking_weights(),
            settings.recall_preselect_above,
            served=audit,
        )
    )
    return Services(settings, store, embedder, memory, memorules, BriefService(memory), audit)


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
    return context_of(
        settings.tenant,
        settings.project,
        session_id=str(session_id) if session_id is not None else settings.session_id,
        persona=persona or settings.persona,
        surface=surface or settings.surface,
        specialization=specialization or settings.specialization,
    )


def context_of(
    tenant: str,
    project: str,
    *,
    session_id: str | None = None,
    persona: str | None = None,
    surface: str | None = None,
    specialization: str | None = None,
) -> SessionContext:
    """A session context from its values as text (a tenant and project UUID or slug, a session
    UUID or None for a new one), judged as :func:`context_from` judges settings; what a
    hook asks a running server for (``POST /v1/hooks/claude-code``).

    Raises:
        InvalidInput: every value that is malformed, at once.
    """
    errors = []
    ids: dict[str, UUID] = {}
    for name, text in (("tenant", tenant), ("project", project)):
        try:
            ids[name] = uuid_for(name, text)
        except ValueError as exc:
            errors.append(FieldError(name, "invalid_format", str(exc)))
    sid: UUID | None = None
    if session_id:
        try:
            sid = UUID(session_id)
        except ValueError:
            errors.append(FieldError("session_id", "invalid_format", "session id must be a UUID"))
    for label, value in (
        ("persona", persona),
        ("surface", surface),
        ("specialization", specialization),
    ):
        if value is not None and (
            len(value) > APPLIES_VALUE_MAX or not value.strip() or not value.isprintable()
        ):
            errors.append(
                FieldError(
                    label,
                    "invalid_format",
                    f"'{label}' must be 1 to {APPLIES_VALUE_MAX} characters on one line, "
                    "no control characters",
                )
            )
    if errors:
        raise InvalidInput(errors)
    return SessionContext(
        tenant_id=ids["tenant"],
        project_id=ids["project"],
        session_id=sid or new_id(),
        persona=persona,
        surface=surface,
        specialization=specialization,
    )


def build_key_store(store: TriGraphStore) -> ApiKeyStore:
    """The API-key store on the engine of ``store``, sharing its connections."""
    return store.key_store()


def build_ledger(store: TriGraphStore) -> AuditLedger:
    """The audit ledger (verification reads, served receipts) on the engine of ``store``."""
    return store.ledger()


def build_auth(services: Services) -> AuthService:
    """API-key checks for the HTTP API; a request naming no project gets the settings' one.

    Raises:
        InvalidInput: the settings' tenant or project is malformed.
    """
    # Imported here: the CLI's hot path (`prism brief` at every session start) needs no keys.
    from prism_memory.services.auth_service import AuthService

    return AuthService(build_key_store(services.store), context_from(services.settings).project_id)


def hook_failure_counts(services: Services) -> Callable[[], dict[str, int]]:
    """Reads the client hooks' failures counted in the store, by hook, every hook named (0:
    never failed), for ``/metrics``. The reader raises ``StorageError`` when the store fails."""
    from prism_memory.trigraph.hook_failures import HOOKS

    store = services.store.hook_failures()

    def read() -> dict[str, int]:
        counted = store.counts()
        return {hook: counted.get(hook, 0) for hook in HOOKS}

    return read


def verdict_counts(services: Services) -> Callable[[], dict[str, int]]:
    """Reads the adherence verdicts and guard attempts recorded in the store (audit events
    ``followed``, ``violated``, ``reminded``, ``blocked``, whichever process wrote them: a
    Stop hook, the guard, a door), every type named, for ``/metrics``. The first read counts
    the whole store; later reads only what each tenant's chain gained since (the heads are
    kept). The reader raises ``StorageError`` when the store fails."""
    import threading

    from prism_memory.domain.records import AuditEventType

    kinds = [
        AuditEventType.FOLLOWED.value,
        AuditEventType.VIOLATED.value,
        AuditEventType.REMINDED.value,
        AuditEventType.BLOCKED.value,
    ]
    ledger, lock = services.ledger.ledger, threading.Lock()
    heads: dict[str, int] = {}
    totals = dict.fromkeys(kinds, 0)

    def read() -> dict[str, int]:
        with lock:  # two scrapes at once must not count the same events twice
            tally = ledger.tally(kinds, heads)
            for kind, n in tally.counts.items():
                totals[kind] += n
            heads.clear()
            heads.update(tally.heads)
            return dict(totals)

    return read


def build_access(services: Services) -> AccessService:
    """Every memory operation behind the key rules (:mod:`prism_memory.domain.access`): what each
    front door calls with the key it acts with."""
    from prism_memory.services.access_service import AccessService

    return AccessService(services.memory, services.memorules, services.brief)
