"""``prism export --format cypher`` (issue 8): the TriGraph as Cypher, checked against the spec.

A small tokenizer and parser for the Cypher subset the export emits reads every statement
back: labels, relationship types, property names and every value (strings decoded from
their escapes) are compared with the spec's schema block and with the store. When the
``antlr4-cypher`` package (an openCypher grammar) is installed, each statement is also parsed
by it.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from prism_memory.bootstrap import Services
from prism_memory.domain.contract.remember import validate_remember
from prism_memory.domain.records import SessionContext
from prism_memory.formats.graph_export import (
    AUDIT_PROPERTIES,
    MEMORY_PROPERTIES,
    STATE_PROPERTIES,
    audit_row,
    cypher_string,
    memory_row,
    state_row,
    statements,
    write_cypher,
)
from prism_memory.trigraph.dump import MemoryDump
from tests.cli_run import invoke_prism
from tests.conftest import ContextFactory

BACKEND = Path(__file__).resolve().parents[1]
SPEC = BACKEND.parents[1] / "shared" / "SPEC-094-v0.4-memorules.md"

# The spec's schema block (SPEC-094 v0.4, "Schema (TriGraph)") and DESIGN §3's additions.
SPEC_MEMORY = {"id", "tenant_id", "project_id", "kind", "source_type"}
SPEC_STATE = {
    "memorule_kind",
    "subject",
    "body",
    "applies_to",
    "evidence_signal_id",
    "confidence",
    "written_by_session_id",
    "written_by_persona",
    "written_at",
}
SPEC_AUDIT = {
    "memorule_id",
    "written_by_session_id",
    "written_by_persona",
    "evidence_signal_id",
    "written_at",
}
DESIGN_MEMORY = SPEC_MEMORY | {"namespace", "status", "created_at"}
DESIGN_STATE = SPEC_STATE - {"applies_to"} | {
    "id",
    "version",
    "applies_to_persona",
    "applies_to_surface",
    "applies_to_specialization",
    "applies_to_scope",
    "embedding_model",
    "reason",
    "checks",  # DESIGN §3/§12 (issue 28): JSON text, left out when the rule has none
    "enforcement",
}
DESIGN_AUDIT = SPEC_AUDIT | {"id", "tenant_id", "seq", "event", "state_id", "reason"}
DESIGN_AUDIT |= {"prev_hash", "hash", "content_hash"}  # DESIGN §3 (issue 14)
TRICKY = "It's a \\ back'slash\n\ttab, \"quotes\", emoji 🧠, RLO \u202e and tag \U000e0041 end"


# -- a tokenizer and parser for the emitted subset ---------------------------------------------

_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<comment>//[^\n]*)|(?P<string>'(?:[^'\\]|\\.)*')"
    r"|(?P<number>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\+=|->|[(){}\[\]:,.;=<>-])"
)
_UNESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "'": "'", '"': '"', "\\": "\\"}


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        assert found is not None, f"cannot tokenize at {text[pos : pos + 40]!r}"
        pos = found.end()
        kind = found.lastgroup or ""
        if kind not in ("ws", "comment"):
            out.append((kind, found.group()))
    return out


def unescape(literal: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "uU" and len(code) > 1:
            return chr(int(code[1:], 16))
        assert code in _SIMPLE, f"unknown escape \\{code}"
        return _SIMPLE[code]

    return _UNESCAPE.sub(one, literal[1:-1])


@dataclass
class Parsed:
    """What the statements of an export say."""

    labels: dict[str, set[str]] = field(default_factory=dict)  # label -> property names
    relationships: set[tuple[str, str, str]] = field(default_factory=set)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # label -> rows
    constraints: set[str] = field(default_factory=set)


class Parser:
    """Recursive descent over one statement's tokens."""

    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks, self.i = toks, 0

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None, kind: str | None = None) -> str:
        got_kind, got = self.toks[self.i]
        assert want is None or got.upper() == want.upper(), f"expected {want}, got {got}"
        assert kind is None or got_kind == kind, f"expected a {kind}, got {got}"
        self.i += 1
        return got

    def value(self) -> Any:
        if self.peek() == "{":
            return self.map()
        if self.peek() == "[":
            self.take("[")
            items = []
            while self.peek() != "]":
                items.append(self.value())
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
            return items
        kind, text = self.toks[self.i]
        self.i += 1
        if kind == "string":
            return unescape(text)
        if kind == "number":
            return int(text)
        assert kind == "name"
        path = [text]
        while self.peek() == ".":
            self.take(".")
            path.append(self.take(kind="name"))
        return ".".join(path)

    def map(self) -> dict[str, Any]:
        self.take("{")
        out: dict[str, Any] = {}
        while self.peek() != "}":
            key = self.take(kind="name")
            self.take(":")
            assert key not in out, f"duplicate key {key}"
            out[key] = self.value()
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return out

    def node(self) -> tuple[str, str]:
        self.take("(")
        var = self.take(kind="name")
        label = ""
        if self.peek() == ":":
            self.take(":")
            label = self.take(kind="name")
        if self.peek() == "{":
            self.map()
        self.take(")")
        return var, label


def parse(text: str) -> Parsed:
    out = Parsed()
    for statement in statements(text):
        p = Parser(tokens(statement))
        if p.peek().upper() == "CREATE":
            for word in ("CREATE", "CONSTRAINT"):
                p.take(word)
            name = p.take(kind="name")
            for word in ("IF", "NOT", "EXISTS", "FOR"):
                p.take(word)
            var, label = p.node()
            p.take("REQUIRE")
            assert p.take(kind="name") == var
            p.take(".")
            assert p.take(kind="name") == "id"
            for word in ("IS", "UNIQUE", ";"):
                p.take(word)
            out.constraints.add(f"{name}:{label}")
            continue
        p.take("UNWIND")
        rows = p.value()
        p.take("AS")
        row = p.take(kind="name")
        labels: dict[str, str] = {}
        targets: list[tuple[str, str]] = []
        while p.peek() != ";":
            clause = p.take().upper()
            assert clause in ("MATCH", "MERGE"), clause
            var, label = p.node()
            if label:
                labels[var] = label
            if p.peek() == "-":
                p.take("-")
                p.take("[")
                p.take(":")
                rel = p.take(kind="name")
                p.take("]")
                p.take("->")
                end, _ = p.node()
                out.relationships.add((labels[var], rel, labels[end]))
            if p.peek().upper() == "SET":
                p.take("SET")
                assert p.take(kind="name") == var
                p.take("+=")
                targets.append((var, p.value()))
        p.take(";")
        assert p.i == len(p.toks)
        for var, source in targets:
            label = labels[var]
            path = source.split(".")[1:]
            assert source.split(".")[0] == row
            for item in rows:
                props = item
                for step in path:
                    props = props[step]
                out.labels.setdefault(label, set()).update(props)
                out.rows.setdefault(label, []).append(props)
    return out


# -- the store under test ------------------------------------------------------------------


def seed(services: Services, make_ctx: ContextFactory) -> SessionContext:
    """Notes, memorules (every kind of applies_to), updates, a retirement, two projects."""
    ctx = make_ctx(persona="donna")
    rule = services.memory.writes.remember(
        ctx,
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "behavioral_rule",
                "subject": "Quote 'carefully'",
                "body": TRICKY,
                "applies_to": {"persona": "donna", "surface": "python", "scope": "persona"},
                "evidence_signal_id": "file:CLAUDE.md#L1-L2",
                "confidence": "asserted",
            }
        ),
    )
    services.memory.lifecycle.update(
        ctx, rule.id, {"body": TRICKY + " v2"}, reason="second 'version'"
    )
    services.memory.lifecycle.update(ctx, rule.id, {"memorule_kind": "convention"}, reason="third")
    other = services.memory.writes.remember(
        make_ctx(project="web"),
        validate_remember(
            {
                "kind": "memorule",
                "memorule_kind": "preference",
                "subject": "Small PRs",
                "body": "Prefer small pull requests.",
                "applies_to": {"specialization": "backend"},
            }
        ),
    )
    services.memory.lifecycle.retire(make_ctx(project="web"), other.id, "no longer true")
    services.memory.writes.remember(
        ctx, validate_remember({"kind": "note", "body": "A plain note\nover two lines."})
    )
    services.memory.writes.remember(
        make_ctx(tenant="other"), validate_remember({"kind": "note", "body": "Not exported."})
    )
    return ctx


def export(services: Services, ctx: SessionContext) -> str:
    out = io.StringIO()
    write_cypher(services.store.dump(ctx.tenant_id), out, str(ctx.tenant_id))
    return out.getvalue()


def test_the_export_uses_the_spec_labels_relationship_and_property_names(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    parsed = parse(export(services, ctx))
    assert set(parsed.labels) == {"Memory", "MemoryState", "MemoruleAudit"}
    assert parsed.relationships == {("Memory", "HAS_STATE", "MemoryState")}
    assert SPEC_MEMORY <= parsed.labels["Memory"] <= DESIGN_MEMORY
    assert parsed.labels["MemoryState"] <= DESIGN_STATE
    flattened = {p for p in parsed.labels["MemoryState"] if p.startswith("applies_to_")}
    assert SPEC_STATE - {"applies_to"} <= parsed.labels["MemoryState"]
    assert flattened == {
        "applies_to_persona",
        "applies_to_surface",
        "applies_to_scope",
        "applies_to_specialization",
    }
    assert SPEC_AUDIT - {"evidence_signal_id"} <= parsed.labels["MemoruleAudit"] <= DESIGN_AUDIT
    assert set(MEMORY_PROPERTIES) == DESIGN_MEMORY
    assert set(STATE_PROPERTIES) == DESIGN_STATE
    assert set(AUDIT_PROPERTIES) == DESIGN_AUDIT
    assert parsed.constraints == {
        "prism_memory_id:Memory",
        "prism_memory_state_id:MemoryState",
        "prism_memorule_audit_id:MemoruleAudit",
    }


def test_every_stored_value_comes_back_from_the_statements(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    parsed = parse(export(services, ctx))
    dumped = list(services.store.dump(ctx.tenant_id))
    memories = [d for d in dumped if isinstance(d, MemoryDump)]
    want_memories = [
        {k: v for k, v in memory_row(d.memory).items() if v is not None} for d in memories
    ]
    want_states = [
        {k: v for k, v in state_row(s).items() if v is not None} for d in memories for s in d.states
    ]
    audits = [a for a in dumped if not isinstance(a, MemoryDump) and hasattr(a, "seq")]
    want_audits = [{k: v for k, v in audit_row(a).items() if v is not None} for a in audits]
    assert parsed.rows["Memory"] == want_memories
    assert parsed.rows["MemoryState"] == want_states
    assert parsed.rows["MemoruleAudit"] == want_audits
    assert (len(want_memories), len(want_states), len(want_audits)) == (3, 5, 5)
    bodies = {s["body"] for s in parsed.rows["MemoryState"]}
    assert TRICKY in bodies and TRICKY + " v2" in bodies
    events = [a["event"] for a in parsed.rows["MemoruleAudit"]]
    assert events == ["created", "superseded", "superseded", "created", "retired"]
    assert {m["status"] for m in parsed.rows["Memory"]} == {"active", "retired"}
    assert all(m["tenant_id"] == str(ctx.tenant_id) for m in parsed.rows["Memory"])


def test_the_spec_schema_block_names_only_properties_the_export_writes() -> None:
    if not SPEC.exists():
        pytest.skip("the spec is not beside the repository")
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(r"## Schema \(TriGraph\).*?```cypher[^\n]*\n(.*?)```", text, re.DOTALL)
    assert block is not None
    memory, state = re.findall(r"\(:(\w+) \{(.*?)\}\)", block.group(1), re.DOTALL)
    assert memory[0] == "Memory" and state[0] == "MemoryState"
    assert "[:HAS_STATE]" in block.group(1)
    names = {m: set(re.findall(r"^\s*(\w+):", body, re.MULTILINE)) for m, body in (memory, state)}
    assert names["Memory"] == SPEC_MEMORY
    assert names["MemoryState"] == SPEC_STATE


def test_strings_are_escaped_so_nothing_is_hidden_or_breaks_out() -> None:
    literal = cypher_string(TRICKY)
    assert "\n" not in literal and "\u202e" not in literal and "\U000e0041" not in literal
    assert "\\u202e" in literal and "\\U000e0041" in literal and "🧠" in literal
    assert unescape(literal) == TRICKY
    assert tokens(literal) == [("string", literal)]


def test_the_export_is_deterministic_and_holds_only_the_tenant(
    services: Services, make_ctx: ContextFactory
) -> None:
    ctx = seed(services, make_ctx)
    text = export(services, ctx)
    assert text == export(services, ctx)
    assert "Not exported." not in text
    empty = export(services, make_ctx(tenant="nobody"))
    assert parse(empty).rows == {}


def test_large_tenants_are_written_in_batches(services: Services, make_ctx: ContextFactory) -> None:
    ctx = make_ctx()
    for i in range(230):
        services.memory.writes.remember(
            ctx, validate_remember({"kind": "note", "body": f"note {i}"})
        )
    out = io.StringIO()
    counts = write_cypher(services.store.dump(ctx.tenant_id), out, "t")
    assert counts.to_dict() == {"memories": 230, "states": 230, "audit_events": 0, "statements": 9}
    assert len(parse(out.getvalue()).rows["MemoryState"]) == 230


def test_an_opencypher_grammar_parses_every_statement(
    services: Services, make_ctx: ContextFactory
) -> None:
    antlr = pytest.importorskip("antlr4")
    grammar = pytest.importorskip("antlr4_cypher")
    ctx = seed(services, make_ctx)
    problems: list[str] = []

    class Listener(antlr.error.ErrorListener.ErrorListener):  # type: ignore[misc]
        def syntaxError(self, *args: Any) -> None:  # ANTLR's name
            problems.append(str(args[-2]))

    checked = 0
    for statement in statements(export(services, ctx)):
        if statement.startswith("CREATE CONSTRAINT"):  # Neo4j DDL, not in openCypher
            continue
        lexer = grammar.CypherLexer(antlr.InputStream(statement))
        lexer.removeErrorListeners()
        lexer.addErrorListener(Listener())
        parser = grammar.CypherParser(antlr.CommonTokenStream(lexer))
        parser.removeErrorListeners()
        parser.addErrorListener(Listener())
        parser.script()
        checked += 1
    assert checked == 3 and problems == []


def test_the_cli_writes_the_export_to_a_file(tmp_path: Path) -> None:
    def prism(*args: str) -> subprocess.CompletedProcess[str]:
        return invoke_prism(tmp_path / "prism.db", *args, cwd=tmp_path)

    assert prism("remember", "--body", "hello 'graph'").returncode == 0
    done = prism("export", "--format", "cypher", "--out", "graph.cypher", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["memories"] == 1
    text = (tmp_path / "graph.cypher").read_text(encoding="utf-8")
    assert parse(text).rows["MemoryState"][0]["body"] == "hello 'graph'"
    piped = prism("export", "--format", "cypher")
    assert piped.stdout == text and "exported 1 memories" in piped.stderr
    assert prism("export", "--format", "graphml").returncode == 2
