"""Capture reads any transcript in bounded time and memory (issue #32, D8).

A line nested 100,000 levels deep, a line longer than the line limit and a message carrying a
lone surrogate are each skipped and counted, and the rest of the transcript is captured as
without them; the text output never fails; a device (``/dev/zero``), a FIFO or a folder is
refused at once with a field error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prism_memory.capture import transcript
from prism_memory.capture.transcript import MAX_LINE_BYTES, read
from prism_memory.errors import InvalidInput
from tests.test_capture_cli import GOLDEN, ok, run

DEEP = "[" * 100_000 + "]" * 100_000
SURROGATE_LINE = (
    '{"type": "user", "uuid": "00000000-0000-4000-8000-0000000000ff", "sessionId": "s", '
    '"message": {"role": "user", "content": "Never deploy on Fridays \\ud800 ever."}}'
)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    with path.open("w", encoding="utf-8") as out:
        out.write(GOLDEN.read_text(encoding="utf-8"))
        out.write(DEEP + "\n")
        out.write('{"type": "user", "pad": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n')
        out.write(SURROGATE_LINE + "\n")
    return path


def test_hostile_lines_are_skipped_and_counted_and_the_rest_is_captured(
    db_path: Path, hostile: Path, tmp_path: Path
) -> None:
    clean = ok(tmp_path / "clean.db", "capture", "claude-code", "--transcript", str(GOLDEN))
    report = ok(db_path, "capture", "claude-code", "--transcript", str(hostile))
    assert report["transcript_skipped"] == {"not_unicode": 1, "too_deep": 1, "too_long": 1}
    assert (report["messages"], report["proposed"]) == (clean["messages"], clean["proposed"])


def test_the_text_output_of_a_hostile_transcript_does_not_fail(
    db_path: Path, hostile: Path
) -> None:
    result = run(db_path, "capture", "claude-code", "--transcript", str(hostile), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "skipped transcript lines: 1 not unicode, 1 too deep, 1 too long" in result.output


def test_a_line_without_end_is_read_a_bounded_piece_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "one-line.jsonl"
    path.write_bytes(GOLDEN.read_bytes() + b"z" * (3 * MAX_LINE_BYTES))  # no newline at all
    found = read(path)
    assert found.skipped == {"too_long": 1}
    assert found.messages == transcript.read_file(GOLDEN)


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_transcript_that_is_not_a_regular_file_is_refused(
    db_path: Path, tmp_path: Path, kind: str
) -> None:
    path = Path("/dev/zero") if kind == "device" else tmp_path / "pipe"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: opening it must not wait for one
    result = run(db_path, "capture", "claude-code", "--transcript", str(path), "--json")
    assert result.exit_code == 2, result.output
    field = json.loads(result.output)["error"]["fields"][0]
    assert (field["field"], field["code"]) == ("transcript", "not_a_file")


def test_a_folder_given_as_a_transcript_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as refused:
        read(tmp_path)
    assert refused.value.errors[0].code == "not_a_file"
