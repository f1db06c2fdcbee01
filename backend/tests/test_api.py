"""The HTTP API in process (FastAPI's TestClient) over a real SQLite file and the fake embedder.

Every /v1 route: its happy path, a validation error, a missing/unknown/revoked key (401) and
a forbidden call (403). Then the error shape, limits, probes, metrics, docs and the
insecure-local mode. Isolation between tenants and projects: ``test_api_isolation.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from prism_memory.asgi import create_app
from prism_memory.bootstrap import build_services
from prism_memory.domain import validation
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.settings import load_settings
from tests.api_world import World, rule, running_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("api")) as w:
        yield w


def fresh_rule(w: World, project: str = "p1") -> str:
    raw = rule("Fresh rule " + uuid.uuid4().hex[:6], "A rule written for one test only.")
    return str(w.services.memory.writes.remember(w.ctx("acme", project), validate_remember(raw)).id)


def retired_rule(w: World) -> str:
    memory_id = fresh_rule(w)
    w.services.memory.lifecycle.retire(w.ctx("acme", "p1"), uuid.UUID(memory_id), "for a test")
    return memory_id


def pinned_rule(w: World) -> str:
    memory_id = fresh_rule(w)
    w.services.memory.lifecycle.pin(w.ctx("acme", "p1"), uuid.UUID(memory_id), True, "for a test")
    return memory_id


@dataclass(frozen=True)
class Route:
    """How to call one route: a target factory, a good and a bad request, a refusal."""

    method: str
    path: str
    key: str
    body: dict[str, Any] | None = None
    bad_body: dict[str, Any] | None = None
    bad_path: str | None = None
    bad_headers: dict[str, str] | None = None
    forbidden_key: str = "a_p1_writer"
    forbidden_headers: dict[str, str] | None = None
    target: Callable[[World], str] = fresh_rule
    status: int = 200


SESSION_BAD = {"X-Prism-Session": "not-a-uuid"}
OTHER_PROJECT = {"X-Prism-Project": "p2"}
ROUTES = {
    "remember": Route(
        "POST",
        "/v1/memories",
        "a_writer",
        body=rule("Ship small PRs", "Keep every pull request small and focused."),
        bad_body={"kind": "memorule", "subject": "x", "confidence": "sure", "color": "red"},
        forbidden_key="a_reader",
        status=201,
    ),
    "recall": Route(
        "POST",
        "/v1/recall",
        "a_reader",
        body={"query": "tests", "top_k": 5, "source_type": "memorule"},
        bad_body={"top_k": 0, "source_type": "everything", "colour": 1},
        forbidden_headers=OTHER_PROJECT,
    ),
    "list": Route(
        "GET",
        "/v1/memories?status=all&scope=project&limit=5",
        "a_reader",
        bad_path="/v1/memories?status=gone&cursor=x&limit=0",
        forbidden_headers=OTHER_PROJECT,
    ),
    "get": Route(
        "GET",
        "/v1/memories/{id}",
        "a_reader",
        bad_path="/v1/memories/not-a-uuid",
        forbidden_headers=OTHER_PROJECT,
    ),
    "update": Route(
        "PATCH",
        "/v1/memories/{id}",
        "a_writer",
        body={"changes": {"body": "Always run the whole test suite first."}, "reason": "wider"},
        bad_body={"changes": {"subject": "x", "color": "red"}},
        forbidden_key="a_reader",
    ),
    "retire": Route(
        "POST",
        "/v1/memories/{id}/retire",
        "a_writer",
        body={"reason": "superseded"},
        bad_body={"reason": "", "extra": True},
        forbidden_key="a_reader",
    ),
    "restore": Route(
        "POST",
        "/v1/memories/{id}/restore",
        "a_writer",
        body={"reason": "still true"},
        bad_body={"reason": None},
        forbidden_key="a_reader",
        target=retired_rule,
    ),
    "pin": Route(
        "POST",
        "/v1/memories/{id}/pin",
        "a_writer",
        body={"reason": "every session needs it"},
        bad_body={"reason": "", "extra": True},
        forbidden_key="a_reader",
    ),
    "unpin": Route(
        "POST",
        "/v1/memories/{id}/unpin",
        "a_writer",
        body={"reason": "not any more"},
        bad_body={"reason": None},
        forbidden_key="a_reader",
        target=pinned_rule,
    ),
    "history": Route(
        "GET",
        "/v1/memories/{id}/history",
        "a_reader",
        bad_path="/v1/memories/123/history",
        forbidden_headers=OTHER_PROJECT,
    ),
    "audit": Route(
        "GET",
        "/v1/audit?limit=5",
        "a_admin",
        bad_path="/v1/audit?limit=0&event=exploded&before=99999999999999999999",
        forbidden_key="a_writer",
    ),
    "audit by memorule": Route(
        "GET",
        "/v1/audit?memorule={id}",
        "a_reader",
        bad_path="/v1/audit?memorule=nope",
        forbidden_headers=OTHER_PROJECT,
    ),
    "verify": Route(
        "GET",
        "/v1/audit/verify",
        "a_admin",
        bad_path="/v1/audit/verify?head=12",
        forbidden_key="a_p1_admin",
    ),
    "head": Route(
        "GET", "/v1/audit/head", "a_admin", bad_headers=SESSION_BAD, forbidden_key="a_p1_admin"
    ),
    "served": Route(
        "GET",
        "/v1/audit/served",
        "a_admin",
        bad_path="/v1/audit/served?limit=0&session_id=nope&after=-1",
        forbidden_key="a_reader",
    ),
    "brief": Route(
        "POST",
        "/v1/brief",
        "a_reader",
        body={"task": "merge a pull request", "token_budget": 300},
        bad_body={"token_budget": 5, "top_k": 1000, "style": "long"},
        forbidden_headers=OTHER_PROJECT,
    ),
    "whoami": Route(
        "GET", "/v1/whoami", "a_reader", bad_headers=SESSION_BAD, forbidden_headers=OTHER_PROJECT
    ),
}


def call(w: World, r: Route, key: str | None, **kw: Any) -> Any:
    path = kw.pop("path", None) or r.path.format(id=r.target(w))
    return w.call(key, r.method, path, kw.pop("body", r.body), kw.pop("headers", None))


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_answers_its_happy_path(world: World, name: str) -> None:
    response = call(world, ROUTES[name], ROUTES[name].key)
    assert response.status_code == ROUTES[name].status, response.text
    assert response.json()["ok"] is True


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_reports_validation_errors_in_the_one_shape(world: World, name: str) -> None:
    r = ROUTES[name]
    response = call(
        world, r, r.key, path=r.bad_path, body=r.bad_body or r.body, headers=r.bad_headers
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert response.json()["ok"] is False and error["code"] == "validation_failed"
    assert error["fields"] and all({"field", "code", "message"} <= set(f) for f in error["fields"])


@pytest.mark.parametrize("name", list(ROUTES))
@pytest.mark.parametrize("key", [None, "prism_unknownkeyunknownkeyunknownkey", "revoked", "xyz"])
def test_every_route_needs_a_live_key(world: World, name: str, key: str | None) -> None:
    response = call(world, ROUTES[name], key)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "unauthenticated"
    if key is not None:  # unknown, revoked and malformed keys answer alike
        assert response.json() == call(world, ROUTES[name], "revoked").json()


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_refuses_a_key_whose_role_or_project_forbids_it(
    world: World, name: str
) -> None:
    r = ROUTES[name]
    response = call(world, r, r.forbidden_key, headers=r.forbidden_headers)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "forbidden"


def test_a_rejected_memorule_lists_every_field_error_and_writes_nothing(world: World) -> None:
    before = world.services.store.stats(world.ctx("acme", "p1").tenant_id)
    bad = ROUTES["remember"].bad_body
    response = world.call("a_writer", "POST", "/v1/memories", bad)
    fields = {f["field"]: f["code"] for f in response.json()["error"]["fields"]}
    assert fields == {
        "memorule_kind": "missing",
        "subject": "too_short",
        "body": "missing",
        "applies_to": "missing",
        "confidence": "invalid_choice",
        "color": "unknown_field",
    }
    assert world.services.store.stats(world.ctx("acme", "p1").tenant_id) == before


def test_a_malformed_write_gets_its_field_errors_before_the_key_s_role_is_judged(
    world: World,
) -> None:
    # The body is parsed at the door, then the key's role decides: a reader key's malformed
    # write hears what is wrong with it (the schema is public), a well-formed one the 403.
    before = world.services.store.stats(world.ctx("acme", "p1").tenant_id)
    bad = world.call("a_reader", "POST", "/v1/memories", ROUTES["remember"].bad_body)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_failed"
    good = world.call("a_reader", "POST", "/v1/memories", ROUTES["remember"].body)
    assert good.status_code == 403 and good.json()["error"]["code"] == "forbidden"
    assert world.services.store.stats(world.ctx("acme", "p1").tenant_id) == before


@pytest.mark.parametrize(
    ("body", "code"), [(b"{not json", "invalid_json"), (b"[1, 2]", "wrong_type")]
)
def test_a_body_that_is_not_a_json_object_is_a_validation_error(
    world: World, body: bytes, code: str
) -> None:
    response = world.client.post("/v1/memories", content=body, headers=world.headers("a_writer"))
    assert response.status_code == 422
    assert response.json()["error"]["fields"][0]["code"] == code


def test_a_persona_bound_key_writes_as_its_persona(world: World) -> None:
    written = world.call("a_donna", "POST", "/v1/memories", {"body": "donna was here"}).json()
    got = world.call("a_reader", "GET", f"/v1/memories/{written['id']}").json()
    assert got["state"]["written_by_persona"] == "donna"
    refused = world.call("a_donna", "POST", "/v1/memories", {"body": "x"}, {"X-Prism-Persona": "t"})
    assert refused.status_code == 403


def test_an_idempotent_retry_replays_and_a_retired_memory_conflicts(world: World) -> None:
    body = {"body": "retry me", "idempotency_key": "k-" + uuid.uuid4().hex}
    first = world.call("a_writer", "POST", "/v1/memories", body).json()
    again = world.call("a_writer", "POST", "/v1/memories", body).json()
    assert again["id"] == first["id"] and again["replayed"] is True
    memory_id = retired_rule(world)
    conflict = world.call("a_writer", "POST", f"/v1/memories/{memory_id}/retire", {"reason": "x"})
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "memory_retired"


def test_audit_pages_follow_the_cursor(world: World) -> None:
    first = world.call("a_admin", "GET", "/v1/audit?limit=2").json()
    second = world.call("a_admin", "GET", f"/v1/audit?limit=2&before={first['next_cursor']}")
    seqs = [e["seq"] for e in first["events"] + second.json()["events"]]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == 4


def test_a_body_over_the_limit_is_refused_before_it_is_parsed(world: World) -> None:
    limit = world.settings.max_body_bytes
    declared = world.client.post(
        "/v1/memories", content=b"{" * (limit + 1), headers=world.headers("a_writer")
    )
    streamed = world.client.post(
        "/v1/memories",
        content=iter([b"[" * 65_536] * (limit // 65_536 + 2)),
        headers=world.headers("a_writer"),
    )
    for response in (declared, streamed):
        assert response.status_code == 413
        assert response.json()["error"] == {
            "code": "too_large",
            "message": f"the request body is larger than {limit} bytes",
            "max_bytes": limit,
        }


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [("GET", "/v2/nothing", 404, "not_found"), ("DELETE", "/v1/recall", 405, "method_not_allowed")],
)
def test_unknown_routes_and_methods_answer_in_the_one_shape(
    world: World, method: str, path: str, status: int, code: str
) -> None:
    response = world.call("a_admin", method, path)
    assert response.status_code == status
    assert response.json()["ok"] is False and response.json()["error"]["code"] == code


def test_probes_and_metrics_need_no_key(world: World) -> None:
    assert world.client.get("/healthz").json() == {"ok": True, "status": "alive"}
    assert world.client.get("/readyz").json() == {"ok": True, "ready": True}
    world.call("a_reader", "GET", f"/v1/memories/{world.ids['a_note_p1']}")
    metrics = world.client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'route="/v1/memories/{memory_id}"' in metrics.text
    assert world.ids["a_note_p1"] not in metrics.text
    assert "prism_http_request_duration_seconds_bucket" in metrics.text


def test_the_docs_page_works_offline(world: World) -> None:
    page = world.client.get("/docs").text
    assert "http://" not in page and "https://" not in page
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"):
        assert f"/docs/static/{asset}" in page
        assert world.client.get(f"/docs/static/{asset}").status_code == 200


def test_the_openapi_document_describes_every_route_its_errors_and_the_bodies(
    world: World,
) -> None:
    doc = world.client.get("/openapi.json").json()
    assert doc["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
    for path, item in doc["paths"].items():
        for operation in item.values():
            if path.startswith("/v1"):
                assert {"401", "403", "422"} <= set(operation["responses"]), path
    schemas = doc["components"]["schemas"]
    assert set(schemas["NoteCreate"]["properties"]) == validation.NOTE_FIELDS - {"content"}
    assert set(schemas["MemoruleCreate"]["properties"]) == validation.MEMORULE_FIELDS
    assert set(schemas["RecallCreate"]["properties"]) == validation.RECALL_FIELDS
    body = doc["paths"]["/v1/memories"]["post"]["requestBody"]["content"]["application/json"]
    assert len(body["schema"]["oneOf"]) == 2


def test_readyz_and_v1_answer_503_until_the_store_is_migrated(tmp_path: Path) -> None:
    settings = load_settings(db=tmp_path / "new.db", embedder="fake", database_url="")
    services = build_services(settings, migrate=False)
    try:
        with TestClient(create_app(services, settings)) as client:
            assert client.get("/readyz").status_code == 503
            response = client.get("/v1/whoami", headers={"Authorization": "Bearer prism_x"})
            assert response.status_code == 503
            assert response.json()["error"]["code"] == "storage_error"
            services.store.migrate()
            assert client.get("/readyz").status_code == 200
            assert client.get("/v1/whoami").status_code == 401
    finally:
        services.close()


def test_insecure_local_mode_needs_no_key_but_only_answers_loopback_json(tmp_path: Path) -> None:
    settings = load_settings(db=tmp_path / "l.db", embedder="fake", database_url="", tenant="me")
    services = build_services(settings)
    try:
        app = create_app(services, settings, insecure_local=True)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            me = client.get("/v1/whoami").json()
            assert me["role"] == "admin" and me["key_id"] == "insecure-local"
            assert client.post("/v1/memories", json={"body": "local note"}).status_code == 201
            plain = client.post(
                "/v1/memories", content=b'{"body": "x"}', headers={"Content-Type": "text/plain"}
            )
            assert plain.status_code == 403
            rebound = client.get("/v1/whoami", headers={"Host": "evil.example"})
            assert rebound.status_code == 403
    finally:
        services.close()
