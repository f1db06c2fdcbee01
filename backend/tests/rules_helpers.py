"""The rule importer as the CLI builds it: writing as the local operator through AccessService."""

from __future__ import annotations

from prism_memory.bootstrap import Services
from prism_memory.cli.acting import as_operator
from prism_memory.domain.records import SessionContext
from prism_memory.services.rules_import import RulesImporter


def operator_importer(services: Services, ctx: SessionContext) -> RulesImporter:
    """An importer acting with the operator key of ``ctx``'s tenant."""
    access, me = as_operator(services, ctx)
    return RulesImporter(access, me.key, services.store)
