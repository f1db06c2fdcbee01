"""Hostile rule files (issue 32, D7): every file up to the limits imports or is refused, with
bounded work, memory and warnings; the linear scanners read text exactly as the expressions
they replace did.

No wall-clock assertion: the hostile files are imported by a real ``prism import-rules``
process with the generous timeout of :func:`run_prism` (300 s for all of them together;
before the fix one of them alone ran for minutes), and what is asserted is that it
finished, what it reported, how many warnings, and the process's peak memory.
"""

from __future__ import annotations

import itertools
import json
import re
import resource
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prism_memory.errors import InvalidInput
from prism_memory.formats.rules_io.blocks import html_comments, is_comment, strip_comments
from prism_memory.formats.rules_io.drafts import MARKER, trailing_marker
from prism_memory.formats.rules_io.frontmatter import parse_front_matter
from prism_memory.formats.rules_io.reading import HIDDEN_WARNINGS_MAX, hidden_characters
from prism_memory.formats.rules_io.records import WARNINGS_PER_CODE
from prism_memory.formats.rules_io.sentences import code_spans, sentence_spans
from prism_memory.services.rules_import import read_rule_files
from tests.cli_run import run_prism
from tests.rules_hostile import NAMED, REFUSED, fuzzed

PEAK_MB = 600  # the importer's own peak on these files is ~100 MB


@pytest.mark.slow
def test_every_hostile_file_imports_with_bounded_warnings_in_one_real_process(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    files = {name: make() for name, make in NAMED.items() if name not in REFUSED}
    files |= fuzzed(12)
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    db = tmp_path / "prism.db"
    proc = run_prism(db, "import-rules", "rules", "--dry-run", "--json", cwd=tmp_path)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert {Path(f["path"]).stem for f in report["files"]} == set(files)
    per_file: dict[str, list[dict[str, object]]] = {}
    for warning in report["warnings"]:
        per_file.setdefault(str(warning["path"]), []).append(warning)
    for path, warnings in per_file.items():
        codes = {str(w["code"]) for w in warnings}
        assert len(warnings) <= (WARNINGS_PER_CODE + 1) * len(codes), path
    # a zero-width file at the limit: the first warnings one by one, the rest counted
    zero = per_file["rules/zero_width_at_limit.md"]
    assert [w["code"] for w in zero].count("hidden_unicode") == HIDDEN_WARNINGS_MAX
    [more] = [w for w in zero if w["code"] == "hidden_unicode_more"]
    assert more["count"] == len(files["zero_width_at_limit"]) - 1 - HIDDEN_WARNINGS_MAX
    if peak_kb > before:  # ru_maxrss is the largest child so far: this one set it
        assert peak_kb < PEAK_MB * 1024


@pytest.mark.parametrize(("name", "code"), sorted(REFUSED.items()))
def test_files_over_a_limit_are_refused_before_they_are_parsed(
    tmp_path: Path, name: str, code: str
) -> None:
    (tmp_path / "big.md").write_text(NAMED[name](), encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        read_rule_files([tmp_path / "big.md"], tmp_path)
    [error] = caught.value.errors
    assert (error.field, error.code, error.details["path"]) == ("path", code, "big.md")


def test_hidden_characters_warn_one_by_one_up_to_the_cap_then_count_the_rest() -> None:
    lines = ["ok", "a\u200bb\u202ec", *["\u200b" * 10] * 5]
    warnings = hidden_characters("F.md", lines, limit=4)
    assert [(w.line, w.details.get("column")) for w in warnings[:4]] == [
        (2, 2),
        (2, 4),
        (3, 1),
        (3, 2),
    ]
    assert warnings[4].code == "hidden_unicode_more"
    assert warnings[4].details == {"count": 48, "lines": 5}
    assert len(warnings) == 5


def test_comment_warnings_are_capped_with_a_count_of_the_rest(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("- Use x <!-- c -->\n" * 50, encoding="utf-8")
    [parsed] = read_rule_files([tmp_path / "AGENTS.md"], tmp_path)
    skipped = [w for w in parsed.warnings if w.code == "comment_skipped"]
    [more] = [w for w in parsed.warnings if w.code == "comment_skipped_more"]
    assert [w.line for w in skipped] == list(range(1, 21))
    assert more.details["count"] == 30


# -- the linear scanners read text as the expressions they replace -------------------------

_TEXT = st.text(alphabet="<!->`*. Aa1\n e.g", max_size=60)


def _old_sentence_spans(text: str) -> list[tuple[int, int]]:
    """The expression-based splitter before D7 (quadratic), as the reference."""
    boundary = re.compile(r"[.!?][\"')\]*_`]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
    words = set(re.findall(r"\S+", "e.g i.e etc vs cf al approx incl esp fig no nr mr mrs ms"))
    words |= set(re.findall(r"\S+", "dr st jr sr inc ltd co u.s u.k a.k.a resp"))
    spans, start = [], 0
    for found in boundary.finditer(text):
        dot = found.start()
        word = re.search(r"([\w.]+)$", text[:dot])
        token = word.group(1).lower().strip(".") if word else ""
        if text.count("`", 0, dot) % 2 == 1 or (
            word and (token in words or token.isdigit() or len(token) == 1)
        ):
            continue
        stop = len(text[: found.end()].rstrip())
        if text[start:stop].strip():
            spans.append((start, stop))
        start = found.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_sentence_spans_match_the_old_expression(text: str) -> None:
    assert sentence_spans(text) == _old_sentence_spans(text)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_html_comments_match_the_old_expression(text: str) -> None:
    old = [(m.start(), m.group()) for m in re.finditer(r"<!--.*?-->", text, re.DOTALL)]
    assert html_comments(text) == old
    assert is_comment(text) == (
        bool(text.strip()) and not re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL).strip()
    )
    comments = [c for _, c in old]
    expected = text
    for comment in comments:
        expected = expected.replace(comment, "", 1)
    expected = "\n".join(line.rstrip() for line in expected.split("\n")).strip("\n")
    assert strip_comments(text, comments) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="`a ", max_size=40))
def test_code_spans_pair_runs_of_the_same_length(text: str) -> None:
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    spans = code_spans(text)
    for begin, end in spans:
        opening = next(r for r in runs if r[0] == begin)
        closing = next(r for r in runs if r[1] == end)
        assert opening[1] - opening[0] == closing[1] - closing[0]
        inner = [r for r in runs if begin < r[0] and r[1] < end and r != closing]
        assert all(r[1] - r[0] != opening[1] - opening[0] for r in inner)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_a_trailing_marker_is_found_as_the_old_expression_found_it() -> None:
    uuid = "0b7e9f6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    line = f"Use x   <!-- prism:id={uuid} v=3 kind=convention -->  "
    found, rest = trailing_marker(line)
    old = re.compile(r"\s*" + MARKER.pattern + r"\s*$").search(line)
    assert found is not None and old is not None
    assert (found["id"], found["v"], rest) == (old["id"], old["v"], line[: old.start()])
    assert trailing_marker("Use x <!-- not a marker -->") == (None, "Use x <!-- not a marker -->")


def test_front_matter_values_are_stripped_as_before() -> None:
    front = parse_front_matter(["---", "globs:   **/*.py   ", "list:", "  -  a  ", "---"])
    assert front.values == {"globs": "**/*.py", "list": ["a"]}
