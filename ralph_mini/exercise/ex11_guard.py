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
from ralph_mini.exercise.messages import Hints, say
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
    trigger, seen = rule.trigger, _seen(steps, now)
    if not trigger_held(rule, seen):
        refused = next((s for s in steps if s.status == REFUSED and s.tool == trigger.tool), None)
        ran = next((s for s in steps if s.tool == trigger.tool), None)
        ages = sorted(t.split(":")[2] for t in seen if t.startswith(f"age:{trigger.status}:"))
        if refused:
            return say(
                "ex11.refused_step", tool=tool, step=refused.index, step_tool=refused.tool, trigger=trigger
            )
        if trigger.kind == "status" and ages:
            fields = {"noun": WORDS.noun, "status": trigger.status, "age": ages[0]}
            return say("ex11.too_old", tool=tool, trigger=trigger, **fields)
        if ran and trigger.kind in ("finds", "nothing"):
            waits = say("ex11.find_the_order" if trigger.kind == "finds" else "ex11.find_nothing")
            step = {"step": ran.index, "step_tool": ran.tool, "status": ran.status}
            return say("ex11.call_not_find", tool=tool, trigger=trigger, waits=waits, **step)
        shown = ", ".join(sorted(seen - {"any"})) or say("ex11.nothing_yet")
        return say("ex11.not_held", tool=tool, trigger=trigger, shown=shown)
    answer = any(a.verb == "answer" for a in rule.actions)
    if answer and tool in lookups:
        statuses = ", ".join(say("ex11.step", step=s.index, tool=s.tool, status=s.status) for s in steps)
        return say("ex11.nothing_answered", tool=tool, statuses=statuses or say("ex11.no_step_yet"))
    if answer:
        return say("ex11.writes", tool=tool)
    return say("ex11.not_forbidden", tool=tool, rule=rule)


def _missed(rule: Rule, tool: str, steps: list[Step], now: str | None, lookups: Sequence[str]) -> str:
    """Why None is wrong where the package's guard refuses."""
    trigger, seen = rule.trigger, _seen(steps, now)
    held = say("ex11.held", trigger=trigger, seen=", ".join(sorted(seen - {"any"})))
    if trigger.kind == "any":
        held = say("ex11.held_from_start")
    if any(a.verb == "skip" and a.tool == tool for a in rule.actions):
        said = say("ex11.says_skip", tool=tool, held=held)
        if any(s.status == REFUSED and s.tool == tool for s in steps):
            said += say("ex11.still_binds")
        if trigger.age_op:
            said += say("ex11.pass_now")
        return said
    answered = next(s for s in steps if s.tool in lookups and s.status in ("ok", "not_found"))
    too = say("ex11.nothing_is_an_answer") if answered.status == "not_found" else ""
    step = {"step": answered.index, "step_tool": answered.tool, "status": answered.status}
    return say("ex11.says_answer", held=held, too=too, tool=tool, **step)


def _judge(rule: Rule, tool: str, steps: list[Step], now: str | None) -> Judge:
    lookups, offered = _names()
    want = Guard((rule,), WORDS, now, lookups, offered).check_call(tool, steps)

    def judge(got: Any) -> str | None:
        if got is not None and not isinstance(got, str):
            return say("ex11.not_a_str", returned=short_repr(got))
        if got == "" and want is None:
            return say("ex11.empty_string")
        if got and want is None:
            return _needless(rule, tool, steps, now, lookups)
        if not got and want is not None:
            return _missed(rule, tool, steps, now, lookups)
        if got and not got.startswith("refused:"):
            return say("ex11.no_prefix", got=got)
        if got and str(rule) not in got:
            return say("ex11.no_quote", got=got, rule=rule)
        return None

    return judge


def _describe(steps: Sequence[Step], now: str | None) -> str:
    said = []
    for s in steps:
        tags = step_tags(s, WORDS, now) if s.status == "ok" else set()
        status = next((t.split(":")[1] for t in tags if t.startswith("status:")), None)
        age = next((t.split(":")[2] for t in tags if t.startswith("age:")), None)
        aged = say("ex11.aged", status=status, age=age) if status else ""
        said.append(f"{s.index} {s.tool} {s.status}{aged}")
    return "[" + ", ".join(said) + "]" if said else say("ex11.no_step_yet")


def _case(rule_text: str, tool: str, steps: list[Step], task: Task) -> Case:
    rule, after = parse_rule(rule_text), _describe(steps, task.now)
    shown = say("ex11.case", rule=rule, task=task.task_id, record=task.record_id, tool=tool, after=after)
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
            where = say("ex11.where", task=task.task_id, lessons=list(lessons))
            mode = binding("guard", WORDS, task.now, tools)  # the package's guard, lessons out of the prompt
            theirs = run_react(task, model, tools, lessons=lessons, **mode)
            try:
                yours = run_react(task, model, tools, lessons=lessons, lessons_in_prompt=False,
                                  guard=guard_with(check_call, WORDS, task.now, tools))  # fmt: skip
            except Exception as err:
                return (
                    say("ex11.raised", where=where, error_type=type(err).__name__, error=err),
                    refusals,
                    runs,
                )
            mine, kit = ([f"{s.tool} {s.status}" for s in trace.steps] for trace in (yours, theirs))
            if mine != kit or yours.answer != theirs.answer:
                return say("ex11.steps_differ", where=where, mine=mine, kit=kit), refusals, runs
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
        return CheckResult(True, result.message + say("ex11.same_refusals", runs=runs, refusals=refusals))


ex11 = GuardExercise(
    name="ex11",
    function_name="check_call",
    solution_file="ex11_guard.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=lambda: _picked() + _swept(),
    hints=Hints("ex11"),
)
