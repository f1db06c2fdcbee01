"""``prism import-rules --learned``: the keep/skip decision learned from labelled rule files.

The cases are what the shipped weights decide (``formats/rules_io/data/learned.json``); a
retrained model may decide some of them otherwise, and then these tests say so. How it was
chosen and measured: bench/rules_files/dev2/README.md, the thirty-fourth and thirty-fifth
rounds.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from prism_memory.formats.rules_io import learned
from prism_memory.formats.rules_io.records import FileFormat
from prism_memory.services.rules_import import read_rule_files
from tests.cli_run import invoke_prism

# conventions stated without a modal or an imperative: the cues leave three as description
FRENCH = (
    "# CLAUDE.md\n\n## Accessibilité\n\n- Contraste AA minimum partout.\n"
    "- Skip-link en haut de `BaseLayout.astro` (`#main-content`).\n"
    "- Focus visible sur tous les éléments interactifs.\n\n"
    "## Performance budget\n\n- Lighthouse mobile ≥ 90 sur toutes les pages avant merge.\n"
)
# a stack written as bare names, and a folder map that stays description
CHINESE = (
    "# AGENTS.md\n\n## 技术选型\n\n- 函数式组件 + Hooks\n- 状态管理统一用 Pinia\n"
    "- 样式只用 Tailwind CSS\n\n## 目录\n\n- `src/api`：接口请求\n- `src/views`：页面\n"
)


def kept(folder: Path, name: str, text: str, *, use_model: bool) -> list[str]:
    (folder / name).write_text(text, encoding="utf-8")
    parsed = read_rule_files([folder / name], folder, learned=use_model)
    return [u.text for p in parsed for u in p.units if u.kind is not None]


def test_the_model_keeps_conventions_the_cues_leave_as_description(tmp_path: Path) -> None:
    assert kept(tmp_path, "CLAUDE.md", FRENCH, use_model=False) == [
        "Focus visible sur tous les éléments interactifs."
    ]
    assert kept(tmp_path, "CLAUDE.md", FRENCH, use_model=True) == [
        "Contraste AA minimum partout.",
        "Skip-link en haut de `BaseLayout.astro` (`#main-content`).",
        "Focus visible sur tous les éléments interactifs.",
        "Lighthouse mobile ≥ 90 sur toutes les pages avant merge.",
    ]
    assert kept(tmp_path, "AGENTS.md", CHINESE, use_model=False) == ["样式只用 Tailwind CSS"]
    # the stack becomes rules; the folder map stays description
    assert kept(tmp_path, "AGENTS.md", CHINESE, use_model=True) == [
        "函数式组件 + Hooks",
        "状态管理统一用 Pinia",
        "样式只用 Tailwind CSS",
    ]


def test_the_decision_is_the_same_every_time(tmp_path: Path) -> None:
    first = kept(tmp_path, "CLAUDE.md", FRENCH, use_model=True)
    assert all(kept(tmp_path, "CLAUDE.md", FRENCH, use_model=True) == first for _ in range(3))


def test_the_shipped_weights_fit_the_features_and_say_what_they_were_trained_on(
    tmp_path: Path,
) -> None:
    weights, trained = learned.shipped()
    (tmp_path / "AGENTS.md").write_text(CHINESE, encoding="utf-8")
    (parsed,) = read_rule_files([tmp_path / "AGENTS.md"], tmp_path)
    assert parsed.format is FileFormat.AGENTS_MD
    rows = learned.seen(parsed.units, parsed.format, CHINESE.split("\n"))
    assert learned.features(rows).shape == (len(rows), len(weights))
    assert len(weights) == trained["features"]
    # the thirty-fifth round's fresh split was never trained on
    assert trained["splits"].startswith("dev … holdout34,")
    assert trained["units"] > 10_000 and trained["l2"] == 0.0003


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return invoke_prism(cwd / "prism.db", *args, cwd=cwd)


def counts(cwd: Path, *args: str) -> dict[str, int]:
    done = cli(cwd, "import-rules", *args, "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["counts"])


def test_learned_through_the_cli_round_trips_and_the_default_keeps_what_it_wrote(
    tmp_path: Path,
) -> None:
    (tmp_path / "CLAUDE.md").write_text(FRENCH, encoding="utf-8")
    default = counts(tmp_path, "CLAUDE.md", "--dry-run")
    assert (default["written"], default["skipped"]) == (1, 3)
    first = counts(tmp_path, "CLAUDE.md", "--learned")
    assert (first["written"], first["skipped"]) == (4, 0)
    assert counts(tmp_path, "CLAUDE.md", "--learned")["unchanged"] == 4
    # a later import without it keeps what it wrote (each stretch finds its memorule)
    after = counts(tmp_path, "CLAUDE.md", "--retire-missing")
    assert (after["unchanged"], after["written"], after["retired"]) == (4, 0, 0)
    exported = cli(tmp_path, "export-rules", "--format", "claude-md", "--out", "out")
    assert exported.returncode == 0, exported.stderr
    # an exported rule carries its marker and is never re-decided by the model
    for flags in ((), ("--learned",)):
        again = counts(tmp_path, "out/CLAUDE.md", *flags)
        assert (again["unchanged"], again["written"], again["updated"]) == (4, 0, 0)


def test_learned_is_offered_in_the_help(tmp_path: Path) -> None:
    done = cli(tmp_path, "import-rules", "--help")
    assert done.returncode == 0, done.stderr
    assert "--learned" in done.stdout and "hand-labelled" in done.stdout


@pytest.mark.parametrize("text", ["", "# Only a heading\n", "<!-- a comment -->\n"])
def test_a_file_with_nothing_to_decide_reads_as_without_the_model(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / "AGENTS.md").write_text(text, encoding="utf-8")
    plain = read_rule_files([tmp_path / "AGENTS.md"], tmp_path)
    model = read_rule_files([tmp_path / "AGENTS.md"], tmp_path, learned=True)
    assert [(p.units, [w.code for w in p.warnings]) for p in model] == [
        (p.units, [w.code for w in p.warnings]) for p in plain
    ]


def test_an_indented_code_block_stays_description_whatever_the_model_says(
    tmp_path: Path,
) -> None:
    # a real file's shape: its lists indented by a tab, so CommonMark reads code blocks;
    # kept as rules they came back from export-rules with other white space
    text = (
        "# AGENTS - Guia Mestre\n\n## Estrutura\n\n"
        "\t- `scripts/agents_git.md` → Instruções e fluxos de trabalho para Git  \n"
        "\t- `scripts/agents_latex.md` → Instruções e padrões para documentos LaTeX\n\n"
        "## Como usar no ChatGPT Codex\n\n"
        "\tNo **ChatGPT Codex**, você pode pedir para o modelo considerar **somente** uma "
        "seção ou arquivo específico, por exemplo:\n"
    )
    (tmp_path / "AGENTS.md").write_text(text, encoding="utf-8")
    (parsed,) = read_rule_files([tmp_path / "AGENTS.md"], tmp_path)
    rows = learned.seen(parsed.units, parsed.format, text.split("\n"))
    weights, _ = learned.shipped()
    p = learned.probabilities(weights, learned.features(rows))
    # the model would keep the first block; the guard is what leaves it description
    wanted = [row.unit.context[-1] for row, v in zip(rows, p, strict=True) if v >= 0.5]
    assert wanted == ["Estrutura"]
    assert kept(tmp_path, "AGENTS.md", text, use_model=True) == []
