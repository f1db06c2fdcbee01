"""A click group whose commands are imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import click


class LazyGroup(click.Group):
    """A group whose commands are imported only when they run (or show their own help).

    ``prism brief`` runs at every agent session start and ``prism --help`` should answer at
    once: neither may pay for the rule-file parser, the engines or the front doors. Each
    command is registered by name, ``"module:attribute"`` (a :class:`click.Command`, or a
    function without arguments that returns one) and the one-line help ``prism --help``
    lists, so listing the commands imports none of them. tests/test_cli.py checks that each
    line matches the command's own help.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str]] = {}

    def add_lazy_command(self, name: str, target: str, short_help: str) -> None:
        self.lazy[name] = (target, short_help)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.build(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def build(self, name: str) -> click.Command:
        """Import the module of a lazy command and return the command."""
        module_name, attribute = self.lazy[name][0].split(":")
        found: object = getattr(importlib.import_module(module_name), attribute)
        command = found() if callable(found) and not isinstance(found, click.Command) else found
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy[name][0]} is not a click command or its factory")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, from the registered lines (nothing imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            built = self.commands.get(name)
            if built is not None:
                if not built.hidden:
                    rows.append((name, built.get_short_help_str(limit)))
            else:
                # click's own shortening of a help text, without building the command
                stand_in = click.Command(name, help=self.lazy[name][1])
                rows.append((name, stand_in.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def all_commands(self) -> Sequence[tuple[str, click.Command]]:
        """Every command, lazy ones built (for tests and documentation)."""
        ctx = click.Context(self)
        found = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        return [(name, command) for name, command in found if command is not None]
