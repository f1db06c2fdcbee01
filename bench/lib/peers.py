"""The peers, each at its best local, offline configuration, behind one small interface.

Needs the peers' venv (``make bench-venv``). Every peer embeds with Prism's embedder:

- **mem0** (``mem0ai``, open source ``Memory``): ``infer=False`` (no LLM call), its default
  local vector store (Qdrant in local mode, on a path), telemetry off, the embedder plugged
  in through mem0's ``langchain`` provider. mem0 requires an LLM config even with
  ``infer=False``: the OpenAI provider gets a dummy key and is never called (the offline
  guard would refuse the connection). mem0's hybrid extras cannot run offline and are not
  installed: its BM25 keyword scoring needs ``fastembed``'s ``Qdrant/bm25`` model and its
  lemmatizer/entity boosts need spaCy's ``en_core_web_sm``, both downloaded from a hub at run
  time. mem0 then searches semantically only (its own documented fallback).
- **LangGraph** ``InMemoryStore`` and ``SqliteStore`` with ``index={"dims": 384, "embed":
  <our embedder>}``. The SQLite store needs the ``sqlite-vec`` extension, which this
  machine's CPython cannot load (no ``enable_load_extension``): it gets a ``pysqlite3``
  connection (a wheel bundling SQLite with extension loading), as a user here would.
  Its filters know no ``$in``, so context is expressed with namespaces.
- **BM25** (``bm25s``): lexical only, English stop words, no stemmer; the context filter is
  a ``weight_mask``.

Groups (a LoCoMo conversation, the rule store, a speed-test project) map to mem0's
``user_id``, LangGraph's namespace, and one BM25 index each.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Meta = dict[str, Any]
Item = tuple[str, str, Meta]  # key, text, metadata


class SwitchEmbedder:
    """Holds the embedder a peer (or Prism) uses; speed runs swap it between phases."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)


def langchain_embeddings(embedder: Any) -> Any:
    """Our embedder as a LangChain ``Embeddings`` (what mem0 and LangGraph accept)."""
    from langchain_core.embeddings import Embeddings

    class PrismEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(list(texts)).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed([text])[0].tolist()  # type: ignore[no-any-return]

    return PrismEmbeddings()


# -- mem0 ------------------------------------------------------------------------------


class Mem0Peer:
    """mem0 open source: ``Memory.add(infer=False)`` per item, ``Memory.search`` with filters."""

    name = "mem0"

    def __init__(self, embedder: Any, workdir: Path | None = None) -> None:
        from mem0 import Memory
        from mem0.configs.base import MemoryConfig

        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="bench-mem0-"))
        config = MemoryConfig(
            vector_store={
                "provider": "qdrant",
                "config": {
                    "collection_name": "bench",
                    "embedding_model_dims": embedder.dim,
                    "path": str(self.workdir / "qdrant"),
                },
            },
            embedder={"provider": "langchain", "config": {"model": langchain_embeddings(embedder)}},
            llm={"provider": "openai", "config": {"api_key": "unused-offline"}},
            history_db_path=str(self.workdir / "history.db"),
        )
        self.memory = Memory(config)

    def add(self, group: str, items: Sequence[Item]) -> None:
        for key, text, meta in items:
            self.add_one(group, key, text, meta)

    def add_one(self, group: str, key: str, text: str, meta: Meta) -> None:
        self.memory.add(text, user_id=group, metadata={"key": key, **meta}, infer=False)

    def search(self, group: str, query: str, k: int, where: Meta | None = None) -> list[str]:
        filters: Meta = {"user_id": group, **(where or {})}
        found = self.memory.search(query, top_k=k, filters=filters, threshold=0.0)
        return [r["metadata"]["key"] for r in found["results"]]

    def rules_filter(self, ctx: Meta) -> Meta:
        surfaces = {"surface": {"in": sorted({ctx["surface"], "general"})}}
        if ctx.get("persona"):
            scope = [{"scope": "global"}, {"scope": "persona", "persona": ctx["persona"]}]
            return {**surfaces, "OR": scope}
        return {**surfaces, "scope": "global"}

    def size_path(self) -> Path:
        return self.workdir

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None:
            client.close()


# -- LangGraph -------------------------------------------------------------------------


class LangGraphPeer:
    """LangGraph's ``InMemoryStore`` or ``SqliteStore`` with a vector index on ``text``."""

    def __init__(self, kind: str, embedder: Any, workdir: Path | None = None) -> None:
        self.kind = kind
        self.name = f"langgraph-{kind}"
        # InMemoryStore reads "fields", SqliteStore "text_fields" (without it, SqliteStore
        # embeds the whole JSON value): both name the one field every system embeds.
        index = {
            "dims": embedder.dim,
            "embed": langchain_embeddings(embedder),
            "fields": ["text"],
            "text_fields": ["text"],
        }
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix=f"bench-lg-{kind}-"))
        if kind == "memory":
            from langgraph.store.memory import InMemoryStore

            self.store: Any = InMemoryStore(index=index)  # type: ignore[arg-type]
        elif kind == "sqlite":
            from langgraph.store.sqlite import SqliteStore
            from pysqlite3 import dbapi2 as sqlite3_ext

            conn = sqlite3_ext.connect(
                str(self.workdir / "store.db"), check_same_thread=False, isolation_level=None
            )
            self.store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
            self.store.setup()
        else:
            raise ValueError(f"unknown LangGraph store {kind!r}")

    @staticmethod
    def namespace(group: str, meta: Meta) -> tuple[str, ...]:
        """Rules live under (group, scope, [persona,] surface); other items under (group,)."""
        if "scope" not in meta:
            return (group,)
        if meta["scope"] == "persona":
            return (group, "persona", str(meta["persona"]), str(meta["surface"]))
        return (group, "global", str(meta["surface"]))

    def add(self, group: str, items: Sequence[Item]) -> None:
        from langgraph.store.base import PutOp

        # InMemoryStore.batch embeds each distinct text once but then expects one vector
        # per put, so a batch holding the same text twice fails (langgraph-checkpoint
        # 4.3.2): batches here never repeat a text.
        ops: list[Any] = []
        seen: set[str] = set()
        for key, text, meta in items:
            if len(ops) >= 256 or text in seen:
                self.store.batch(ops)
                ops, seen = [], set()
            ops.append(PutOp(self.namespace(group, meta), key, {"text": text, **meta}))
            seen.add(text)
        if ops:
            self.store.batch(ops)

    def add_one(self, group: str, key: str, text: str, meta: Meta) -> None:
        self.store.put(self.namespace(group, meta), key, {"text": text, **meta})

    def search(self, group: str, query: str, k: int, where: Meta | None = None) -> list[str]:
        spaces = (where or {}).get("namespaces") or [(group,)]
        hits: list[tuple[float, str]] = []
        for space in spaces:
            for item in self.store.search(tuple(space), query=query, limit=k):
                hits.append((item.score or 0.0, item.key))
        hits.sort(key=lambda h: -h[0])
        return [key for _, key in hits[:k]]

    def rules_filter(self, ctx: Meta) -> Meta:
        spaces = [("rules", "global", s) for s in sorted({ctx["surface"], "general"})]
        if ctx.get("persona"):
            spaces += [
                ("rules", "persona", ctx["persona"], s) for s in sorted({ctx["surface"], "general"})
            ]
        return {"namespaces": spaces}

    def size_path(self) -> Path:
        return self.workdir

    def close(self) -> None:
        conn = getattr(self.store, "conn", None)
        if conn is not None:
            conn.close()


# -- BM25 ------------------------------------------------------------------------------


class BM25Peer:
    """``bm25s`` over the same texts; one index per group, built when first searched."""

    name = "bm25"

    def __init__(self, embedder: Any = None) -> None:
        self.items: dict[str, list[Item]] = {}
        self.index: dict[str, Any] = {}

    def add(self, group: str, items: Sequence[Item]) -> None:
        self.items.setdefault(group, []).extend(items)
        self.index.pop(group, None)

    def add_one(self, group: str, key: str, text: str, meta: Meta) -> None:
        self.add(group, [(key, text, meta)])

    def _built(self, group: str) -> Any:
        if group not in self.index:
            import bm25s

            texts = [text for _, text, _ in self.items[group]]
            model = bm25s.BM25()
            model.index(
                bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
            )
            self.index[group] = model
        return self.index[group]

    def search(self, group: str, query: str, k: int, where: Meta | None = None) -> list[str]:
        return [key for key, _ in self.search_scored(group, query, k, where)]

    def search_scored(
        self, group: str, query: str, k: int, where: Meta | None = None
    ) -> list[tuple[str, float]]:
        import bm25s

        model = self._built(group)
        items = self.items[group]
        mask = None
        keep: Callable[[Meta], bool] | None = (where or {}).get("keep")
        if keep is not None:
            mask = np.fromiter((keep(meta) for _, _, meta in items), float, len(items))
            if not mask.any():
                return []
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        limit = min(k, len(items) if mask is None else int(mask.sum()))
        docs, scores = model.retrieve(
            tokens, k=limit, weight_mask=mask, show_progress=False, n_threads=1
        )
        return [
            (items[int(i)][0], float(s)) for i, s in zip(docs[0], scores[0], strict=True) if s > 0
        ]

    def rules_filter(self, ctx: Meta) -> Meta:
        from .rules_data import applies

        return {"keep": lambda meta: applies(meta, ctx)}

    def size_path(self) -> Path | None:
        return None

    def close(self) -> None:
        self.index.clear()


def make_peer(name: str, embedder: Any) -> Any:
    """A peer by name: mem0, langgraph-memory, langgraph-sqlite, bm25."""
    if name == "mem0":
        return Mem0Peer(embedder)
    if name.startswith("langgraph-"):
        return LangGraphPeer(name.split("-", 1)[1], embedder)
    if name == "bm25":
        return BM25Peer(embedder)
    raise ValueError(f"unknown peer {name!r}")


PEERS = ("mem0", "langgraph-memory", "langgraph-sqlite", "bm25")
