"""The two editions (notebooks/ and notebooks/zh/) come from one source, cell for cell (issue 28).

A markdown cell of ``notebooks/src/NN.py`` holds English, a ``<!-- zh -->`` line, then Chinese
(tools/nbbuild.py). These tests fail when a cell lacks a language, when an edition is stale against its
source (a cell edited in the source and not rebuilt), or when the editions' code differs.
"""

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
CJK = re.compile(r"[\u4e00-\u9fff]")
sys.path.insert(0, str(ROOT / "tools"))
import nbbuild  # noqa: E402


def test_there_is_a_source_per_lesson():
    assert len(SOURCES) >= 12


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_markdown_cell_has_both_languages(source):
    cells = nbbuild.source_cells(source.read_text(encoding="utf-8"))
    for number, (kind, text) in enumerate(cells):
        if kind == "markdown":
            parts = nbbuild.split_languages(text, f"{source.name}, cell {number}")
            assert CJK.search(parts["zh"]), f"{source.name}, cell {number}: the zh part has no Chinese"


@pytest.mark.parametrize("language", nbbuild.LANGUAGES)
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_each_edition_is_built_from_its_source(source, language):
    built = nbbuild.edition_path(source, language)
    assert built.exists(), (
        f"{built.relative_to(ROOT)} is missing: python tools/nbbuild.py {source.relative_to(ROOT)}"
    )
    expected = nbbuild.read_cells(source.read_text(encoding="utf-8"), language, source.name)
    committed = nbformat.read(built, as_version=4).cells
    stale = f"{built.relative_to(ROOT)} is stale: python tools/nbbuild.py {source.relative_to(ROOT)}"
    assert [(c.cell_type, c.source) for c in committed] == [(c.cell_type, c.source) for c in expected], stale


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_editions_run_the_same_code(source):
    def code(language):
        cells = nbformat.read(nbbuild.edition_path(source, language), as_version=4).cells
        return [c.source for c in cells if c.cell_type == "code"]

    assert code("en") == code("zh")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_chinese_edition_ran_in_chinese_and_drew_every_glyph(source):
    outputs = [
        json.dumps(output, ensure_ascii=False)
        for cell in nbformat.read(nbbuild.edition_path(source, "zh"), as_version=4).cells
        for output in cell.get("outputs", [])
    ]
    assert any(CJK.search(text) for text in outputs), f"{source.stem}: no Chinese in any output"
    assert not [t for t in outputs if "missing from font" in t], f"{source.stem}: matplotlib lacked a glyph"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("## Only English", "no '<!-- zh -->'"),
        ("English\n<!-- zh -->\n中文\n<!-- zh -->\n再来", "2 '<!-- zh -->'"),
        ("English\n<!-- zh -->\n   ", "no zh text"),
        ("<!-- zh -->\n中文", "no en text"),
    ],
)
def test_a_cell_without_both_languages_fails_the_build(text, problem):
    with pytest.raises(nbbuild.EditionError, match=re.escape(problem)):
        nbbuild.split_languages(text, "cell 3")


def test_the_split_takes_each_language_s_part():
    source = "# %% [markdown]\n# ## Title\n#\n# text\n#\n# <!-- zh -->\n# ## 标题\n#\n# 正文\n\n# %%\nx = 1\n"
    en, code = nbbuild.read_cells(source, "en")
    zh, same_code = nbbuild.read_cells(source, "zh")
    assert (en.source, zh.source) == ("## Title\n\ntext", "## 标题\n\n正文")
    assert code.source == same_code.source == "x = 1"


def test_each_edition_has_its_own_folder():
    source = ROOT / "notebooks" / "src" / "01_bare_react.py"
    assert nbbuild.edition_path(source, "en") == ROOT / "notebooks" / "01_bare_react.ipynb"
    assert nbbuild.edition_path(source, "zh") == ROOT / "notebooks" / "zh" / "01_bare_react.ipynb"
    assert (ROOT / "notebooks" / "zh" / ".ralph_lang").read_text().strip() == "zh"
