"""Keys keep the slugs their creator typed (issue 29): ``prism keys list`` (text and JSON),
``GET /v1/whoami`` and the console name a key's tenant and projects as typed, whatever
command lists them; a key stored before the slugs were (SQLite migration 7, PostgreSQL
migration 8) is listed by UUID and says so. On both engines, and from a store at the
version before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import build_auth, build_services
from prism_memory.domain.ids import uuid_for
from prism_memory.settings import Settings
from prism_memory.trigraph.postgres import schema as postgres_schema
from prism_memory.trigraph.sqlite import schema as sqlite_schema
from tests.cli_run import invoke_prism
from tests.conftest import raw_sql

ACME = str(uuid_for("tenant", "acme"))
WEB = str(uuid_for("project", "web"))
TYPED_AS_UUID = "3f0e4a5c-1111-4222-8333-444455556666"


def engine_args(settings: Settings) -> list[str]:
    return ["--database-url", settings.database_url] if settings.database_url else []


def keys_list(settings: Settings, *args: str) -> Any:
    proc = invoke_prism(settings.db_path(), "keys", "list", *args, *engine_args(settings))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_key_keeps_the_slugs_typed_and_any_list_shows_them(engine_settings: Settings) -> None:
    created = invoke_prism(
        engine_settings.db_path(), "keys", "create", "--tenant", "Acme", "--role", "writer",
        "--project", "web", "--project", TYPED_AS_UUID, "--project", "WEB", "--json",
        *engine_args(engine_settings),
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    made = json.loads(created.stdout)
    assert (made["tenant_slug"], made["project_slugs"]) == ("Acme", {WEB: "web"})
    # listed by another command, without naming the tenant: the stored slugs
    listed = json.loads(keys_list(engine_settings, "--json"))["keys"]
    assert len(listed) == 1
    key = listed[0]
    assert (key["tenant_id"], key["tenant_slug"], key["slugs_stored"]) == (ACME, "Acme", True)
    assert key["projects"] == [WEB, TYPED_AS_UUID]  # the repeated slug is one project
    assert key["project_slugs"] == {WEB: "web"}  # typed as a UUID: no slug to show
    text = keys_list(engine_settings)
    assert f"tenant Acme ({ACME})" in text
    assert f"projects web ({WEB}), {TYPED_AS_UUID}" in text
    assert "slug not stored" not in text


def test_a_tenant_typed_as_a_uuid_has_no_slug_and_is_not_marked_old(
    engine_settings: Settings,
) -> None:
    created = invoke_prism(
        engine_settings.db_path(), "keys", "create", "--tenant", ACME.upper(), "--role",
        "reader", *engine_args(engine_settings),
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    key = json.loads(keys_list(engine_settings, "--json"))["keys"][0]
    assert (key["tenant_slug"], key["project_slugs"], key["slugs_stored"]) == (None, {}, True)
    text = keys_list(engine_settings)
    assert f"tenant {ACME}  " in text and "slug not stored" not in text


@pytest.fixture
def previous_version(
    engine_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """A store migrated to the version before the slugs, holding a key made then."""
    if engine_settings.database_url:
        from prism_memory.trigraph.postgres import store as module
    else:
        from prism_memory.trigraph.sqlite import store as module  # type: ignore[no-redef]
    migrations = latest(engine_settings)
    before = migrations[: [name for _, name, _ in migrations].index("api_key_slugs")]
    with monkeypatch.context() as patch:
        patch.setattr(module, "MIGRATIONS", before)
        services = build_services(engine_settings)
        try:
            assert services.store.migrate() == before[-1][0]
            raw_sql(
                services,
                "INSERT INTO api_key (tenant_id, key_id, secret_hash, prefix, role, projects, "
                "persona, label, created_at, revoked_at) VALUES (?, 'key_0ld0ld0ld0ld', "
                "'ab12', 'prism_Old1', 'writer', ?, 'donna', 'made before slugs', "
                "'2026-11-01T00:00:00.000000Z', NULL)",
                (ACME, json.dumps([WEB])),
            )
        finally:
            services.close()
    yield engine_settings


def latest(settings: Settings) -> list[Any]:
    """This release's migrations for the settings' engine."""
    return list((postgres_schema if settings.database_url else sqlite_schema).MIGRATIONS)


def test_an_older_store_keeps_its_keys_and_lists_them_by_uuid_saying_so(
    previous_version: Settings,
) -> None:
    services = build_services(previous_version)  # start-up migrates, as after an upgrade
    try:
        auth = build_auth(services)
        assert services.store.migrate() == latest(previous_version)[-1][0]
        assert auth.keys.ready()
        assert services.store.hook_failures().counts() == {}  # a later table, there and empty
        (old,) = auth.list_keys()
        assert (old.key_id, old.role.value, old.persona, old.label, old.prefix) == (
            "key_0ld0ld0ld0ld", "writer", "donna", "made before slugs", "prism_Old1",
        )  # fmt: skip
        assert (str(old.tenant_id), [str(p) for p in old.projects]) == (ACME, [WEB])
        assert old.slugs is None
        auth.create_key("acme", "reader", ["web"])  # a key made after the upgrade
    finally:
        services.close()
    listed = json.loads(keys_list(previous_version, "--json"))["keys"]
    assert [(k["slugs_stored"], k["tenant_slug"], k["project_slugs"]) for k in listed] == [
        (False, None, {}),
        (True, "acme", {WEB: "web"}),
    ]
    lines = keys_list(previous_version).splitlines()
    assert f"tenant {ACME} (projects {WEB}; persona donna) [slug not stored]" in lines[0]
    assert f"tenant acme ({ACME}) (projects web ({WEB}))" in lines[1]
    assert "[slug not stored]" not in lines[1]
    assert lines[2].startswith("[slug not stored]: the key was created before Prism stored")
    # the tenant named on this command names the old key's tenant; its project stays a UUID
    named = keys_list(previous_version, "--tenant", "acme").splitlines()
    assert f"tenant acme ({ACME}) (projects {WEB}; persona donna) [slug not stored]" in named[0]


def test_whoami_and_the_console_show_the_slugs_of_the_key(tmp_path: Path) -> None:
    from tests.api_world import running_world
    from tests.test_web_console import signed_in

    with running_world(tmp_path) as world:
        issued = world.auth.create_key("acme", "writer", ["p1", "p2"])
        world.keys["slugged"] = issued.secret
        who = world.client.get(
            "/v1/whoami", headers={"Authorization": f"Bearer {issued.secret}"}
        ).json()
        assert who["tenant_slug"] == "acme"
        assert who["project_slugs"] == {
            str(uuid_for("project", "p1")): "p1",
            str(uuid_for("project", "p2")): "p2",
        }
        page = signed_in(world, "slugged").get("/memorules?project=p1")
        assert page.status_code == 200
        assert f"{issued.key.key_id} · writer · tenant acme" in page.text
