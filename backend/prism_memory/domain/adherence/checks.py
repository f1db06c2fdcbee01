"""The ``checks`` of a memorule (DESIGN §12): what can be checked from what an agent did.

A memorule may carry at most :data:`CHECKS_MAX` checks, each an object with exactly one key::

    {"forbid_command": REGEX}
    {"forbid_edit": GLOB}
    {"require_before": {"command": REGEX, "before": REGEX}}
    {"require_edit_with": {"edit": GLOB, "also": GLOB}}

:func:`parse_checks` turns the JSON list into :class:`Check` values, or refuses it with every
field error at once (``checks.2.forbid_command``: ``invalid_regex``...), located the way the
contract locates every nested field (``applies_to.persona``, ``scope.0``). :func:`checks_json`
is the canonical JSON form that is stored, hashed, exported and shown: parsing it again gives
the same checks. A regex is refused when it could run away (a repeat inside a repeat, a
backreference) so that matching a bounded command is bounded in time too.
"""

from __future__ import annotations

import re
import re._parser as sre  # type: ignore[import-not-found]  # the stdlib regex parser (shape only)
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from prism_memory.errors import FieldError, InvalidInput

CHECKS_MAX: Final = 8
PATTERN_MAX: Final = 500  # characters of one regex or glob

KINDS: Final = ("forbid_command", "forbid_edit", "require_before", "require_edit_with")
_PARTS: Final[dict[str, tuple[str, str]]] = {
    "require_before": ("command", "before"),
    "require_edit_with": ("edit", "also"),
}
_REGEX_PARTS: Final = frozenset({"forbid_command", "require_before"})


@dataclass(frozen=True)
class Check:
    """One check. ``kind`` is one of :data:`KINDS`; the patterns by kind:

    - ``forbid_command``: ``pattern`` (a regex);
    - ``forbid_edit``: ``pattern`` (a glob);
    - ``require_before``: ``pattern`` = the command that must come first (regex),
      ``trigger`` = the command it must precede (regex);
    - ``require_edit_with``: ``trigger`` = the edit (glob), ``pattern`` = the other edit that
      must come with it (glob).
    """

    kind: str
    pattern: str
    trigger: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The check as its one-key JSON object (the stored and shown form)."""
        if self.kind == "require_before":
            return {self.kind: {"command": self.pattern, "before": self.trigger}}
        if self.kind == "require_edit_with":
            return {self.kind: {"edit": self.trigger, "also": self.pattern}}
        return {self.kind: self.pattern}

    @property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        """The compiled regexes of a command check (pattern first, then trigger)."""
        if self.kind not in _REGEX_PARTS:
            return ()
        return tuple(_compiled(p) for p in (self.pattern, self.trigger) if p is not None)


def checks_json(checks: Sequence[Check]) -> list[dict[str, Any]]:
    return [c.to_json() for c in checks]


def stored_checks(data: Sequence[Mapping[str, Any]] | None) -> tuple[Check, ...]:
    """Checks as :func:`checks_json` stored them, without judging them again: they were
    judged by :func:`parse_checks` when written (reading 1,000 rules' checks must not parse
    1,000 regexes). A dump being loaded is judged again by :func:`parse_checks`."""
    if not data:
        return ()
    out: list[Check] = []
    for item in data:
        ((kind, value),) = item.items()
        if kind == "require_before":
            out.append(Check(kind, pattern=value["command"], trigger=value["before"]))
        elif kind == "require_edit_with":
            out.append(Check(kind, pattern=value["also"], trigger=value["edit"]))
        else:
            out.append(Check(kind, pattern=value))
    return tuple(out)


def parse_checks(raw: Any, *, field: str = "checks") -> tuple[Check, ...]:
    """The checks in ``raw`` (a JSON list; ``None`` is no checks).

    Raises:
        InvalidInput: every problem at once, located as ``checks[i]`` or
            ``checks[i].<kind>[.<part>]``: ``invalid_type``, ``too_many``, ``unknown_check``,
            ``one_key``, ``unknown_field``, ``missing``, ``empty``, ``too_long``,
            ``invalid_regex``, ``unsafe_regex``, ``invalid_glob``.
    """
    if raw is None:
        return ()
    errors: list[FieldError] = []
    if not isinstance(raw, list | tuple):
        raise InvalidInput([FieldError(field, "invalid_type", f"{field} must be a list")])
    if len(raw) > CHECKS_MAX:
        errors.append(
            FieldError(
                field,
                "too_many",
                f"{field} takes at most {CHECKS_MAX} checks ({len(raw)} given)",
                {"max": CHECKS_MAX},
            )
        )
    found: list[Check] = []
    for i, item in enumerate(raw[: CHECKS_MAX * 4]):
        check = _one(item, f"{field}.{i}", errors)
        if check is not None:
            found.append(check)
    if errors:
        raise InvalidInput(errors)
    return tuple(found)


def _one(item: Any, loc: str, errors: list[FieldError]) -> Check | None:
    if not isinstance(item, Mapping):
        errors.append(FieldError(loc, "invalid_type", f"{loc} must be an object with one key"))
        return None
    if len(item) != 1:
        errors.append(
            FieldError(loc, "one_key", f"{loc} must have exactly one key, one of {list(KINDS)}")
        )
        return None
    ((kind, value),) = item.items()
    if kind not in KINDS:
        errors.append(
            FieldError(
                loc,
                "unknown_check",
                f"{loc}: unknown check {str(kind)[:40]!r}; one of {list(KINDS)}",
                {"allowed": list(KINDS)},
            )
        )
        return None
    at = f"{loc}.{kind}"
    before = len(errors)
    if kind in _PARTS:
        first, second = _PARTS[kind]
        if not isinstance(value, Mapping):
            errors.append(
                FieldError(at, "invalid_type", f"{at} must be an object {{{first!r}, {second!r}}}")
            )
            return None
        for extra in sorted(str(k) for k in value if k not in (first, second)):
            errors.append(
                FieldError(
                    f"{at}.{extra[:40]}", "unknown_field", f"{at} has no field {extra[:40]!r}"
                )
            )
        parts = [
            _pattern(value.get(part), f"{at}.{part}", kind in _REGEX_PARTS, errors)
            for part in (first, second)
        ]
        if len(errors) > before or parts[0] is None or parts[1] is None:
            return None
        if kind == "require_before":
            return Check(kind, pattern=parts[0], trigger=parts[1])
        return Check(kind, pattern=parts[1], trigger=parts[0])
    pattern = _pattern(value, at, kind in _REGEX_PARTS, errors)
    return None if pattern is None else Check(kind, pattern)


def _pattern(value: Any, loc: str, regex: bool, errors: list[FieldError]) -> str | None:
    what = "regex" if regex else "glob"
    if value is None:
        errors.append(FieldError(loc, "missing", f"{loc} is required (a {what})"))
        return None
    if not isinstance(value, str):
        errors.append(FieldError(loc, "invalid_type", f"{loc} must be a string (a {what})"))
        return None
    if not value.strip():
        errors.append(FieldError(loc, "empty", f"{loc} must not be empty"))
        return None
    if len(value) > PATTERN_MAX:
        errors.append(
            FieldError(
                loc,
                "too_long",
                f"{loc} is {len(value)} characters; at most {PATTERN_MAX}",
                {"max": PATTERN_MAX},
            )
        )
        return None
    if any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in value):
        errors.append(FieldError(loc, "control_character", f"{loc} has a control character"))
        return None
    problem = _regex_problem(value) if regex else _glob_problem(value)
    if problem is not None:
        code, message = problem
        errors.append(FieldError(loc, code, f"{loc}: {message}"))
        return None
    return value


def _regex_problem(pattern: str) -> tuple[str, str] | None:
    try:
        parsed = sre.parse(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return "invalid_regex", f"not a valid regular expression ({exc})"
    if _runaway(list(parsed), inside_repeat=False):
        return (
            "unsafe_regex",
            "a repeat inside a repeat (like '(a+)+') or a backreference can take exponential "
            "time on a long command; write it without the nesting",
        )
    return None


_REPEATS: Final = {sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)}


def _runaway(items: list[Any], *, inside_repeat: bool) -> bool:
    """Whether a parsed pattern has an unbounded repeat inside another repeat, or a
    backreference (the shapes that backtrack exponentially)."""
    for op, arg in items:
        if op in _REPEATS:
            _low, high, sub = arg
            unbounded = high == sre.MAXREPEAT or high > 50
            body = list(sub)
            if inside_repeat and unbounded:
                return True
            if _runaway(body, inside_repeat=inside_repeat or unbounded):
                return True
        elif op == sre.SUBPATTERN:
            if _runaway(list(arg[-1]), inside_repeat=inside_repeat):
                return True
        elif op == sre.BRANCH:
            if any(_runaway(list(b), inside_repeat=inside_repeat) for b in arg[1]):
                return True
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            if _runaway(list(arg[1]), inside_repeat=inside_repeat):
                return True
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return True
    return False


def _glob_problem(glob: str) -> tuple[str, str] | None:
    if "\\" in glob:
        return "invalid_glob", "use '/' between folders, not '\\'"
    if glob.count("[") != glob.count("]"):
        return "invalid_glob", "an unclosed '[' character class"
    if "***" in glob:
        return "invalid_glob", "'***' is not a glob; use '**' for any folders"
    for part in glob.split("/"):
        if "**" in part and part != "**":
            return "invalid_glob", "'**' must be a whole path part ('src/**/x', not 'src/a**')"
    return None


_COMPILED: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _COMPILED.get(pattern)
    if found is None:
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        found = _COMPILED[pattern] = re.compile(pattern)
    return found
