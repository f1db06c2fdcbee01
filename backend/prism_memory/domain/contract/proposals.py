"""The capture review queue's decisions: approve (optionally edited), reject, merge, promote."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import Field

from prism_memory.domain.contract.base import Operation
from prism_memory.domain.contract.bounds import (
    BODY_MAX,
    MEMORULE_BODY_MIN,
    SUBJECT_MAX,
    SUBJECT_MIN,
)
from prism_memory.domain.contract.checks import Choice, MemoryId, Text
from prism_memory.domain.contract.lifecycle import Reason
from prism_memory.domain.contract.remember import AppliesToCreate
from prism_memory.domain.records import MemoruleKind

_WHY = Field(description="Why (kept in the audit trail).")


class ApproveCreate(Operation):
    """Approve a proposal; any field given replaces the proposal's (a new version)."""

    subject: Annotated[str | None, Text(SUBJECT_MAX, SUBJECT_MIN, line=True)] = None
    body: Annotated[str | None, Text(BODY_MAX, MEMORULE_BODY_MIN)] = None
    memorule_kind: Annotated[MemoruleKind | None, Choice(MemoruleKind)] = None
    applies_to: AppliesToCreate | None = None
    reason: Annotated[str | None, Reason(required=False), _WHY] = None


class RejectCreate(Operation):
    """Reject a proposal; the reason is kept in the audit trail."""

    reason: Annotated[str, Reason(required=True), _WHY]


class MergeCreate(Operation):
    """Fold a proposal into the active memorule it repeats."""

    into: Annotated[UUID, MemoryId(required=True), Field(description="the memorule it repeats")]
    reason: Annotated[str | None, Reason(required=False), _WHY] = None


class PromoteCreate(Operation):
    """Promote an inferred/asserted memorule with operator evidence to observed."""

    reason: Annotated[str | None, Reason(required=False), _WHY] = None
