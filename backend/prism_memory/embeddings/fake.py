"""A deterministic stand-in embedder, for unit tests only.

It knows no meaning: texts that share words (or word fragments) get a higher
cosine, nothing more. Never use it to judge recall quality.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from prism_memory.embeddings.port import Matrix

_WORD = re.compile(r"\w+")
_TRIGRAM_WEIGHT = 0.5


class FakeEmbedder:
    """Hashed bag of lowercase words and their character trigrams, L2-normalised.

    For unit tests only. Each feature lands in one of ``dim`` buckets with a sign,
    both taken from a blake2b digest, so vectors are the same in every process
    (Python's ``hash()`` is salted per process and would not be).

    Args:
        dim: the vector dimension.
    """

    model_id = "fake-hash-v1"

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise ValueError("dim must be at least 1")
        self._dim = dim

    @property
    def dim(self) -> int:
        """The vector dimension."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed texts deterministically.

        Args:
            texts: the texts. A blank text gives a row of zeros.

        Returns:
            A ``(len(texts), dim)`` float32 matrix of unit-norm (or zero) rows.
        """
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                bucket, sign = self._slot(feature)
                out[row, bucket] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        result: Matrix = np.divide(out, norms, out=out, where=norms > 0)
        return result

    def _slot(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return (value >> 1) % self._dim, 1.0 if value & 1 else -1.0


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        features.append(("w:" + word, 1.0))
        padded = f"#{word}#"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    if not features and text.strip():
        # Only punctuation or symbols: still not blank, so still a unit vector.
        features.append(("s:" + text.strip(), 1.0))
    return features
