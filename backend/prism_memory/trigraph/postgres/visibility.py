"""Who sees which row, which rows a filter keeps and which apply, as SQL over ``recall_index``
(DESIGN §6): the statements of :mod:`~prism_memory.trigraph.postgres.ranking` are built from these.

A project's own live rows are one branch (:data:`PROJECT_BRANCH`, on
``recall_index_by_project``), the tenant's ``global``/``org`` rows of other projects another
(:data:`SHARED_BRANCH`, on ``recall_index_by_scope``); both filter by ``tenant_id`` first.
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from prism_memory.domain.ranking import normalise_key
from prism_memory.domain.records import APPLIES_TO_KEYS, Kind
from prism_memory.trigraph.port import CandidateFilter, RecallRequest

_MEMORULE: Final = Kind.MEMORULE.value
PROJECT_BRANCH: Final = "r.tenant_id = %(t)s AND r.active AND r.project_id = %(p)s"
SHARED_BRANCH: Final = (
    "r.tenant_id = %(t)s AND r.active AND r.scope IN ('global', 'org') AND r.project_id <> %(p)s"
)
# In its own project a row is seen unless it is another persona's rule.
_OWN_VISIBLE: Final = "(r.scope IS DISTINCT FROM 'persona' OR r.a_persona = %(viewer)s)"


def filter_args(tenant_id: UUID, flt: CandidateFilter) -> dict[str, Any]:
    """The parameters :func:`filter_sql` and the branches read."""
    args: dict[str, Any] = {
        "t": tenant_id,
        "p": flt.project_id,
        "viewer": normalise_key(flt.persona),
        "ns": flt.namespace,
        "kinds": [k.value for k in flt.memorule_kinds],
        "confidences": [c.value for c in flt.confidences],
    }
    for key, value in flt.exclude_conflicts.items():
        args[f"x_{_key(key)}"] = value
    return args


def filter_sql(flt: CandidateFilter) -> tuple[str, str]:
    """The filter's conditions for the project branch and for the shared branch."""
    parts = []
    if flt.memorules_only:
        parts.append(f"r.kind = '{_MEMORULE}'")
    if flt.namespace is not None:
        parts.append("r.namespace = %(ns)s")
    if flt.memorule_kinds:
        parts.append("r.memorule_kind = ANY(%(kinds)s)")
    if flt.confidences:
        parts.append("r.confidence = ANY(%(confidences)s)")
    for key in flt.exclude_conflicts:
        column = _key(key)
        parts.append(f"(r.a_{column} IS NULL OR r.a_{column} = %(x_{column})s)")
    common = " AND ".join(parts) if parts else "true"
    return f"{_OWN_VISIBLE} AND {common}", common


def applicability_sql(req: RecallRequest, args: dict[str, Any]) -> tuple[str, str, str]:
    """SQL counting the applies_to keys a row matches, SQL true when one conflicts, and SQL
    of both as bits (key i of ``APPLIES_TO_KEYS``: bit i matched, bit 3 + i conflicting)."""
    matches, conflicts, bits = [], [], []
    for i, key in enumerate(APPLIES_TO_KEYS):
        wanted = normalise_key(req.context.value(key))
        if wanted is None:
            continue
        column = _key(key)
        args[f"c_{column}"] = wanted
        matches.append(f"(r.a_{column} = %(c_{column})s)::int")
        conflicts.append(f"r.a_{column} <> %(c_{column})s")
        bits.append(
            f"CASE WHEN r.a_{column} = %(c_{column})s THEN {1 << i} "
            f"WHEN r.a_{column} <> %(c_{column})s THEN {1 << (3 + i)} ELSE 0 END"
        )
    if not matches:
        return "0", "false", "0"
    memorule = f"r.kind = '{_MEMORULE}'"
    # A NULL a_* (the rule names no value) neither matches nor conflicts.
    matched = " + ".join(f"coalesce({m}, 0)" for m in matches)
    count = f"CASE WHEN {memorule} THEN {matched} ELSE 0 END"
    conflict = f"({memorule} AND coalesce({' OR '.join(conflicts)}, false))"
    mask = f"CASE WHEN {memorule} THEN {' + '.join(bits)} ELSE 0 END"
    return count, conflict, mask


def _key(key: str) -> str:
    """An applies_to key as a column suffix; only the three known keys pass."""
    if key not in APPLIES_TO_KEYS:
        raise ValueError(f"unknown applies_to key {key!r}")
    return key
