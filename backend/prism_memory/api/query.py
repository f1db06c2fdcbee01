"""Query-string routes read by their operation model: the values and the OpenAPI parameters.

A ``GET`` route hands :func:`query_values` to its model's ``parse`` (every field error at
once, unknown parameters refused, an empty value no filter), and documents its parameters
with :func:`query_doc` from the same model's JSON Schema, so the document states exactly
what the model judges.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from prism_memory.domain.contract.base import Operation

_BLANK = "An empty value is no filter."


def query_values(request: Request, model: type[Operation]) -> dict[str, Any]:
    """The query string as the model reads it: a list field's values as a list, any other
    parameter's one value (given twice: both, for the model to refuse)."""
    lists = {
        name
        for field, schema, aliases in _fields(model)
        if schema.get("type") == "array"
        for name in (field, *aliases)
    }
    params = request.query_params
    out: dict[str, Any] = {}
    for name in dict.fromkeys(params.keys()):
        values = params.getlist(name)
        out[name] = values if name in lists or len(values) > 1 else values[0]
    return out


def query_doc(model: type[Operation]) -> dict[str, Any]:
    """``openapi_extra`` for a route whose query parameters are ``model``'s fields.

    Only the canonical names are parameters (an alias beside its field would make a request
    giving both look valid, and the model refuses it); each field's description names its
    aliases.
    """
    parameters = []
    for name, schema, aliases in _fields(model):
        said = [schema.pop("description", ""), *(f"Also accepted as '{a}'." for a in aliases)]
        parameters.append(
            {
                "name": name,
                "in": "query",
                "required": False,
                "allowEmptyValue": True,
                "description": " ".join([*filter(None, said), _BLANK]),
                "schema": schema,
            }
        )
    return {"parameters": parameters}


def _fields(model: type[Operation]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """Each field's name, its schema as one query parameter takes it (null dropped: absent
    is "not given"; a list filter as a list) and its aliases."""
    properties = model.model_json_schema()["properties"]
    out = []
    for name, info in model.model_fields.items():
        aliases = [
            c
            for c in getattr(info.validation_alias, "choices", ())
            if isinstance(c, str) and c != name
        ]
        out.append((name, _parameter_schema(properties[name]), aliases))
    return out


def _parameter_schema(prop: dict[str, Any]) -> dict[str, Any]:
    keep = {k: v for k, v in prop.items() if k not in ("anyOf", "title", "default")}
    arms = [arm for arm in prop.get("anyOf", [prop]) if arm.get("type") != "null"]
    arm = next((a for a in arms if a.get("type") == "array"), arms[0])
    schema = {k: v for k, v in arm.items() if k != "title"}
    if "anyOf" in prop:
        schema = {**schema, **keep}
    if prop.get("default") is not None:
        schema["default"] = prop["default"]
    return schema
