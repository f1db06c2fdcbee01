"""The memorules with checks of a project, on PostgreSQL (``memorules_with_checks``,
DESIGN §12): migration 7's partial index lists the few states that carry checks; each is kept
when it is its memory's current version of an active memorule visible from the project."""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

import psycopg

from prism_memory.domain.adherence.checks import stored_checks
from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.records import AppliesTo, Enforcement

_SELECT: Final = (
    "SELECT m.id, s.id, s.version, m.project_id, s.subject, s.body, s.applies_to, s.checks, "
    "s.enforcement FROM memory_state s "
    "JOIN memory m ON m.tenant_id = s.tenant_id AND m.id = s.memory_id "
    "WHERE s.tenant_id = %s AND s.checks IS NOT NULL AND m.current_version = s.version "
    "AND m.status = 'active' AND m.kind = 'memorule' "
    "AND (m.project_id = %s OR s.applies_to->>'scope' IN ('global', 'org')) "
    "ORDER BY m.id"
)


def memorules_with_checks(
    conn: psycopg.Connection[tuple[Any, ...]], tenant_id: UUID, project_id: UUID
) -> list[CheckedRule]:
    """See :meth:`prism_memory.trigraph.port.AdherenceStore.memorules_with_checks`."""
    return [
        CheckedRule(
            memorule_id=r[0],
            state_id=r[1],
            version=r[2],
            project_id=r[3],
            subject=r[4] or "",
            body=r[5],
            applies_to=AppliesTo.from_dict(r[6]) if r[6] is not None else AppliesTo(),
            checks=stored_checks(r[7]),
            enforcement=Enforcement(r[8]),
        )
        for r in conn.execute(_SELECT, (tenant_id, project_id)).fetchall()
    ]
