"""The package's shape, checked by machine: the layering contract, module size, one home for the shop's
words, and a light first lesson."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ralph_mini import make_suite
from ralph_mini import order_words as words

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ralph_mini"
MODULES = sorted(PACKAGE.rglob("*.py"))
TOOL_NAMES = (*words.LOOKUP_TOOLS, *words.EXTENDED_TOOLS)


def test_the_layers_contract_holds():
    """import-linter's layers contract (pyproject.toml): a module imports only what an earlier lesson built."""
    beside_python = Path(sys.executable).with_name("lint-imports")  # this venv's, even if not activated
    lint = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    if lint is None:
        pytest.fail("lint-imports not found: pip install -r requirements-dev.txt")
    result = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_is_read_in_one_sitting(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 300, f"{path.name} has {lines} lines: split it by concept (the style guide's one sitting)"


def string_literals(tree: ast.AST) -> list[ast.Constant]:
    """Every string constant in the code that is not a docstring (docstrings may show worked examples)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_world_spells_a_tool_name(path):
    """Tool names live in order_words.py (and world.py defines the tools themselves); everything else reads
    them from there, so renaming a tool is one file's change."""
    if path.name in ("order_words.py", "world.py"):
        return
    found = [
        f"line {node.lineno}: {node.value[:60]!r}"
        for node in string_literals(ast.parse(path.read_text(encoding="utf-8")))
        if any(name in node.value for name in TOOL_NAMES)
    ]
    assert not found, f"{path.name} spells a tool name; use ralph_mini.order_words instead: {found}"


def test_the_world_defines_exactly_the_tools_its_words_name():
    assert tuple(t.name for t in make_suite(n=1).world.tools()) == TOOL_NAMES
    assert set(words.READ_ONLY_TOOLS) | set(words.WRITING_TOOLS) == set(TOOL_NAMES)


def test_notebook_01_loads_neither_faiss_nor_the_ralph_loop():
    """The first lesson imports the ruler (measure), not the benchmark: no faiss, no Ralph Loop, no retrieval."""
    notebook = nbformat.read(ROOT / "notebooks" / "01_bare_react.ipynb", as_version=4)
    probe = "import sys; print(sorted(m for m in ('faiss', 'ralph_mini.loop', 'ralph_mini.retrieval') if m in sys.modules))"
    notebook.cells.append(nbformat.v4.new_code_cell(probe))
    NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    assert notebook.cells[-1].outputs[0]["text"].strip() == "[]"


def test_import_ralph_mini_leaves_faiss_unloaded():
    code = "import sys, ralph_mini; print('faiss' in sys.modules, 'ipywidgets' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split() == [
        "False",
        "False",
    ]
