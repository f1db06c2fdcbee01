"""The listing query (:meth:`TriGraphStore.list_memories`), written once for both engines.

Filters run on ``recall_index``, which holds every memory's filter columns already
normalised (applies_to values trimmed and lower-cased, the scope), joined to the memory's
status and its current state. Pages are keyset pages on the memory id (UUIDv7, so newest
first): SQLite compares the ids as lower-case hex text, PostgreSQL as ``uuid``; both orders
are the ids' numeric order. Every caller's value is a parameter; only fixed names and enum
values reach the SQL text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from prism_memory.domain.records import Kind, Scope
from prism_memory.trigraph.port import ListFilter

_MEMORULE = Kind.MEMORULE.value
_PERSONA = Scope.PERSONA.value
_SHARED = f"r.scope IN ('{Scope.GLOBAL.value}', '{Scope.ORG.value}')"
APPLIES_COLUMNS = {
    "persona": "r.a_persona",
    "surface": "r.a_surface",
    "specialization": "r.a_specialization",
}


def list_query(
    tenant_id: UUID,
    flt: ListFilter,
    columns: str,
    mark: str,
    as_id: Callable[[UUID], Any],
) -> tuple[str, list[Any]]:
    """The SELECT of one listing page and its parameters.

    Args:
        tenant_id: the tenant listed.
        flt: the filters and the page.
        columns: the select list, over aliases ``m`` (memory) and ``s`` (current state).
        mark: the engine's placeholder (``?`` or ``%s``).
        as_id: how the engine takes a UUID parameter (text for SQLite).

    Returns:
        The query text and its parameters, in order.
    """
    args: list[Any] = []

    def p(value: Any) -> str:  # call in the order the text reads: parameters are positional
        args.append(value)
        return mark

    def among(column: str, values: list[str]) -> str:
        return f"{column} IN ({', '.join(p(v) for v in values)})"

    where = [f"r.tenant_id = {p(as_id(tenant_id))}"]
    own = f"r.project_id = {p(as_id(flt.project_id))}"
    # Fixed enum values go in as literals; everything from a caller is a parameter.
    where.append(f"({own} OR (r.kind = '{_MEMORULE}' AND {_SHARED}))" if flt.tenant_wide else own)
    if flt.status is not None:
        where.append(f"m.status = {p(flt.status.value)}")
    if flt.memorules_only or flt.scopes:
        where.append(f"r.kind = '{_MEMORULE}'")
    if flt.namespace is not None:
        where.append(f"r.namespace = {p(flt.namespace)}")
    if flt.memorule_kinds:
        where.append(among("r.memorule_kind", [k.value for k in flt.memorule_kinds]))
    if flt.confidences:
        where.append(among("r.confidence", [c.value for c in flt.confidences]))
    if flt.scopes:
        named = among("r.scope", [s.value for s in flt.scopes])
        # A memorule that names no scope is a project rule (DESIGN §6).
        where.append(f"({named} OR r.scope IS NULL)" if Scope.PROJECT in flt.scopes else named)
    for key, value in sorted(flt.applies.items()):
        where.append(f"{APPLIES_COLUMNS[key]} = {p(value)}")
    if flt.viewer_persona is not None:
        where.append(
            f"(r.scope IS NULL OR r.scope <> '{_PERSONA}' OR r.a_persona = {p(flt.viewer_persona)})"
        )
    if flt.pinned:
        where.append(f"m.pinned = {p(True)}")
    if flt.before is not None:
        where.append(f"r.memory_id < {p(as_id(flt.before))}")
    query = (
        f"SELECT {columns} FROM recall_index r "
        "JOIN memory m ON m.tenant_id = r.tenant_id AND m.id = r.memory_id "
        "JOIN memory_state s ON s.tenant_id = m.tenant_id AND s.memory_id = m.id "
        "AND s.version = m.current_version "
        f"WHERE {' AND '.join(where)} ORDER BY r.memory_id DESC LIMIT {p(flt.limit)}"
    )
    return query, args
