"""The dependency rule, read from the source with ``ast``: front doors do not import one
another, the server has one composition root, and the front doors sit in no import circle.

Every import counts wherever it is written: at module level, inside a function (a lazy import
is still an arrow) or under ``if TYPE_CHECKING:`` (a type-level circle is the same coupling).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "prism_memory"
FRONT_DOORS = ("prism_memory.api", "prism_memory.mcp_server", "prism_memory.web")
ROOT = "prism_memory.asgi"  # the server's composition root: the one module that imports them all


def _module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(APP.rglob("*.py"))}


def _import_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, those under ``if TYPE_CHECKING:`` included."""
    yield from ast.walk(tree)


def _target(name: str) -> str | None:
    """The module of ours ``name`` names (``prism_memory.api.routes``;
    ``prism_memory.x.Y`` -> ``prism_memory.x``)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def _package(module: str) -> str:
    return module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]


@cache
def imports(module: str) -> frozenset[tuple[str, str]]:
    """(module imported, name imported from it or "") for every import of ours."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    found: set[tuple[str, str]] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := _target(alias.name)) is not None:
                    found.add((target, ""))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = _package(module).split(".")[
                    : len(_package(module).split(".")) - node.level + 1
                ]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                target = (
                    _target(f"{base}.{alias.name}") if base.startswith("prism_memory") else None
                )
                if target is not None:
                    named = "" if target == f"{base}.{alias.name}" else alias.name
                    found.add((target, named))
    return frozenset((t, n) for t, n in found if t != module)


def edges() -> dict[str, set[str]]:
    return {m: {t for t, _ in imports(m)} for m in modules()}


def _door(module: str) -> str | None:
    return next((d for d in FRONT_DOORS if module == d or module.startswith(d + ".")), None)


def cycles() -> list[list[str]]:
    """The import circles of ``prism_memory`` (strongly connected parts of more than one module)."""
    graph = edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_from_real_imports() -> None:
    """Not vacuous: known arrows are seen, lazy and TYPE_CHECKING ones included."""
    assert "prism_memory.api.deps" in edges()["prism_memory.api.routes"]
    assert "prism_memory.api.deps" in edges()["prism_memory.api.mcp_mount"]
    assert (
        "prism_memory.services.proposal_service" in edges()["prism_memory.services.access_service"]
    )  # lazy
    assert {
        "prism_memory.api.app",
        "prism_memory.mcp_server.server",
        "prism_memory.web.console",
    } <= edges()[ROOT]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import prism_memory.asgi\n"
    )
    assert any(isinstance(n, ast.Import) for n in _import_nodes(tree))


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_a_front_door_imports_no_other_front_door_nor_the_root(door: str) -> None:
    crossing = sorted(
        f"{m} -> {t}"
        for m in modules()
        if _door(m) == door
        for t in edges()[m]
        if (_door(t) not in (None, door)) or t == ROOT
    )
    assert crossing == []


def test_only_the_composition_root_and_the_cli_reach_the_front_doors() -> None:
    """Services, domain, adapters and bootstrap never import a front door."""
    reaching = sorted(
        f"{m} -> {t}"
        for m in modules()
        if _door(m) is None and m != ROOT and not m.startswith("prism_memory.cli")
        for t in edges()[m]
        if _door(t) is not None or t == ROOT
    )
    assert reaching == []


def test_the_front_doors_and_the_root_are_in_no_import_circle() -> None:
    touching = [c for c in cycles() if any(_door(m) or m == ROOT for m in c)]
    assert touching == []


def test_no_import_circle_anywhere_in_prism_memory() -> None:
    assert cycles() == []


def test_no_module_uses_a_private_name_of_another_module() -> None:
    """Storage, services and domain too: what one module needs of another is public."""
    reach_ins = sorted(
        f"{m} uses {t}.{name}"
        for m in modules()
        for t, name in imports(m)
        if name.startswith("_") and not name.startswith("__") and t != m
    )
    assert reach_ins == []


def test_a_front_door_uses_no_private_name_of_another_module() -> None:
    reach_ins = sorted(
        f"{m} uses {t}.{name}"
        for m in modules()
        if _door(m) is not None
        for t, name in imports(m)
        if name.startswith("_")
    )
    assert reach_ins == []


# Private attributes of objects that are not ours, each read for a stated reason.
FOREIGN_PRIVATE = {
    "os._exit",  # the documented way to end a process without running atexit handlers
    # The MCP SDK's own run_stdio_async reads it too; prism mcp parses stdin itself.
    "server._lowlevel_server",
}


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """``x._name`` reads outside the class that defines ``_name`` (``self``/``cls`` and other
    instances of the same class inside it are the class's own business)."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, own: frozenset[str]) -> None:
        if isinstance(node, ast.ClassDef):
            names = {
                n.name
                for n in ast.walk(node)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            } | {
                t.attr
                for n in ast.walk(node)
                if isinstance(n, ast.Assign | ast.AnnAssign)
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Attribute)
            }
            own = own | names
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and node.attr not in own
        ):
            found.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            walk(child, own)

    walk(tree, frozenset())
    return found


def test_no_module_reaches_into_another_object_s_private_attributes() -> None:
    """``store._conn()`` and the like: an object's private state is its own class's (what
    others need is public: the engine's ``file``, ``key_store()``, ``ledger()``)."""
    reach_ins = sorted(
        f"{m}:{line} {text}"
        for m, path in modules().items()
        for line, text in _private_reads(ast.parse(path.read_text(encoding="utf-8")))
        if text not in FOREIGN_PRIVATE
    )
    assert reach_ins == []


def test_the_private_attribute_check_sees_a_reach_in() -> None:
    tree = ast.parse("class A:\n    def f(self, o): return o._x\n\ndef g(s): return s._conn()\n")
    assert [t for _, t in _private_reads(tree)] == ["o._x", "s._conn"]


MODULE_LINES_REVIEW = 400  # STYLE.md: past ~400 lines a module is reviewed, never split to fit
# Modules reviewed past that size, each with why it stays one module (a concept is never split
# to pass a number; a module that holds two concepts is split by meaning). Add a line here in
# the same change that grows a module past the size, saying which one concept it holds.
REVIEWED_LONG_MODULES: dict[str, str] = {
    "prism_memory.formats.rules_io.cues": "the rule reader's cue table: one regular expression "
    "per thing a heading or a line can say (names the stack, names work planned, a status, a "
    "form…), each in every language it knows; split, a language's forms would scatter",
    "prism_memory.services.access_service": "the one authorisation path: every operation a "
    "door may call, with the key rules in front of it (DESIGN §10); two classes would give the "
    "doors two paths to keep in step",
    "prism_memory.domain.records": "the typed records of the TriGraph topology and the "
    "contract's vocabulary (memory, state, audit event, context, enums) every layer imports",
    "prism_memory.domain.audit": "the audit chain's hashing and its verification: the same "
    "functions hash an event and a state's content when written and when checked, so they "
    "stay in one module (state formats, chain links, live-row and tail checks)",
    "prism_memory.domain.adherence.propose": "candidate checks from the text of a rule: the "
    "shapes people write (replacements, prohibitions, git's, orders, companion edits) and the "
    "escaped patterns built from them; one derivation, read as a whole when a check is wrong",
    "prism_memory.trigraph.port": "the storage port: every Protocol an engine implements "
    "(reads, recall, writes, adherence, admin) and the records they pass, already split by use; "
    "one module so an engine's author reads the whole contract in one place",
    "prism_memory.formats.rules_io.markdown": "the walk of a rule file's Markdown block tree "
    "into units: paragraphs, lists, lead-ins, procedures, checklists and code each decide with "
    "the state the walk carries (the reading of lists, tables and exceptions is already apart)",
    "prism_memory.formats.rules_io.kinds": "the rule classifier: a text's evidence, the score "
    "that weighs it with the headings and structure around it, and the kind it gives, read "
    "together when a rule is misread; the cues it weighs are apart (english, grammar, cues, "
    "markers, headings)",
}


def test_a_module_past_the_review_size_is_on_the_reviewed_list() -> None:
    """Size is a signal for review, not a number to split at (issue 27): a long module passes
    once it is listed with the one concept it holds; an entry that no longer needs to be there
    goes."""
    long = {
        m
        for m, path in modules().items()
        if len(path.read_text(encoding="utf-8").splitlines()) > MODULE_LINES_REVIEW
    }
    assert sorted(long - REVIEWED_LONG_MODULES.keys()) == []
    assert sorted(REVIEWED_LONG_MODULES.keys() - long) == []
    assert all(len(why) > 20 for why in REVIEWED_LONG_MODULES.values())
