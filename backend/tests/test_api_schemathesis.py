"""Schemathesis against the OpenAPI document a real ``prism serve`` serves (loopback only).

Bounded: a few generated examples per operation, no deadline, no example database. Every
response must be free of 5xx and conform to the document (status, content type, schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.test_api_server import Server, create_key

pytestmark = pytest.mark.slow
CHECKS = [
    schemathesis.checks.not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def served_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    db: Path = tmp_path_factory.mktemp("schemathesis") / "prism.db"
    key = create_key(db, "--tenant", "fuzz", "--role", "admin")
    server = Server(db)
    try:
        yield server, key
    finally:
        assert server.stop() == 0, server.log.read_text()


OPERATIONS = [
    ("POST", "/v1/memories"),
    ("POST", "/v1/recall"),
    ("GET", "/v1/memories"),
    ("GET", "/v1/memories/{memory_id}"),
    ("PATCH", "/v1/memories/{memory_id}"),
    ("POST", "/v1/memories/{memory_id}/retire"),
    ("POST", "/v1/memories/{memory_id}/restore"),
    ("GET", "/v1/memories/{memory_id}/history"),
    ("GET", "/v1/audit"),
    ("GET", "/v1/audit/verify"),
    ("GET", "/v1/audit/head"),
    ("GET", "/v1/audit/served"),
    ("POST", "/v1/brief"),
    ("GET", "/v1/whoami"),
    ("GET", "/v1/proposals"),
    ("POST", "/v1/proposals/{memory_id}/approve"),
    ("POST", "/v1/proposals/{memory_id}/reject"),
    ("POST", "/v1/proposals/{memory_id}/merge"),
    ("POST", "/v1/memories/{memory_id}/promote"),
    ("GET", "/v1/memories/{memory_id}/evidence"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
]


@pytest.fixture(scope="module")
def api_schema(served_api: tuple[Server, str]) -> OpenApiSchema:
    server, _ = served_api
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json")


def test_the_list_below_is_every_operation_of_the_served_document(
    api_schema: OpenApiSchema,
) -> None:
    served = {(op.ok().method.upper(), op.ok().path) for op in api_schema.get_all_operations()}
    assert served == set(OPERATIONS)


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_the_served_api_conforms_to_its_openapi_document(
    api_schema: OpenApiSchema, served_api: tuple[Server, str], method: str, path: str
) -> None:
    server, key = served_api
    operation = api_schema[path][method]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=8,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(
            base_url=server.url, headers={"Authorization": f"Bearer {key}"}, checks=CHECKS
        )

    check()
