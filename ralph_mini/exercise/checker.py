"""The checker framework behind every exercise: ``check``, tiered ``hint`` and ``solution``.

In the spirit of Kaggle's learntools: a notebook cell calls ``ex2.check(should_stop)`` and sees a green
"Correct", a red message naming the *first* failing case and what is wrong with it (never the reference
code), or "Not attempted yet" while the starter stub is untouched (unless the student's cell that should
have replaced it raised: then that error, see ``definition_error``). ``check`` returns a ``CheckResult``
(``passed``, ``message``) so tests can assert on it; Jupyter shows it as coloured HTML.

An exercise is data: a list of ``Case`` (an input and a ``judge`` of the returned value) and its hints.
The five exercises, one module each, say what they judge by.

Left out on purpose: grading, scores and timeouts (a student's infinite loop hangs the cell, as any code
would), and reading the student's variables by name: you pass the function you wrote.
"""

import ast
import html
import inspect
import linecache
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ralph_mini.tools import Tool

# Instructor solutions: in the repository next to the package (an installed wheel has none).
SOLUTIONS_DIR = Path(__file__).resolve().parents[2] / "exercises" / "solutions"

COLORS = {"correct": "#1a7f37", "incorrect": "#cf222e", "not attempted": "#9a6700", "hint": "#0969da"}

Judge = Callable[[Any], str | None]  # the returned value -> None when right, else what is wrong with it


@dataclass(frozen=True)
class CheckResult:
    """What ``check`` found. ``str()`` starts with 'Correct', 'Incorrect' or 'Not attempted yet'."""

    passed: bool
    message: str
    attempted: bool = True

    @property
    def label(self) -> str:
        if not self.attempted:
            return "Not attempted yet"
        return "Correct" if self.passed else "Incorrect"

    def __str__(self) -> str:
        return f"{self.label}: {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_box(self.label, self.message, COLORS[self.label.lower().removesuffix(" yet")])


@dataclass(frozen=True)
class Note:
    """A hint or a solution, shown as text (or as code for a solution)."""

    label: str
    text: str
    code: bool = False

    def __str__(self) -> str:
        return f"{self.label}:\n{self.text}" if self.code else f"{self.label}: {self.text}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_box(self.label, self.text, COLORS["hint"], code=self.code)


@dataclass(frozen=True)
class Case:
    """One call of the student's function and how to judge it.

    ``judge(returned)`` gives None when the value is right, else what is wrong with it. ``raises`` is for
    cases where the right behaviour is an exception (a tool's NotFound); ``why`` says why it must raise.
    """

    shown: str  # the input as the student reads it: "for statuses=['ok'] and max_pitfall_depth=3"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    judge: Judge = lambda returned: None
    raises: type[BaseException] | None = None
    why: str = ""


@dataclass(frozen=True)
class Exercise:
    """A named task: ``check(func)``, ``hint(level)``, ``solution()``.

    ``cases`` builds fresh inputs for every check, so a function that mutates its arguments cannot
    poison the next check. ``precheck`` looks at the function itself before any call (a tool's schema).
    """

    name: str
    function_name: str
    solution_file: str
    cases: Callable[[], list[Case]]
    hints: tuple[str, ...]
    precheck: Callable[[Any], str | None] | None = None
    solutions_dir: Path = SOLUTIONS_DIR

    def check(self, func: Any) -> CheckResult:
        """Run ``func`` on every case; report the first problem, or Correct."""
        if not callable(func):
            how = f"pass the function itself, as in {self.name}.check({self.function_name})"
            return CheckResult(False, f"expected a function, got {short_repr(func)}: {how}")
        if not is_attempted(func):
            error = definition_error(self.function_name)
            if error is not None:
                return CheckResult(False, self._failed_definition(error))
            todo = f"write the body of {self.function_name}, run its cell, then run this cell again"
            return CheckResult(False, todo, attempted=False)
        problem = self.precheck(func) if self.precheck else None
        if problem:
            return CheckResult(False, problem)
        cases = self.cases()
        for case in cases:
            result = run_case(func, case)
            if result is not None:
                return result
        return CheckResult(True, f"{self.function_name} passed all {len(cases)} cases, edge cases included.")

    def _failed_definition(self, error: BaseException) -> str:
        return (
            f"running the cell that defines {self.function_name} raised {type(error).__name__}: {error}. "
            f"So {self.function_name} is still the starter: fix that error, run the cell without errors, "
            "then run this cell again"
        )

    def attempted(self, func: Any) -> bool:
        """True once the starter stub has a real body: demo cells run only then."""
        return callable(func) and is_attempted(func)

    def hint(self, level: int = 1) -> Note:
        """Hint ``level`` of ``len(hints)``: 1 is a nudge, the last is nearly the answer."""
        level = min(max(level, 1), len(self.hints))
        return Note(f"Hint {level}/{len(self.hints)}", self.hints[level - 1])

    def solution(self) -> Note:
        """The reference code of ``function_name``, read from ``exercises/solutions/``."""
        path = self.solutions_dir / self.solution_file
        if not path.exists():
            absent = f"{path} is not here: solutions ship with the instructor version of the kit"
            return Note("Solution", absent)
        return Note(f"Solution ({path.name})", function_source(path, self.function_name), code=True)


def run_case(func: Callable, case: Case) -> CheckResult | None:
    """Call ``func`` on one case: None if it behaved, else the result that says what went wrong."""
    try:
        returned = func(*case.args, **case.kwargs)
    except NotImplementedError:
        todo = "your function still raises NotImplementedError: finish it, run its cell, then run this cell"
        todo += " again"
        return CheckResult(False, todo, attempted=False)
    except Exception as err:
        if case.raises is not None and isinstance(err, case.raises):
            return None
        why = f"; {case.why}" if case.why else ""
        return CheckResult(False, f"{case.shown}, your function raised {type(err).__name__}: {err}{why}")
    if case.raises is not None:
        return CheckResult(False, f"{case.shown}, you returned {short_repr(returned)}; {case.why}")
    problem = case.judge(returned)
    return CheckResult(False, f"{case.shown}, {problem}") if problem else None


def is_attempted(func: Callable) -> bool:
    """False for untouched starter code: a body of only a docstring, ``...``, ``pass`` or
    ``raise NotImplementedError``. Unwraps a ``Tool`` and ``functools.wraps`` decorators.

    When the source cannot be read (a builtin, a lambda) the function counts as attempted: ``check``
    still catches NotImplementedError when it runs it.
    """
    target = inspect.unwrap(func.function if isinstance(func, Tool) else func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError):
        return True
    name = getattr(target, "__name__", "")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return not all(is_placeholder(statement) for statement in node.body)
    return True


def is_placeholder(statement: ast.stmt) -> bool:
    """``pass``, a docstring, a bare ``...`` or ``raise NotImplementedError``: what a starter holds."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True  # a docstring or a bare ``...``
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def definition_error(function_name: str) -> BaseException | None:
    """The error that stopped the student's latest attempt to define ``function_name``, else None.

    Why: when the cell that defines a function raises (``@tool`` rejecting a missing type hint, a
    SyntaxError), the name still holds the old starter, and "Not attempted yet" would hide the real
    error. An interactive session keeps its last uncaught error in ``sys.last_value`` (what ``pdb.pm()``
    and IPython's ``%debug`` read). It belongs to this function when it came from a cell, that is
    top-level code, whose source defines ``function_name``: ``def query_loyalty_points(`` -> the
    ToolDefinitionError ``@tool`` raised there. Any later error replaces it (then the check says "Not
    attempted yet" again), a kernel restart clears it, and a script has none. Not handled: a student who
    goes back to the untouched starter after the error still sees the error until one of those happens.
    """
    error = getattr(sys, "last_value", None)
    if not isinstance(error, Exception):
        return None
    defines = re.compile(rf"^\s*(async\s+)?def\s+{re.escape(function_name)}\s*\(", re.MULTILINE)
    files = [error.filename] if isinstance(error, SyntaxError) and error.filename else []
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name == "<module>":  # a cell or a script, not a function body
            files.append(traceback.tb_frame.f_code.co_filename)
        traceback = traceback.tb_next
    return error if any(defines.search("".join(linecache.getlines(name))) for name in files) else None


def function_source(path: Path, name: str) -> str:
    """The source of top-level function ``name`` in ``path``, decorators included."""
    source = path.read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(source.splitlines()[start - 1 : node.end_lineno])
    raise LookupError(f"no function {name!r} in {path}")


def html_box(label: str, text: str, color: str, code: bool = False) -> str:
    """A coloured box with a bold label; the text is escaped (it may quote the student's values)."""
    body = html.escape(text)
    if code:
        body = f"<pre style='margin:0.3em 0 0 0'>{body}</pre>"
    return (
        f"<div style='border-left:4px solid {color};padding:0.3em 0.6em;white-space:pre-wrap'>"
        f"<b style='color:{color}'>{html.escape(label)}:</b> {body}</div>"
    )


def short_repr(value: Any, limit: int = 160) -> str:
    """'list [1, 2]': the type, then the repr cut to ``limit`` characters, for messages."""
    text = repr(value)
    kind = type(value).__name__
    return f"{kind} {text if len(text) <= limit else text[: limit - 3] + '...'}"
