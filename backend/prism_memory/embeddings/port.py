"""The embedder port: turns texts into unit-length float32 vectors.

Adapters: :mod:`prism_memory.embeddings.minilm` (the real local model, the default) and
:mod:`prism_memory.embeddings.fake` (deterministic, for unit tests only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Anything that embeds texts into L2-normalised float32 vectors."""

    @property
    def model_id(self) -> str:
        """A stable name of the model; stored beside every vector it makes."""
        ...

    @property
    def dim(self) -> int:
        """The vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed texts.

        Args:
            texts: the texts, any length (long ones are truncated by the model).

        Returns:
            A ``(len(texts), dim)`` float32 matrix whose rows have unit L2 norm
            (a row of zeros only for an empty text).

        Raises:
            EmbeddingUnavailable: the model cannot be loaded.
        """
        ...
