"""Prism as a benchmarked system: the rule store (cached on disk) and LoCoMo notes.

Everything goes through the product's services (``remember_many``/``remember`` and
``recall``), wired from :class:`Settings` exactly as ``bootstrap.build_services`` does,
except that quality runs hand the services a :class:`CachedEmbedder`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import common
from .rules_data import DEFAULT_SUBJECTS, rule_to_request

TENANT = "bench"
RULES_PROJECT = "rules"
BULK = 512  # items per remember_many call (one embedding batch + one transaction each)


def settings_for(
    db: Path, model: str, weights: dict[str, float] | None = None, database_url: str = ""
) -> Any:
    """Settings for a bench store; ``weights`` are ``rank_*`` overrides (as PRISM_RANK_*).

    ``database_url`` selects PostgreSQL (empty: the SQLite file ``db``).
    """
    from prism_memory.settings import load_settings

    return load_settings(db=db, embedder=model, database_url=database_url, **(weights or {}))


def copy_store(source: Any, target: Any) -> None:
    """Every record of ``source`` into the empty ``target``, verbatim (``prism dump | import``):
    the same ids, times and bit-exact vectors, so two engines rank the same data."""
    target.load(source.dump())


@dataclass
class BenchServices:
    """The two services recall and writes need, wired as ``build_services`` wires them."""

    store: Any
    memory: Any
    memorules: Any

    def close(self) -> None:
        self.store.close()


def build(settings: Any, embedder: Any) -> BenchServices:
    """Services on ``settings`` with ``embedder`` (``build_services``' composition)."""
    from prism_memory.bootstrap import build_store
    from prism_memory.services.memorule_service import MemoruleService
    from prism_memory.services.memory_deps import MemoryDeps
    from prism_memory.services.memory_rooms import MemoryRooms

    store = build_store(settings)
    store.migrate()
    memorules = MemoruleService(store, embedder, settings.near_duplicate_threshold)
    memory = MemoryRooms(
        MemoryDeps(
            store,
            embedder,
            memorules,
            settings.ranking_weights(),
            settings.recall_preselect_above,
        )
    )
    return BenchServices(store, memory, memorules)


def context(project: str, persona: str | None = None, surface: str | None = None, spec=None):
    """A session context in the bench tenant."""
    from prism_memory.domain.ids import new_id, uuid_for
    from prism_memory.domain.records import SessionContext

    return SessionContext(
        tenant_id=uuid_for("tenant", TENANT),
        project_id=uuid_for("project", project),
        session_id=new_id(),
        persona=persona,
        surface=surface,
        specialization=spec,
    )


def write_all(svc: Any, ctx: Any, requests: Sequence[dict[str, Any]], label: str) -> list[str]:
    """Write requests in bulk (``remember_many``, :data:`BULK` a call); return ids."""
    from prism_memory.domain.contract.remember import validate_remember_many

    ids: list[str] = []
    started = time.perf_counter()
    step = BULK
    for start in range(0, len(requests), step):
        part = requests[start : start + step]
        ids.extend(
            str(r.id) for r in svc.memory.bulk.remember_many(ctx, validate_remember_many(part))
        )
        done = start + len(part)
        if done % (step * 8) < step or done == len(requests):
            rate = done / max(time.perf_counter() - started, 1e-9)
            common.progress(f"{label}: {done}/{len(requests)} written ({rate:.0f}/s)")
    return ids


class PrismRules:
    """The rule benchmark on Prism: a cached SQLite store of the rules, recalled per query.

    The store is built once per (rules file, model, context mode, subjects mapping) and
    kept under ``bench/.cache``; the rule id -> memory id map sits beside it. With ``database_url``
    (an empty PostgreSQL database) the cached store is copied there and recalled on
    PostgreSQL: both engines rank exactly the same records.
    """

    name = "prism"

    def __init__(
        self,
        rules_path: Path,
        model: str,
        embedder: Any,
        weights: dict[str, float] | None = None,
        context_mode: str = "skip",
        limit: int | None = None,
        cache_dir: Path | None = None,
        database_url: str = "",
        subjects: str = DEFAULT_SUBJECTS,
    ) -> None:
        self.database_url = database_url
        self.subjects = subjects
        self.rules_path = rules_path
        self.model = model
        self.embedder = embedder
        self.weights = weights or {}
        self.context_mode = context_mode
        self.limit = limit
        self.cache_dir = cache_dir or common.CACHE
        self.svc: Any = None
        self.memory_to_rule: dict[str, str] = {}
        self.load_seconds = 0.0
        self.built = False

    def db_path(self) -> Path:
        tag = f"{common.file_hash(self.rules_path)}-{self.model}-ctx{self.context_mode}"
        tag += f"-subj{self.subjects}"
        if self.limit:
            tag += f"-n{self.limit}"
        return self.cache_dir / f"prism-rules-{tag}.db"

    def load(self, rules: Sequence[dict[str, Any]]) -> None:
        db = self.db_path()
        ids_file = db.with_suffix(".ids.json")
        if not (db.exists() and ids_file.exists()):
            self._build(rules, db, ids_file)
        self.memory_to_rule = json.loads(ids_file.read_text())
        self.svc = build(settings_for(db, self.model, self.weights), self.embedder)
        if self.database_url:
            on_pg = settings_for(db, self.model, self.weights, self.database_url)
            pg = build(on_pg, self.embedder)
            copy_store(self.svc.store, pg.store)
            self.svc.close()
            self.svc = pg

    def _build(self, rules: Sequence[dict[str, Any]], db: Path, ids_file: Path) -> None:
        tmp = db.with_suffix(".building.db")
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        svc = build(settings_for(tmp, self.model), self.embedder)
        ctx = context(RULES_PROJECT)
        pairs = [(r["id"], rule_to_request(r, self.context_mode, self.subjects)) for r in rules]
        pairs = [(rid, req) for rid, req in pairs if req is not None]
        started = time.perf_counter()
        ids = write_all(svc, ctx, [req for _, req in pairs], "prism rules")
        self.load_seconds = time.perf_counter() - started
        svc.close()
        os.replace(tmp, db)
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        mapping = {mid: rid for mid, (rid, _) in zip(ids, pairs, strict=True)}
        ids_file.write_text(json.dumps(mapping))
        self.built = True

    def search(self, ctx_fields: dict[str, Any], task: str, k: int) -> list[str]:
        return [key for key, _ in self.search_scored(ctx_fields, task, k)]

    def search_scored(
        self, ctx_fields: dict[str, Any], task: str, k: int
    ) -> list[tuple[str, float]]:
        from prism_memory.domain.contract.recall import validate_recall

        ctx = context(
            RULES_PROJECT,
            persona=ctx_fields.get("persona"),
            surface=ctx_fields.get("surface"),
            spec=ctx_fields.get("specialization"),
        )
        result = self.svc.memory.recalls.recall(
            ctx, validate_recall({"query": task, "top_k": k, "source_type": "memorule"})
        )
        return [
            (self.memory_to_rule.get(str(m.memory.id), str(m.memory.id)), m.score)
            for m in result.matches
        ]

    def close(self) -> None:
        if self.svc is not None:
            self.svc.close()


class PrismNotes:
    """LoCoMo on Prism: every turn a note, one project per conversation (a fresh store)."""

    name = "prism"

    def __init__(
        self,
        db: Path,
        model: str,
        embedder: Any,
        weights: dict[str, float] | None = None,
        database_url: str = "",
    ) -> None:
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
        self.svc = build(settings_for(db, model, weights, database_url), embedder)
        self.keys: dict[str, str] = {}

    def add(self, group: str, items: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        ctx = context(f"locomo-{group}")
        requests = [{"kind": "note", "body": text} for _, text, _ in items]
        ids = write_all(self.svc, ctx, requests, f"prism locomo {group}")
        for mid, (key, _, _) in zip(ids, items, strict=True):
            self.keys[mid] = key

    def search(self, group: str, query: str, k: int, where: Any = None) -> list[str]:
        return [key for key, _ in self.search_scored(group, query, k)]

    def search_scored(self, group: str, query: str, k: int) -> list[tuple[str, float]]:
        from prism_memory.domain.contract.recall import validate_recall

        ctx = context(f"locomo-{group}")
        result = self.svc.memory.recalls.recall(
            ctx, validate_recall({"query": query, "top_k": k, "source_type": "memory"})
        )
        return [(self.keys[str(m.memory.id)], m.score) for m in result.matches]

    def close(self) -> None:
        self.svc.close()
