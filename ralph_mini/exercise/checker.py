"""The checker framework behind every exercise: ``check``, tiered ``hint`` and ``solution``.

In the spirit of Kaggle's learntools: a notebook cell calls ``ex2.check(should_stop)`` and sees a green
"Correct", a red message naming the *first* failing case and what is wrong with it (never the reference
code), or "Not attempted yet" while the starter stub is untouched (unless the student's cell that should
have replaced it raised: then that error, see ``definition_error``). ``check`` returns a ``CheckResult``
(``passed``, ``message``) so tests can assert on it; Jupyter shows it as coloured HTML.

An exercise is data: a list of ``Case`` (an input and a ``judge`` of the returned value) and its hints.
The five exercises, one module each, say what they judge by. Every text a student reads is a key of the
message tables (``messages.say``), so the labels and messages come out in the student's language.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ralph_mini import lang
from ralph_mini.exercise.messages import say, say_in
from ralph_mini.tools import Tool

# Instructor solutions: in the repository next to the package (an installed wheel has none).
SOLUTIONS_DIR = Path(__file__).resolve().parents[2] / "exercises" / "solutions"

COLORS = {"correct": "#1a7f37", "incorrect": "#cf222e", "not attempted": "#9a6700", "hint": "#0969da"}

Judge = Callable[[Any], str | None]  # the returned value -> None when right, else what is wrong with it


@dataclass(frozen=True)
class CheckResult:
    """What ``check`` found. ``str()`` starts with 'Correct', 'Incorrect' or 'Not attempted yet' (in
    Chinese 正确, 不正确 or 尚未作答)."""

    passed: bool
    message: str
    attempted: bool = True
    language: str = field(default_factory=lang.current)  # the message's: the label is shown in it too

    @property
    def kind(self) -> str:
        """'correct', 'incorrect' or 'not attempted', whatever the language: what picks the colour."""
        if not self.attempted:
            return "not attempted"
        return "correct" if self.passed else "incorrect"

    @property
    def label(self) -> str:
        return say_in(self.language, f"label.{self.kind.replace(' ', '_')}")

    def __str__(self) -> str:
        return say_in(self.language, "label.line", label=self.label, text=self.message)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_box(self.label, self.message, COLORS[self.kind], language=self.language)


@dataclass(frozen=True)
class Note:
    """A hint or a solution, shown as text (or as code for a solution)."""

    label: str
    text: str
    code: bool = False
    language: str = field(default_factory=lang.current)

    def __str__(self) -> str:
        shape = "label.block" if self.code else "label.line"
        return say_in(self.language, shape, label=self.label, text=self.text)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_box(self.label, self.text, COLORS["hint"], code=self.code, language=self.language)


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
    hints: Sequence[str]  # a tuple, or messages.Hints: the hints in the student's language
    precheck: Callable[[Any], str | None] | None = None
    solutions_dir: Path = SOLUTIONS_DIR

    def check(self, func: Any) -> CheckResult:
        """Run ``func`` on every case; report the first problem, or Correct."""
        if not callable(func):
            got = short_repr(func)
            return CheckResult(
                False, say("check.not_a_function", got=got, name=self.name, function=self.function_name)
            )
        if not is_attempted(func):
            error = definition_error(self.function_name)
            if error is not None:
                return CheckResult(False, self._failed_definition(error))
            return CheckResult(
                False, say("check.not_attempted", function=self.function_name), attempted=False
            )
        problem = self.precheck(func) if self.precheck else None
        if problem:
            return CheckResult(False, problem)
        cases = self.cases()
        for case in cases:
            result = run_case(func, case)
            if result is not None:
                return result
        return CheckResult(True, say("check.passed", function=self.function_name, count=len(cases)))

    def _failed_definition(self, error: BaseException) -> str:
        kind = type(error).__name__
        return say("check.definition_failed", function=self.function_name, error_type=kind, error=error)

    def attempted(self, func: Any) -> bool:
        """True once the starter stub has a real body: demo cells run only then."""
        return callable(func) and is_attempted(func)

    def hint(self, level: int = 1) -> Note:
        """Hint ``level`` of ``len(hints)``: 1 is a nudge, the last is nearly the answer."""
        level = min(max(level, 1), len(self.hints))
        return Note(say("label.hint", level=level, count=len(self.hints)), self.hints[level - 1])

    def solution(self) -> Note:
        """The reference code of ``function_name``, read from ``exercises/solutions/``."""
        path = self.solutions_dir / self.solution_file
        if not path.exists():
            return Note(say("label.solution"), say("check.no_solution", path=path))
        code = function_source(path, self.function_name)
        return Note(say("label.solution_file", file=path.name), code, code=True)


def run_case(func: Callable, case: Case) -> CheckResult | None:
    """Call ``func`` on one case: None if it behaved, else the result that says what went wrong."""
    try:
        returned = func(*case.args, **case.kwargs)
    except NotImplementedError:
        return CheckResult(False, say("check.still_not_implemented"), attempted=False)
    except Exception as err:
        if case.raises is not None and isinstance(err, case.raises):
            return None
        said = "check.raised_why" if case.why else "check.raised"
        return CheckResult(
            False, say(said, shown=case.shown, error_type=type(err).__name__, error=err, why=case.why)
        )
    if case.raises is not None:
        returned = short_repr(returned)
        return CheckResult(
            False, say("check.should_raise", shown=case.shown, returned=returned, why=case.why)
        )
    problem = case.judge(returned)
    return CheckResult(False, say("check.wrong", shown=case.shown, problem=problem)) if problem else None


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


def html_box(label: str, text: str, color: str, code: bool = False, language: str = "en") -> str:
    """A coloured box with a bold label; the text is escaped (it may quote the student's values)."""
    body, bold = html.escape(text), html.escape(say_in(language, "label.bold", label=label))
    if code:
        body = f"<pre style='margin:0.3em 0 0 0'>{body}</pre>"
    return (
        f"<div style='border-left:4px solid {color};padding:0.3em 0.6em;white-space:pre-wrap'>"
        f"<b style='color:{color}'>{bold}</b> {body}</div>"
    )


def short_repr(value: Any, limit: int = 160) -> str:
    """'list [1, 2]': the type, then the repr cut to ``limit`` characters, for messages."""
    text = repr(value)
    kind = type(value).__name__
    return f"{kind} {text if len(text) <= limit else text[: limit - 3] + '...'}"
