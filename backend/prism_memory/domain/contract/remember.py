"""``prism_remember``: a note or a memorule (DESIGN §5), one model per kind.

The models validate every write (each door calls :func:`validate_remember` and hands the
services the typed write), and the same models are the OpenAPI request schema
(``NoteCreate``/``MemoruleCreate``, ``oneOf``) and the MCP tool's input schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import AliasChoices, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

from prism_memory.domain.characters import printable
from prism_memory.domain.contract.base import Errors, Operation, at, code_of, failure, refuse
from prism_memory.domain.contract.bounds import (
    APPLIES_VALUE_MAX,
    BODY_MAX,
    EVIDENCE_MAX,
    IDEMPOTENCY_KEY_MAX,
    MEMORULE_BODY_MIN,
    SUBJECT_MAX,
    SUBJECT_MIN,
)
from prism_memory.domain.contract.checks import (
    Choice,
    Flag,
    MemoryId,
    Namespace,
    Text,
)
from prism_memory.domain.contract.rule_checks import CheckList
from prism_memory.domain.records import (
    AppliesTo,
    Confidence,
    Enforcement,
    Kind,
    MemoruleKind,
    MemoruleWrite,
    NoteWrite,
    Scope,
)
from prism_memory.errors import FieldError, InvalidInput, contract_error

APPLIES_TO_FIELDS = ("persona", "surface", "specialization", "scope")
IDEMPOTENCY = (
    "Any unique string. A retried call with the same key returns the first result and "
    "writes nothing new."
)
NAMESPACE = "A namespace to file it under (default 'default')."
CHECKS = (
    "Optional, at most 8: what can be checked from what an agent does, each an object with "
    "exactly one key: forbid_command (regex), forbid_edit (glob), require_before {command, "
    "before} (regexes), require_edit_with {edit, also} (globs). Versioned with the rule."
)
ENFORCEMENT = (
    "What the PreToolUse guard does when an action hits the checks: 'remind' (default: the "
    "rule is put in front of the agent, the action runs), 'ask' (the user confirms), 'deny' "
    "(blocked). Only an admin key may set 'ask' or 'deny'."
)
# At least one key given a value (null means "not given"); scope 'persona' names whose.
_APPLIES_TO_RULES: dict[str, Any] = {
    "anyOf": [{"required": [k], "properties": {k: {"type": "string"}}} for k in APPLIES_TO_FIELDS],
    "if": {"required": ["scope"], "properties": {"scope": {"const": "persona"}}},
    "then": {"required": ["persona"], "properties": {"persona": {"type": "string"}}},
}


class AppliesToCreate(Operation):
    """Where a memorule applies: at least one key."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_APPLIES_TO_RULES)

    persona: Annotated[
        str | None,
        Text(APPLIES_VALUE_MAX, line=True),
        Field(description="The persona the rule is for, e.g. 'donna'."),
    ] = None
    surface: Annotated[
        str | None,
        Text(APPLIES_VALUE_MAX, line=True),
        Field(description="Where it applies, e.g. 'python', 'github'."),
    ] = None
    specialization: Annotated[
        str | None,
        Text(APPLIES_VALUE_MAX, line=True),
        Field(description="In which role, e.g. 'backend', 'review'."),
    ] = None
    scope: Annotated[
        Scope | None,
        Choice(Scope),
        Field(
            description="Who sees it: 'global'/'org' = every project of the tenant; 'project' "
            "(default) = this project; 'persona' = only applies_to.persona, in this project."
        ),
    ] = None

    @classmethod
    def absent(cls) -> PydanticCustomError:
        return contract_error(
            "missing",
            "'{field}' is required: an object with at least one of "
            "persona, surface, specialization, scope",
        )

    @classmethod
    def not_an_object(cls, value: Any) -> PydanticCustomError:
        if value is None:
            return cls.absent()
        return contract_error("wrong_type", "'{field}' must be an object", expected="object")

    @classmethod
    def across(cls, data: Mapping[str, Any], errors: Errors) -> Errors:
        unknown = [e for e in errors if code_of(e) == "unknown_field"]
        rest = [e for e in errors if code_of(e) != "unknown_field"]
        if not any(data.get(k) is not None for k in APPLIES_TO_FIELDS):
            empty = contract_error(
                "empty",
                "'{field}' needs at least one of persona, surface, specialization, scope",
            )
            unknown.append(failure((), empty, dict(data)))
        persona = data.get("persona")
        named = isinstance(persona, str) and persona.strip() and not at(errors, "persona")
        if data.get("scope") == Scope.PERSONA.value and not named:
            whose = contract_error(
                "required_by_scope",
                "scope 'persona' needs '{field}': whose rule is it?",
            )
            rest.append(failure(("persona",), whose, persona))
        return unknown + rest

    def to_record(self) -> AppliesTo:
        return AppliesTo(
            scope=self.scope,
            persona=self.persona,
            surface=self.surface,
            specialization=self.specialization,
        )


class NoteCreate(Operation):
    """``prism_remember(kind='note')``: free text (``content`` is accepted for ``body``)."""

    kind: Annotated[
        Literal["note"] | None,
        Choice(["note"], "note"),
        Field(description="'note' (the default) stores free text in body."),
    ] = "note"
    body: Annotated[
        str,
        Text(BODY_MAX, required=True),
        Field(
            validation_alias=AliasChoices("body", "content"),
            description=f"The full text (at most {BODY_MAX} characters; a memorule's at "
            f"least {MEMORULE_BODY_MIN}).",
        ),
    ]
    subject: Annotated[
        str | None,
        Text(SUBJECT_MAX, line=True),
        Field(description="An optional title, one line."),
    ] = None
    namespace: Annotated[str | None, Namespace(), Field(description=NAMESPACE)] = None
    idempotency_key: Annotated[
        str | None, Text(IDEMPOTENCY_KEY_MAX, line=True), Field(description=IDEMPOTENCY)
    ] = None

    @classmethod
    def unknown(cls, name: str) -> PydanticCustomError:
        hint = " (memorule fields need kind='memorule')" if name in MEMORULE_FIELDS else ""
        return contract_error(
            "unknown_field",
            f"'{printable(name)}' is not a field of a note{hint}",
            allowed=sorted(cls.accepted()),
        )

    @classmethod
    def across(cls, data: Mapping[str, Any], errors: Errors) -> Errors:
        if "body" not in data or "content" not in data:
            return errors
        # Both given: the alias is refused as a conflict, not as an unknown field.
        errors = [e for e in errors if tuple(e["loc"]) != ("content",)]
        conflict = contract_error("conflict", "give 'body' or its alias 'content', not both")
        unknown = [e for e in errors if code_of(e) == "unknown_field"]
        rest = [e for e in errors if code_of(e) != "unknown_field"]
        return [*unknown, failure(("content",), conflict, data["content"]), *rest]

    def to_write(self) -> NoteWrite:
        return NoteWrite(
            body=self.body,
            subject=self.subject,
            namespace=self.namespace or "default",
            idempotency_key=self.idempotency_key,
        )


class Corrects(MemoryId):
    """The memorule a correction replaces: only a ``correction`` may name one."""

    def check(self, value: Any, info: ValidationInfo | None = None) -> UUID | None:
        corrects = super().check(value, info)
        kind = info.data.get("memorule_kind") if info is not None else None
        if corrects is not None and kind is not None and kind is not MemoruleKind.CORRECTION:
            raise contract_error(
                "not_allowed", "only a 'correction' memorule can name a memorule it corrects"
            )
        return corrects


class MemoruleCreate(Operation):
    """``prism_remember(kind='memorule')``: a typed behavioural record (SPEC-094 v0.4)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={  # 'corrects' only on a correction
            "if": {"required": ["corrects"], "properties": {"corrects": {"type": "string"}}},
            "then": {"properties": {"memorule_kind": {"const": "correction"}}},
        },
    )

    kind: Annotated[
        Literal["memorule"],
        Choice(["memorule"], required=True),
        Field(description="'memorule' for a typed behavioural rule."),
    ]
    memorule_kind: Annotated[
        MemoruleKind,
        Choice(MemoruleKind, required=True),
        Field(
            description="behavioral_rule: always do X / never do Y. feedback: a correction in "
            "response to a specific action. preference: a stylistic or operational preference. "
            "correction: an observed mistake and the right move (name the rule it replaces in "
            "'corrects'). convention: a project-wide pattern."
        ),
    ]
    subject: Annotated[
        str,
        Text(SUBJECT_MAX, SUBJECT_MIN, line=True, required=True),
        Field(
            description=f"The rule stated concisely, one line ({SUBJECT_MIN} to {SUBJECT_MAX} "
            "characters; for a note, an optional title)."
        ),
    ]
    body: Annotated[
        str,
        Text(BODY_MAX, MEMORULE_BODY_MIN, required=True),
        Field(
            description=f"The full text (a memorule's at least {MEMORULE_BODY_MIN} characters; "
            f"at most {BODY_MAX})."
        ),
    ]
    applies_to: Annotated[
        AppliesToCreate, Field(description="Where the rule applies (at least one key).")
    ]
    evidence_signal_id: Annotated[
        str | None,
        Text(EVIDENCE_MAX, line=True),
        Field(description="The signal, postmortem or delta that prompted the rule."),
    ] = None
    confidence: Annotated[
        Confidence,
        Choice(Confidence, Confidence.INFERRED),
        Field(
            description="'observed' (you saw it happen, e.g. an operator correction), "
            "'inferred' (default; derived from a pattern), 'asserted' (claimed, unobserved)."
        ),
    ] = Confidence.INFERRED
    namespace: Annotated[str | None, Namespace(), Field(description=NAMESPACE)] = None
    idempotency_key: Annotated[
        str | None, Text(IDEMPOTENCY_KEY_MAX, line=True), Field(description=IDEMPOTENCY)
    ] = None
    corrects: Annotated[
        UUID | None,
        Corrects(),
        Field(
            description="memorule_kind='correction' only: the id of the memorule this one "
            "corrects; that rule is retired in the same write."
        ),
    ] = None
    strict: Annotated[
        bool,
        Flag(),
        Field(description="Refuse the write if a nearly identical rule exists."),
    ] = False
    checks: Annotated[tuple[Any, ...], CheckList(), Field(description=CHECKS)] = ()
    enforcement: Annotated[
        Enforcement,
        Choice(Enforcement, Enforcement.REMIND),
        Field(description=ENFORCEMENT),
    ] = Enforcement.REMIND

    def to_write(self) -> MemoruleWrite:
        return MemoruleWrite(
            memorule_kind=self.memorule_kind,
            subject=self.subject,
            body=self.body,
            applies_to=self.applies_to.to_record(),
            confidence=self.confidence,
            evidence_signal_id=self.evidence_signal_id,
            namespace=self.namespace or "default",
            idempotency_key=self.idempotency_key,
            corrects=self.corrects,
            strict=self.strict,
            checks=self.checks,
            enforcement=self.enforcement,
        )


NOTE_FIELDS = NoteCreate.accepted()
MEMORULE_FIELDS = MemoruleCreate.accepted()
REMEMBER_MODELS: dict[str, type[NoteCreate] | type[MemoruleCreate]] = {
    Kind.NOTE.value: NoteCreate,
    Kind.MEMORULE.value: MemoruleCreate,
}
_KIND = Choice(Kind)


def validate_remember(raw: Mapping[str, Any]) -> NoteWrite | MemoruleWrite:
    """Validate a ``prism_remember`` request with the model its ``kind`` names.

    Args:
        raw: the request as the caller sent it (JSON object). ``kind`` defaults to ``note``.

    Returns:
        A :class:`NoteWrite` or a :class:`MemoruleWrite`.

    Raises:
        InvalidInput: with every field error found.
    """
    if not isinstance(raw, Mapping):  # a list: no kind to choose a model by
        raise refuse((), NoteCreate.not_an_object(raw))
    kind = raw.get("kind")
    try:
        model = REMEMBER_MODELS[_KIND.check(kind).value if kind is not None else "note"]
    except PydanticCustomError as exc:
        raise refuse(("kind",), exc) from None
    return model.parse(raw).to_write()


def validate_remember_many(raws: Sequence[Mapping[str, Any]]) -> list[NoteWrite | MemoruleWrite]:
    """Validate the items of a bulk ``prism_remember``, each as :func:`validate_remember` does.

    Args:
        raws: the requests as the caller sent them, one per item.

    Returns:
        One write per item, in order.

    Raises:
        InvalidInput: every field error of every item at once, each field prefixed with its
            item (``items[3].subject``), and an ``items[i].idempotency_key`` for every item
            that carries a key (:func:`refuse_bulk_keys`).
    """
    writes: list[NoteWrite | MemoruleWrite] = []
    errors: list[FieldError] = []
    for i, raw in enumerate(raws):
        try:
            write = validate_remember(raw)
        except InvalidInput as exc:
            errors.extend(
                FieldError(f"items[{i}].{e.field}", e.code, e.message, e.details)
                for e in exc.errors
            )
            continue
        if write.idempotency_key is not None:
            errors.append(_key_refused(i))
        writes.append(write)
    if errors:
        raise InvalidInput(errors)
    return writes


def refuse_bulk_keys(writes: Sequence[NoteWrite | MemoruleWrite]) -> None:
    """Bulk writes take no idempotency key (a retried write goes through ``remember``).

    Raises:
        InvalidInput: an ``items[i].idempotency_key`` error for every item with a key.
    """
    errors = [_key_refused(i) for i, w in enumerate(writes) if w.idempotency_key is not None]
    if errors:
        raise InvalidInput(errors)


def _key_refused(i: int) -> FieldError:
    return FieldError(
        f"items[{i}].idempotency_key",
        "not_allowed",
        "bulk writes take no idempotency key; retry a single write instead",
    )
