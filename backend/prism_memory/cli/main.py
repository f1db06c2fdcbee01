"""``prism``: the command line, on the embedded engine by default.

Every command takes the context options (``--tenant``, ``--project``, ``--persona``,
``--surface``, ``--specialization``; or ``PRISM_*`` variables) and ``--db``/``PRISM_DB``.
People get readable output; ``--json`` prints the payloads. A validation error prints the
structured error and exits 2; other refused requests exit 1.

This module only registers the commands: each lives in its own module, built on
:mod:`prism_memory.cli.runtime`, and is imported when it runs (see
:class:`prism_memory.cli.lazy.LazyGroup`),
so ``prism --help`` imports click and nothing of Prism's services.
"""

from __future__ import annotations

import click

from prism_memory.cli.lazy import LazyGroup
from prism_memory.version import VERSION


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(VERSION, prog_name="prism")
def cli() -> None:
    """Prism Memory: typed, scoped, auditable memory for teams of AI agents.

    Notes are free text; memorules are typed behavioural records (behavioral_rule, feedback,
    preference, correction, convention) that recall ranks by how well they apply to you.
    """


# One line per command: its name, where it lives ("module:command or factory"), and the
# line `prism --help` lists (tests/test_cli.py checks it against the command's own help).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "remember",
        "prism_memory.cli.memory_cmd:remember",
        "Write a note or a memorule (prism_remember).",
    ),
    (
        "recall",
        "prism_memory.cli.memory_cmd:recall",
        "Recall what applies to you now (semantic_recall); QUERY may be empty.",
    ),
    ("show", "prism_memory.cli.memory_cmd:show", "Show one memory (its current version)."),
    (
        "update",
        "prism_memory.cli.memory_cmd:update",
        "Supersede a memory with a new version (the old ones stay in its history).",
    ),
    (
        "retire",
        "prism_memory.cli.memory_cmd:retire",
        "Retire a memory: recall no longer returns it; history keeps it.",
    ),
    ("restore", "prism_memory.cli.memory_cmd:restore", "Restore a retired memory into recall."),
    (
        "pin",
        "prism_memory.cli.memory_cmd:pin",
        "Pin a memorule: the brief shows it first, before every ranked rule, within its budget.",
    ),
    (
        "unpin",
        "prism_memory.cli.memory_cmd:unpin",
        "Unpin a memorule: the brief ranks it like any other again.",
    ),
    (
        "history",
        "prism_memory.cli.memory_cmd:history",
        "Every version of a memory, who wrote it and when, and its audit events.",
    ),
    (
        "reindex",
        "prism_memory.cli.memory_cmd:reindex",
        "Re-embed memories written with another embedding model (after changing the model).",
    ),
    (
        "audit",
        "prism_memory.cli.audit_cmd:audit",
        "List memorule audit events, newest first; 'verify' checks the chains; 'head' prints "
        "the chain heads to keep elsewhere; 'served' lists served receipts.",
    ),
    (
        "brief",
        "prism_memory.cli.brief_cmd:brief_command",
        "The memorules that apply to you now, grouped by kind, best first, within a budget.",
    ),
    (
        "migrate",
        "prism_memory.cli.db_cmd:migrate_command",
        "Apply pending schema migrations, in order, each once; print the version in force.",
    ),
    (
        "dump",
        "prism_memory.cli.transfer_cmd:dump_command",
        "Write the whole store (every memory, version, vector, audit event and idempotency "
        "claim) as JSON Lines, for backups and for 'prism import' into another engine.",
    ),
    (
        "import",
        "prism_memory.cli.transfer_cmd:import_command",
        "Load a 'prism dump' (or 'prism export --format jsonl') file into this store.",
    ),
    (
        "import-rules",
        "prism_memory.cli.rules_cmd:import_rules",
        "Import every tool's rule files as memorules.",
    ),
    (
        "export-rules",
        "prism_memory.cli.rules_cmd:export_rules",
        "Write the memorules that apply to the context as files agents load.",
    ),
    (
        "export",
        "prism_memory.cli.rules_cmd:export_graph",
        "Export the whole tenant's TriGraph (every project, every version, the audit chain).",
    ),
    (
        "capture",
        "prism_memory.cli.capture_cmd:capture_group",
        "Propose memorules from agent session transcripts (into `prism proposals`).",
    ),
    (
        "proposals",
        "prism_memory.cli.proposals_cmd:proposals_command",
        "The capture review queue: list proposals, or approve/reject/merge/promote one.",
    ),
    (
        "checks",
        "prism_memory.cli.checks_cmd:checks_group",
        "Checks of memorules: propose them from the rules' own text (into the review queue).",
    ),
    (
        "adherence",
        "prism_memory.cli.adherence_cmd:adherence_group",
        "Judge agent sessions against the checks of the rules they were told, and report.",
    ),
    (
        "guard",
        "prism_memory.cli.guard_hook:guard_group",
        "Put memorules in front of an agent before it runs a command or edits a file.",
    ),
    (
        "keys",
        "prism_memory.cli.keys_cmd:keys_group",
        "API keys for 'prism serve': each is bound to one tenant, a role, maybe projects.",
    ),
    (
        "hooks",
        "prism_memory.cli.hooks_cmd:hooks_group",
        "Install client hooks: the brief at every Claude Code session start, rule files "
        "checked at every git commit.",
    ),
    (
        "mcp",
        "prism_memory.cli.mcp_cmd:mcp_command",
        "Serve the Prism tools over MCP on stdin/stdout.",
    ),
    (
        "serve",
        "prism_memory.cli.serve_cmd:serve_command",
        "Serve the HTTP API (/v1, needs an API key), MCP (/mcp), /healthz, /readyz, /metrics.",
    ),
)
for _name, _target, _help in COMMANDS:
    cli.add_lazy_command(_name, _target, _help)


def main() -> None:
    cli(prog_name="prism")


if __name__ == "__main__":
    main()
