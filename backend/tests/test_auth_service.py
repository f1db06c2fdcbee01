"""API keys on a real SQLite file: issue, store only a hash, authenticate, revoke, contexts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from prism_memory.bootstrap import Services, build_auth, build_services
from prism_memory.domain.access import Role
from prism_memory.domain.ids import uuid_for
from prism_memory.errors import InvalidInput, NotFound, PermissionDenied, Unauthenticated
from prism_memory.services.auth_service import AuthService, ContextRequest
from prism_memory.settings import load_settings


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    services = build_services(load_settings(db=tmp_path / "k.db", embedder="fake", database_url=""))
    try:
        yield services
    finally:
        services.close()


@pytest.fixture
def auth(svc: Services) -> AuthService:
    return build_auth(svc)


def test_a_new_key_is_shown_once_and_only_its_hash_is_stored(
    auth: AuthService, svc: Services
) -> None:
    issued = auth.create_key("acme", "writer", ["p1", "p1", "p2"], persona="donna", label="ci")
    assert issued.secret.startswith("prism_") and len(issued.secret) == 49
    assert issued.key.projects == (uuid_for("project", "p1"), uuid_for("project", "p2"))
    assert issued.key.prefix == issued.secret[:10]
    db = sqlite3.connect(svc.settings.db_path())
    dump = "\n".join(db.iterdump())
    db.close()
    assert issued.secret not in dump and issued.secret[10:] not in dump
    assert auth.authenticate(issued.secret) == issued.key


def test_every_bad_field_of_a_key_is_reported_at_once(auth: AuthService) -> None:
    with pytest.raises(InvalidInput) as caught:
        auth.create_key("not a slug!", "owner", ["ok", "bad slug"], persona=" ", label="x" * 300)
    assert [e.field for e in caught.value.errors] == [
        "tenant",
        "role",
        "project",
        "persona",
        "label",
    ]


@pytest.mark.parametrize("secret", [None, "", "Bearer", "prism_" + "a" * 43, "x" * 5000])
def test_missing_malformed_and_unknown_keys_are_unauthenticated(
    auth: AuthService, secret: str | None
) -> None:
    with pytest.raises(Unauthenticated):
        auth.authenticate(secret)


def test_a_revoked_key_stops_working_at_once_and_revoking_twice_keeps_the_first_time(
    auth: AuthService,
) -> None:
    issued = auth.create_key("acme", "admin")
    first = auth.revoke_key(issued.key.key_id)
    assert first.revoked_at is not None
    assert auth.revoke_key(issued.key.key_id).revoked_at == first.revoked_at
    with pytest.raises(Unauthenticated) as revoked:
        auth.authenticate(issued.secret)
    with pytest.raises(Unauthenticated) as unknown:
        auth.authenticate("prism_" + "b" * 43)
    assert revoked.value.to_payload() == unknown.value.to_payload()
    with pytest.raises(NotFound):
        auth.revoke_key("key_000000000000")


def test_keys_are_listed_per_tenant_oldest_first(auth: AuthService) -> None:
    a1 = auth.create_key("acme", "reader").key
    b1 = auth.create_key("beta", "reader").key
    a2 = auth.create_key("acme", "writer").key
    assert [k.key_id for k in auth.list_keys("acme")] == [a1.key_id, a2.key_id]
    assert {k.key_id for k in auth.list_keys()} == {a1.key_id, b1.key_id, a2.key_id}


def test_the_tenant_of_a_request_always_comes_from_the_key(auth: AuthService) -> None:
    key = auth.create_key("acme", "reader", ["p1"], persona="donna").key
    ctx = auth.context_for(key, ContextRequest(surface="python"))
    assert ctx.tenant_id == uuid_for("tenant", "acme")
    assert ctx.project_id == uuid_for("project", "p1")
    assert (ctx.persona, ctx.surface) == ("donna", "python")
    with pytest.raises(PermissionDenied):
        auth.context_for(key, ContextRequest(project="p2"))
    with pytest.raises(InvalidInput) as caught:
        auth.context_for(key, ContextRequest(project="bad slug", session_id="nope", surface=""))
    assert [e.field for e in caught.value.errors] == ["project", "session_id", "surface"]


def test_the_insecure_local_key_is_an_unrestricted_admin_never_stored(auth: AuthService) -> None:
    local = auth.local_key("me")
    assert (local.role, local.projects) == (Role.ADMIN, ())
    assert auth.list_keys() == []


def test_the_key_store_is_not_ready_before_migration(tmp_path: Path) -> None:
    settings = load_settings(db=tmp_path / "n.db", embedder="fake", database_url="")
    services = build_services(settings, migrate=False)
    try:
        keys = build_auth(services).keys
        assert keys.ready() is False
        services.store.migrate()
        assert keys.ready() is True
    finally:
        services.close()
