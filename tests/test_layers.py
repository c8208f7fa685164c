"""The package's shape, checked by machine: the layering contract, module size, tool names spelt only by
the worlds and the drivers that pick one, and a light first lesson."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ralph_mini.worlds import orders
from ralph_mini.worlds.clinic import words as clinic_words
from ralph_mini.worlds.orders import words
from ralph_mini.worlds.shop import words as shop_words

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ralph_mini"
MODULES = sorted(PACKAGE.rglob("*.py"))
ORDER_TOOLS = (*words.LOOKUP_TOOLS, *words.EXTENDED_TOOLS)
CLINIC_TOOLS = (clinic_words.BOARD, clinic_words.SYSTEM, clinic_words.INSURER, clinic_words.CANCEL_APPOINTMENT,
                clinic_words.CALENDAR, clinic_words.FAQ)  # fmt: skip
TOOL_NAMES = (*ORDER_TOOLS, *shop_words.SHOP_TOOLS, *CLINIC_TOOLS)  # every shipped world's tools
# The drivers pick a world (for the command line and the exercises): they may name its tools.
DRIVERS = ("bench.py", "scenario_bench.py", "outer.py", "__main__.py")


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


def spelt_tool_names(code: str) -> list[str]:
    """The string constants of ``code`` (not its docstrings) that contain a shipped world's tool name."""
    return [
        f"line {node.lineno}: {node.value[:60]!r}"
        for node in string_literals(ast.parse(code))
        if any(name in node.value for name in TOOL_NAMES)
    ]


def may_spell_tool_names(path: Path) -> bool:
    """A world package, the exercises, or a driver that picks a world (bench, scenario_bench, outer, the CLI)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] in ("worlds", "exercise") or (len(parts) == 1 and path.name in DRIVERS)


OWN_FRAMING = ("__init__.py", "__main__.py")  # the package's front door and the command line


@pytest.mark.parametrize(
    "path", [m for m in MODULES if m.name not in OWN_FRAMING], ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_a_module_opens_with_the_lesson_that_teaches_it(path):
    """The reading path: a student who opens a module learns from its first paragraph where it is taught."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    opening = docstring.split("\n\n")[0].lower()
    assert re.search(r"notebooks? \d\d|exercise|lesson|your_own_world", opening), (
        f"{path.name}: the docstring's first paragraph should name the notebook that teaches it"
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_world_spells_a_tool_name(path):
    """Tool names live in the world packages (``ralph_mini/worlds/...``: their words, and the tools
    themselves), and the drivers that pick a world may name them; every other module is the agent, which
    reads them from the world it is given, so renaming a tool is one world's change."""
    if may_spell_tool_names(path):
        return
    found = spelt_tool_names(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name} spells a tool name; read it from the world's words or tools: {found}"


def test_the_tool_name_check_can_fail():
    """The check above sees any world's tool name in an agent module's code, not in a docstring, and
    exempts exactly the worlds and the drivers."""
    code = '"""Ask query_payment_api last."""\nFIRST, NEXT = "query_local_cache", "ask_insurer"\nLAST = "cancel_order"\n'
    assert sorted(spelt_tool_names(code)) == [
        "line 2: 'ask_insurer'",
        "line 2: 'query_local_cache'",
        "line 3: 'cancel_order'",
    ]
    exempt = {str(p.relative_to(PACKAGE)) for p in MODULES if may_spell_tool_names(p)}
    assert {"bench.py", "scenario_bench.py", "outer.py", "__main__.py", "worlds/orders/words.py"} <= exempt
    assert not exempt & {"loop.py", "reflect.py", "offline.py", "world.py", "offline_habits.py"}


def test_the_world_defines_exactly_the_tools_its_words_name():
    assert tuple(t.name for t in orders.make_suite(n=1).world.tools()) == ORDER_TOOLS
    assert set(words.READ_ONLY_TOOLS) | set(words.WRITING_TOOLS) == set(ORDER_TOOLS)


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
