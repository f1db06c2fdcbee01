"""``memorule_update``, ``memorule_retire``, ``memorule_restore`` (DESIGN §7) and
``memorule_pin`` (issue 31)."""

from __future__ import annotations

from typing import Annotated, Any, Self, cast

from pydantic import ConfigDict, Field, PrivateAttr, ValidationInfo

from prism_memory.domain.characters import text_pattern
from prism_memory.domain.contract.base import Operation
from prism_memory.domain.contract.bounds import (
    BODY_MAX,
    EVIDENCE_MAX,
    IDEMPOTENCY_KEY_MAX,
    MEMORULE_BODY_MIN,
    REASON_MAX,
    SUBJECT_MAX,
    SUBJECT_MIN,
)
from prism_memory.domain.contract.checks import Choice, Text
from prism_memory.domain.contract.remember import (
    CHECKS,
    ENFORCEMENT,
    IDEMPOTENCY,
    AppliesToCreate,
)
from prism_memory.domain.contract.rule_checks import CheckList
from prism_memory.domain.records import Confidence, Enforcement, MemoruleKind
from prism_memory.errors import contract_error


class Reason(Text):
    """Why a memory changed (kept in its history and the audit trail); blank is not given."""

    def __init__(self, *, required: bool) -> None:
        super().__init__(REASON_MAX, required=required, missing="'{field}' is required: say why")

    def check(self, value: Any, info: ValidationInfo | None = None) -> str | None:
        if isinstance(value, str) and not value.strip():
            value = None
        return super().check(value, info)

    def schema(self) -> dict[str, Any]:
        least = 1 if self.required else 0
        return {
            "type": "string",
            "pattern": text_pattern(min_len=least, max_len=REASON_MAX, single_line=False),
        }


def _at_least_one(schema: dict[str, Any]) -> None:
    schema["minProperties"] = 1
    for prop in schema["properties"].values():
        prop.pop("default", None)  # a change has no default: what is not given stays
    where = schema["properties"]["applies_to"]  # an object, never null
    schema["properties"]["applies_to"] = next(a for a in where["anyOf"] if "$ref" in a)


class MemoryChanges(Operation):
    """The fields to change (at least one). What a memory accepts depends on its kind (a note
    has no ``memorule_kind``), so the changes, merged with the memory's current version, are
    validated by the ``prism_remember`` models; this model states them and keeps them as
    sent."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_at_least_one)
    passthrough = True
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    # Each optional; only a subject and an evidence id may be null (removed).
    subject: Annotated[str | None, Text(SUBJECT_MAX, line=True)] = None
    body: Annotated[str | None, Text(BODY_MAX, required=True)] = None
    memorule_kind: Annotated[MemoruleKind | None, Choice(MemoruleKind, required=True)] = None
    applies_to: AppliesToCreate | None = None
    evidence_signal_id: Annotated[str | None, Text(EVIDENCE_MAX, line=True)] = None
    confidence: Annotated[Confidence | None, Choice(Confidence, required=True)] = None
    checks: Annotated[
        tuple[Any, ...] | None,
        CheckList(),
        Field(description=CHECKS + " [] or null removes them."),
    ] = None
    enforcement: Annotated[
        Enforcement | None, Choice(Enforcement, required=True), Field(description=ENFORCEMENT)
    ] = None

    @classmethod
    def not_an_object(cls, value: Any) -> Any:
        return contract_error("wrong_type", "'{field}' must be an object", expected="object")

    @classmethod
    def kept(cls, data: dict[str, Any]) -> Self:
        model = cls.model_construct()
        model._raw = data
        return cast(Self, model)

    @property
    def raw(self) -> dict[str, Any]:
        """The changes as sent."""
        return dict(self._raw)


class MemoryUpdate(Operation):
    """A new version of a memory: the fields to change, and why."""

    changes: Annotated[
        MemoryChanges,
        Field(
            description="Only the fields to change. Memorules: subject, body, memorule_kind, "
            "applies_to, confidence, evidence_signal_id, checks, enforcement. Notes: subject, "
            "body. The result is "
            f"validated like a new write (a memorule's subject needs at least {SUBJECT_MIN} "
            f"characters and its body {MEMORULE_BODY_MIN}).",
            examples=[{"body": "Run the full test suite before every merge, not just unit tests."}],
        ),
    ]
    reason: Annotated[
        str | None,
        Reason(required=False),
        Field(description="Why it changed (kept in the history and audit trail)."),
    ] = None
    evidence_signal_id: Annotated[
        str | None,
        Text(EVIDENCE_MAX, line=True),
        Field(description="Memorules: the signal that prompted the change."),
    ] = None
    idempotency_key: Annotated[
        str | None, Text(IDEMPOTENCY_KEY_MAX, line=True), Field(description=IDEMPOTENCY)
    ] = None


class StatusChange(Operation):
    """Retire or restore a memory; the reason is kept in the audit trail."""

    reason: Annotated[
        str,
        Reason(required=True),
        Field(description="Why (required; kept in the audit trail)."),
    ]
    idempotency_key: Annotated[
        str | None, Text(IDEMPOTENCY_KEY_MAX, line=True), Field(description=IDEMPOTENCY)
    ] = None


class PinChange(Operation):
    """Pin or unpin a memorule (``POST /v1/memories/{id}/pin`` or ``/unpin``); the reason is
    kept in the audit trail."""

    reason: Annotated[
        str,
        Reason(required=True),
        Field(description="Why (required; kept in the pinned/unpinned audit event)."),
    ]
