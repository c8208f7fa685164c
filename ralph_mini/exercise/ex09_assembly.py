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
            self.fail(f"for {task} you offered retrieve {short_repr(offered)}: offer (rule, weight) pairs")
            return []
        known = {e.rule: e for e in (self.memory or {}).values()}
        always = [e.rule for e in self.active() if e.rule.startswith(ANY_TASK)][:TOP_K]
        for rule, weight in offered:
            lesson = known.get(rule)
            if lesson is None or lesson.status != "active":
                what = f"which is {lesson.status}" if lesson else "which is not in memory"
                self.fail(
                    f"for {task} you offered retrieve the lesson {rule!r}, {what}: offer only "
                    "active lessons, as (lesson.rule, lesson.weight) pairs"
                )
            elif weight != lesson.weight:
                self.fail(
                    f"for {task} you offered {rule!r} with weight {weight}; its weight is {lesson.weight}"
                )
            elif rule.startswith(ANY_TASK):
                self.fail(
                    f"for {task} you offered retrieve {rule!r}: a lesson that holds for every task goes "
                    "in first, always, before retrieval; retrieve ranks only the other active lessons"
                )
        missing = [e.rule for e in self.active() if e.rule not in always and e.rule not in dict(offered)]
        if missing:
            self.fail(
                f"for {task} you did not offer retrieve the active lesson {missing[0]!r}: offer every active "
                "lesson but those for every task, so retrieval can rank them all"
            )
        if k != TOP_K - len(always):
            self.fail(
                f"for {task} you asked retrieve for k={k} with {len(always)} lesson(s) for every task "
                f"already in: a prompt carries TOP_K ({TOP_K}) lessons, so ask for k=TOP_K - len(always)"
            )
        found = by_weight(query, offered, k)
        self.expected = {"lessons": always + found, "task": task}
        return found

    def react(self, task, model, tools, lessons=()) -> tuple:
        self.number += 1
        if "task" not in self.expected:
            self.finish_task()
            self.fail(
                f"you did not call pieces.retrieve before running {task.task_id}: retrieve first, "
                "with the task's question and the active lessons"
            )
        elif list(lessons) != self.expected["lessons"]:
            self.fail(
                f"{task.task_id} ran with the lessons {list(lessons)}, expected "
                f"{self.expected['lessons']}: the active lessons for every task first, then what "
                "retrieve returned; pass them to pieces.react(..., lessons=...)"
            )
        answer, steps = kit_react(task, model, tools, lessons=lessons)
        review = review_run(task, answer, steps, tools)
        votes = {rule: review.vote_on(rule) for rule in lessons if rule in (self.memory or {})}
        self.expected = {"votes": votes, "reflect": review.worth_reflecting, "why": review, "rules": []}
        self.ran.append((task, list(lessons), answer, steps))
        return answer, steps

    def vote(self, lesson: Lesson, up: bool) -> None:
        task, votes = self.task_id(), self.expected.get("votes", {})
        if getattr(lesson, "rule", None) not in votes:
            self.fail(
                f"you voted on {short_repr(lesson)} after {task}, which did not carry it: vote only "
                "on the lessons the task carried, memory[rule]"
            )
        elif votes[lesson.rule] is None:
            self.fail(
                f"you voted on {lesson.rule!r} after {task}, but review.vote_on gives None (its trigger "
                "did not hold, or the run says nothing about it): no vote then"
            )
        elif votes[lesson.rule] != up:
            self.fail(f"you voted up={up} on {lesson.rule!r} after {task}; review.vote_on says {not up}")
        if isinstance(lesson, Lesson):
            votes.pop(lesson.rule, None)
            kit_vote(lesson, up)

    def reflect(self, task, answer, steps, model, tools) -> list[str]:
        if self.ran and (answer, list(steps)) != (self.ran[-1][2], self.ran[-1][3]):
            self.fail(
                f"you reflected on another run than {task.task_id}'s: pass the answer and steps react just "
                "returned, pieces.reflect(task, answer, steps, model, tools)"
            )
        if not self.expected.get("reflect", False):
            self.fail(
                f"you reflected on {task.task_id}, a correct run that wasted no call: reflect only "
                "when review.worth_reflecting (a wrong answer, or calls wasted)"
            )
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
            self.fail(
                f"{task} proposed into another memory than the tasks before it: create memory once, "
                "before the loop, so lessons outlive the task that taught them"
            )
            self.memory = memory
        if task_id != task:
            self.fail(
                f"you proposed {rule!r} as task {task_id!r} while running {task}: pass task.task_id, "
                "so a rule is confirmed by different tasks"
            )
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
            self.fail(
                f"{task} carried {rule!r} and review.vote_on gives it {up}, but you did not vote: for each "
                "injected lesson, up = review.vote_on(rule); if up is not None: pieces.vote(memory[rule], up)"
            )
        if self.expected["reflect"]:
            why = (
                f"it wasted calls to {', '.join(review.wasted)}" if review.correct else "its answer was wrong"
            )
            self.fail(f"{task} is worth reflecting on ({why}), but you did not call pieces.reflect")
        if self.expected["rules"]:
            self.fail(
                f"the reflection on {task} gave {self.expected['rules'][0]!r}, which you did not "
                "propose: pieces.propose(memory, rule, task.task_id) for each rule it gives"
            )
        self.expected = {}


def _outcomes_problem(returned: Any, spy: Spy) -> str | None:
    if not isinstance(returned, tuple) or len(returned) != 2:
        return f"you returned {short_repr(returned)}; return the pair (outcomes, memory)"
    outcomes, memory = returned
    if not isinstance(outcomes, list) or not all(isinstance(o, Outcome) for o in outcomes):
        what = short_repr(outcomes, 40)
        return f"your outcomes are {what}; return a list of Outcome(task, answer, steps, lessons)"
    if [o.task.task_id for o in outcomes] != [t.task_id for t in spy.tasks]:
        return f"your outcomes are for {[o.task.task_id for o in outcomes]}: one per task, in order"
    for outcome, (task, lessons, answer, steps) in zip(outcomes, spy.ran, strict=False):
        if (outcome.answer, list(outcome.steps), list(outcome.lessons)) != (answer, steps, lessons):
            return (
                f"the outcome of {task.task_id} is not what its run gave: keep its answer, steps and lessons"
            )
    if memory is not spy.memory and spy.memory is not None:
        return "the memory you returned is not the one you proposed into: return that memory"
    named = [rule for rule in memory if INSTANCE_RE.search(rule)] if isinstance(memory, dict) else []
    if named:
        return f"memory holds {named[0]!r}, which names an order: write every rule through pieces.propose"
    return None


def _learns_problem(outcomes: list[Outcome], tasks: Sequence, model, tools) -> str | None:
    half = len(tasks) // 2
    bare = [run_react(task, model, tools).tool_calls for task in tasks[half:]]
    mine = [outcome.calls for outcome in outcomes[half:]]
    if sum(mine) < sum(bare):
        return None
    return (
        f"the loop did not learn: {sum(mine) / len(mine):.2f} calls per task in tasks "
        f"{half + 1}-{len(tasks)}, bare ReAct {sum(bare) / len(bare):.2f}; check that lessons reach react, "
        "and votes and proposals the one memory"
    )


def _loop_judge(spy: Spy, suite, model, tools):
    def judge(returned: Any) -> str | None:
        spy.finish_task()
        if not spy.ran:
            return "your loop never called pieces.react: use the pieces you are given (ex10 swaps in yours)"
        problem = spy.problem or _outcomes_problem(returned, spy)
        return problem or _learns_problem(returned[0], suite.tasks, model, tools)

    return judge


def _empty_judge(returned: Any) -> str | None:
    if returned != ([], {}):
        return (
            f"you returned {short_repr(returned)}; with no tasks, return ([], {{}}): no outcomes, no lessons"
        )
    return None


def _spied(seed: int) -> Case:
    suite = orders.make_suite(n=SUITE_SIZE, seed=seed)
    model, tools, spy = OfflineModel(habits=orders.HABITS), suite.world.tools(), Spy(suite.tasks)
    return Case(
        f"on {SUITE_SIZE} tasks of the order desk (suite seed {seed})",
        args=(suite.tasks, model, tools, spy.pieces()),
        judge=_loop_judge(spy, suite, model, tools),
    )


def _cases() -> list[Case]:
    model, tools = OfflineModel(habits=orders.HABITS), orders.make_suite(n=1).world.tools()
    return [
        Case("for no tasks", args=([], model, tools, STAND_INS), judge=_empty_judge),
        _spied(7),
        _spied(8),
    ]


ex9 = Exercise(
    name="ex9",
    function_name="ralph_loop",
    solution_file="ex09_assembly.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_cases,
    hints=(
        "One memory for the whole run, created before the loop; then for each task the five steps in order: "
        "retrieve, act, review, vote, reflect and propose. Every piece is an argument: call pieces.react, "
        "pieces.retrieve, pieces.vote, pieces.reflect and pieces.propose, never your own copies.",
        "Retrieve: the active lessons as (rule, weight) pairs; those starting ANY_TASK go in first (at "
        "most TOP_K), pieces.retrieve(task.question, the others, k=TOP_K - len(always)) fills the rest. "
        "After react: review = review_run(task, answer, steps, tools); vote with review.vote_on(rule).",
        "for rule in lessons: up = review.vote_on(rule); if up is not None: pieces.vote(memory[rule], up). "
        "if review.worth_reflecting: for rule in pieces.reflect(task, answer, steps, model, tools): "
        "pieces.propose(memory, rule, task.task_id). outcomes.append(Outcome(task, answer, steps, lessons)); "
        "after the loop return outcomes, memory.",
    ),
)
