"""API keys: issue, list, revoke, authenticate; and the session context a key may act in.

The rules of what a key may do are pure and live in :mod:`prism_memory.domain.access`; this service
adds randomness and storage. A key's secret is shown once, at creation, and never stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from prism_memory.domain import access
from prism_memory.domain.access import ApiKey, KeySlugs, Role
from prism_memory.domain.ids import new_id, uuid_for
from prism_memory.domain.records import SessionContext, utcnow
from prism_memory.errors import FieldError, InvalidInput, NotFound, Unauthenticated
from prism_memory.trigraph.keys import ApiKeyStore

PROJECTS_MAX = 100
LABEL_MAX = 200
PERSONA_MAX = 100
CONTEXT_VALUE_MAX = 100
_INVALID_KEY = "the API key is not valid (unknown or revoked)"


@dataclass(frozen=True)
class IssuedKey:
    """A new key and its secret: the only moment the secret exists outside the caller."""

    key: ApiKey
    secret: str


@dataclass(frozen=True)
class ContextRequest:
    """The context values a request names (HTTP headers); all optional."""

    project: str | None = None
    persona: str | None = None
    surface: str | None = None
    specialization: str | None = None
    session_id: str | None = None


class AuthService:
    """Issues and checks API keys.

    Args:
        keys: where keys are stored.
        default_project: the project of a request that names none (the server's setting).
    """

    def __init__(self, keys: ApiKeyStore, default_project: UUID) -> None:
        self.keys = keys
        self.default_project = default_project

    def create_key(
        self,
        tenant: str,
        role: str,
        projects: Sequence[str] = (),
        persona: str | None = None,
        label: str | None = None,
    ) -> IssuedKey:
        """Issue a key bound to one tenant.

        Args:
            tenant: tenant UUID or slug.
            role: ``reader``, ``writer`` or ``admin``.
            projects: project UUIDs or slugs the key is limited to (none: every project).
            persona: the persona every write made with the key is attributed to.
            label: a note for people (who holds the key).

        Returns:
            The stored key and its secret (``prism_`` + 43 URL-safe characters).

        Raises:
            InvalidInput: every field error at once.
        """
        errors: list[FieldError] = []
        tenant_id = _slug_id(errors, "tenant", tenant)
        if role not in {r.value for r in Role}:
            errors.append(
                FieldError(
                    "role",
                    "invalid_choice",
                    "'role' must be one of reader, writer, admin",
                    {"allowed": [r.value for r in Role]},
                )
            )
        if len(projects) > PROJECTS_MAX:
            errors.append(
                FieldError("projects", "too_many", f"at most {PROJECTS_MAX} projects per key")
            )
        project_ids = [_slug_id(errors, "project", p) for p in projects[:PROJECTS_MAX]]
        persona = _short_text(errors, "persona", persona, PERSONA_MAX)
        label = _short_text(errors, "label", label, LABEL_MAX)
        if errors:
            raise InvalidInput(errors)
        assert tenant_id is not None
        secret = access.KEY_PREFIX + secrets.token_urlsafe(32)
        project_slugs: dict[UUID, str] = {}
        for pid, name in zip(project_ids, projects, strict=True):
            if pid is not None and (slug := _slug_typed(name)) is not None:
                project_slugs.setdefault(pid, slug)  # the first slug typed for it
        key = ApiKey(
            key_id=access.KEY_ID_PREFIX + secrets.token_hex(6),
            tenant_id=tenant_id,
            role=Role(role),
            projects=tuple(dict.fromkeys(p for p in project_ids if p is not None)),
            persona=persona,
            prefix=secret[:10],
            label=label,
            created_at=utcnow(),
            slugs=KeySlugs(_slug_typed(tenant), tuple(project_slugs.items())),
        )
        self.keys.add_key(key, access.hash_secret(secret))
        return IssuedKey(key, secret)

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of one tenant when given), oldest first, revoked ones included.

        Raises:
            InvalidInput: ``tenant`` is neither a UUID nor a slug.
        """
        errors: list[FieldError] = []
        tenant_id = _slug_id(errors, "tenant", tenant) if tenant is not None else None
        if errors:
            raise InvalidInput(errors)
        return self.keys.keys(tenant_id)

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key at once; revoking it again changes nothing.

        Raises:
            NotFound: no key has that id.
        """
        key = self.keys.revoke_key(key_id.strip(), utcnow())
        if key is None:
            raise NotFound(f"no API key {key_id}", key_id=key_id)
        return key

    def authenticate(self, secret: str | None) -> ApiKey:
        """The live key a presented secret belongs to.

        Raises:
            Unauthenticated: no secret, or one that is malformed, unknown or revoked (the
                last three answer alike).
            StorageError: the key store is unavailable.
        """
        if not secret:
            raise Unauthenticated("an API key is required: send 'Authorization: Bearer prism_...'")
        if len(secret) > access.KEY_MAX_LENGTH or not secret.startswith(access.KEY_PREFIX):
            raise Unauthenticated(_INVALID_KEY)
        key = self.keys.key_by_hash(access.hash_secret(secret))
        if key is None or key.revoked:
            raise Unauthenticated(_INVALID_KEY)
        return key

    def local_key(self, tenant: str, persona: str | None = None) -> ApiKey:
        """The unrestricted admin "key" of ``--insecure-local`` mode (never stored).

        Raises:
            InvalidInput: ``tenant`` is neither a UUID nor a slug.
        """
        errors: list[FieldError] = []
        tenant_id = _slug_id(errors, "tenant", tenant)
        if errors or tenant_id is None:
            raise InvalidInput(errors)
        return access.operator_key(
            tenant_id, persona, key_id="insecure-local", label="--insecure-local"
        )

    def context_for(self, key: ApiKey, request: ContextRequest) -> SessionContext:
        """The session context a request runs in: the tenant ALWAYS from the key.

        Raises:
            InvalidInput: a malformed project, session id or context value (all reported).
            PermissionDenied: a project or persona the key may not act as.
        """
        errors: list[FieldError] = []
        project = _slug_id(errors, "project", request.project) if request.project else None
        session = None
        if request.session_id:
            try:
                session = UUID(request.session_id)
            except ValueError:
                errors.append(FieldError("session_id", "invalid_format", "must be a UUID"))
        values = {
            name: _short_text(errors, name, getattr(request, name), CONTEXT_VALUE_MAX)
            for name in ("persona", "surface", "specialization")
        }
        if errors:
            raise InvalidInput(errors)
        return SessionContext(
            tenant_id=key.tenant_id,
            project_id=access.resolve_project(key, project, self.default_project),
            session_id=session or new_id(),
            persona=access.resolve_persona(key, values["persona"]),
            surface=values["surface"],
            specialization=values["specialization"],
            key_id=key.key_id,
        )


def _slug_id(errors: list[FieldError], kind: str, value: str) -> UUID | None:
    try:
        return uuid_for(kind, value.strip())
    except ValueError as exc:
        errors.append(FieldError(kind, "invalid_format", str(exc)))
        return None


def _slug_typed(typed: str) -> str | None:
    """The slug as typed (kept for people: a slug maps one way to its UUID), or None when a
    UUID itself was typed. Only called on values :func:`_slug_id` accepted."""
    try:
        UUID(typed.strip())
    except ValueError:
        return typed.strip()
    return None


def _short_text(errors: list[FieldError], name: str, value: str | None, limit: int) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > limit or not value.isprintable():
        errors.append(
            FieldError(
                name,
                "invalid_format",
                f"'{name}' must be 1 to {limit} printable characters",
                {"max": limit},
            )
        )
        return None
    return value
