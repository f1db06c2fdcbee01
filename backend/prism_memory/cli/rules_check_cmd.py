"""The ``--check`` mode of ``prism export-rules``: exit 1 when the checked-in rule files no
longer match what the export would write, or hold what the tool would silently skip (the
pre-commit hook's check, see :mod:`prism_memory.services.git_hooks`), 3 when there is no
store to check against."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from prism_memory.errors import FieldError, InvalidInput
from prism_memory.formats.rules_io.records import ExportedFile
from prism_memory.services.git_hooks import EXIT_CANNOT_CHECK
from prism_memory.services.rules_check import check, exported_project

if TYPE_CHECKING:
    from prism_memory.cli.runtime import Runtime

EXIT_STALE = 1


def run(rt: Runtime, fmt: str, out: str, expected: Callable[[], Sequence[ExportedFile]]) -> None:
    """Check the files in ``out`` against ``expected()`` and lint them; exit 1 if any
    differs or has a finding. Without ``--project`` (or ``PRISM_PROJECT``), the project is
    the one the checked-in files' header names: a file exported with ``--project`` is
    checked against that project's rules (a pre-commit hook need not repeat it).

    Raises:
        InvalidInput: ``--out -`` (there is nothing on disk to check).
    """
    if out == "-":
        raise InvalidInput(
            [FieldError("out", "required", "--check needs --out DIR: the folder to check")]
        )
    from prism_memory.settings import load_settings

    if rt.options.get("project") is None and not os.environ.get("PRISM_PROJECT"):
        named = exported_project(fmt, Path(out))
        if named is not None:
            rt.options["project"] = named

    settings = load_settings(**rt.options)
    if not settings.database_url and not settings.db_path().is_file():
        click.echo(
            f"prism export-rules --check: no Prism store at {settings.db_path()}; "
            "cannot check (set PRISM_DB or --db)",
            err=True,
        )
        sys.exit(EXIT_CANNOT_CHECK)
    report = check(fmt, Path(out), expected())
    rt.emit(report.to_dict(), lambda _: report.summary())
    if not report.ok:
        sys.exit(EXIT_STALE)
