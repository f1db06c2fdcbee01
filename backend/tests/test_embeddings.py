"""The embedder adapters: the fake (unit tests) and the real MiniLM model."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

from prism_memory.embeddings.fake import FakeEmbedder
from prism_memory.embeddings.minilm import MiniLMEmbedder
from prism_memory.embeddings.port import Embedder
from prism_memory.errors import EmbeddingUnavailable

BACKEND = Path(__file__).resolve().parents[1]

PARAPHRASE = (
    "Always run database migrations inside a transaction.",
    "Schema changes must be applied within a single DB transaction.",
)
UNRELATED = (
    "Always run database migrations inside a transaction.",
    "The office coffee machine is cleaned every Friday afternoon.",
)
SENTENCES = [
    "Prefer composition over inheritance when writing adapters.",
    "hi",
    "Never log API keys, even at debug level.",
    "Deploys to production happen only on weekdays before 3 pm, after the full test "
    "suite has passed on the main branch and a second engineer has approved the change.",
    "Use UTC timestamps everywhere.",
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture(
    params=["fake", pytest.param("minilm", marks=pytest.mark.real_model)],
)
def embedder(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    if request.param == "fake":
        yield FakeEmbedder()
    else:
        yield request.getfixturevalue("minilm")


def cosine(embedder: Embedder, pair: tuple[str, str]) -> float:
    a, b = embedder.embed(list(pair))
    return float(a @ b)


# -- every embedder ---------------------------------------------------------


def test_embedder_returns_one_float32_unit_row_per_text(embedder: Embedder) -> None:
    vectors = embedder.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), embedder.dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_embedder_gives_a_zero_row_for_a_blank_text(embedder: Embedder, blank: str) -> None:
    vectors = embedder.embed(["Use UTC timestamps everywhere.", blank])
    assert not vectors[1].any()
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)


def test_embedder_returns_an_empty_matrix_for_no_texts(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, embedder.dim)


def test_embedder_is_bit_identical_on_repeat(embedder: Embedder) -> None:
    assert np.array_equal(embedder.embed(SENTENCES), embedder.embed(SENTENCES))


def test_embedder_scores_a_related_pair_above_an_unrelated_pair(embedder: Embedder) -> None:
    assert cosine(embedder, PARAPHRASE) > cosine(embedder, UNRELATED)


# -- the fake ---------------------------------------------------------------


def test_fake_embedder_is_the_same_in_a_process_with_another_hash_seed() -> None:
    code = (
        "from prism_memory.embeddings.fake import FakeEmbedder; import sys; "
        f"sys.stdout.buffer.write(FakeEmbedder().embed({SENTENCES!r}).tobytes())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(BACKEND)}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    assert other.stdout == FakeEmbedder().embed(SENTENCES).tobytes()


def test_fake_embedder_scores_texts_sharing_words_higher() -> None:
    fake = FakeEmbedder(dim=64)
    assert fake.dim == 64
    shared = cosine(fake, ("deploy the billing service", "the billing service deploy failed"))
    unrelated = cosine(fake, ("deploy the billing service", "cats sleep all afternoon"))
    assert shared > 0.5 > unrelated


def test_fake_embedder_gives_a_unit_row_for_punctuation_only() -> None:
    assert np.linalg.norm(FakeEmbedder().embed(["?!"])[0]) == pytest.approx(1.0)


# -- the real model -----------------------------------------------------------


def test_minilm_loads_nothing_until_the_first_embed() -> None:
    embedder = MiniLMEmbedder()
    assert (embedder.model_id, embedder.dim, embedder.loaded) == (
        "all-MiniLM-L6-v2-int8-onnx",
        384,
        False,
    )
    assert embedder.embed(["", " "]).shape == (2, 384)
    assert not embedder.loaded


@pytest.mark.real_model
def test_minilm_gives_the_same_vectors_in_a_batch_as_one_at_a_time(
    minilm: MiniLMEmbedder,
) -> None:
    texts = [f"{s} (variant {i})" * (1 + i % 3) for i, s in enumerate(SENTENCES * 8)]
    batched = minilm.embed(texts)
    singles = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


@pytest.mark.real_model
@pytest.mark.parametrize(("repeats", "tail_counts"), [(15, True), (30, False)])
def test_minilm_reads_up_to_256_tokens_and_truncates_the_rest(
    minilm: MiniLMEmbedder, repeats: int, tail_counts: bool
) -> None:
    # Nine one-token words a repeat: 135 tokens (beyond the tokenizer file's own 128
    # preset) leave room for the tail; 270 push it past 256.
    head = "the quick brown fox jumps over the lazy dog " * repeats
    a, b = minilm.embed([head + "red apples " * 20, head + "blue oceans " * 20])
    assert (not np.allclose(a, b, atol=1e-6)) is tail_counts


@pytest.mark.real_model
def test_minilm_fresh_instances_with_checksum_agree_bit_for_bit(minilm: MiniLMEmbedder) -> None:
    fresh = MiniLMEmbedder(verify_checksum=True)
    assert np.array_equal(fresh.embed(SENTENCES), minilm.embed(SENTENCES))
    assert fresh.loaded


@pytest.mark.real_model
def test_minilm_is_safe_when_threads_embed_while_it_loads(minilm: MiniLMEmbedder) -> None:
    fresh = MiniLMEmbedder()
    results: list[Any] = [None] * 4

    def work(slot: int) -> None:
        results[slot] = fresh.embed(SENTENCES)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = minilm.embed(SENTENCES)
    assert all(np.array_equal(result, expected) for result in results)


@pytest.mark.real_model
def test_minilm_makes_no_network_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    embedder = MiniLMEmbedder()
    assert embedder.embed(SENTENCES).shape == (len(SENTENCES), 384)


@pytest.mark.real_model
def test_minilm_makes_no_network_call_from_a_fresh_process() -> None:
    # Also covers importing onnxruntime and tokenizers, which this process did long ago.
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise SystemExit(f'network access attempted: {a!r}')\n"
        "socket.socket.connect = socket.socket.connect_ex = refuse\n"
        "socket.create_connection = socket.getaddrinfo = refuse\n"
        "from prism_memory.embeddings.minilm import MiniLMEmbedder\n"
        "print(MiniLMEmbedder().embed(['Use UTC timestamps everywhere.']).shape)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(BACKEND)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "(1, 384)"), done.stderr


def test_minilm_says_how_to_fix_a_missing_model_file(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(model_path=tmp_path / "model.onnx")
    with pytest.raises(EmbeddingUnavailable, match=r"model\.onnx not found .*pip install"):
        embedder.embed(["Use UTC timestamps everywhere."])
    assert not embedder.loaded


def test_minilm_refuses_a_tokenizer_of_the_right_size_but_other_bytes(tmp_path: Path) -> None:
    from prism_memory.embeddings import minilm

    shipped = minilm._TOKENIZER_FILE.read_bytes()
    tampered = tmp_path / "tokenizer.json"
    tampered.write_bytes(shipped.replace(b'"[UNK]"', b'"[UNX]"', 1))
    assert len(tampered.read_bytes()) == len(shipped)
    with pytest.raises(EmbeddingUnavailable, match=r"has sha256 [0-9a-f]{64}, not the expected"):
        MiniLMEmbedder(tokenizer_path=tampered).load()


def test_the_shipped_tokenizer_carries_its_licence_and_notice() -> None:
    from prism_memory.embeddings import minilm

    folder = minilm._TOKENIZER_FILE.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    notice = (folder / "NOTICE").read_text()
    assert minilm._TOKENIZER_SHA256 in notice and "all-MiniLM-L6-v2" in notice


@pytest.mark.parametrize("which", ["model_path", "tokenizer_path"])
def test_minilm_refuses_a_file_that_is_not_the_expected_one(tmp_path: Path, which: str) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_bytes(b"not a model")
    if which == "model_path":
        embedder = MiniLMEmbedder(model_path=wrong)
    else:
        embedder = MiniLMEmbedder(tokenizer_path=wrong)
    with pytest.raises(EmbeddingUnavailable, match=r"is 11 bytes, not the .*pip install"):
        embedder.load()


@pytest.mark.real_model
@pytest.mark.parametrize(
    ("setting", "telemetry_files"), [(None, False), ("0", True)], ids=["default", "opted-in"]
)
def test_onnxruntime_telemetry_is_off_unless_the_user_opts_in(
    tmp_path: Path, setting: str | None, telemetry_files: bool
) -> None:
    """A real process loads the real model under a fresh HOME: by default onnxruntime leaves
    no telemetry database there; ORT_DISABLE_TELEMETRY=0 shows the check can see one."""
    # onnxruntime keeps quiet by itself where CI is set: take it out, or neither case shows
    # what a user's machine does.
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "CI")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / ".cache"))
    if setting is not None:
        env["ORT_DISABLE_TELEMETRY"] = setting
    code = (
        "from prism_memory.embeddings.minilm import MiniLMEmbedder\n"
        "print(MiniLMEmbedder().embed(['a rule about migrations']).shape)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.stdout.strip() == "(1, 384)", proc.stderr
    database = tmp_path / ".cache" / "Microsoft" / "DeveloperTools" / ".onnxruntime"
    assert (database / "onnxruntime.db").exists() is telemetry_files
