"""Settings: one class, built by :func:`load_settings` (never at import).

Every field can be set by a ``PRISM_<NAME>`` environment variable (the name in any case)
or a CLI flag; a flag wins. The variables are read here rather than by pydantic-settings:
that package costs ~50 ms of imports (asyncio among them) in every process, and
``prism brief`` starts a process at every agent session start. Values are validated by the
same pydantic model either way (strings from the environment are parsed in lax mode).

Every value is judged when the settings are loaded, at the start of a command, with the
API's field errors; each error also names where the value came from, ``--persona`` (a flag)
or ``PRISM_PERSONA`` (a variable), in its message and its ``setting`` detail. Text values
obey the one character rule (:mod:`prism_memory.domain.characters`: no C0/C1 control, no lone
surrogate, which is what an undecodable byte of an argument or a variable becomes); the
context values (persona, surface, specialization) are judged as the API judges its
``X-Prism-*`` headers, tenant and project as slugs or UUIDs, a session id as a UUID.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prism_memory.domain.characters import forbidden_character
from prism_memory.domain.ids import uuid_for
from prism_memory.domain.ranking import RankingWeights
from prism_memory.domain.records import APPLIES_TO_KEYS
from prism_memory.errors import FieldError, InvalidInput, contract_error, field_errors
from prism_memory.locations import default_db_path

# The ranking weights' defaults are stated once, in RankingWeights; the settings take them.
_W = RankingWeights()

__all__ = ["ENV_PREFIX", "Settings", "default_db_path", "load_settings"]


ENV_PREFIX = "PRISM_"
CONTEXT_VALUE_MAX = 100  # the API's X-Prism-Persona/-Surface/-Specialization bound
# Flags whose spelling is not the field's name with dashes.
FLAG_NAMES = {
    "mcp_allow_context_override": "--allow-context-override",
    "mcp_tool_schemas": "--tool-schemas",
}


class Settings(BaseModel):
    """Prism's settings. Defaults run the embedded engine with the local model."""

    model_config = ConfigDict(extra="ignore")

    db: Path | None = Field(None, description="SQLite file (default: user data dir)")
    database_url: str | None = Field(None, description="postgresql://... selects PostgreSQL")
    tenant: str = Field("default", description="tenant UUID or slug")
    project: str = Field("default", description="project UUID or slug")
    persona: str | None = None
    surface: str | None = None
    specialization: str | None = None
    session_id: str | None = Field(None, description="fixed session id (default: minted)")
    embedder: Literal["minilm", "fake"] = Field(
        "minilm", description="'minilm' (the real local model) or 'fake' (tests only)"
    )
    embed_threads: int = Field(1, ge=1, le=16)
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    near_duplicate_threshold: float = Field(0.95, ge=0.5, le=1.0)
    rank_relevance: float = _W.relevance
    rank_lexical: float = Field(
        _W.lexical,
        ge=0.0,
        le=1.0,
        description="a memorule's share of relevance from BM25 (the rest: cosine)",
    )
    rank_lexical_note: float = Field(
        _W.lexical_note, ge=0.0, le=1.0, description="a note's share of relevance from BM25"
    )
    rank_overlap: float = _W.overlap
    rank_scope: float = _W.scope
    rank_prior: float = _W.prior
    rank_observed: float = _W.observed
    rank_inferred: float = _W.inferred
    rank_asserted: float = _W.asserted
    rank_note: float = _W.note
    rank_bm25_k1: float = Field(_W.bm25_k1, gt=0.0, description="BM25's term-frequency saturation")
    rank_bm25_b: float = Field(
        _W.bm25_b, ge=0.0, le=1.0, description="BM25's document-length normalisation (0: none)"
    )
    rank_section: float = Field(
        _W.section,
        ge=0.0,
        le=1.0,
        description="λ: a memory's relevance is (1 − λ)·its own + λ·the mean of the recall "
        "window's memories under the same subject heading (0: off)",
    )
    rank_section_window: int = Field(
        _W.section_window,
        ge=1,
        le=1000,
        description="how many of recall's best candidates are smoothed (by section and "
        "by neighbours)",
    )
    rank_neighbours: float = Field(
        _W.neighbours,
        ge=0.0,
        le=1.0,
        description="μ: a note's relevance is (1 − μ)·its own + μ·the best relevance of the "
        "notes written within ±rank_neighbours_window places of it, in the recall window "
        "(0: off)",
    )
    rank_neighbours_window: int = Field(
        _W.neighbours_window,
        ge=1,
        le=20,
        description="how many notes before and after a note in writing order are its neighbours",
    )
    rank_neighbours_gate: float = Field(
        _W.neighbours_gate,
        ge=0.0,
        le=1.0,
        description="smooth by neighbours only when the window's best 20 notes sit closer "
        "together in writing order than chance by at least this share (0: always)",
    )
    rank_restated: str = Field(
        ",".join(_W.restated),
        description="context keys whose values a query's words restating them are scored "
        "without (comma-separated applies_to keys; empty: none)",
    )
    recall_preselect_above: int = Field(
        8192,
        ge=0,
        description="above this many candidates, skip rows the 128-d sketch proves cannot "
        "reach the top (same results, fewer rows scored; 0: score every row)",
    )
    recall_cache_mb: int = Field(
        512,
        ge=1,
        description="megabytes of recall candidates an embedded (SQLite) process keeps in "
        "memory; least recently used projects are dropped first",
    )
    served_receipts: bool = Field(
        True,
        description="record which memorule versions each recall and brief served, to which "
        "session (`prism audit served`); false turns it off",
    )
    served_receipts_interval_s: float = Field(
        0.2,
        gt=0,
        le=60,
        description="served receipts wait at most this long before they are written "
        "(a crash loses at most this window; a clean shutdown loses nothing)",
    )
    mcp_allow_context_override: bool = Field(
        False,
        description="let MCP tool calls narrow persona/surface/specialization per call",
    )
    mcp_tool_schemas: Literal["flat", "precise"] = Field(
        "flat",
        description="'flat': one plain object per tool, as Claude Code and the Anthropic API "
        "require; 'precise': each operation model's own schema (prism_remember a oneOf of "
        "its kinds), for clients that validate arguments before calling",
    )
    # HTTP API (`prism serve`).
    host: str = Field("127.0.0.1", description="address `prism serve` binds")
    port: int = Field(8765, ge=1, le=65535, description="port `prism serve` listens on")
    max_body_bytes: int = Field(
        262_144, ge=1_024, le=16_777_216, description="largest request body accepted (413 above)"
    )
    http_header_timeout_s: float = Field(
        10.0, gt=0, description="close a connection whose request headers take longer"
    )
    http_body_timeout_s: float = Field(
        30.0, gt=0, description="answer 408 when a request body takes longer to arrive"
    )
    http_keep_alive_s: int = Field(5, ge=1, description="close idle keep-alive connections after")
    http_max_concurrency: int = Field(
        128, ge=1, description="requests answered at once before answering 503 overloaded"
    )
    http_max_connections: int = Field(
        1024,
        ge=2,
        description="open connections; past it the longest-idle one is closed to make room",
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="prism serve's logs: text, or json (one object per line)"
    )
    http_rate_limit: str = Field(
        "30/second;600/minute",
        description="requests per API key (a `limits` string: each window must hold; "
        "empty: no limit)",
    )
    http_rate_limit_anonymous: str = Field(
        "60/minute",
        description="requests per client address without a valid key (incl. every 401)",
    )
    http_rate_limit_storage: str = Field(
        "memory://",
        description="where rate-limit windows are counted: memory:// (per process) or a "
        "shared `limits` storage such as redis://host:6379",
    )
    console_max_sessions: int = Field(
        10_000,
        ge=1,
        description="signed-in console sessions in all (then sign-ins are refused; nobody "
        "is signed out for another)",
    )
    console_max_sessions_per_key: int = Field(
        8, ge=1, description="signed-in console sessions of one key (its own oldest signed out)"
    )
    http_trusted_proxies: str = Field(
        "",
        description="comma-separated addresses or networks (CIDR) of reverse proxies whose "
        "X-Forwarded-For and X-Forwarded-Proto are believed; empty (the default): none, the "
        "TCP peer is the client",
    )
    http_shutdown_grace_s: int = Field(
        30, ge=1, description="on SIGTERM/SIGINT, how long in-flight requests may finish"
    )

    @field_validator("*", mode="before")
    @classmethod
    def _characters(cls, value: object, info: Any) -> object:
        # A file name may hold any byte but NUL (os.fsdecode's surrogates round-trip).
        if info.field_name == "db":
            return value
        if isinstance(value, str) and (wrong := forbidden_character(value)):
            raise contract_error("invalid_characters", f"'{{field}}' contains {wrong}")
        return value

    @field_validator("persona", "surface", "specialization")
    @classmethod
    def _context_value(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value or len(value) > CONTEXT_VALUE_MAX or not value.isprintable():
            raise contract_error(
                "invalid_format",
                f"'{{field}}' must be 1 to {CONTEXT_VALUE_MAX} printable characters",
                max=CONTEXT_VALUE_MAX,
            )
        return value

    @field_validator("tenant", "project")
    @classmethod
    def _slug(cls, value: str, info: Any) -> str:
        try:
            uuid_for(info.field_name, value)
        except ValueError as exc:
            raise contract_error("invalid_format", str(exc)) from None
        return value

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        try:
            return str(UUID(value)) if value else value
        except ValueError:
            raise contract_error("invalid_format", "session id must be a UUID") from None

    @field_validator("rank_restated")
    @classmethod
    def _restated(cls, value: str) -> str:
        keys = [k.strip() for k in value.split(",") if k.strip()]
        unknown = [k for k in keys if k not in APPLIES_TO_KEYS]
        if unknown:
            raise ValueError(f"not applies_to keys: {', '.join(unknown)}")
        return ",".join(keys)

    @field_validator("http_rate_limit", "http_rate_limit_anonymous")
    @classmethod
    def _rate(cls, value: str) -> str:
        try:  # the check only; the server parses it again
            from limits import parse_many
        except ImportError:  # an install without the [server] extra never serves HTTP
            return value

        if value.strip():
            parse_many(value)  # ValueError: pydantic reports it on the field
        return value

    @field_validator("http_trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        entries = [e.strip() for e in value.split(",") if e.strip()]
        for entry in entries:
            ipaddress.ip_network(entry, strict=False)  # ValueError: reported on the field
        return ",".join(entries)

    def db_path(self) -> Path:
        return self.db if self.db is not None else default_db_path()

    def ranking_weights(self) -> RankingWeights:
        return RankingWeights(
            relevance=self.rank_relevance,
            lexical=self.rank_lexical,
            lexical_note=self.rank_lexical_note,
            overlap=self.rank_overlap,
            scope=self.rank_scope,
            prior=self.rank_prior,
            observed=self.rank_observed,
            inferred=self.rank_inferred,
            asserted=self.rank_asserted,
            note=self.rank_note,
            restated=tuple(k for k in self.rank_restated.split(",") if k),
            bm25_k1=self.rank_bm25_k1,
            bm25_b=self.rank_bm25_b,
            section=self.rank_section,
            section_window=self.rank_section_window,
            neighbours=self.rank_neighbours,
            neighbours_window=self.rank_neighbours_window,
            neighbours_gate=self.rank_neighbours_gate,
        )


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with ``overrides`` (None values ignored) on top.

    Raises:
        InvalidInput: every value (from either) that is not valid for its field, through
            the one mapper of pydantic's errors (``PRISM_PORT=x``: field ``port``), each
            naming its source (``setting``: ``PRISM_PORT``, or ``--port`` for an override).
    """
    environ = {key.upper(): value for key, value in os.environ.items()}
    values: dict[str, object] = {
        name: environ[f"{ENV_PREFIX}{name.upper()}"]
        for name in Settings.model_fields
        if f"{ENV_PREFIX}{name.upper()}" in environ
    }
    given = {k: v for k, v in overrides.items() if v is not None}
    values.update(given)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise _named(field_errors(exc.errors()), set(given)) from None


def setting_name(field: str, from_flag: bool) -> str:
    """Where a setting's value came from: ``--flag`` or ``PRISM_VARIABLE``."""
    if from_flag:
        return FLAG_NAMES.get(field, "--" + field.replace("_", "-"))
    return f"{ENV_PREFIX}{field.upper()}"


def _named(error: InvalidInput, flags: set[str]) -> InvalidInput:
    named = []
    for e in error.errors:
        source = setting_name(e.field, e.field in flags)
        # The value itself is never echoed: it may not even be printable.
        named.append(
            FieldError(e.field, e.code, f"{source}: {e.message}", {**e.details, "setting": source})
        )
    return InvalidInput(named)
