"""The listing contract: filters and keyset pages over a project's memories, newest first.

``ListRequest.parse`` takes a raw mapping at the door (a JSON object, or query-string values:
repeated parameters as lists, numbers as digit strings) and returns the request, or raises one
:class:`InvalidInput` with every field error; the service reads its :class:`ListQuery`. A
cursor is opaque to callers: the last id of a page, base64url-encoded (``next_cursor`` of a
page; pass it back as ``cursor``).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Final
from uuid import UUID

from pydantic import Field, ValidationInfo

from prism_memory.domain.contract.base import Operation, without_blanks
from prism_memory.domain.contract.bounds import APPLIES_VALUE_MAX
from prism_memory.domain.contract.bounds import LIMIT_DEFAULT as LIMIT_DEFAULT
from prism_memory.domain.contract.bounds import LIMIT_MAX as LIMIT_MAX
from prism_memory.domain.contract.checks import (
    Check,
    Choice,
    Choices,
    Flag,
    Namespace,
    Text,
    WholeNumber,
)
from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import Confidence, MemoruleKind, Scope, SourceType
from prism_memory.domain.records import Status as State
from prism_memory.errors import contract_error

STATUSES: Final = ("active", "retired", "all")
APPLIES_FILTERS: Final = ("persona", "surface", "specialization")
LIST_FIELDS: Final = frozenset(
    {
        "status",
        "source_type",
        "namespace",
        "memorule_kind",
        "confidence",
        "scope",
        *APPLIES_FILTERS,
        "pinned",
        "cursor",
        "limit",
    }
)
_CURSOR: Final = re.compile(r"^[A-Za-z0-9_-]{22}$")
_BAD_CURSOR: Final = (
    "'{field}' must be the next_cursor of an earlier page (22 characters of base64url)"
)
_INTEGER: Final = re.compile(r"^-?[0-9]+$")


@dataclass(frozen=True)
class ListQuery:
    """A validated listing request. ``status`` None lists active and retired alike."""

    status: State | None = State.ACTIVE
    source_type: SourceType = SourceType.MEMORY
    namespace: str | None = None
    memorule_kinds: tuple[MemoruleKind, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    scopes: tuple[Scope, ...] = ()
    applies: dict[str, str] = field(default_factory=dict)
    pinned: bool = False
    before: UUID | None = None
    limit: int = LIMIT_DEFAULT


def encode_cursor(memory_id: UUID) -> str:
    """The cursor of the page that follows ``memory_id`` (the last id of a page)."""
    return base64.urlsafe_b64encode(memory_id.bytes).decode("ascii").rstrip("=")


class Status(Choice):
    """``active``, ``retired`` or ``all`` (None: active and retired alike)."""

    def __init__(self) -> None:
        super().__init__(STATUSES, "active")

    def check(self, value: Any, info: ValidationInfo | None = None) -> Any:
        value = super().check(value, info)
        return None if value == "all" else State(value)


class QueryFlag(Flag):
    """``true`` or ``false``, also as a query string spells them (any case, edges trimmed)."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> bool:
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        return super().check(value, info)


class Cursor(Check):
    """A page's ``next_cursor``: the id the next page starts after."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> UUID | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise contract_error("wrong_type", "'{field}' must be a string", expected="string")
        if _CURSOR.match(value.strip()):
            try:
                return UUID(bytes=base64.urlsafe_b64decode(value.strip() + "=="))
            except (binascii.Error, ValueError):
                pass
        raise contract_error("invalid_format", _BAD_CURSOR)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": r"^\s*(?:[A-Za-z0-9_-]{22})?\s*$"}


class Limit(WholeNumber):
    """A page size; a query string's digits count as the number they spell."""

    def __init__(self) -> None:
        super().__init__(1, LIMIT_MAX, LIMIT_DEFAULT)

    def check(self, value: Any, info: ValidationInfo | None = None) -> int:
        if isinstance(value, str) and _INTEGER.match(value.strip()):
            # A huge number is just out of range (no 10,000-digit ints).
            value = int(value) if len(value.strip()) <= 10 else LIMIT_MAX + 1
        return super().check(value, info)


_APPLIES = Text(APPLIES_VALUE_MAX, 0, line=True)  # blank: no filter
_APPLIED = "Only memorules whose applies_to names this {} (case-insensitive)."


class ListRequest(Operation):
    """Listing memories: filters, a cursor and a page size (``GET /v1/memories``, the
    console). A blank value is no filter; a list filter takes one value or several
    (a query string repeats the parameter)."""

    status: Annotated[
        State | None, Status(), Field(description="active (default), retired or all")
    ] = State.ACTIVE
    source_type: Annotated[
        SourceType,
        Choice(SourceType, SourceType.MEMORY),
        Field(description="memory (default) = notes and memorules; memorule: no notes"),
    ] = SourceType.MEMORY
    namespace: Annotated[
        str | None, Namespace(blank_ok=True), Field(description="Only this namespace.")
    ] = None
    memorule_kind: Annotated[
        tuple[MemoruleKind, ...],
        Choices(MemoruleKind, skip_blank=True, indexed=True),
        Field(description="Only these memorule kinds."),
    ] = ()
    confidence: Annotated[
        tuple[Confidence, ...],
        Choices(Confidence, skip_blank=True, indexed=True),
        Field(description="Only these confidence levels."),
    ] = ()
    scope: Annotated[
        tuple[Scope, ...],
        Choices(Scope, skip_blank=True, indexed=True),
        Field(description="Only memorules of these scopes."),
    ] = ()
    persona: Annotated[str | None, _APPLIES, Field(description=_APPLIED.format("persona"))] = None
    surface: Annotated[str | None, _APPLIES, Field(description=_APPLIED.format("surface"))] = None
    specialization: Annotated[
        str | None, _APPLIES, Field(description=_APPLIED.format("specialization"))
    ] = None
    pinned: Annotated[
        bool,
        QueryFlag(),
        Field(description="true: only the memorules an operator pinned (prism pin)."),
    ] = False
    cursor: Annotated[UUID | None, Cursor(), Field(description="a page's next_cursor")] = None
    limit: Annotated[
        int, Limit(), Field(description=f"Memories per page (default {LIMIT_DEFAULT}).")
    ] = LIMIT_DEFAULT

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_blanks(cls.accepted(), data)

    def to_query(self) -> ListQuery:
        applies = {
            key: normal
            for key in APPLIES_FILTERS
            if (normal := normalise_key(getattr(self, key))) is not None
        }
        return ListQuery(
            status=self.status,
            source_type=self.source_type,
            namespace=self.namespace,
            memorule_kinds=self.memorule_kind,
            confidences=self.confidence,
            scopes=self.scope,
            applies=applies,
            pinned=self.pinned,
            before=self.cursor,
            limit=self.limit,
        )
