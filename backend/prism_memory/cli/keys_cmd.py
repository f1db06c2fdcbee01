"""``prism keys``: create, list and revoke the HTTP API's keys (run on the server's machine).

A key's secret is printed once, by ``create``; only its SHA-256 is stored. Keys live in the
same database as the memories (``--db`` / ``PRISM_DB``, ``--database-url`` /
``PRISM_DATABASE_URL``).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from prism_memory.errors import InvalidInput, PrismError

if TYPE_CHECKING:
    from prism_memory.services.auth_service import AuthService

F = TypeVar("F", bound=Callable[..., Any])
EXIT_INVALID = 2
EXIT_REFUSED = 1
_ROLES = ("reader", "writer", "admin")


def _engine(func: F) -> F:
    """Adds ``--db``, ``--database-url`` and ``--json``; hands the command an AuthService;
    maps errors once."""

    @click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        help="SQLite file [env PRISM_DB; default: the user data directory]",
    )
    @click.option(
        "--database-url",
        help="postgresql://... selects the PostgreSQL engine instead [env PRISM_DATABASE_URL]",
    )
    @click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
    @functools.wraps(func)
    def wrapper(db: Path | None, database_url: str | None, as_json: bool, **kwargs: Any) -> None:
        from prism_memory.bootstrap import build_auth, build_services
        from prism_memory.settings import load_settings

        services = None
        try:
            services = build_services(load_settings(db=db, database_url=database_url))
            payload, text = func(build_auth(services), **kwargs)
            click.echo(json.dumps(payload, indent=2) if as_json else text)
        except PrismError as exc:
            click.echo(json.dumps(exc.to_payload(), ensure_ascii=False), err=True)
            sys.exit(EXIT_INVALID if isinstance(exc, InvalidInput) else EXIT_REFUSED)
        finally:
            if services is not None:
                services.close()

    return cast(F, wrapper)


@click.group(name="keys")
def keys_group() -> None:
    """API keys for 'prism serve': each is bound to one tenant, a role, maybe projects."""


@keys_group.command(name="create")
@click.option("--tenant", required=True, help="tenant UUID or slug the key is bound to")
@click.option(
    "--project",
    "projects",
    multiple=True,
    help="limit the key to this project (repeatable; default: every project of the tenant)",
)
@click.option(
    "--role",
    required=True,
    type=click.Choice(_ROLES),
    help="reader: read; writer: read and write; admin: also the tenant's audit trail",
)
@click.option("--persona", help="every write made with the key is attributed to this persona")
@click.option("--label", help="a note for people, e.g. who holds the key")
@_engine
def create_key(
    auth: AuthService,
    tenant: str,
    projects: tuple[str, ...],
    role: str,
    persona: str | None,
    label: str | None,
) -> tuple[dict[str, Any], str]:
    """Create a key and print it ONCE (only its hash is stored)."""
    issued = auth.create_key(tenant, role, projects, persona=persona, label=label)
    shown = issued.key.to_dict()
    payload = {"ok": True, "key": issued.secret, **shown}
    text = (
        f"{issued.secret}\n\n"
        f"key id {issued.key.key_id} ({issued.key.role.value}) for tenant "
        f"{_tenant(shown, {})}{_scope(shown, {})}\n"
        "This is the only time the key is shown: store it now. Use it as\n"
        "  Authorization: Bearer <key>"
    )
    return payload, text


@keys_group.command(name="list")
@click.option("--tenant", help="only keys of this tenant")
@_engine
def list_keys(auth: AuthService, tenant: str | None) -> tuple[dict[str, Any], str]:
    """List keys (never their secrets), oldest first, revoked ones marked.

    Tenants and projects show as the slug typed when the key was created, then the UUID.
    A key created before slugs were stored shows UUIDs only, marked [slug not stored].
    """
    keys = [k.to_dict() for k in auth.list_keys(tenant)]
    names = _names_typed(tenant)
    lines = [
        f"{k['key_id']}  {k['prefix']}…  {k['role']:<6}  tenant {_tenant(k, names)}"
        f"{_scope(k, names)}"
        + (f" [{NOT_STORED}]" if _unnamed(k, names) else "")
        + f"  created {k['created_at']}"
        + (f"  REVOKED {k['revoked_at']}" if k["revoked_at"] else "")
        + (f"  ({k['label']})" if k["label"] else "")
        for k in keys
    ]
    if any(_unnamed(k, names) for k in keys):
        lines.append(
            f"[{NOT_STORED}]: the key was created before Prism stored the slugs typed for "
            "its tenant and projects, and a UUID cannot be turned back into its slug"
        )
    return {"ok": True, "keys": keys}, "\n".join(lines) or "no API keys"


@keys_group.command(name="revoke")
@click.argument("key_id")
@_engine
def revoke_key(auth: AuthService, key_id: str) -> tuple[dict[str, Any], str]:
    """Revoke a key at once (by its key id, as 'prism keys list' shows it)."""
    key = auth.revoke_key(key_id).to_dict()
    return {"ok": True, **key}, f"revoked {key['key_id']} at {key['revoked_at']}"


NOT_STORED = "slug not stored"


def _names_typed(tenant: str | None) -> dict[str, str]:
    """The tenant slug given on this command, by the UUID it stands for (slugs map one way):
    names the tenant of keys that have no slugs stored."""
    from prism_memory.domain.ids import uuid_for

    if not tenant:
        return {}
    try:
        uuid = str(uuid_for("tenant", tenant.strip()))
    except ValueError:  # not a name: the service has refused it already
        return {}
    return {uuid: tenant.strip()} if uuid != tenant.strip().lower() else {}


def _named(uuid: str, slug: str | None) -> str:
    return f"{slug} ({uuid})" if slug else uuid


def _unnamed(key: dict[str, Any], names: dict[str, str]) -> bool:
    """An old key (no slugs stored) whose tenant or projects show as bare UUIDs."""
    if key["slugs_stored"]:
        return False
    return key["tenant_id"] not in names or bool(key["projects"])


def _tenant(key: dict[str, Any], names: dict[str, str]) -> str:
    return _named(key["tenant_id"], key["tenant_slug"] or names.get(key["tenant_id"]))


def _scope(key: dict[str, Any], names: dict[str, str]) -> str:
    parts = []
    if key["projects"]:
        slugs = key["project_slugs"]
        parts.append("projects " + ", ".join(_named(p, slugs.get(p)) for p in key["projects"]))
    if key["persona"]:
        parts.append(f"persona {key['persona']}")
    return f" ({'; '.join(parts)})" if parts else ""
