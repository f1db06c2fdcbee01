"""Tool arguments: the schemas MCP clients see, and the edge parsing of ids and filters.

Two kinds of tool:

- ``prism_remember``, ``semantic_recall`` and ``memorule_brief`` hand their arguments to the
  services *as sent*: the domain validators are the contract and report every field error
  (unknown and missing fields included) in Prism's one error shape. Their models here only
  publish the schema.
- The lifecycle and audit tools have no domain validator for their ids and filters; their
  models parse the arguments (:func:`app.mcp_server.parsing.parse` maps pydantic's errors
  to the same shape).

Bounds come from :mod:`app.domain.validation` and :mod:`app.services.brief_service`, once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain import validation as v
from app.domain.field_checks import AUDIT_CURSOR_MAX
from app.services import brief_service as b

MemoruleKindName = Literal["behavioral_rule", "feedback", "preference", "correction", "convention"]
ConfidenceName = Literal["observed", "inferred", "asserted"]
EventName = Literal["created", "superseded", "retired", "restored"]

_MEMORY_ID = "A memory id (UUID), as returned by prism_remember, semantic_recall or the brief."
_IDEMPOTENCY = (
    "Any unique string. A retried call with the same key returns the first result and "
    "writes nothing new."
)


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AppliesToArgument(_Arguments):
    """Where a memorule applies: at least one key."""

    persona: Annotated[
        str | None,
        Field(description="The persona the rule is for, e.g. 'donna'.", max_length=100),
    ] = None
    surface: Annotated[
        str | None,
        Field(description="Where it applies, e.g. 'python', 'github'.", max_length=100),
    ] = None
    specialization: Annotated[
        str | None,
        Field(description="In which role, e.g. 'backend', 'review'.", max_length=100),
    ] = None
    scope: Annotated[
        Literal["global", "org", "project", "persona"] | None,
        Field(
            description=(
                "Who sees it: 'global'/'org' = every project of the tenant; 'project' "
                "(default) = this project; 'persona' = only applies_to.persona, in this project."
            )
        ),
    ] = None


class ContextArgument(_Arguments):
    """A narrower session context for one call."""

    persona: Annotated[str | None, Field(description="Act as this persona.", max_length=100)] = None
    surface: Annotated[str | None, Field(description="Act on this surface.", max_length=100)] = None
    specialization: Annotated[
        str | None, Field(description="Act in this specialization.", max_length=100)
    ] = None


class RememberArguments(_Arguments):
    """``prism_remember``: the SPEC-094 v0.4 write contract (schema only)."""

    kind: Annotated[
        Literal["note", "memorule"],
        Field(
            description=(
                "'memorule' for a typed behavioural rule (needs memorule_kind, subject, body, "
                "applies_to); 'note' (default) for free text."
            )
        ),
    ] = "note"
    memorule_kind: Annotated[
        MemoruleKindName | None,
        Field(
            description=(
                "Memorules only. behavioral_rule: always do X / never do Y. feedback: a "
                "correction in response to a specific action. preference: a stylistic or "
                "operational preference. correction: an observed mistake and the right move "
                "(name the rule it replaces in 'corrects'). convention: a project-wide pattern."
            )
        ),
    ] = None
    subject: Annotated[
        str | None,
        Field(
            description=(
                f"The rule stated concisely, one line ({v.SUBJECT_MIN} to {v.SUBJECT_MAX} "
                "characters; required for memorules, optional title for notes)."
            ),
            min_length=v.SUBJECT_MIN,
            max_length=v.SUBJECT_MAX,
        ),
    ] = None
    body: Annotated[
        str | None,
        Field(
            description=(
                f"The full text (memorules: at least {v.MEMORULE_BODY_MIN} characters; "
                f"at most {v.BODY_MAX})."
            ),
            max_length=v.BODY_MAX,
        ),
    ] = None
    content: Annotated[
        str | None,
        Field(
            description="Notes only: an alias of 'body'; give one of them.", max_length=v.BODY_MAX
        ),
    ] = None
    applies_to: Annotated[
        AppliesToArgument | None,
        Field(description="Memorules only (required): where the rule applies."),
    ] = None
    evidence_signal_id: Annotated[
        str | None,
        Field(
            description="Memorules: the signal, postmortem or delta that prompted the rule.",
            max_length=v.EVIDENCE_MAX,
        ),
    ] = None
    confidence: Annotated[
        ConfidenceName | None,
        Field(
            description=(
                "Memorules: 'observed' (you saw it happen, e.g. an operator correction), "
                "'inferred' (default; derived from a pattern), 'asserted' (claimed, unobserved)."
            )
        ),
    ] = None
    namespace: Annotated[
        str | None,
        Field(
            description="A namespace to file it under (default 'default').",
            max_length=v.NAMESPACE_MAX,
            pattern=v.NAMESPACE_PATTERN.pattern,
        ),
    ] = None
    idempotency_key: Annotated[
        str | None, Field(description=_IDEMPOTENCY, max_length=v.IDEMPOTENCY_KEY_MAX)
    ] = None
    corrects: Annotated[
        UUID | None,
        Field(
            description=(
                "memorule_kind='correction' only: the id of the memorule this one corrects; "
                "that rule is retired in the same write."
            )
        ),
    ] = None
    strict: Annotated[
        bool,
        Field(description="Memorules: refuse the write if a nearly identical rule exists."),
    ] = False


class RecallArguments(_Arguments):
    """``semantic_recall``: the v0.4 read contract (schema only)."""

    query: Annotated[
        str,
        Field(
            description=(
                "What you are looking for. Empty = 'what applies to me now' (ranked by "
                "applicability, scope and confidence alone)."
            ),
            max_length=v.QUERY_MAX,
        ),
    ] = ""
    top_k: Annotated[
        int, Field(description="How many matches to return.", ge=1, le=v.TOP_K_MAX)
    ] = 10
    namespace: Annotated[
        str | None, Field(description="Only this namespace.", max_length=v.NAMESPACE_MAX)
    ] = None
    source_type: Annotated[
        Literal["memory", "memorule"],
        Field(description="'memorule' = memorules only; 'memory' (default) = notes and rules."),
    ] = "memory"
    memorule_kind: Annotated[
        list[MemoruleKindName] | None,
        Field(description="Only these memorule kinds.", max_length=v.FILTER_LIST_MAX),
    ] = None
    confidence: Annotated[
        list[ConfidenceName] | None,
        Field(description="Only these confidence levels.", max_length=v.FILTER_LIST_MAX),
    ] = None
    include_inapplicable: Annotated[
        bool,
        Field(
            description=(
                "Also return rules that conflict with your context, after the others, "
                "marked applicable=false."
            )
        ),
    ] = False


class BriefArguments(_Arguments):
    """``memorule_brief`` (schema only; the brief service validates)."""

    task: Annotated[
        str,
        Field(
            description="What you are about to do; ranks the rules that fit it first.",
            max_length=b.TASK_MAX,
        ),
    ] = ""
    token_budget: Annotated[
        int,
        Field(
            description="The most tokens the brief may take; lowest-ranked rules go first.",
            ge=b.TOKEN_BUDGET_MIN,
            le=b.TOKEN_BUDGET_MAX,
        ),
    ] = b.TOKEN_BUDGET_DEFAULT
    namespace: Annotated[
        str | None, Field(description="Only this namespace.", max_length=v.NAMESPACE_MAX)
    ] = None
    top_k: Annotated[
        int,
        Field(description="How many of the best rules to consider.", ge=1, le=v.TOP_K_MAX),
    ] = b.TOP_K_DEFAULT


class UpdateArguments(_Arguments):
    """``memorule_update``."""

    id: Annotated[UUID, Field(description=_MEMORY_ID)]
    changes: Annotated[
        dict[str, Any],
        Field(
            description=(
                "Only the fields to change. Memorules: subject, body, memorule_kind, "
                "applies_to, confidence, evidence_signal_id. Notes: subject, body. The "
                "result is validated like a new write."
            )
        ),
    ]
    reason: Annotated[
        str | None, Field(description="Why it changed (kept in the history and audit trail).")
    ] = None
    evidence_signal_id: Annotated[
        str | None, Field(description="Memorules: the signal that prompted the change.")
    ] = None
    idempotency_key: Annotated[
        str | None, Field(description=_IDEMPOTENCY, max_length=v.IDEMPOTENCY_KEY_MAX)
    ] = None


class StatusArguments(_Arguments):
    """``memorule_retire`` and ``memorule_restore``."""

    id: Annotated[UUID, Field(description=_MEMORY_ID)]
    reason: Annotated[
        str,
        Field(description="Why (required; kept in the audit trail).", max_length=v.REASON_MAX),
    ]
    idempotency_key: Annotated[
        str | None, Field(description=_IDEMPOTENCY, max_length=v.IDEMPOTENCY_KEY_MAX)
    ] = None


class HistoryArguments(_Arguments):
    """``memorule_history``."""

    id: Annotated[UUID, Field(description=_MEMORY_ID)]


class AuditArguments(_Arguments):
    """``memorule_audit``."""

    memorule_id: Annotated[UUID | None, Field(description="Only events of this memorule.")] = None
    written_by_session_id: Annotated[
        UUID | None, Field(description="Only events written in this session.")
    ] = None
    written_by_persona: Annotated[
        str | None, Field(description="Only events written by this persona.", max_length=100)
    ] = None
    event: Annotated[
        list[EventName] | None, Field(description="Only these events.", max_length=4)
    ] = None
    since: Annotated[
        datetime | None,
        Field(description="Events at or after this ISO 8601 time (UTC if no offset)."),
    ] = None
    until: Annotated[
        datetime | None, Field(description="Events before this ISO 8601 time (UTC if no offset).")
    ] = None
    before: Annotated[
        int | None,
        Field(
            description="Page cursor: the next_cursor of the previous page.",
            ge=1,
            le=AUDIT_CURSOR_MAX,
        ),
    ] = None
    limit: Annotated[int, Field(description="Events per page, newest first.", ge=1, le=500)] = 50


class ServedArguments(_Arguments):
    """``memorule_served``."""

    session_id: Annotated[UUID | None, Field(description="Only what this session was served.")] = (
        None
    )
    memorule_id: Annotated[UUID | None, Field(description="Only receipts of this memorule.")] = None
    since: Annotated[
        datetime | None,
        Field(description="Served at or after this ISO 8601 time (UTC if no offset)."),
    ] = None
    until: Annotated[
        datetime | None, Field(description="Served before this ISO 8601 time (UTC if no offset).")
    ] = None
    after: Annotated[
        int | None, Field(description="Page cursor: the next_cursor of the previous page.", ge=0)
    ] = None
    limit: Annotated[int, Field(description="Receipts per page, oldest first.", ge=1, le=500)] = 100


def published_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema a client sees: ``$ref`` inlined, ``Optional`` shown as its type.

    Some MCP clients mishandle ``$ref`` and ``anyOf`` in tool schemas; a flat schema reads
    better to models too. ``null`` stays accepted on the wire (it means "not given").
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    schema.pop("description", None)  # the model's docstring is for us, not the client
    cleaned: dict[str, Any] = _clean(schema, defs)
    return cleaned


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: val for k, val in node.items() if k != "$ref"}}
    if "anyOf" in node:
        arms = [arm for arm in node["anyOf"] if arm.get("type") != "null"]
        if len(arms) == 1:
            rest = {k: val for k, val in node.items() if k != "anyOf"}
            node = {**_clean(arms[0], defs), **rest}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "properties":
            out[key] = {name: _clean(sub, defs) for name, sub in value.items()}
        elif key in ("enum", "required", "default", "pattern"):
            out[key] = value
        else:
            out[key] = _clean(value, defs)
    return out
