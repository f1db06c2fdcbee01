"""``semantic_recall`` and ``memorule_brief`` (DESIGN §6): their request models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, ValidationInfo

from prism_memory.domain.characters import strip_edges, text_pattern
from prism_memory.domain.contract.base import Operation
from prism_memory.domain.contract.bounds import (
    QUERY_MAX,
    TASK_MAX,
    TOKEN_BUDGET_DEFAULT,
    TOKEN_BUDGET_MAX,
    TOKEN_BUDGET_MIN,
    TOP_K_DEFAULT,
    TOP_K_MAX,
    TOP_K_RECALL_DEFAULT,
)
from prism_memory.domain.contract.checks import Choice, Choices, Flag, Namespace, Text, WholeNumber
from prism_memory.domain.records import Confidence, MemoruleKind, RecallQuery, SourceType
from prism_memory.errors import contract_error

ONLY_NAMESPACE = "Only this namespace."


class RecallCreate(Operation):
    """``semantic_recall``: what applies to the caller's context, best first."""

    query: Annotated[
        str,
        Text(QUERY_MAX, 0, default=""),
        Field(
            description="What you are looking for. Empty = 'what applies to me now' (ranked by "
            "applicability, scope and confidence alone)."
        ),
    ] = ""
    top_k: Annotated[
        int,
        WholeNumber(1, TOP_K_MAX, TOP_K_RECALL_DEFAULT),
        Field(description="How many matches to return."),
    ] = TOP_K_RECALL_DEFAULT
    namespace: Annotated[str | None, Namespace(), Field(description=ONLY_NAMESPACE)] = None
    source_type: Annotated[
        SourceType,
        Choice(SourceType, SourceType.MEMORY),
        Field(description="'memorule' = memorules only; 'memory' (default) = notes and rules."),
    ] = SourceType.MEMORY
    memorule_kind: Annotated[
        tuple[MemoruleKind, ...],
        Choices(MemoruleKind),
        Field(description="Only these memorule kinds."),
    ] = ()
    confidence: Annotated[
        tuple[Confidence, ...],
        Choices(Confidence),
        Field(description="Only these confidence levels."),
    ] = ()
    include_inapplicable: Annotated[
        bool,
        Flag(),
        Field(
            description="Also return rules that conflict with your context, after the others, "
            "marked applicable=false."
        ),
    ] = False

    def to_query(self) -> RecallQuery:
        return RecallQuery(
            query=self.query,
            top_k=self.top_k,
            namespace=self.namespace,
            source_type=self.source_type,
            memorule_kinds=self.memorule_kind,
            confidences=self.confidence,
            include_inapplicable=self.include_inapplicable,
        )


def validate_recall(raw: Mapping[str, Any]) -> RecallQuery:
    """Validate a ``semantic_recall`` request.

    Raises:
        InvalidInput: with every field error found.
    """
    return RecallCreate.parse(raw).to_query()


class Task(Text):
    """The brief's task: at most ``TASK_MAX`` characters as sent, then a recall query; null
    is no task (not given)."""

    def __init__(self) -> None:
        super().__init__(QUERY_MAX, 0, default="")

    def check(self, value: Any, info: ValidationInfo | None = None) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise contract_error("wrong_type", "'{field}' must be a string")
        if len(value) > TASK_MAX:
            raise contract_error(
                "too_long",
                f"'{{field}}' must be at most {TASK_MAX} characters",
                max=TASK_MAX,
                actual=len(value),
            )
        return self.judge(strip_edges(value))

    def schema(self) -> dict[str, Any]:
        pattern = text_pattern(min_len=0, max_len=QUERY_MAX, single_line=False)
        return {"type": "string", "maxLength": TASK_MAX, "pattern": pattern}


class BriefCreate(Operation):
    """The task-start brief: the memorules that apply, as Markdown within a token budget."""

    task: Annotated[
        str,
        Task(),
        Field(description="What you are about to do; ranks the rules that fit it first."),
    ] = ""
    token_budget: Annotated[
        int,
        WholeNumber(TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX, TOKEN_BUDGET_DEFAULT),
        Field(description="The most tokens the brief may take; lowest-ranked rules go first."),
    ] = TOKEN_BUDGET_DEFAULT
    top_k: Annotated[
        int,
        WholeNumber(1, TOP_K_MAX, TOP_K_DEFAULT),
        Field(description="How many of the best rules to consider."),
    ] = TOP_K_DEFAULT
    namespace: Annotated[str | None, Namespace(), Field(description=ONLY_NAMESPACE)] = None

    def to_query(self) -> RecallQuery:
        return RecallQuery(
            query=self.task,
            top_k=self.top_k,
            namespace=self.namespace,
            source_type=SourceType.MEMORULE,
        )
