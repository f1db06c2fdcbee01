"""A click group whose heavier commands are imported on first use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click


class LazyGroup(click.Group):
    """A group whose heavier commands are built on first use.

    ``prism brief`` runs at every agent session start: loading the rule-file parser, the
    graph exporter and the transfer code for it would cost more than the brief itself.
    A lazy command is a typed factory, imported and called only when the command runs (or
    when ``--help`` lists it).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, Callable[[], click.Command]] = {}

    def add_lazy_command(self, name: str, factory: Callable[[], click.Command]) -> None:
        self.lazy[name] = factory

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        factory = self.lazy.pop(cmd_name, None)
        if factory is not None:
            self.add_command(factory(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def all_commands(self) -> Sequence[tuple[str, click.Command]]:
        """Every command, lazy ones built (for tests and documentation)."""
        ctx = click.Context(self)
        found = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        return [(name, command) for name, command in found if command is not None]
