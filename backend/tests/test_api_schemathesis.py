"""Schemathesis against the OpenAPI document a real ``prism serve`` serves (loopback only).

The schemathesis CLI, as a user runs it: ``--checks all`` (server errors, status codes,
content types, response schemas and headers, schema-valid data accepted and schema-invalid
data refused, unsupported methods and their ``Allow``, authentication ignored), every phase
(examples, coverage and fuzzing — stateless — then stateful sequences that reuse the ids the
API returns), with a valid admin key and context headers. Bounded: a few examples per
operation, one worker.

Two allowances, in ``schemathesis.toml`` below: ``PATCH /v1/memories/{id}`` may refuse a
schema-valid change with 422, because what a memory accepts depends on the memory the path
names (a note has no ``memorule_kind``; a memorule's subject needs 4 characters) and one
request schema cannot know that; and ``POST /v1/memories`` (and PATCH) may refuse a
schema-valid memorule ``checks`` pattern with 422, because whether a glob's ``[`` closes or a
regex could run away (a repeat inside a repeat) is judged by the server's own parser, which
no JSON Schema pattern can state (``domain/contract/rule_checks.py``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.test_api_server import Server, create_key

pytestmark = pytest.mark.slow
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
CONFIG = """\
[[operations]]
include-name = "PATCH /v1/memories/{memory_id}"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]

[[operations]]
include-name = "POST /v1/memories"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "409", "422"]
"""


@pytest.fixture(scope="module")
def served_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    db: Path = tmp_path_factory.mktemp("schemathesis") / "prism.db"
    key = create_key(db, "--tenant", "fuzz", "--role", "admin")
    # No rate limit: schemathesis sends thousands of requests in a minute with one key.
    server = Server(db, PRISM_HTTP_RATE_LIMIT="", PRISM_HTTP_RATE_LIMIT_ANONYMOUS="")
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
    ("POST", "/v1/memories/{memory_id}/pin"),
    ("POST", "/v1/memories/{memory_id}/unpin"),
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
    ("POST", "/v1/adherence/judge"),
    ("GET", "/v1/adherence/report"),
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


def test_schemathesis_with_every_check_and_phase_finds_nothing(
    served_api: tuple[Server, str], tmp_path: Path
) -> None:
    server, key = served_api
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    done = subprocess.run(
        [
            str(SCHEMATHESIS),
            "--no-color",
            "--config-file",
            str(config),
            "run",
            f"{server.url}/openapi.json",
            "--checks",
            "all",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--max-examples",
            "10",
            "--workers",
            "1",
            "--seed",
            "1",
            "--output-sanitize",
            "false",
            "-H",
            f"Authorization: Bearer {key}",
            "-H",
            "X-Prism-Project: fuzz-project",
            "-H",
            "X-Prism-Persona: fuzzer",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-20_000:] + done.stderr[-5_000:]
    assert "Stateful" in done.stdout, done.stdout[-5_000:]
    assert "No issues found" in done.stdout or _only_known_warnings(done.stdout), done.stdout[
        -8_000:
    ]


# Proposals come from capture (a transcript), never from the HTTP API, so the fuzzer has no
# way to make one and these operations only ever see 404; and PATCH's accepted changes
# depend on whether the memory is a note or a memorule (the allowance in CONFIG). Pin and
# unpin reach a stored memory only when the seeded stateful walk links them to a write (it
# covers 7 of 54 links): otherwise every id the fuzzer makes up is unknown (404). When the
# walk does reach them they are checked like any route (it found a note's pin answered 422).
KNOWN_WARNINGS = {
    "Missing test data": {
        "POST /v1/memories/{memory_id}/pin",
        "POST /v1/memories/{memory_id}/unpin",
        "POST /v1/memories/{memory_id}/promote",
        "POST /v1/proposals/{memory_id}/approve",
        "POST /v1/proposals/{memory_id}/merge",
        "POST /v1/proposals/{memory_id}/reject",
    },
    "Schema validation mismatch": {"PATCH /v1/memories/{memory_id}", "POST /v1/memories"},
}


def _only_known_warnings(out: str) -> bool:
    """True when every warning the run printed is one of KNOWN_WARNINGS, naming only them."""
    if "FAILURES" in out or "WARNINGS" not in out:
        return False
    section = out.split("WARNINGS", 1)[1].split("SUMMARY", 1)[0]
    kinds = [line.split(":", 1)[0].strip() for line in section.splitlines() if ": " in line]
    named = {line.strip()[2:] for line in section.splitlines() if line.strip().startswith("- ")}
    allowed = set().union(*KNOWN_WARNINGS.values())
    return bool(kinds) and set(kinds) <= set(KNOWN_WARNINGS) and named <= allowed
