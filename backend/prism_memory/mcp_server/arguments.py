"""Tool arguments: the schemas MCP clients see, and the edge parsing of ids and filters.

The request tools take the contract's operation models (:mod:`prism_memory.domain.contract`), the
very models that validate their arguments (at the door, before a service is called) and that
the HTTP API publishes as its OpenAPI request schemas:

- ``prism_remember``, ``semantic_recall`` and ``memorule_brief`` parse their arguments with
  those models (``validate_remember``, ``RecallCreate``, ``BriefCreate``) and hand the typed
  request to the access service.
- The lifecycle tools parse theirs with the same models plus the memory ``id``; the audit
  tools theirs with the audit trail's query models (:mod:`prism_memory.domain.contract.audit`).

:func:`published_schema` flattens a model's JSON Schema for clients (no ``$ref``, no
``anyOf`` of null, no combinators at the root, which Claude Code cannot take).
Bounds come from :mod:`prism_memory.domain.contract.bounds`, once.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from prism_memory.domain.contract.audit import AuditQuery, ServedQuery
from prism_memory.domain.contract.base import Operation
from prism_memory.domain.contract.bounds import APPLIES_VALUE_MAX
from prism_memory.domain.contract.checks import Flag, MemoryId
from prism_memory.domain.contract.lifecycle import MemoryUpdate, PinChange, StatusChange
from prism_memory.domain.contract.recall import BriefCreate, RecallCreate
from prism_memory.domain.contract.remember import MemoruleCreate, NoteCreate

# A tool's arguments: one model, or the models of a request's variants (one per ``kind``).
Arguments = type[BaseModel] | tuple[type[BaseModel], ...]
REMEMBER: tuple[type[BaseModel], ...] = (NoteCreate, MemoruleCreate)
RECALL = RecallCreate
BRIEF = BriefCreate

_MEMORY_ID = "A memory id (UUID), as returned by prism_remember, semantic_recall or the brief."
_Id = Annotated[UUID, MemoryId(required=True), Field(description=_MEMORY_ID)]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextArgument(_Arguments):
    """A narrower session context for one call."""

    persona: Annotated[
        str | None, Field(description="Act as this persona.", max_length=APPLIES_VALUE_MAX)
    ] = None
    surface: Annotated[
        str | None, Field(description="Act on this surface.", max_length=APPLIES_VALUE_MAX)
    ] = None
    specialization: Annotated[
        str | None,
        Field(description="Act in this specialization.", max_length=APPLIES_VALUE_MAX),
    ] = None


class UpdateArguments(MemoryUpdate):
    """``memorule_update``: :class:`MemoryUpdate` and the memory's id."""

    id: _Id


class StatusArguments(StatusChange):
    """``memorule_retire`` and ``memorule_restore``: :class:`StatusChange` and the id."""

    id: _Id


class PinArguments(PinChange):
    """``memorule_pin``: :class:`PinChange`, the id, and whether to pin or unpin."""

    id: _Id
    pinned: Annotated[
        bool,
        Flag(),
        Field(description="true pins the memorule (the brief shows it first); false unpins it."),
    ]


class HistoryArguments(Operation):
    """``memorule_history``."""

    id: _Id


# ``memorule_audit`` and ``memorule_served``: the audit trail's queries, as ``GET /v1/audit``
# and ``GET /v1/audit/served`` take them (the HTTP names are published as aliases).
AuditArguments = AuditQuery
ServedArguments = ServedQuery


def published_schema(model: Arguments) -> dict[str, Any]:
    """The JSON Schema a client sees: ``$ref`` inlined, ``Optional`` shown as its type, a
    filter's "value or list" as a list, a request's variants merged into one object.

    Some MCP clients mishandle ``$ref`` and ``anyOf`` in tool schemas, and Claude Code drops
    a tool whose schema has ``oneOf``/``anyOf``/``allOf`` or ``if`` at its root: so the root is
    one flat object, and what each variant requires is said in its ``kind``'s description.
    ``null`` stays accepted on the wire (it means "not given").
    """
    if isinstance(model, tuple):
        return _merged(model)
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    cleaned: dict[str, Any] = _clean(schema, defs)
    for alias, name in _aliases(model).items():
        prop = dict(cleaned["properties"][name])
        prop["description"] = f"An alias of '{name}'; give one of them."
        cleaned["properties"][alias] = prop
    return {k: v for k, v in cleaned.items() if k in _ROOT_KEYS}


_ROOT_KEYS = ("type", "properties", "required", "additionalProperties")


def precise_schema(model: Arguments, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model's own JSON Schema, for clients that validate arguments before calling.

    Nothing is flattened or dropped: a request's variants are a ``oneOf`` (so
    ``prism_remember`` says exactly what each ``kind`` requires), conditions (``if``/``then``)
    and "at least one key" rules stay, ``$ref`` is inlined (MCP clients need no ``$defs``),
    and an alias is a property of its own that a request gives instead of its field. A
    request the contract accepts always satisfies it. Claude Code and the Anthropic API
    refuse ``oneOf`` at a tool schema's root: :func:`published_schema` is the default.
    ``extra``: properties the door adds to every variant (the ``context`` override).
    """
    if isinstance(model, tuple):
        return {"type": "object", "oneOf": [precise_schema(v, extra) for v in model]}
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    exact: dict[str, Any] = _inlined(schema, defs)
    exact.setdefault("properties", {}).update(extra or {})
    for alias, name in _aliases(model).items():
        prop = dict(exact["properties"][name])
        prop["description"] = f"An alias of '{name}'; give one of them."
        exact["properties"][alias] = prop
        if name in exact.get("required", ()):
            exact["required"] = [f for f in exact["required"] if f != name]
            either = [{"required": [name]}, {"required": [alias]}]
            exact["oneOf"] = either  # one of them, never both
    if not exact.get("required"):
        exact.pop("required", None)
    return exact


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition and no ``title``."""
    if isinstance(node, list):
        return [_inlined(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: val for k, val in node.items() if k != "$ref"}}
    return {
        key: value if key in ("enum", "required", "default", "const") else _inlined(value, defs)
        for key, value in node.items()
        if key != "title" and not (key == "properties" and not isinstance(value, dict))
    }


def _aliases(model: type[BaseModel]) -> dict[str, str]:
    """A field's other names (``content`` for a note's ``body``) -> the field."""
    return {
        alias: name
        for name, info in model.model_fields.items()
        for alias in getattr(info.validation_alias, "choices", ())
        if isinstance(alias, str) and alias != name
    }


def _merged(variants: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """One object for the variants of a request told apart by ``kind``."""
    schemas = [published_schema(v) for v in variants]
    properties: dict[str, Any] = {}
    for schema in schemas:
        for name in schema["properties"]:
            # A field of several variants as the first one that requires it states it.
            holders = [s for s in schemas if name in s.get("required", ())] or [schema]
            properties.setdefault(name, holders[0]["properties"][name])
    kinds, needs = [], []
    for model, schema in zip(variants, schemas, strict=True):
        kind = schema["properties"]["kind"]["enum"][0]
        aliases = {name: alias for alias, name in _aliases(model).items()}
        required = [
            f"{f} (or {aliases[f]})" if f in aliases else f
            for f in schema.get("required", ())
            if f != "kind"
        ]
        kinds.append(kind)
        needs.append(f"'{kind}' needs {', '.join(required)}")
    said = " ".join(s["properties"]["kind"]["description"] for s in schemas)
    properties["kind"] = {
        "type": "string",
        "enum": kinds,
        "default": kinds[0],
        "description": f"{said} Required: {'; '.join(needs)}.",
    }
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: val for k, val in node.items() if k != "$ref"}}
    # Conditions and "one of these keys" rules read poorly to models and trip some clients:
    # the server checks them anyway (and says so in the descriptions).
    node = {k: val for k, val in node.items() if k not in ("if", "then", "else")}
    if "anyOf" in node and all("required" in arm and "type" not in arm for arm in node["anyOf"]):
        node = {k: val for k, val in node.items() if k != "anyOf"} | {"minProperties": 1}
    if "anyOf" in node:
        arms = [arm for arm in node["anyOf"] if arm.get("type") != "null"]
        lists = [arm for arm in arms if arm.get("type") == "array"]
        if len(arms) > 1 and len(lists) == 1:  # a value or a list of values: a list
            arms = lists
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
