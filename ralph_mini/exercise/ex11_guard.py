"""Exercise 11 (exercises/build_your_own/ex11_guard.ipynb), after notebook 12: a lesson's guard.

Notebook 12 (lessons that bind) turns a lesson into a check at the tool boundary; here the student
writes it for two rule forms, one rule at a time. ``check_call(rule, tool, steps, words, now, lookups)
-> str | None``: before ``tool`` runs, return a refusal ('refused: ...' quoting ``str(rule)``) when the
rule's whole trigger held in what ``steps`` showed (``step_tags`` at the task's time ``now``,
``votes.trigger_held``; a refused step never ran, so it showed nothing) and the rule says ``skip tool``,
or says ``answer`` and ``tool`` is in ``lookups`` after a look-up answered (ok or not_found); else None.

Each case is one call on real steps of the order desk, judged against the package's ``guards.Guard``
holding that one rule, and a difference is named as the mistake it usually is: hand-picked cases first,
then every call of guarded and unguarded runs of twelve tasks. Then the function goes into ``run_react``
(``guard_with``) on those tasks, and must refuse what the package's guard refuses. Left out: ``start
with T`` (the first turn), ``call T`` (it checks answers), two lessons that disagree: ``Guard`` has them.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ralph_mini.exercise.build_track import BUILD_SOLUTIONS
from ralph_mini.exercise.checker import Case, CheckResult, Exercise, Judge, short_repr
from ralph_mini.guards import Guard, binding
from ralph_mini.hardening import REFUSED, run_call
from ralph_mini.log import step_tags
from ralph_mini.model import ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.react import Step, run_react
from ralph_mini.rules import Rule, parse_rule
from ralph_mini.tools import Tool, lookup_tools
from ralph_mini.votes import trigger_held
from ralph_mini.world import Task, Words
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words

WORDS = orders.WORDS
CACHE, DATABASE, PAYMENT = words.CACHE, words.DATABASE, words.PAYMENT
SKIP_DB = f"when {CACHE} finds the order: skip {DATABASE}"
FRESH = f"when status is pending and age under 30 min: skip {PAYMENT}"
NO_RECORD = f"when {DATABASE} finds nothing: skip {PAYMENT}"
CALL_DB = f"when {CACHE} finds nothing: call {DATABASE}"
CACHE_ANSWER = f"when {CACHE} finds the order: answer"
PAID = f"when status is paid: answer; skip {PAYMENT}"
ANY_ANSWER = "when any task: answer"
ANY_SKIP = f"when any task: skip {words.DOCS}"
RULES = (SKIP_DB, FRESH, NO_RECORD, CALL_DB, CACHE_ANSWER, PAID, ANY_ANSWER, ANY_SKIP)
RUN_LESSONS = ((SKIP_DB, FRESH, NO_RECORD, CALL_DB), (CACHE_ANSWER, PAID))  # the runs' lessons
RUN_TASKS = 12  # the first twelve tasks of the suite: every kind of order once or more


class YourGuard:
    """The package's guard with your ``check_call`` asked about every call, rule by rule; the first
    turn's tools and the answers stay the package's (``Guard.first_tools``, ``Guard.check_answer``)."""

    def __init__(self, check_call: Callable, guard: Guard):
        self.check, self.guard = check_call, guard
        self.first_tools, self.check_answer = guard.first_tools, guard.check_answer

    def check_call(self, tool: str, steps: Sequence[Step]) -> str | None:
        g = self.guard  # the first rule's refusal, as Guard gives it
        asked = (self.check(rule, tool, list(steps), g.words, g.now, g.lookups) for rule in g.rules)
        return next((refusal for refusal in asked if refusal), None)


def guard_with(check_call: Callable, words: Words, now: str | None, tools: Sequence[Tool]) -> Callable:
    """``run_react(guard=...)`` with your check_call: ``guard_with(check_call, WORDS, task.now, tools)``
    (then ``lessons_in_prompt=False`` for guard mode)."""
    return lambda lessons: YourGuard(check_call, Guard.of(lessons, words, now, tools))


@cache
def _suite():
    return orders.make_suite(n=50, seed=7)


@cache
def _names() -> tuple[tuple[str, ...], tuple[str, ...]]:  # the look-ups (they write nothing), every tool
    tools = _suite().world.tools()
    return lookup_tools(tools), tuple(t.name for t in tools)


def _seen(steps: Sequence[Step], now: str | None) -> set[str]:
    return {"any"}.union(*(step_tags(s, WORDS, now) for s in steps if s.status != REFUSED))


def _needless(rule: Rule, tool: str, steps: list[Step], now: str | None, lookups: Sequence[str]) -> str:
    """Why a refusal the package's guard does not make is wrong, as the mistake it usually is."""
    said, trigger, seen = f"you refused {tool}, but", rule.trigger, _seen(steps, now)
    if not trigger_held(rule, seen):
        refused = next((s for s in steps if s.status == REFUSED and s.tool == trigger.tool), None)
        ran = next((s for s in steps if s.tool == trigger.tool), None)
        ages = sorted(t.split(":")[2] for t in seen if t.startswith(f"age:{trigger.status}:"))
        if refused:
            return (
                f"{said} step {refused.index} ({refused.tool}) was refused: it never ran, so it showed "
                f"nothing, and the trigger '{trigger}' has not held (leave refused steps out)"
            )
        if trigger.kind == "status" and ages:
            return (
                f"{said} the trigger '{trigger}' has not held: the {WORDS.noun} is {trigger.status} "
                f"but {ages[0]} min old; trigger_held(rule, seen) checks the age too"
            )
        if ran and trigger.kind in ("finds", "nothing"):
            waits = "find the order" if trigger.kind == "finds" else "find nothing"
            return (
                f"{said} step {ran.index} ({ran.tool}) came back {ran.status}, and '{trigger}' waits for it "
                f"to {waits}: a call is not a find (use step_tags and trigger_held)"
            )
        shown = ", ".join(sorted(seen - {"any"})) or "nothing yet"
        return (
            f"{said} the lesson's trigger '{trigger}' has not held: the steps so far showed {shown}; a "
            "lesson binds only once its trigger held"
        )
    answer = any(a.verb == "answer" for a in rule.actions)
    if answer and tool in lookups:
        statuses = ", ".join(f"step {s.index} {s.tool} {s.status}" for s in steps) or "no step yet"
        return (
            f"{said} no look-up has answered yet ({statuses}): 'answer' stops look-ups only after one "
            "answered, a step with status 'ok' or 'not_found' (a refused or wrong call is not one)"
        )
    if answer:
        return f"{said} {tool} looks nothing up (it writes): 'answer' refuses only a further look-up"
    return (
        f"{said} the lesson '{rule}' does not forbid it: only 'skip T' refuses T (and 'answer' a further "
        "look-up); a tool in its trigger or in 'call T' is not forbidden"
    )


def _missed(rule: Rule, tool: str, steps: list[Step], now: str | None, lookups: Sequence[str]) -> str:
    """Why None is wrong where the package's guard refuses."""
    trigger, seen = rule.trigger, _seen(steps, now)
    held = f"its trigger '{trigger}' held (the steps showed {', '.join(sorted(seen - {'any'}))})"
    if trigger.kind == "any":
        held = "'when any task' holds from the start"
    if any(a.verb == "skip" and a.tool == tool for a in rule.actions):
        said = f"the lesson says skip {tool} and {held}: refuse the call"
        if any(s.status == REFUSED and s.tool == tool for s in steps):
            said += "; a refusal does not lift the lesson, it binds for the rest of the run"
        if trigger.age_op:
            said += " (the age comes from step_tags(step, words, now): pass now)"
        return said
    answered = next(s for s in steps if s.tool in lookups and s.status in ("ok", "not_found"))
    too = " (finding nothing is an answer too)" if answered.status == "not_found" else ""
    return (
        f"the lesson says answer, {held}, and step {answered.index} ({answered.tool}) answered "
        f"{answered.status}{too}: refuse a further look-up such as {tool}"
    )


def _judge(rule: Rule, tool: str, steps: list[Step], now: str | None) -> Judge:
    lookups, offered = _names()
    want = Guard((rule,), WORDS, now, lookups, offered).check_call(tool, steps)

    def judge(got: Any) -> str | None:
        if got is not None and not isinstance(got, str):
            return f"you returned {short_repr(got)}; return a refusal string ('refused: ...') or None"
        if got == "" and want is None:
            return "you returned '': when the call may go ahead, return None (a refusal, or None)"
        if got and want is None:
            return _needless(rule, tool, steps, now, lookups)
        if not got and want is not None:
            return _missed(rule, tool, steps, now, lookups)
        if got and not got.startswith("refused:"):
            return f"your refusal {got!r} must start with 'refused:': the log and the model read that word"
        if got and str(rule) not in got:
            return (
                f"your refusal {got!r} does not quote the lesson: put str(rule), '{rule}', in it, so the "
                "model (and whoever reads the log) knows why"
            )
        return None

    return judge


def _describe(steps: Sequence[Step], now: str | None) -> str:
    said = []
    for s in steps:
        tags = step_tags(s, WORDS, now) if s.status == "ok" else set()
        status = next((t.split(":")[1] for t in tags if t.startswith("status:")), None)
        age = next((t.split(":")[2] for t in tags if t.startswith("age:")), None)
        said.append(f"{s.index} {s.tool} {s.status}" + (f" ({status}, {age} min old)" if status else ""))
    return "[" + ", ".join(said) + "]" if said else "no step yet"


def _case(rule_text: str, tool: str, steps: list[Step], task: Task) -> Case:
    rule, after = parse_rule(rule_text), _describe(steps, task.now)
    shown = f"for the lesson '{rule}' on {task.task_id} ({task.record_id}), {tool} after {after}"
    args = (rule, tool, list(steps), WORDS, task.now, _names()[0])
    return Case(shown, args=args, judge=_judge(rule, tool, list(steps), task.now))


def _steps(task: Task, *plan: str | tuple[str, str]) -> list[Step]:
    """Real steps of ``task``: a tool name runs it on the task's order; (tool, refusal) is a refused call."""
    by_name, steps = {t.name: t for t in _suite().world.tools()}, []
    for index, item in enumerate(plan, 1):
        tool, refusal = item if isinstance(item, tuple) else (item, "")
        call = ToolCall(f"call_{index}", tool, json.dumps({WORDS.id_argument: task.record_id}))
        status, observation = (
            (REFUSED, refusal) if refusal else run_call(call, by_name, task.relevant_tools, None)[:2]
        )
        steps.append(Step(index, None, tool, call.arguments, status, observation, call_id=call.id))
    return steps


def _picked() -> list[Case]:
    task = {t.record_id: t for t in _suite().tasks}
    start_db = (CACHE, f"refused: the lesson 'when any task: start with {DATABASE}' says start with it")
    skipped_db = (DATABASE, f"refused: the lesson '{SKIP_DB}' says skip {DATABASE}")
    picked = [  # (rule, order, the steps before, the tool called), simple to subtle
        (SKIP_DB, "A123", [CACHE], DATABASE), (SKIP_DB, "A123", [], DATABASE),
        (SKIP_DB, "A123", [CACHE], CACHE), (SKIP_DB, "A123", [CACHE], PAYMENT),
        (SKIP_DB, "C789", [CACHE], DATABASE), (SKIP_DB, "A123", [CACHE, skipped_db], DATABASE),
        (CALL_DB, "C789", [CACHE], DATABASE), (FRESH, "B456", [words.SHIPPING, CACHE], PAYMENT),
        (FRESH, "D012", [words.DOCS, CACHE], PAYMENT), (NO_RECORD, "X606", [CACHE, DATABASE], PAYMENT),
        (NO_RECORD, "X606", [CACHE, (DATABASE, "refused: a lesson says skip it")], PAYMENT),
        (CACHE_ANSWER, "A123", [CACHE], DATABASE), (CACHE_ANSWER, "A123", [CACHE], words.REFUND),
        (ANY_ANSWER, "A123", [], CACHE), (ANY_ANSWER, "B456", [words.SHIPPING], CACHE),
        (ANY_ANSWER, "A123", [start_db], DATABASE), (ANY_ANSWER, "C789", [CACHE], DATABASE),
        (PAID, "A123", [CACHE], PAYMENT), (PAID, "A123", [CACHE], DATABASE),
        (ANY_SKIP, "A123", [], words.DOCS),
    ]  # fmt: skip
    return [_case(rule, tool, _steps(task[order], *plan), task[order]) for rule, order, plan, tool in picked]


def _swept() -> list[Case]:
    """Every call of naive and guarded runs of the first RUN_TASKS tasks, for every rule and tool."""
    suite, model = _suite(), OfflineModel(habits=orders.HABITS)
    tools, cases, done = suite.world.tools(), [], set()
    for task in suite.tasks[:RUN_TASKS]:
        for lessons in ((), *RUN_LESSONS):  # the model's habits, then lessons the package's guard holds
            mode = binding("guard" if lessons else "prompt", WORDS, task.now, tools)
            steps = run_react(task, model, tools, lessons=lessons, **mode).steps
            for n in range(len(steps) + 1):
                key = (task.now, tuple((s.tool, s.status, s.observation) for s in steps[:n]))
                if key not in done:
                    done.add(key)
                    cases += [_case(r, t.name, steps[:n], task) for r in RULES for t in tools]
    return cases


def _runs_problem(check_call: Callable) -> tuple[str | None, int, int]:
    """(what differs, refusals, runs): your check_call in ``run_react``, against the package's guard."""
    suite, model = _suite(), OfflineModel(habits=orders.HABITS)
    tools, refusals, runs = suite.world.tools(), 0, 0
    for lessons in RUN_LESSONS:
        for task in suite.tasks[:RUN_TASKS]:
            where = f"in run_react (guard mode) on {task.task_id} with the lessons {list(lessons)}"
            mode = binding("guard", WORDS, task.now, tools)  # the package's guard, lessons out of the prompt
            theirs = run_react(task, model, tools, lessons=lessons, **mode)
            try:
                yours = run_react(task, model, tools, lessons=lessons, lessons_in_prompt=False,
                                  guard=guard_with(check_call, WORDS, task.now, tools))  # fmt: skip
            except Exception as err:
                return f"{where}, your function raised {type(err).__name__}: {err}", refusals, runs
            mine, kit = ([f"{s.tool} {s.status}" for s in trace.steps] for trace in (yours, theirs))
            if mine != kit or yours.answer != theirs.answer:
                return f"{where}, your guard's steps were {mine}, the package guard's {kit}", refusals, runs
            refusals, runs = refusals + sum(s.status == REFUSED for s in yours.steps), runs + 1
    return None, refusals, runs


@dataclass(frozen=True)
class GuardExercise(Exercise):
    """An exercise whose function, once every case passes, also goes into ``run_react``."""

    def check(self, func: Any) -> CheckResult:
        result = super().check(func)
        if not result.passed:
            return result
        problem, refusals, runs = _runs_problem(func)
        if problem:
            return CheckResult(False, problem)
        same = f" In run_react, on {runs} runs, it refused the same {refusals} calls as the package's guard."
        return CheckResult(True, result.message + same)


ex11 = GuardExercise(
    name="ex11",
    function_name="check_call",
    solution_file="ex11_guard.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=lambda: _picked() + _swept(),
    hints=(
        "First decide whether the lesson binds yet: gather what the steps so far showed, "
        "step_tags(step, words, now) for each step whose status is not 'refused' (it never ran), into a set "
        "that starts as {'any'}, and ask trigger_held(rule, seen). Not held: return None.",
        "Held: rule.actions says what is forbidden. An action with verb 'skip' and tool == tool forbids "
        "this call. An action with verb 'answer' forbids a further look-up (tool in lookups) once a look-up "
        "answered: a step whose tool is in lookups and whose status is 'ok' or 'not_found'. The refusal "
        "starts 'refused:' and quotes str(rule); anything else returns None (not '').",
        "seen = {'any'}, then seen |= step_tags(step, words, now) for each step not refused; if not "
        "trigger_held(rule, seen): return None. If any(a.verb == 'skip' and a.tool == tool for a in "
        "rule.actions): return f\"refused: the lesson '{rule}' says skip {tool}\". If an 'answer' action, "
        "tool in lookups and any(s.tool in lookups and s.status in ('ok', 'not_found') for s in steps): "
        "return f\"refused: the lesson '{rule}' says answer now\". Else return None.",
    ),
)
