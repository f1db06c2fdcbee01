"""``prism hooks install|uninstall claude-code|git``: put the brief in front of agents without
relying on the model, and keep checked-in rule files from going stale.

- ``claude-code`` merges a ``SessionStart`` handler (and, with ``--on-prompt``, a
  ``UserPromptSubmit`` one; with ``--on-subagent``, a ``SubagentStart`` one; with
  ``--on-touch``, a ``PreToolUse`` one for a file's first touch) running
  ``python -P -m prism_memory brief --hook claude-code`` (which asks the store's running
  ``prism serve`` when there is one: :mod:`prism_memory.cli.claude_hook_fast`) into Claude Code's
  ``settings.json`` (:mod:`prism_memory.services.claude_settings`); with ``--capture`` also a
  ``Stop``
  handler running ``prism capture claude-code --hook`` (:mod:`prism_memory.cli.capture_cmd`);
  with ``--adherence`` a ``Stop`` handler running ``prism adherence claude-code --hook`` that
  judges the session in the background (:mod:`prism_memory.cli.adherence_cmd`); with
  ``--guard`` a ``PreToolUse`` handler running ``python -m prism_memory guard claude-code``
  that puts the rules a command or edit would break in front of the agent
  (:mod:`prism_memory.cli.guard_hook`).
- ``git`` installs a ``pre-commit`` hook running ``prism export-rules --check``
  (:mod:`prism_memory.services.git_hooks`).

Neither touches the store. Errors print Prism's error JSON and exit 2.
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from prism_memory.errors import FieldError, InvalidInput, PrismError
from prism_memory.formats.rules_io.tools import TOOLS

if TYPE_CHECKING:
    from prism_memory.services.claude_settings import SettingsChange
    from prism_memory.services.git_hooks import GitHookChange

F = TypeVar("F", bound=Callable[..., Any])
CLIENTS = ("claude-code", "git")
# Where each tool reads its rule files, from the repository's root: the git hook checks there.
DEFAULT_OUT = {t.fmt.value: t.home for t in TOOLS.values()}
_CONTEXT = ("db", "tenant", "project", "persona", "surface", "specialization")
_CAPTURE_CONTEXT = ("db", "tenant", "project", "persona")  # what the capture command takes
# (and the adherence command: both Stop hooks take the same context)


def _errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except PrismError as exc:
            click.echo(json.dumps(exc.to_payload(), ensure_ascii=False), err=True)
            sys.exit(2 if isinstance(exc, InvalidInput) else 1)

    return cast(F, wrapper)


def prism_executable(given: str | None) -> str:
    """The ``prism`` a hook should run: an absolute path, or a bare name given as such.

    Raises:
        InvalidInput: none can be found (give ``--prism``).
    """
    if given:
        if "/" not in given and "\\" not in given:
            return given  # a bare name: each machine finds it on its PATH (shared settings)
        return str(Path(given).expanduser().resolve())
    beside = Path(sys.executable).with_name("prism")
    if beside.is_file():
        return str(beside)
    found = shutil.which("prism")
    if found:
        return str(Path(found).resolve())
    raise InvalidInput(
        [FieldError("prism", "not_found", "no prism executable found; give --prism PATH")]
    )


def _settings_path(user: bool, project_dir: Path | None, settings: Path | None) -> Path:
    if settings is not None:
        return settings
    if user:
        return Path.home() / ".claude" / "settings.json"
    return (project_dir or Path.cwd()) / ".claude" / "settings.json"


@click.group("hooks")
def hooks_group() -> None:
    """Install client hooks: the brief at every Claude Code session start, rule files checked
    at every git commit. See docs/clients.md."""


_client = click.argument("client", type=click.Choice(CLIENTS))
_shared_options = [
    click.option(
        "--project-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="claude-code: the project whose .claude/settings.json to change [default: .]",
    ),
    click.option("--user", is_flag=True, help="claude-code: ~/.claude/settings.json instead"),
    click.option(
        "--settings",
        type=click.Path(dir_okay=False, path_type=Path),
        help="claude-code: this settings file instead (e.g. .claude/settings.local.json)",
    ),
    click.option(
        "--dry-run", is_flag=True, help="print the change as a unified diff; write nothing"
    ),
    click.option("--json", "as_json", is_flag=True, help="print JSON instead of text"),
    click.option(
        "--repo",
        type=click.Path(file_okay=False, path_type=Path),
        help="git: the repository [default: .]",
    ),
]


def _with(options: list[Callable[[F], F]]) -> Callable[[F], F]:
    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


@hooks_group.command("install")
@_client
@_with(_shared_options)
@click.option("--on-prompt", is_flag=True, help="claude-code: also a UserPromptSubmit hook")
@click.option(
    "--on-subagent",
    is_flag=True,
    help="claude-code: also a SubagentStart hook (each subagent's rules for its role and task)",
)
@click.option(
    "--on-touch",
    is_flag=True,
    help="claude-code: also a PreToolUse hook giving the rules for a file the session reads "
    "or edits for the first time (beside --guard's)",
)
@click.option(
    "--capture",
    is_flag=True,
    help="claude-code: also a Stop hook capturing the session's corrections (in the background)",
)
@click.option(
    "--adherence",
    is_flag=True,
    help="claude-code: also a Stop hook judging the session against the rules' checks "
    "(in the background)",
)
@click.option(
    "--guard",
    is_flag=True,
    help="claude-code: also a PreToolUse hook putting the rules a command or edit would break "
    "in front of the agent before it runs",
)
@click.option("--prism", "prism_path", help="the prism executable hooks run [default: this one]")
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(sorted(DEFAULT_OUT)),
    help="git: a rule-file format to check (repeatable) [default: agents-md]",
)
@click.option("--out", help="git, one --format: the folder it is checked in [default per format]")
@click.option("--db", help="git: --db for the check; claude-code: for --capture")
@click.option("--tenant", help="git: --tenant for the check; claude-code: for --capture")
@click.option("--project", help="git: --project for the check; claude-code: for --capture")
@click.option("--persona", help="git: --persona for the check; claude-code: for --capture")
@click.option("--surface", help="git: --surface for the check")
@click.option("--specialization", help="git: --specialization for the check")
@_errors
def install(
    client: str,
    project_dir: Path | None,
    user: bool,
    settings: Path | None,
    dry_run: bool,
    as_json: bool,
    repo: Path | None,
    on_prompt: bool,
    on_subagent: bool,
    on_touch: bool,
    capture: bool,
    adherence: bool,
    guard: bool,
    prism_path: str | None,
    formats: tuple[str, ...],
    out: str | None,
    **context: str | None,
) -> None:
    """Install Prism's hook for CLIENT (claude-code or git); installing twice adds nothing."""
    own = _CAPTURE_CONTEXT if client == "claude-code" else ()  # checked by _needs_capture
    _only_for(
        client,
        {
            "project_dir": ("claude-code", project_dir),
            "user": ("claude-code", user or None),
            "settings": ("claude-code", settings),
            "on_prompt": ("claude-code", on_prompt or None),
            "on_subagent": ("claude-code", on_subagent or None),
            "on_touch": ("claude-code", on_touch or None),
            "capture": ("claude-code", capture or None),
            "adherence": ("claude-code", adherence or None),
            "guard": ("claude-code", guard or None),
            "repo": ("git", repo),
            "format": ("git", formats or None),
            "out": ("git", out),
            **{key: ("git", value) for key, value in context.items() if key not in own},
        },
        _needs_capture(capture or adherence or guard, context) if client == "claude-code" else [],
    )
    prism = prism_executable(prism_path)
    if client == "claude-code":
        from prism_memory.services import claude_settings

        path = _settings_path(user, project_dir, settings)
        options = _capture_options(context)
        change = claude_settings.install(
            path,
            prism,
            on_prompt=on_prompt,
            capture=options if capture else None,
            adherence=options if adherence else None,
            on_subagent=on_subagent,
            on_touch=on_touch,
            guard=options if guard else None,
            # the fast path of `python -m prism_memory` unless a prism was named
            guard_runner=None if prism_path else (sys.executable, "-P", "-m", "prism_memory"),
            # likewise for the brief: its fast path asks the store's running `prism serve`
            brief_runner=None if prism_path else (sys.executable, "-P", "-m", "prism_memory"),
        )
        _settings_result(change, dry_run, as_json, claude_settings.apply)
        return
    from prism_memory.services import git_hooks

    chosen = formats or ("agents-md",)
    if out is not None and len(chosen) > 1:
        raise InvalidInput([FieldError("out", "conflict", "--out goes with one --format only")])
    flags: list[str] = []
    for key in _CONTEXT:
        if context.get(key):
            flags += [f"--{key}", str(context[key])]
    checks = [git_hooks.Check(f, out or DEFAULT_OUT[f], tuple(flags)) for f in chosen]
    where = repo or Path.cwd()
    if dry_run:
        click.echo(git_hooks.script(prism, checks), nl=False)
        return
    _git_result(git_hooks.install(where, prism, checks), as_json)


@hooks_group.command("uninstall")
@_client
@_with(_shared_options)
@_errors
def uninstall(
    client: str,
    project_dir: Path | None,
    user: bool,
    settings: Path | None,
    dry_run: bool,
    as_json: bool,
    repo: Path | None,
) -> None:
    """Remove exactly what `prism hooks install CLIENT` added; other hooks stay untouched."""
    _only_for(
        client,
        {
            "project_dir": ("claude-code", project_dir),
            "user": ("claude-code", user or None),
            "settings": ("claude-code", settings),
            "dry_run": ("claude-code", dry_run or None),
            "repo": ("git", repo),
        },
    )
    if client == "claude-code":
        from prism_memory.services import claude_settings

        path = _settings_path(user, project_dir, settings)
        _settings_result(claude_settings.uninstall(path), dry_run, as_json, claude_settings.apply)
        return
    from prism_memory.services import git_hooks

    _git_result(git_hooks.uninstall(repo or Path.cwd()), as_json)


def _needs_capture(capture: bool, context: dict[str, str | None]) -> list[FieldError]:
    """For claude-code the context options belong to the capture hook: one given without
    ``--capture`` is an error."""
    return [
        FieldError(
            key,
            "needs_capture",
            f"--{key} for claude-code goes with --capture, --adherence or --guard",
        )
        for key in _CAPTURE_CONTEXT
        if context.get(key) is not None and not capture
    ]


def _capture_options(context: dict[str, str | None]) -> list[str]:
    """The capture command's options; ``--db`` made absolute, for the hook runs in Claude
    Code's working directory, not this one."""
    flags: list[str] = []
    for key in _CAPTURE_CONTEXT:
        value = context.get(key)
        if value:
            flags += [f"--{key}", str(Path(value).expanduser().resolve()) if key == "db" else value]
    return flags


def _only_for(
    client: str, given: dict[str, tuple[str, object]], more: list[FieldError] | None = None
) -> None:
    """Refuse options that belong to the other client, and the ``more`` errors, all at once.

    Raises:
        InvalidInput: an option was given that ``client`` does not take.
    """
    errors = [
        FieldError(
            name,
            "not_for_client",
            f"--{name.replace('_', '-')} is for {owner}, not {client}",
            {"client": client, "for": owner},
        )
        for name, (owner, value) in given.items()
        if value is not None and owner != client
    ]
    errors += more or []
    if errors:
        raise InvalidInput(errors)


def _settings_result(
    change: SettingsChange,
    dry_run: bool,
    as_json: bool,
    apply: Callable[[SettingsChange], Path | None],
) -> None:
    if dry_run:
        if as_json:
            click.echo(json.dumps({**change.to_dict(), "diff": change.diff()}, indent=2))
        else:
            click.echo(change.diff() or f"no change to {change.path}", nl=not change.diff())
        return
    through = apply(change)
    if as_json:
        link = {"written_through_link_to": str(through) if through else None}
        click.echo(json.dumps({"ok": True, **change.to_dict(), **link}, indent=2))
        return
    if through is not None:
        click.echo(f"{change.path} is a symbolic link: wrote through it to {through}")
    for line in change.added:
        click.echo(f"added {line}\n  to {change.path}")
    for line in change.removed:
        click.echo(f"removed {line}\n  from {change.path}")
    if not change.changed:
        click.echo(f"no change to {change.path}")


def _git_result(change: GitHookChange, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"ok": True, **change.to_dict()}, indent=2))
        return
    text = f"{change.action} {change.path}"
    if change.chained is not None:
        verb = "runs" if change.action != "removed" else "restored from"
        text += f" ({verb} {change.chained})"
    click.echo(text)
