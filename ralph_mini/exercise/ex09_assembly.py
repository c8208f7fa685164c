"""Exercise 9 (exercises/build_your_own/ex09_assembly.ipynb): assemble the loop from its pieces.

``ralph_loop(tasks, model, tools, pieces) -> (outcomes, memory)``: for each task, in order, retrieve
(the active lessons that hold for every task first, ``pieces.retrieve`` ranks the other active ones for
the rest of the ``TOP_K`` slots), act (``pieces.react`` with those lessons), review (``review_run``),
vote on each injected lesson the run has a vote on, and when the run is worth it reflect
(``pieces.reflect``) and propose each rule under the task's id (``pieces.propose``).

The checker hands the loop spying stand-ins (``STAND_INS``: the kit's ``run_react``, retrieval by
weight, exercise 7's rules, the kit's reflector, which once offers a rule naming an order too), checks
each call against what the step before it returned, then that the loop learns (fewer calls than bare
ReAct in the second half) and that no lesson in memory names an order id.
"""

from collections.abc import Sequence
from typing import Any

from ralph_mini.exercise.build_track import (
    ANY_TASK,
    BUILD_SOLUTIONS,
    INSTANCE_RE,
    TOP_K,
    Lesson,
    Outcome,
    Pieces,
    by_weight,
    kit_react,
    reflect_on,
    review_run,
)
from ralph_mini.exercise.checker import Case, Exercise, short_repr
from ralph_mini.exercise.ex07_memory_vote import kit_propose, kit_vote
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words

STAND_INS = Pieces(react=kit_react, propose=kit_propose, vote=kit_vote, retrieve=by_weight)
POISON = f"when {words.CACHE} finds the order: skip {words.DATABASE} for order A123"  # an instance
SUITE_SIZE = 20


class Spy:
    """Stand-in pieces that note what the loop asks of them, and the first thing it does wrong."""

    def __init__(self, tasks: Sequence) -> None:
        self.tasks, self.memory, self.number = list(tasks), None, -1
        self.problem: str | None = None
        self.ran: list[tuple] = []  # (task, lessons, answer, steps) of each react call
        self.expected: dict[str, Any] = {}  # the current task's votes to come, reflection and rules

    def fail(self, problem: str) -> None:
        self.problem = self.problem or problem

    def pieces(self) -> Pieces:
        return Pieces(self.react, self.propose, self.vote, self.retrieve, self.reflect)

    def task_id(self, ahead: int = 0) -> str:
        number = self.number + ahead
        return self.tasks[number].task_id if 0 <= number < len(self.tasks) else "?"

    def active(self) -> list[Lesson]:
        return [e for e in (self.memory or {}).values() if e.status == "active"]

    def retrieve(self, query: str, lessons, k: int = TOP_K) -> list[str]:
        task = self.task_id(ahead=1)
        self.finish_task()
        offered = list(lessons)
        if not all(isinstance(pair, tuple) and len(pair) == 2 for pair in offered):
            self.fail(say("ex9.offer_pairs", task=task, offered=short_repr(offered)))
            return []
        known = {e.rule: e for e in (self.memory or {}).values()}
        always = [e.rule for e in self.active() if e.rule.startswith(ANY_TASK)][:TOP_K]
        for rule, weight in offered:
            lesson = known.get(rule)
            if lesson is None or lesson.status != "active":
                what = say("ex9.which_is", status=lesson.status) if lesson else say("ex9.not_in_memory")
                self.fail(say("ex9.offered_inactive", task=task, rule=rule, what=what))
            elif weight != lesson.weight:
                self.fail(say("ex9.wrong_weight", task=task, rule=rule, weight=weight, actual=lesson.weight))
            elif rule.startswith(ANY_TASK):
                self.fail(say("ex9.offered_any_task", task=task, rule=rule))
        missing = [e.rule for e in self.active() if e.rule not in always and e.rule not in dict(offered)]
        if missing:
            self.fail(say("ex9.not_offered", task=task, rule=missing[0]))
        if k != TOP_K - len(always):
            self.fail(say("ex9.wrong_k", task=task, k=k, always=len(always), top_k=TOP_K))
        found = by_weight(query, offered, k)
        self.expected = {"lessons": always + found, "task": task}
        return found

    def react(self, task, model, tools, lessons=()) -> tuple:
        self.number += 1
        if "task" not in self.expected:
            self.finish_task()
            self.fail(say("ex9.no_retrieve", task=task.task_id))
        elif list(lessons) != self.expected["lessons"]:
            expected = self.expected["lessons"]
            self.fail(say("ex9.wrong_lessons", task=task.task_id, lessons=list(lessons), expected=expected))
        answer, steps = kit_react(task, model, tools, lessons=lessons)
        review = review_run(task, answer, steps, tools)
        votes = {rule: review.vote_on(rule) for rule in lessons if rule in (self.memory or {})}
        self.expected = {"votes": votes, "reflect": review.worth_reflecting, "why": review, "rules": []}
        self.ran.append((task, list(lessons), answer, steps))
        return answer, steps

    def vote(self, lesson: Lesson, up: bool) -> None:
        task, votes = self.task_id(), self.expected.get("votes", {})
        if getattr(lesson, "rule", None) not in votes:
            self.fail(say("ex9.vote_not_carried", lesson=short_repr(lesson), task=task))
        elif votes[lesson.rule] is None:
            self.fail(say("ex9.vote_none", rule=lesson.rule, task=task))
        elif votes[lesson.rule] != up:
            self.fail(say("ex9.vote_wrong", up=up, rule=lesson.rule, task=task, right=not up))
        if isinstance(lesson, Lesson):
            votes.pop(lesson.rule, None)
            kit_vote(lesson, up)

    def reflect(self, task, answer, steps, model, tools) -> list[str]:
        if self.ran and (answer, list(steps)) != (self.ran[-1][2], self.ran[-1][3]):
            self.fail(say("ex9.other_run", task=task.task_id))
        if not self.expected.get("reflect", False):
            self.fail(say("ex9.needless_reflection", task=task.task_id))
        self.expected["reflect"] = None  # done
        rules = reflect_on(task, answer, steps, model, tools)
        rules += [POISON] if self.number == 1 else []
        self.expected["rules"] = list(rules)
        return rules

    def propose(self, memory: dict, rule: str, task_id: str) -> str:
        task = self.task_id()
        if self.memory is None:
            self.memory = memory
        elif memory is not self.memory:
            self.fail(say("ex9.other_memory", task=task))
            self.memory = memory
        if task_id != task:
            self.fail(say("ex9.wrong_task_id", rule=rule, task_id=task_id, task=task))
        if rule in self.expected.get("rules", []):
            self.expected["rules"].remove(rule)
        return kit_propose(memory, rule, task_id)

    def finish_task(self) -> None:
        """The current task is over: every vote cast, its reflection and proposals done."""
        if self.number < 0 or "votes" not in self.expected:
            return
        task, review = self.task_id(), self.expected["why"]
        owed = {rule: up for rule, up in self.expected["votes"].items() if up is not None}
        if owed:
            rule, up = next(iter(owed.items()))
            self.fail(say("ex9.missed_vote", task=task, rule=rule, up=up))
        if self.expected["reflect"]:
            wasted = ", ".join(review.wasted)
            why = say("ex9.why_wasted", tools=wasted) if review.correct else say("ex9.why_wrong")
            self.fail(say("ex9.no_reflection", task=task, why=why))
        if self.expected["rules"]:
            self.fail(say("ex9.not_proposed", task=task, rule=self.expected["rules"][0]))
        self.expected = {}


def _outcomes_problem(returned: Any, spy: Spy) -> str | None:
    if not isinstance(returned, tuple) or len(returned) != 2:
        return say("ex9.not_a_pair", returned=short_repr(returned))
    outcomes, memory = returned
    if not isinstance(outcomes, list) or not all(isinstance(o, Outcome) for o in outcomes):
        return say("ex9.outcomes_not_a_list", outcomes=short_repr(outcomes, 40))
    if [o.task.task_id for o in outcomes] != [t.task_id for t in spy.tasks]:
        return say("ex9.outcome_tasks", tasks=[o.task.task_id for o in outcomes])
    for outcome, (task, lessons, answer, steps) in zip(outcomes, spy.ran, strict=False):
        if (outcome.answer, list(outcome.steps), list(outcome.lessons)) != (answer, steps, lessons):
            return say("ex9.outcome_differs", task=task.task_id)
    if memory is not spy.memory and spy.memory is not None:
        return say("ex9.memory_returned")
    named = [rule for rule in memory if INSTANCE_RE.search(rule)] if isinstance(memory, dict) else []
    if named:
        return say("ex9.names_order", rule=named[0])
    return None


def _learns_problem(outcomes: list[Outcome], tasks: Sequence, model, tools) -> str | None:
    half = len(tasks) // 2
    bare = [run_react(task, model, tools).tool_calls for task in tasks[half:]]
    mine = [outcome.calls for outcome in outcomes[half:]]
    if sum(mine) < sum(bare):
        return None
    mine, bare = sum(mine) / len(mine), sum(bare) / len(bare)
    return say("ex9.not_learning", mine=mine, first=half + 1, last=len(tasks), bare=bare)


def _loop_judge(spy: Spy, suite, model, tools):
    def judge(returned: Any) -> str | None:
        spy.finish_task()
        if not spy.ran:
            return say("ex9.never_reacted")
        problem = spy.problem or _outcomes_problem(returned, spy)
        return problem or _learns_problem(returned[0], suite.tasks, model, tools)

    return judge


def _empty_judge(returned: Any) -> str | None:
    if returned != ([], {}):
        return say("ex9.no_tasks", returned=short_repr(returned))
    return None


def _spied(seed: int) -> Case:
    suite = orders.make_suite(n=SUITE_SIZE, seed=seed)
    model, tools, spy = OfflineModel(habits=orders.HABITS), suite.world.tools(), Spy(suite.tasks)
    return Case(
        say("ex9.case_suite", size=SUITE_SIZE, seed=seed),
        args=(suite.tasks, model, tools, spy.pieces()),
        judge=_loop_judge(spy, suite, model, tools),
    )


def _cases() -> list[Case]:
    model, tools = OfflineModel(habits=orders.HABITS), orders.make_suite(n=1).world.tools()
    return [
        Case(say("ex9.case_no_tasks"), args=([], model, tools, STAND_INS), judge=_empty_judge),
        _spied(7),
        _spied(8),
    ]


ex9 = Exercise(
    name="ex9",
    function_name="ralph_loop",
    solution_file="ex09_assembly.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_cases,
    hints=Hints("ex9"),
)
