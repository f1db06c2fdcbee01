"""The memorules with checks of a project, on SQLite (``memorules_with_checks``, DESIGN §12).

Light on purpose: the ``PreToolUse`` guard answers in a few tens of milliseconds as a whole
process, so this module imports no numpy, ranking or model code; it reads through any
connection to the file (the store's, or one the guard opened itself). Migration 6's partial
index lists the few states that carry checks; each is kept when it is its memory's current
version of an active memorule visible from the project (``CROSS JOIN`` keeps SQLite from
walking every memory of the tenant instead: the states with checks lead).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final
from uuid import UUID

from prism_memory.domain.adherence.checks import stored_checks
from prism_memory.domain.adherence.rules import CheckedRule
from prism_memory.domain.records import AppliesTo, Enforcement

_SELECT: Final = (
    "SELECT m.id, s.id, s.version, m.project_id, s.subject, s.body, s.applies_to, s.checks, "
    "s.enforcement FROM memory_state s "
    "CROSS JOIN memory m ON m.tenant_id = s.tenant_id AND m.id = s.memory_id "
    "WHERE s.tenant_id = ? AND s.checks IS NOT NULL AND m.current_version = s.version "
    "AND m.status = 'active' AND m.kind = 'memorule' "
    "AND (m.project_id = ? OR json_extract(s.applies_to, '$.scope') IN ('global', 'org')) "
    "ORDER BY m.id"
)


def memorules_with_checks(
    conn: sqlite3.Connection, tenant_id: UUID, project_id: UUID
) -> list[CheckedRule]:
    """See :meth:`prism_memory.trigraph.port.AdherenceStore.memorules_with_checks`."""
    # A store holds few distinct projects and applies_to values: each is parsed once.
    projects: dict[str, UUID] = {}
    places: dict[str, AppliesTo] = {}
    out = []
    for r in conn.execute(_SELECT, (str(tenant_id), str(project_id))):
        project = projects.get(r[3]) or projects.setdefault(r[3], UUID(r[3]))
        applies = places.get(r[6] or "")
        if applies is None:
            parsed = AppliesTo.from_dict(json.loads(r[6])) if r[6] else AppliesTo()
            applies = places.setdefault(r[6] or "", parsed)
        out.append(
            CheckedRule(
                memorule_id=UUID(r[0]),
                state_id=UUID(r[1]),
                version=r[2],
                project_id=project,
                subject=r[4] or "",
                body=r[5],
                applies_to=applies,
                checks=stored_checks(json.loads(r[7])),
                enforcement=_ENFORCEMENT[r[8]],
            )
        )
    return out


_ENFORCEMENT: Final = {e.value: e for e in Enforcement}
