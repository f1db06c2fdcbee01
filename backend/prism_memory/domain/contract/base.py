"""The base of every operation model: closed, every field error at once, in Prism's words.

pydantic validates the fields (each one's :class:`~prism_memory.domain.contract.checks.Check` raises
the contract's own errors); this base turns pydantic's few built-in errors (an unknown
field, a missing one) into the contract's, puts unknown fields first as the contract always
has, and lets a model add the rules that span fields (:meth:`Operation.across`).
:meth:`Operation.parse` raises one :class:`~prism_memory.errors.InvalidInput` through the one
mapper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from prism_memory.domain.characters import printable
from prism_memory.domain.contract.checks import Check
from prism_memory.errors import CONTRACT_ERROR, InvalidInput, contract_error, field_errors

Errors = list[InitErrorDetails]


def failure(
    loc: tuple[str | int, ...], error: PydanticCustomError, value: Any = None
) -> InitErrorDetails:
    """One line of a ValidationError: ``error`` at ``loc``."""
    return InitErrorDetails(type=error, loc=loc, input=value)


def code_of(error: InitErrorDetails) -> str:
    kind = error["type"]
    return kind.type.removeprefix(CONTRACT_ERROR) if isinstance(kind, PydanticCustomError) else kind


def checked(check: Check, value: Any, label: str) -> Any:
    """One loose value (an argument beside a request) judged by ``check``.

    Raises:
        InvalidInput: the value's field errors, named ``label``.
    """
    try:
        return check.check(value, None)
    except PydanticCustomError as exc:
        raise _invalid([failure((label,), exc, value)]) from None
    except ValidationError as exc:
        raise field_errors({**e, "loc": (label, *e["loc"])} for e in exc.errors()) from None


def _invalid(errors: Errors) -> InvalidInput:
    return field_errors(ValidationError.from_exception_data("request", errors).errors())


def refuse(loc: tuple[str, ...], error: PydanticCustomError) -> InvalidInput:
    """The one field error ``error`` at ``loc``, as :class:`InvalidInput`."""
    return _invalid([failure(loc, error)])


class Operation(BaseModel):
    """A request of one operation: its fields are its contract (validation and schema)."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def parse(cls, raw: Any) -> Self:
        """``raw`` validated, or every field error at once.

        Raises:
            InvalidInput: in the one error shape.
        """
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise field_errors(exc.errors()) from None

    @classmethod
    def refuse_unknown(cls, raw: Mapping[str, Any]) -> None:
        """Refuse the fields this request does not have (for a door that hands the rest
        to a service taking keywords, which judges the values).

        Raises:
            InvalidInput: one ``unknown_field`` error per unknown field.
        """
        names = cls.accepted()
        unknown = sorted((str(k) for k in raw if k not in names), key=str)
        if unknown:
            raise _invalid([failure((printable(k),), cls.unknown(k), raw[k]) for k in unknown])

    @classmethod
    def accepted(cls) -> frozenset[str]:
        """The names a request may use: the fields and their aliases."""
        names = set(cls.model_fields)
        for info in cls.model_fields.values():
            choices = getattr(info.validation_alias, "choices", ())
            names.update(c for c in choices if isinstance(c, str))
        return frozenset(names)

    @classmethod
    def not_an_object(cls, value: Any) -> PydanticCustomError:
        """The error for a request that is not a JSON object."""
        return contract_error("wrong_type", "the request must be a JSON object")

    @classmethod
    def absent(cls) -> PydanticCustomError:
        """The error when this (nested) object is required and not given."""
        return contract_error("missing", "'{field}' is required")

    @classmethod
    def unknown(cls, name: str) -> PydanticCustomError:
        """The error for a field this request does not have."""
        return contract_error(
            "unknown_field",
            f"'{printable(name)}' is not a field of this request",
            allowed=sorted(cls.accepted()),
        )

    @classmethod
    def missing(cls, name: str) -> PydanticCustomError:
        info = cls.model_fields.get(name)
        if info is not None:
            for meta in info.metadata:
                if isinstance(meta, Check):
                    return meta.missing()
            if isinstance(info.annotation, type) and issubclass(info.annotation, Operation):
                return info.annotation.absent()
        return contract_error("missing", "'{field}' is required")

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The request as the fields are to judge it (e.g. blank filters dropped)."""
        return data

    @classmethod
    def across(cls, data: Mapping[str, Any], errors: Errors) -> Errors:
        """The rules that span fields: ``errors`` (unknown fields first) plus their own."""
        return errors

    passthrough: ClassVar[bool] = False  # True: only "is an object" is checked here

    @classmethod
    def kept(cls, data: dict[str, Any]) -> Self:
        """A passthrough model holding ``data`` as sent (see :attr:`passthrough`)."""
        raise NotImplementedError

    @model_validator(mode="wrap")
    @classmethod
    def _contract(cls, data: Any, handler: Any) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise ValidationError.from_exception_data(
                cls.__name__, [failure((), cls.not_an_object(data), data)]
            )
        data = cls.prepare(dict(data))
        if cls.passthrough:
            return cls.kept(data)
        # Unknown fields are named here, first, sorted: pydantic cannot even name a key
        # that is no valid Unicode (a lone surrogate).
        names = cls.accepted()
        unknown = sorted((str(k) for k in data if k not in names), key=str)
        errors = [failure((printable(k),), cls.unknown(k), data[k]) for k in unknown]
        result = None
        try:
            result = handler({k: v for k, v in data.items() if k in names})
        except ValidationError as exc:
            errors += [cls._own(e) for e in exc.errors()]
        errors = cls.across(data, errors)
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return result

    @classmethod
    def _own(cls, error: Any) -> InitErrorDetails:
        """pydantic's error in the contract's words."""
        loc, kind = tuple(error["loc"]), error["type"]
        if kind.startswith(CONTRACT_ERROR):
            return failure(
                loc, PydanticCustomError(kind, "{message}", error["ctx"]), error["input"]
            )
        if kind == "extra_forbidden" and len(loc) == 1:
            return failure(loc, cls.unknown(str(loc[0])), error["input"])
        if kind == "missing" and len(loc) == 1:
            return failure(loc, cls.missing(str(loc[0])))
        out = InitErrorDetails(type=kind, loc=loc, input=error["input"])
        if "ctx" in error:
            out["ctx"] = error["ctx"]
        return out


def without_blanks(names: frozenset[str], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the blank text values of ``names``: a query string's ``?persona=``
    or a form's empty field is no filter, at every door."""
    return {
        k: v for k, v in data.items() if not (k in names and isinstance(v, str) and not v.strip())
    }


def at(errors: Errors, *loc: str | int) -> bool:
    """Whether some error is located at ``loc``."""
    return any(tuple(e["loc"]) == loc for e in errors)
