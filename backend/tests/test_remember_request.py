"""A write is parsed at the door; what an idempotency key remembers of it did not move.

The doors hand the services a validated ``NoteWrite``/``MemoruleWrite`` where they once handed
the raw request. The request hash an idempotency key is stored with must not change with that:
a key written before still replays. The hashes below were stored by the raw-request path, on a
real store, for these exact requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.idempotency import request_hash
from prism_memory.domain.records import MemoruleWrite, NoteWrite, SessionContext
from prism_memory.services.write_service import hashed_arguments
from tests.conftest import ContextFactory

NOTE = {
    "body": "The staging database is reset every Monday.",
    "subject": "Staging resets",
    "idempotency_key": "pin-note",
}
RULE = {
    "kind": "memorule",
    "memorule_kind": "correction",
    "subject": "Use pnpm, not npm",
    "body": "This repository installs with pnpm; npm writes the wrong lock file.",
    "applies_to": {"surface": "node", "persona": "donna"},
    "confidence": "observed",
    "evidence_signal_id": "sig-7",
    "namespace": "tools",
    "idempotency_key": "pin-rule",
}
CHECKED = {
    **{k: v for k, v in RULE.items() if k != "evidence_signal_id"},
    "memorule_kind": "behavioral_rule",
    "idempotency_key": "pin-checked",
    "checks": [{"forbid_command": r"\bnpm (i|install)\b"}],
    "enforcement": "remind",
}
PINNED = {
    "pin-note": (NOTE, "bcccc5134e7b564942ba58dd5ccfb995eb2d2cd1cbf0a5c602512fe806a54668"),
    "pin-rule": (RULE, "962116a5a04ae935520bfb3d6f121d8f89ee2772964cbb7b2977aae762d71cc3"),
    "pin-checked": (CHECKED, "e7550739bcbf30fa0726cce833a5765322b65f25b69861f5976366514f74550e"),
}


@pytest.fixture
def donna(make_ctx: ContextFactory) -> SessionContext:
    return make_ctx(tenant="acme", project="api", persona="donna")


@pytest.mark.parametrize("key", list(PINNED))
def test_the_request_hash_of_a_parsed_write_is_the_one_stored_before(
    donna: SessionContext, key: str
) -> None:
    raw, stored = PINNED[key]
    write = validate_remember(raw)
    assert isinstance(write, NoteWrite if key == "pin-note" else MemoruleWrite)
    assert request_hash("remember", donna, hashed_arguments(write)) == stored


@pytest.mark.parametrize("key", list(PINNED))
def test_a_key_stored_with_the_pinned_hash_replays_through_the_typed_path(
    services: Services, donna: SessionContext, key: str
) -> None:
    raw, stored = PINNED[key]
    first = services.memory.writes.remember(donna, validate_remember(raw))
    claim = services.store.idempotent_result(donna.tenant_id, key)
    assert claim is not None and claim.request_hash == stored
    again = services.memory.writes.remember(donna, validate_remember(dict(raw)))
    assert again.replayed and again.id == first.id and not first.replayed


def test_the_hash_covers_the_arguments_not_the_door(
    services: Services, donna: SessionContext
) -> None:
    # The CLI's options, MCP's arguments and an HTTP body that say the same write are one
    # request: 'content' is the alias of 'body', and a default given is a default omitted.
    spelled: dict[str, Any] = {
        "kind": "note",
        "content": NOTE["body"],
        "subject": NOTE["subject"],
        "namespace": "default",
        "idempotency_key": "pin-note",
    }
    first = services.memory.writes.remember(donna, validate_remember(NOTE))
    again = services.memory.writes.remember(donna, validate_remember(spelled))
    assert again.replayed and again.id == first.id
