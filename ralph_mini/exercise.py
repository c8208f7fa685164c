"""Exercises with instant feedback: ``check``, tiered ``hint`` and ``solution`` (exercises/ex0N_*.ipynb).

In the spirit of Kaggle's learntools: a notebook cell calls ``ex2.check(should_stop)`` and sees a green
"Correct", a red message naming the *first* failing case and what is wrong with it (never the reference
code), or "Not attempted yet" while the starter stub is untouched. ``check`` returns a ``CheckResult``
(``passed``, ``message``) so tests can assert on it; Jupyter shows it as coloured HTML.

Each checker judges answers against the rule it teaches (a closed form, a worked example, the kit's own
``compress_observation``), never against the file in ``exercises/solutions/``: that file is what
``solution()`` shows, and the tests run every checker on it, on the starter, and on typical wrong answers.

Left out on purpose: grading, scores and timeouts (a student's infinite loop hangs the cell, as any code
would), and reading the student's variables by name: you pass the function you wrote.
"""

import ast
import html
import inspect
import math
import re
import textwrap
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ralph_mini.memory import MemoryConfig, decay_factor
from ralph_mini.model import count_tokens
from ralph_mini.react import WRONG_STATUSES
from ralph_mini.tools import NotFound, Tool, compress_observation

# Instructor solutions: in the repository next to the package (an installed wheel has none).
SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "exercises" / "solutions"

COLORS = {"correct": "#1a7f37", "incorrect": "#cf222e", "not attempted": "#9a6700", "hint": "#0969da"}


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
        return _html_box(self.label, self.message, COLORS[self.label.lower().removesuffix(" yet")])


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
        return _html_box(self.label, self.text, COLORS["hint"], code=self.code)


@dataclass(frozen=True)
class Case:
    """One call of the student's function and how to judge it.

    ``judge(returned)`` gives None when the value is right, else what is wrong with it. ``raises`` is for
    cases where the right behaviour is an exception (a tool's NotFound); ``why`` says why it must raise.
    """

    shown: str  # the input as the student reads it: "for statuses=['ok'] and max_pitfall_depth=3"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    judge: Callable[[Any], str | None] = lambda returned: None
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
            return CheckResult(False, f"expected a function, got {_short(func)}: pass the function "
                               f"itself, as in {self.name}.check({self.function_name})")  # fmt: skip
        if not is_attempted(func):
            return CheckResult(False, f"write the body of {self.function_name}, run its cell, then "
                               "run this cell again", attempted=False)  # fmt: skip
        problem = self.precheck(func) if self.precheck else None
        if problem:
            return CheckResult(False, problem)
        cases = self.cases()
        for case in cases:
            result = run_case(func, case)
            if result is not None:
                return result
        return CheckResult(True, f"{self.function_name} passed all {len(cases)} cases, edge cases "
                           "included.")  # fmt: skip

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
            return Note("Solution", f"{path} is not here: solutions ship with the instructor "
                        "version of the kit")  # fmt: skip
        return Note(f"Solution ({path.name})", function_source(path, self.function_name), code=True)


def run_case(func: Callable, case: Case) -> CheckResult | None:
    """Call ``func`` on one case: None if it behaved, else the result that says what went wrong."""
    try:
        returned = func(*case.args, **case.kwargs)
    except NotImplementedError:
        return CheckResult(False, "your function still raises NotImplementedError: finish it, run its "
                           "cell, then run this cell again", attempted=False)  # fmt: skip
    except Exception as err:
        if case.raises is not None and isinstance(err, case.raises):
            return None
        return CheckResult(False, f"{case.shown}, your function raised {type(err).__name__}: {err}"
                           + (f"; {case.why}" if case.why else ""))  # fmt: skip
    if case.raises is not None:
        return CheckResult(False, f"{case.shown}, you returned {_short(returned)}; {case.why}")
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
            return not all(_is_placeholder(statement) for statement in node.body)
    return True


def _is_placeholder(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True  # a docstring or a bare ``...``
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def function_source(path: Path, name: str) -> str:
    """The source of top-level function ``name`` in ``path``, decorators included."""
    source = path.read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(source.splitlines()[start - 1 : node.end_lineno])
    raise LookupError(f"no function {name!r} in {path}")


def _html_box(label: str, text: str, color: str, code: bool = False) -> str:
    body = html.escape(text)
    if code:
        body = f"<pre style='margin:0.3em 0 0 0'>{body}</pre>"
    return (
        f"<div style='border-left:4px solid {color};padding:0.3em 0.6em;white-space:pre-wrap'>"
        f"<b style='color:{color}'>{html.escape(label)}:</b> {body}</div>"
    )


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    kind = type(value).__name__
    return f"{kind} {text if len(text) <= limit else text[: limit - 3] + '...'}"


# ---------------------------------------------------------------------------------------------------
# Exercise 1: a tool and an observation compressor

LOYALTY_POINTS = {
    "CUST-0042": {"points": 1280, "tier": "gold"},
    "CUST-0007": {"points": 0, "tier": "basic"},  # a real customer with no points yet
    "CUST-0815": {"points": 310, "tier": "silver"},
}


def _tool_precheck(func: Any) -> str | None:
    """The schema is what the model reads: check it before calling anything."""
    if not isinstance(func, Tool):
        return ("query_loyalty_points is a plain function, not a Tool: put @tool on the line above "
                "def, so the agent gets a schema")  # fmt: skip
    if func.name != "query_loyalty_points":
        return f"your tool is named {func.name!r}; models call tools by name: name it query_loyalty_points"
    properties = func.parameters["properties"]
    if list(properties) != ["customer_id"] or func.parameters["required"] != ["customer_id"]:
        return f"the tool's parameters are {list(properties)}; it takes one required parameter, customer_id"
    if properties["customer_id"]["type"] != "string":
        return (f"customer_id has JSON type {properties['customer_id']['type']!r}; ids like CUST-0042 "
                "are text: hint the parameter as str")  # fmt: skip
    if "CUST-" not in properties["customer_id"]["description"]:
        return (f"the Args: line for customer_id says {properties['customer_id']['description']!r}: "
                "show the model an example id in the CUST-... format, so it copies the format")  # fmt: skip
    if "points" not in func.description.lower():
        return (f"the description {func.description!r} does not say what the tool returns: mention "
                "loyalty points, so a model looking for points picks this tool")  # fmt: skip
    return None


def _loyalty_cases() -> list[Case]:
    def expect(record: dict) -> Callable[[Any], str | None]:
        def judge(returned: Any) -> str | None:
            if not isinstance(returned, dict):
                return f"you returned {_short(returned)}; a tool returns a dict (the agent compresses it)"
            wrong = [key for key in record if returned.get(key) != record[key]]
            if wrong:
                return (f"you returned {returned!r}; the customer's {' and '.join(wrong)} should come "
                        "from LOYALTY_POINTS")  # fmt: skip
            return None

        return judge

    missing = ("a customer who is not in LOYALTY_POINTS must raise NotFound, so the agent sees a "
               "normal 'not_found' observation instead of a crash or an empty record")  # fmt: skip
    cases = [
        Case(f"for customer_id={cid!r} ({record['points']} points in LOYALTY_POINTS)",
             kwargs={"customer_id": cid}, judge=expect(record),
             why="this customer exists, so return their record")
        for cid, record in LOYALTY_POINTS.items()
    ]  # fmt: skip
    return cases + [
        Case("for customer_id='CUST-9999' (no such customer)", kwargs={"customer_id": "CUST-9999"},
             raises=NotFound, why=missing),
        Case("for customer_id='' (an empty id)", kwargs={"customer_id": ""}, raises=NotFound,
             why=missing),
    ]  # fmt: skip


def _compress_judge(data: dict, max_fields: int) -> Callable[[Any], str | None]:
    def judge(returned: Any) -> str | None:
        if not isinstance(returned, str):
            return f"you returned {_short(returned)}; expected a str"
        if returned.rstrip() == compress_observation(data, max_fields).rstrip():
            return None
        total, hidden = len(data), max(len(data) - max_fields, 0)
        prefix = f"{total} fields:"
        if not returned.startswith(prefix):
            return (f"you returned {returned!r}; expected a str starting with {prefix!r}: the number "
                    "of fields in data, shown or not")  # fmt: skip
        if hidden and not returned.endswith(f" (+{hidden} more)"):
            return (f"you returned {returned!r}; only {max_fields} of {total} fields fit, so the line "
                    f"must end with ' (+{hidden} more)' to say that some were left out")  # fmt: skip
        if not hidden and "more)" in returned:
            return f"you returned {returned!r}; nothing was left out, so leave out the '(+N more)' part"
        shown = min(total, max_fields)
        return (f"you returned {returned!r}; after {prefix!r} list the first {shown} fields as "
                "key=value, joined by ', ', in the dict's order")  # fmt: skip

    return judge


def _compress_cases() -> list[Case]:
    examples = [
        ({"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}, 8),
        ({"status": "refunded", "amount": 66.0, "created_at": "2025-03-08 15:00",
          "payment_method": "paypal", "paid_at": "2025-03-08 16:00"}, 2),
        ({"payment_status": "captured", "txn_id": "TXN-90417", "settled_at": "2025-03-10 08:32"}, 3),
        ({"order_id": "B456", "status": "pending", "amount": 215.0, "paid_at": None}, 3),
        ({"status": "pending"}, 1),
        ({}, 8),
    ]  # fmt: skip
    return [
        Case(f"for data={data!r} and max_fields={limit}", args=(data, limit),
             judge=_compress_judge(data, limit))
        for data, limit in examples
    ]  # fmt: skip


ex1a = Exercise(
    name="ex1a",
    function_name="query_loyalty_points",
    solution_file="ex01_tool.py",
    cases=_loyalty_cases,
    precheck=_tool_precheck,
    hints=(
        "@tool reads three things: the type hint of each parameter, the first lines of the docstring "
        "(the description the model reads) and one line per parameter under Args:.",
        "Look the id up with LOYALTY_POINTS.get(customer_id); when that gives None, raise "
        "NotFound(...) with a message naming the id. A customer with 0 points still exists.",
        "Shape: @tool, then def query_loyalty_points(customer_id: str) -> dict:, a docstring "
        "'Loyalty points and tier of one customer.' with an Args: line 'customer_id: The customer "
        'id, for example "CUST-0042".\', then the lookup.',
    ),
)

ex1b = Exercise(
    name="ex1b",
    function_name="compress",
    solution_file="ex01_tool.py",
    cases=_compress_cases,
    hints=(
        "Three parts: '<N> fields: ', the shown key=value pairs joined by ', ', and ' (+M more)' only "
        "when some fields were left out. N counts every field in data.",
        "list(data.items())[:max_fields] keeps the first max_fields pairs in the dict's order; "
        "f'{key}={value}' formats one pair.",
        "M is len(data) minus the number shown; add the ' (+M more)' suffix only when M > 0.",
    ),
)


# ---------------------------------------------------------------------------------------------------
# Exercise 2: stop a run after too many wrong calls


def _stop_judge(statuses: list[str], depth: int) -> Callable[[Any], str | None]:
    wrong = [s for s in statuses if s in WRONG_STATUSES]

    def judge(returned: Any) -> str | None:
        listed = f"{len(wrong)} wrong call(s){' (' + ', '.join(wrong) + ')' if wrong else ''}"
        if len(wrong) <= depth:
            if returned is None:
                return None
            return (f"you returned {_short(returned)}; expected None (go on): {listed} is not more "
                    f"than max_pitfall_depth={depth}")  # fmt: skip
        if returned is None or returned is False:
            return (f"you returned {returned!r}; expected a reason string: {listed} is more than "
                    f"max_pitfall_depth={depth}")  # fmt: skip
        if not isinstance(returned, str):
            return f"you returned {_short(returned)}; the reason must be a str for the trace's stop_reason"
        if "max_pitfall_depth" not in returned or not re.search(rf"\b{len(wrong)}\b", returned):
            return (f"your reason {returned!r} should name max_pitfall_depth and the number of wrong "
                    "calls, so a reader of the log sees why the run stopped")  # fmt: skip
        return None

    return judge


def _stop_cases() -> list[Case]:
    examples = [
        (["ok", "ok"], 3),
        (["error", "bad_args", "wrong_tool", "bad_reply"], 3),
        (["error", "bad_args", "wrong_tool"], 3),  # exactly at the limit: go on
        (["ok", "not_found", "not_found", "ok"], 1),  # not_found is a normal outcome
        (["ok", "error", "ok", "bad_reply"], 1),  # wrong calls need not be consecutive
        (["bad_reply", "bad_reply"], 1),
        (["ok", "ok", "ok", "ok"], 3),
        ([], 0),
        (["wrong_tool"], 0),
        (["ok", "ok", "ok", "ok", "ok", "error", "error"], 1),
    ]
    return [
        Case(f"for statuses={statuses} and max_pitfall_depth={depth}", args=(statuses, depth),
             judge=_stop_judge(statuses, depth))
        for statuses, depth in examples
    ]  # fmt: skip


ex2 = Exercise(
    name="ex2",
    function_name="should_stop",
    solution_file="ex02_pitfall_depth.py",
    cases=_stop_cases,
    hints=(
        "Count only the wrong statuses (WRONG_STATUSES); 'ok' and 'not_found' are normal outcomes. "
        "They need not be in a row.",
        "The run may go on while the count is at most max_pitfall_depth: stop only when it is strictly more.",
        "wrong = sum(1 for s in statuses if s in WRONG_STATUSES); when wrong > max_pitfall_depth "
        "return f'max_pitfall_depth: {wrong} wrong calls', otherwise return None.",
    ),
)


# ---------------------------------------------------------------------------------------------------
# Exercise 3: the reflector's template validator (spec in exercises/README.md)

SECTIONS = ("EFFECTIVE STEPS", "INEFFECTIVE STEPS", "REUSABLE RULES", "AVOID")
PROBLEM_KINDS = ("missing section", "out of order", "empty section", "too long", "vague",
                 "specific id", "not a rule")  # fmt: skip

GOOD_REFLECTION = """EFFECTIVE STEPS:
- query_local_cache answered with status and amount in one call
INEFFECTIVE STEPS:
- query_database repeated what the cache had already said
REUSABLE RULES:
- when query_local_cache finds the order: answer; skip query_database
AVOID:
- calling query_payment_api for a pending order younger than 30 min"""


def _reflection(effective: str, ineffective: str, rules: str, avoid: str) -> str:
    return (f"EFFECTIVE STEPS:\n{effective}\nINEFFECTIVE STEPS:\n{ineffective}\n"
            f"REUSABLE RULES:\n{rules}\nAVOID:\n{avoid}")  # fmt: skip


def _validate_judge(text: str, expected: list[tuple[str, str]]) -> Callable[[Any], str | None]:
    """``expected``: (kind, word the problem must contain) pairs, in any order."""

    def judge(returned: Any) -> str | None:
        show = f"\n{text}\n"
        if not isinstance(returned, list) or not all(isinstance(p, str) for p in returned):
            return f"you returned {_short(returned)}; expected a list of problem strings"
        kinds = [p.split(":", 1)[0].strip().lower() for p in returned]
        unknown = [p for p, k in zip(returned, kinds, strict=True) if k not in PROBLEM_KINDS]
        if unknown:
            return (f"the problem {unknown[0]!r} does not start with one of the kinds "
                    f"{', '.join(PROBLEM_KINDS)} and a colon")  # fmt: skip
        have, need = Counter(kinds), Counter(kind for kind, _ in expected)
        for kind in PROBLEM_KINDS:
            if have[kind] != need[kind]:
                if not have[kind]:
                    said = f"you did not report a {kind!r} problem"
                elif not need[kind]:
                    said = f"you reported a {kind!r} problem, but this reflection has none"
                else:
                    said = (
                        f"you reported {have[kind]} {kind!r} problems, but this reflection has {need[kind]}"
                    )
                return f"{said}.{show}Your problems: {returned}"
        for kind, word in expected:
            if word and not any(k == kind and word in p for k, p in zip(kinds, returned, strict=True)):
                return f"your {kind!r} problem should name {word!r}.{show}Your problems: {returned}"
        return None

    return judge


def _validate_cases() -> list[Case]:
    rule = "- when query_local_cache finds the order: answer; skip query_database"
    ok_effective = "- query_local_cache answered with status and amount"
    long_item = "- " + " ".join(["query_database"] + ["word"] * 30)  # 31 words
    thirty = "- " + " ".join(["query_database"] + ["word"] * 29)  # exactly 30: fine
    examples = [
        ("the template's own example", GOOD_REFLECTION, {}, []),
        ("sections that say '- none'", _reflection(ok_effective, "- none", "- none", "- None"), {}, []),
        ("no AVOID section", GOOD_REFLECTION.split("\nAVOID:")[0], {}, [("missing section", "AVOID")]),
        ("only two sections", "EFFECTIVE STEPS:\n" + ok_effective + "\nAVOID:\n- none", {},
         [("missing section", "INEFFECTIVE STEPS"), ("missing section", "REUSABLE RULES")]),
        ("a vague item", _reflection("- be more careful next time", "- none", rule, "- none"), {},
         [("vague", "")]),
        ("fields but no tool", _reflection("- compared the amount with paid_at", "- re-read the "
         "order id", rule, "- trusting a Status that is old"), {}, []),
        ("an item of 31 words", _reflection(long_item, "- none", rule, "- none"), {},
         [("too long", "")]),
        ("an item of exactly 30 words", _reflection(thirty, "- none", rule, "- none"), {}, []),
        ("a smaller max_words", GOOD_REFLECTION, {"max_words": 8},
         [("too long", ""), ("too long", "")]),
        ("a rule outside the grammar", _reflection(ok_effective, "- none", "- query_local_cache "
         "first, then answer", "- none"), {}, [("not a rule", "")]),
        ("a vague rule", _reflection(ok_effective, "- none", "- try harder", "- none"), {},
         [("vague", ""), ("not a rule", "")]),
        ("a specific order id", _reflection("- query_local_cache had A123 as paid", "- none", rule,
         "- asking get_order_history about CUST-0042"), {}, [("specific id", ""), ("specific id", "")]),
        ("sections out of order", "EFFECTIVE STEPS:\n" + ok_effective + "\nINEFFECTIVE STEPS:\n- none"
         "\nAVOID:\n- none\nREUSABLE RULES:\n" + rule, {}, [("out of order", "")]),
        ("an empty section", GOOD_REFLECTION.split("\nAVOID:")[0] + "\nAVOID:", {},
         [("empty section", "AVOID")]),
        ("a line before the first heading", "Here is my reflection.\n" + GOOD_REFLECTION, {}, []),
        ("headings in title case", GOOD_REFLECTION.replace("EFFECTIVE STEPS:", "Effective Steps:")
         .replace("REUSABLE RULES:", "Reusable rules:"), {}, []),
        ("a bullet without '- '", GOOD_REFLECTION.replace("- query_database repeated",
         "* query_database repeated"), {}, [("empty section", "INEFFECTIVE STEPS")]),
    ]  # fmt: skip
    return [
        Case(f"for {label}" + (f" (max_words={kw['max_words']})" if kw else ""), args=(text,),
             kwargs=kw, judge=_validate_judge(text, expected))
        for label, text, kw, expected in examples
    ]  # fmt: skip


ex3 = Exercise(
    name="ex3",
    function_name="validate_reflection",
    solution_file="ex03_template_validator.py",
    cases=_validate_cases,
    hints=(
        "First split the text into sections: walk the stripped lines; a line ending in ':' whose "
        "text before the colon, upper-cased, is in SECTIONS starts a section; a line starting with "
        "'- ' is an item of the current one; ignore the rest. Then check the structure, then each item.",
        "Structure: a name never seen -> 'missing section: NAME'; headings in the wrong order (or "
        "twice) -> one 'out of order: ...'; a section with no items -> 'empty section: NAME'. Skip "
        "items that are just 'none' in the item checks.",
        "Per item: len(item.split()) > max_words -> 'too long'; no word of VOCAB in item.lower() -> "
        "'vague'; ID_RE.search(item) -> 'specific id'; in REUSABLE RULES, parse_rule(item) raising "
        "RuleSyntaxError -> 'not a rule'.",
    ),
)


# ---------------------------------------------------------------------------------------------------
# Exercise 4: decay and expiry


def weight_closed_form(confidence: float, days: float, half_life: float = 7.0, stale_after: float = 14.0,
                       stale_factor: float = 0.5, expire_after: float = 30.0) -> float:  # fmt: skip
    """The rule exercise 4 teaches: the kit's own ``memory.decay_factor`` times the confidence, so the
    checker and the memory cannot disagree."""
    config = MemoryConfig(half_life_days=half_life, stale_after_days=stale_after, stale_factor=stale_factor,
                          expire_after_days=expire_after)  # fmt: skip
    return confidence * decay_factor(days, config)


def _weight_judge(c: float, d: float, params: dict) -> Callable[[Any], str | None]:
    settings = {"half_life_days": 7.0, "stale_after_days": 14.0, "stale_factor": 0.5,
                "expire_after_days": 30.0, **params}  # fmt: skip
    h, s, f, e = settings.values()
    want = weight_closed_form(c, d, h, s, f, e)

    def judge(returned: Any) -> str | None:
        if isinstance(returned, bool) or not isinstance(returned, int | float):
            return f"you returned {_short(returned)}; expected a float"

        def near(x: float) -> bool:
            return math.isclose(returned, x, rel_tol=1e-9, abs_tol=1e-12)

        if near(want):
            return None
        said = f"you returned {returned!r}"
        if d > e:
            return f"{said}; after expire_after_days={e} the experience has expired: its weight is 0.0"
        if d == e and near(0.0):
            return f"{said}; exactly expire_after_days={e} days is not expired yet (only more than it is)"
        if d == s and near(want * f):
            return f"{said}; exactly stale_after_days={s} days is not stale yet (only more than it is)"
        if d > s and near(want / f):
            return (f"{said}; {d} days is more than stale_after_days={s}, so the weight must also be "
                    f"multiplied by stale_factor={f}")  # fmt: skip
        stale = f if d > s else 1.0
        if near(c * math.exp(-d / h) * stale) or near(c * math.exp(-d / h)):
            return (f"{said}; that is e ** (-days / half_life): a half-life means the weight halves every "
                    "half_life_days, so the base is 0.5, not e")  # fmt: skip
        if c and near(want / c):
            return f"{said}; the weight must be proportional to confidence={c}"
        if params and near(weight_closed_form(c, d)):
            return f"{said}, the value for the default settings: use the arguments given ({params})"
        return f"{said}; expected {want!r} (confidence times the half-life decay, then stale and expiry)"

    return judge


def _weight_cases() -> list[Case]:
    custom = {"half_life_days": 3.5, "stale_after_days": 4.0, "stale_factor": 0.25,
              "expire_after_days": 10.0}  # fmt: skip
    points = [(1.0, 0.0, {}), (1.0, 7.0, {}), (0.8, 3.5, {}), (0.6, 14.0, {}), (0.6, 14.5, {}),
              (0.9, 21.0, {}), (0.9, 30.0, {}), (0.9, 30.5, {}), (0.9, 100.0, {}), (0.0, 3.0, {}),
              (0.7, 2.0, custom), (0.7, 5.0, custom), (0.7, 10.0, custom), (0.7, 10.01, custom)]  # fmt: skip
    points += [(0.75, day / 2, {}) for day in range(0, 81)]  # every half day from 0 to 40
    return [
        Case(f"for confidence={c}, days_since_hit={d}" + "".join(f", {k}={v}" for k, v in p.items()),
             args=(c, d), kwargs=p, judge=_weight_judge(c, d, p))
        for c, d, p in points
    ]  # fmt: skip


ex4 = Exercise(
    name="ex4",
    function_name="experience_weight",
    solution_file="ex04_decay.py",
    cases=_weight_cases,
    hints=(
        "Three rules, checked in this order: expired (more than expire_after_days) -> 0.0; otherwise "
        "decay by the half-life; and if more than stale_after_days, multiply by stale_factor.",
        "A half-life of 7 days means: after 7 days the weight is half, after 14 a quarter. "
        "That is 0.5 ** (days_since_hit / half_life_days), not math.exp(...).",
        "'More than' is strict: days_since_hit > stale_after_days and days_since_hit > "
        "expire_after_days. Exactly 14 days is not stale; exactly 30 is not expired.",
    ),
)


# ---------------------------------------------------------------------------------------------------
# Exercise 5: budgeted injection


def count_words(text: str) -> int:
    """A token counter a student can do in their head: one token per word."""
    return len(text.split())


CACHE_HIT = "when query_local_cache finds the order: answer; skip query_database"  # 8 words
FRESH_PENDING = "when status is pending and age under 30 min: skip query_payment_api"  # 12 words
START_CACHE = "when any task: start with query_local_cache"  # 6 words
DB_MISS = "when query_database finds nothing: answer"  # 5 words
STALE_PENDING = "when status is pending and age over 30 min: call query_payment_api"  # 12 words


def budgeted_selection(candidates: list[tuple[str, float]], budget: int, max_items: int,
                       counter: Callable[[str], int]) -> list[str]:  # fmt: skip
    """The rule exercise 5 teaches, written out once so the checker can compare against it."""
    chosen, left = [], budget
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) == max_items:
            break
        if counter(lesson) <= left:
            chosen.append(lesson)
            left -= counter(lesson)
    return chosen


def _select_judge(candidates: list, budget: int, max_items: int,
                  counter: Callable[[str], int]) -> Callable[[Any], str | None]:  # fmt: skip
    original = list(candidates)
    want = budgeted_selection(original, budget, max_items, counter)
    score = dict(original)

    def judge(returned: Any) -> str | None:
        if candidates != original:
            return f"you changed the candidates list you were given (now {candidates}): sort a copy"
        if not isinstance(returned, list):
            return f"you returned {_short(returned)}; expected a list of lesson texts"
        if returned == want:
            return None
        odd = next((x for x in returned if not isinstance(x, str) or x not in score), None)
        if isinstance(odd, tuple):
            return f"you returned {returned}; return the lesson texts, not (text, score) pairs"
        if odd is not None:
            return f"you returned {returned}; {odd!r} is not one of the lesson texts given"
        if len(set(returned)) < len(returned):
            return f"you returned {returned}; a lesson appears twice"
        used = sum(counter(x) for x in returned)
        if used > budget:
            return f"your lessons use {used} tokens, more than budget_tokens={budget}: never exceed it"
        if len(returned) > max_items:
            return f"you returned {len(returned)} lessons; take at most max_items={max_items}"
        if sorted(returned) == sorted(want):
            return (f"you returned the right lessons in the wrong order {returned}: highest score "
                    "first; equal scores keep their order in candidates")  # fmt: skip
        if (
            returned
            and counter is not count_tokens
            and returned == budgeted_selection(original, budget, max_items, count_tokens)
        ):
            return (f"you returned {returned}, what the kit's count_tokens gives; measure lessons with "
                    f"the count_tokens argument you were given (here {counter.__name__})")  # fmt: skip
        if returned == want[: len(returned)]:
            later = want[len(returned)]
            ranked = [lesson for lesson, _ in sorted(original, key=lambda pair: -pair[1])]
            skipped = [x for x in ranked[: ranked.index(later)] if x not in returned]
            advice = ("skip a lesson that does not fit and keep looking" if skipped else
                      "a lesson fits when its tokens are at most the budget left")  # fmt: skip
            return (
                f"you returned {returned} and stopped; but {later!r} (score {score[later]}, "
                f"{counter(later)} tokens) still fits in the {budget - used} tokens left: {advice}"
            )
        return (f"you returned {returned}; go through candidates by descending score, take each "
                "lesson that fits in the budget left, stop at max_items")  # fmt: skip

    return judge


def _select_cases() -> list[Case]:
    examples = [
        ("three lessons that all fit", [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.5), (START_CACHE, 0.7)],
         40, {}),
        ("a lesson that does not fit, then one that does", [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8),
         (DB_MISS, 0.7)], 15, {}),
        ("five small lessons", [(DB_MISS, 0.2), (START_CACHE, 0.3), (CACHE_HIT, 0.9),
         (FRESH_PENDING, 0.8), (STALE_PENDING, 0.6)], 100, {}),
        ("max_items=1", [(START_CACHE, 0.4), (CACHE_HIT, 0.6)], 100, {"max_items": 1}),
        ("equal scores", [(START_CACHE, 0.5), (CACHE_HIT, 0.5), (DB_MISS, 0.5)], 100, {}),
        ("a budget exactly the size of the lesson", [(CACHE_HIT, 0.9)], 8, {}),
        ("a budget of 0", [(CACHE_HIT, 0.9), (DB_MISS, 0.8)], 0, {}),
        ("no candidates", [], 50, {}),
        ("max_items=0", [(CACHE_HIT, 0.9)], 50, {"max_items": 0}),
    ]  # fmt: skip
    cases = []
    for label, candidates, budget, extra in examples:
        kwargs = {"count_tokens": count_words, **extra}
        cases.append(Case(f"for {label} (budget_tokens={budget}, count_tokens=count_words"
                          + "".join(f", {k}={v}" for k, v in extra.items()) + ")",
                          args=(candidates, budget), kwargs=kwargs,
                          judge=_select_judge(candidates, budget, kwargs.get("max_items", 3),
                                              count_words)))  # fmt: skip
    default = [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (START_CACHE, 0.7)]
    budget = count_tokens(CACHE_HIT) + count_tokens(START_CACHE)
    judge = _select_judge(default, budget, 3, count_tokens)
    cases.append(Case(f"for the kit's default count_tokens (budget_tokens={budget})",
                      args=(default, budget), judge=judge))  # fmt: skip
    return cases


ex5 = Exercise(
    name="ex5",
    function_name="select_lessons",
    solution_file="ex05_budget.py",
    cases=_select_cases,
    hints=(
        "Sort a copy of candidates by score, highest first; Python's sort is stable, so equal scores "
        "keep their input order. Use the count_tokens you were given, not a global one.",
        "Keep the budget left over. A lesson that does not fit is skipped, not the end: a shorter one "
        "further down may still fit. Stop as soon as you hold max_items lessons.",
        "for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]): stop when len(chosen) == "
        "max_items; if count_tokens(lesson) <= left: take it and subtract its tokens.",
    ),
)
