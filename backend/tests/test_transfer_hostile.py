"""``prism import`` refuses an inconsistent dump naming the record, and writes nothing
(issue #32, D10), on both engines.

Duplicate ids (a memory, a state, an audit event or an idempotency key repeated) used to end
in the engine's IntegrityError; ``current_version`` 10**9 in a MemoryError and 10**30 in an
OverflowError, because the reader built a list of every version the number named. Now each is
an ``InvalidInput`` naming its line and record, found before anything is allocated from it.
"""

from __future__ import annotations

import io
import json
import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import build_services
from prism_memory.errors import InvalidInput
from prism_memory.services.transfer import import_store
from prism_memory.settings import Settings, load_settings
from tests.test_transfer import ContextFactory, dump_text, populate

Spoiler = Callable[[list[str]], list[str]]


def first(lines: list[str], kind: str) -> int:
    return next(n for n, line in enumerate(lines) if f'"type":"{kind}"' in line)


def replaced(lines: list[str], i: int, record: dict[str, Any]) -> list[str]:
    return [*lines[:i], json.dumps(record), *lines[i + 1 :]]


def twice(kind: str) -> Spoiler:
    def spoil(lines: list[str]) -> list[str]:
        i = first(lines, kind)
        return [*lines[: i + 1], lines[i], *lines[i + 1 :]]

    spoil.__name__ = f"{kind}_twice"
    return spoil


def state_of_another_memory(lines: list[str]) -> list[str]:
    memories = [n for n, line in enumerate(lines) if '"type":"memory"' in line]
    a, b = (json.loads(lines[n]) for n in memories[:2])
    b["states"][0]["id"] = a["states"][0]["id"]
    return replaced(lines, memories[1], b)


def current_version(value: int) -> Spoiler:
    def spoil(lines: list[str]) -> list[str]:
        i = first(lines, "memory")
        record = json.loads(lines[i])
        record["current_version"] = value
        return replaced(lines, i, record)

    spoil.__name__ = f"current_version_{value}"
    return spoil


def receipt_rank(lines: list[str]) -> list[str]:
    i = first(lines, "served")
    record = json.loads(lines[i])
    record["rank"] = 10**30
    return replaced(lines, i, record)


SPOILERS: list[tuple[Spoiler, str, str]] = [
    (twice("memory"), "duplicate_id", "memory "),
    (state_of_another_memory, "duplicate_id", "state "),
    (twice("audit"), "duplicate_id", "audit event "),
    (twice("idempotency"), "duplicate_id", "idempotency key "),
    (current_version(10**9), "invalid_record", "current_version 1000000000"),
    (current_version(10**30), "invalid_record", "'current_version' must be from 1"),
    (current_version(0), "invalid_record", "'current_version' must be from 1"),
    (receipt_rank, "invalid_record", "'rank' must be from 1"),
]


@pytest.mark.parametrize(
    ("spoil", "code", "names"), SPOILERS, ids=[s[0].__name__ for s in SPOILERS]
)
def test_an_inconsistent_dump_is_refused_naming_the_record_and_writes_nothing(
    tmp_path: Path,
    engine_settings: Settings,
    make_ctx: ContextFactory,
    spoil: Spoiler,
    code: str,
    names: str,
) -> None:
    source = build_services(load_settings(db=tmp_path / "src.db", embedder="fake", database_url=""))
    target = build_services(engine_settings)
    try:
        populate(source, make_ctx)
        text = "\n".join(spoil(dump_text(source).splitlines())) + "\n"
        peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(InvalidInput) as caught:
            import_store(target.store, io.StringIO(text))
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
        (error,) = caught.value.errors
        assert (error.code, error.field.startswith("line ")) == (code, True), error
        assert names in error.message, error.message
        assert grown_kib < 50_000  # nothing allocated from the number the file states
        assert target.store.tenants() == []
    finally:
        source.close()
        target.close()
