"""The audit trail's queries (DESIGN §7): audit events and served receipts.

``AuditQuery`` is ``memorule_audit``, ``GET /v1/audit`` and ``prism audit``; ``ServedQuery``
is ``memorule_served``, ``GET /v1/audit/served`` and ``prism audit served``. The canonical
names are the HTTP API's (``memorule``, ``session``, ``persona``); the names the MCP tools
took, the audit event's own (``memorule_id``, ``written_by_session_id``,
``written_by_persona``), are aliases, so clients of either door keep working. A request
gives one name of a field, not both (``conflict``).

Why the HTTP names: the OpenAPI document lists only the canonical names as parameters (a
schema cannot say "one of these two parameters"; listing both would call a request with
both valid), and it has always listed ``memorule``, ``session`` and ``persona``.

One time rule for ``since`` and ``until`` at every door: an ISO 8601 date-time
(``2026-12-01T09:30:00Z``, ``T`` or a space between date and time, seconds and fraction
optional); without an offset it is UTC; a date alone is its midnight UTC.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Final
from uuid import UUID

from pydantic import AliasChoices, Field, ValidationInfo

from prism_memory.domain.audit import HEAD_FORM, Head
from prism_memory.domain.contract.base import Errors, Operation, code_of, failure
from prism_memory.domain.contract.bounds import (
    APPLIES_VALUE_MAX,
    AUDIT_CURSOR_MAX,
    AUDIT_EVENT_FILTER_MAX,
    AUDIT_LIMIT_DEFAULT,
    AUDIT_LIMIT_MAX,
    SERVED_LIMIT_DEFAULT,
)
from prism_memory.domain.contract.checks import Check, Choices, MemoryId, Text
from prism_memory.domain.records import AuditEventType
from prism_memory.errors import contract_error

TIME_RULE: Final = (
    "An ISO 8601 date-time, e.g. 2026-12-01T09:30:00Z; without an offset it is UTC; "
    "a date alone (2026-12-01) is its midnight UTC."
)
_INSTANT: Final = re.compile(
    r"^\d{4}-\d{2}-\d{2}"
    r"(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?$"
)
_BAD_INSTANT: Final = (
    "'{field}' must be an ISO 8601 date-time, e.g. 2026-12-01T09:30:00Z "
    "(without an offset: UTC), or a date"
)


class Instant(Check):
    """A time filter (:data:`TIME_RULE`), as an aware UTC ``datetime``."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, datetime):
            return self.utc(value)
        if not isinstance(value, str):
            raise contract_error("wrong_type", "'{field}' must be a string", expected="string")
        text = value.strip()
        if not _INSTANT.match(text):
            raise contract_error("invalid_format", _BAD_INSTANT)
        try:
            parsed = datetime.fromisoformat(text.upper().replace("Z", "+00:00").replace(",", "."))
        except ValueError:  # no such date or time (2026-02-30, 25:00)
            raise contract_error("invalid_format", _BAD_INSTANT) from None
        return self.utc(parsed)

    @staticmethod
    def utc(value: datetime) -> datetime:
        # 9999-12-31T23:59:59-14:00 is a valid date-time whose UTC instant is past year 9999.
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            raise contract_error(
                "out_of_range", "'{field}' is outside the years 1 to 9999 once converted to UTC"
            ) from None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "date-time"}


class PersonaFilter(Text):
    """A persona to filter by: one line, at most ``APPLIES_VALUE_MAX`` characters as sent."""

    def __init__(self) -> None:
        super().__init__(APPLIES_VALUE_MAX, 0, line=True)

    def check(self, value: Any, info: ValidationInfo | None = None) -> str | None:
        if isinstance(value, str) and len(value) > self.max_len:
            raise contract_error(
                "too_long",
                f"'{{field}}' must be at most {self.max_len} characters",
                max=self.max_len,
                actual=len(value),
            )
        return super().check(value, info) or None

    def schema(self) -> dict[str, Any]:
        return {**super().schema(), "maxLength": self.max_len}


def _names(canonical: str, alias: str) -> AliasChoices:
    return AliasChoices(canonical, alias)


class _TrailQuery(Operation):
    """What both queries share: an empty value is no filter (a query string's ``?persona=``);
    a field and its alias conflict.

    Only the empty string is dropped here, as the OpenAPI document says (``allowEmptyValue``):
    spaces are judged by the field (a persona of spaces is none; an id of spaces is no id).
    """

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        names = cls.accepted()
        return {k: v for k, v in data.items() if not (k in names and v == "")}

    @classmethod
    def across(cls, data: Mapping[str, Any], errors: Errors) -> Errors:
        for info in cls.model_fields.values():
            given = [n for n in getattr(info.validation_alias, "choices", ()) if n in data]
            if len(given) < 2:
                continue
            canonical, alias = str(given[0]), str(given[1])
            errors = [e for e in errors if tuple(e["loc"]) != (alias,)]
            conflict = contract_error(
                "conflict", f"give '{canonical}' or its alias '{alias}', not both"
            )
            unknown = [e for e in errors if code_of(e) == "unknown_field"]
            rest = [e for e in errors if code_of(e) != "unknown_field"]
            errors = [*unknown, failure((alias,), conflict, data[alias]), *rest]
        return errors


_MEMORULE = "Only this memorule's (a UUID)."
_SINCE = "At or after this time. " + TIME_RULE
_UNTIL = "Before this time. " + TIME_RULE


class AuditQuery(_TrailQuery):
    """Memorule audit events, newest first, one page (``memorule_audit``, ``GET /v1/audit``)."""

    memorule: Annotated[
        UUID | None,
        MemoryId(what="a memorule id"),
        Field(validation_alias=_names("memorule", "memorule_id"), description=_MEMORULE),
    ] = None
    session: Annotated[
        UUID | None,
        MemoryId(what="a session id"),
        Field(
            validation_alias=_names("session", "written_by_session_id"),
            description="Only events written in this session (a UUID).",
        ),
    ] = None
    persona: Annotated[
        str | None,
        PersonaFilter(),
        Field(
            validation_alias=_names("persona", "written_by_persona"),
            description="Only events written by this persona.",
        ),
    ] = None
    event: Annotated[
        tuple[AuditEventType, ...],
        Choices(AuditEventType, skip_blank=True, indexed=True, max_items=AUDIT_EVENT_FILTER_MAX),
        Field(description="Only these events (one, or a list)."),
    ] = ()
    since: Annotated[datetime | None, Instant(), Field(description=_SINCE)] = None
    until: Annotated[datetime | None, Instant(), Field(description=_UNTIL)] = None
    before: Annotated[
        int | None,
        Field(
            ge=1,
            le=AUDIT_CURSOR_MAX,
            description="Page cursor: the next_cursor of the previous page.",
        ),
    ] = None
    limit: Annotated[
        int, Field(ge=1, le=AUDIT_LIMIT_MAX, description="Events per page, newest first.")
    ] = AUDIT_LIMIT_DEFAULT


class ServedQuery(_TrailQuery):
    """Served receipts, oldest first, one page (``memorule_served``,
    ``GET /v1/audit/served``)."""

    session_id: Annotated[
        UUID | None,
        MemoryId(what="a session id"),
        Field(description="Only what this session was served (a UUID)."),
    ] = None
    memorule: Annotated[
        UUID | None,
        MemoryId(what="a memorule id"),
        Field(validation_alias=_names("memorule", "memorule_id"), description=_MEMORULE),
    ] = None
    since: Annotated[datetime | None, Instant(), Field(description=_SINCE)] = None
    until: Annotated[datetime | None, Instant(), Field(description=_UNTIL)] = None
    after: Annotated[
        int | None,
        Field(
            ge=0,
            le=AUDIT_CURSOR_MAX,
            description="Page cursor: the next_cursor of the previous page.",
        ),
    ] = None
    limit: Annotated[
        int, Field(ge=1, le=AUDIT_LIMIT_MAX, description="Receipts per page, oldest first.")
    ] = SERVED_LIMIT_DEFAULT


class ChainHead(Check):
    """A chain head, ``SEQ:HASH`` as ``prism audit head`` and ``/v1/audit/head`` give it."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> Head | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise contract_error("wrong_type", "'{field}' must be a string", expected="string")
        try:
            return Head.parse(value)
        except ValueError as exc:
            raise contract_error("invalid_format", str(exc)) from None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": rf"^\s*{HEAD_FORM.pattern}\s*$"}


class VerifyQuery(_TrailQuery):
    """Verifying the tenant's chains (``GET /v1/audit/verify``, ``prism audit verify``)."""

    head: Annotated[
        Head | None,
        ChainHead(),
        Field(description="SEQ:HASH from /v1/audit/head: the chain must extend it."),
    ] = None
    served_head: Annotated[
        Head | None,
        ChainHead(),
        Field(
            description="SEQ:HASH of the served receipts from /v1/audit/head: that chain must "
            "extend it."
        ),
    ] = None
