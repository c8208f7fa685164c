"""Exercise 7 (exercises/build_your_own/ex07_memory_vote.ipynb): the memory's write-and-vote step.

On the teaching record ``build_track.Lesson`` (memory.py's ``Experience`` cut to five fields):

- ex7a ``propose(memory, rule, task_id) -> str``: refuse a rule naming an instance (``INSTANCE_RE``) or
  outside the grammar ('rejected: ...'); otherwise one record per rule, keyed by ``str(parse_rule(rule))``;
  it *waits* until ``CONFIRM_TASKS`` different tasks proposed it, then it is *active*; an invalid lesson
  stays invalid;
- ex7b ``vote(lesson, up)``: only an active lesson is voted on; the vote is appended to ``votes``, a
  down-vote multiplies ``weight`` by ``DOWN_DECAY``, and ``RECENT_DOWNS`` down among the last
  ``RECENT_WINDOW`` votes make it *invalid*.

Each case is one call on a prepared memory or lesson; the state after it is compared with what
``kit_propose`` / ``kit_vote`` (the rules written out once, also exercise 9's stand-ins) leave, and a
difference is named as the mistake it usually is.
"""

import copy
from typing import Any

from ralph_mini.exercise.build_track import (
    BUILD_SOLUTIONS,
    CONFIRM_TASKS,
    DOWN_DECAY,
    INSTANCE_RE,
    RECENT_DOWNS,
    RECENT_WINDOW,
    Lesson,
    canonical_or_none,
)
from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.worlds.orders import words

CACHE_HIT = f"when {words.CACHE} finds the order: skip {words.DATABASE}"
FRESH_PENDING = f"when status is pending and age under 30 min: skip {words.PAYMENT}"


def kit_propose(memory: dict[str, Lesson], rule: str, task_id: str) -> str:
    """Exercise 7a's rule, written out once: the checker's reference and exercise 9's stand-in."""
    if INSTANCE_RE.search(rule):
        return f"rejected: names {INSTANCE_RE.search(rule)[0]}; a rule must hold for every order"
    key = canonical_or_none(rule)
    if key is None:
        return "rejected: not a rule of the grammar"
    lesson = memory.setdefault(key, Lesson(key))
    if lesson.status == "invalid":
        return "kept invalid"
    lesson.tasks += [] if task_id in lesson.tasks else [task_id]
    if lesson.status == "waiting" and len(lesson.tasks) >= CONFIRM_TASKS:
        lesson.status = "active"
        return f"written: confirmed in {len(lesson.tasks)} tasks"
    return f"{lesson.status}: {len(lesson.tasks)} task(s)"


def kit_vote(lesson: Lesson, up: bool) -> None:
    """Exercise 7b's rule, written out once."""
    if lesson.status != "active":
        return
    lesson.votes += "+" if up else "-"
    if not up:
        lesson.weight *= DOWN_DECAY
        if lesson.votes[-RECENT_WINDOW:].count("-") >= RECENT_DOWNS:
            lesson.status = "invalid"


def _lesson_problem(got: Any, want: Lesson, was: str = "waiting") -> str | None:
    """What is wrong with one record, as the mistake it usually is; None when it is ``want``. ``was``:
    its status before the call."""
    if not isinstance(got, Lesson):
        return f"the record is {short_repr(got)}; store a Lesson(rule) under the rule's key"
    if got.rule != want.rule:
        return f"the record's rule is {got.rule!r}; it must be the key, the rule as parse_rule prints it"
    if was == "invalid" and got != want:
        return "you changed an invalid lesson: it stays as it is (this teaching memory never brings one back)"
    if got.tasks != want.tasks:
        if len(set(got.tasks)) < len(got.tasks):
            return f"its tasks are {got.tasks}: a task that proposes a rule twice counts once"
        return f"its tasks are {got.tasks}, expected {want.tasks}: add each new task id once, in order"
    if was == "waiting" and want.votes == "" and got.votes:
        return "you voted on a waiting lesson: it was never injected, so it has no votes; leave it as it is"
    if got.status != want.status:
        return _status_problem(got, want)
    if got.votes != want.votes:
        return f"its votes are {got.votes!r}, expected {want.votes!r}: append '+' or '-' for each vote"
    if abs(got.weight - want.weight) > 1e-9:
        return _weight_problem(got, want)
    return None


def _status_problem(got: Lesson, want: Lesson) -> str:
    said = f"its status is {got.status!r}, expected {want.status!r}"
    recent = want.votes[-RECENT_WINDOW:]
    if want.status == "waiting" and got.status == "active":
        return f"{said}: {len(want.tasks)} task(s) proposed it; it waits for {CONFIRM_TASKS} different tasks"
    if want.status == "active" and got.status == "waiting":
        return f"{said}: {len(want.tasks)} different tasks proposed it, so it is confirmed: make it active"
    if want.status == "invalid":
        return f"{said}: its last {RECENT_WINDOW} votes {recent!r} have {recent.count('-')} down, enough"
    if got.status == "invalid" and want.votes.count("-") >= RECENT_DOWNS:
        return (
            f"{said}: its votes are {want.votes!r}, and only the last {RECENT_WINDOW} count: "
            f"{recent!r} has {recent.count('-')} down, fewer than {RECENT_DOWNS}"
        )
    if got.status == "invalid":
        return (
            f"{said}: {recent.count('-')} down among its last {RECENT_WINDOW} votes; it takes {RECENT_DOWNS}"
        )
    return said


def _weight_problem(got: Lesson, want: Lesson) -> str:
    said = f"its weight is {got.weight:g}, expected {want.weight:g}"
    if want.votes.endswith("-"):
        return f"{said}: a down-vote multiplies the weight by DOWN_DECAY ({DOWN_DECAY})"
    return f"{said}: only a down-vote changes the weight; an up-vote leaves it as it is"


def _propose_judge(memory: dict, before: dict, rule: str, task_id: str) -> Judge:
    want = copy.deepcopy(before)
    decision = kit_propose(want, rule, task_id)

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, str):
            return f"you returned {short_repr(returned)}; return the decision as a string ('rejected: ...')"
        if decision.startswith("rejected"):
            why = "it does not parse (parse_rule raises RuleSyntaxError)"
            if INSTANCE_RE.search(rule):
                why = "it names an instance (INSTANCE_RE): a rule about one order is a special case"
            if memory != before or not returned.startswith("rejected"):
                return f"you accepted {rule!r}, but {why}; leave memory as it is and return 'rejected: ...'"
            return None
        if returned.startswith("rejected"):
            return f"you rejected a good rule ({returned!r}); only instances and non-rules are refused"
        extra = sorted(set(memory) - set(want))
        if extra:
            return (
                f"memory got the key {extra[0]!r}, expected only {sorted(want)}: one record per rule, "
                f"keyed by str(parse_rule(rule)), so '{rule}' and its canonical form are one lesson"
            )
        missing = sorted(set(want) - set(memory))
        if missing:
            return f"memory has no record under {missing[0]!r}: store the Lesson under the canonical rule"
        for key in want:
            problem = _lesson_problem(memory[key], want[key], before[key].status if key in before else "new")
            if problem:
                return f"for the lesson {key!r}, {problem}"
        return None

    return judge


def _memory(*lessons: Lesson) -> dict[str, Lesson]:
    return {lesson.rule: lesson for lesson in lessons}


def _propose_case(label: str, before: dict, rule: str, task_id: str) -> Case:
    memory = copy.deepcopy(before)
    shown = f"for {label}: propose(memory, {rule!r}, {task_id!r})"
    return Case(shown, args=(memory, rule, task_id), judge=_propose_judge(memory, before, rule, task_id))


def _propose_cases() -> list[Case]:
    waiting = _memory(Lesson(CACHE_HIT, tasks=["T001"]))
    active = _memory(Lesson(CACHE_HIT, "active", ["T001", "T002"], "++"))
    invalid = _memory(Lesson(CACHE_HIT, "invalid", ["T001", "T002"], "+--", 0.25))
    reworded = f"When {words.CACHE} finds the order: skip {words.DATABASE}."
    return [
        _propose_case("an empty memory", {}, CACHE_HIT, "T001"),
        _propose_case("a rule T001 proposed", waiting, CACHE_HIT, "T002"),
        _propose_case("a rule T001 proposed", waiting, CACHE_HIT, "T001"),
        _propose_case("a rule T001 proposed, in other words", waiting, reworded, "T002"),
        _propose_case("a second rule", waiting, FRESH_PENDING, "T002"),
        _propose_case("an active rule", active, CACHE_HIT, "T003"),
        _propose_case("a rule naming an order", {}, f"when {words.CACHE} finds the B456: answer", "T001"),
        _propose_case("a rule naming an order", waiting, f"{CACHE_HIT} for order A123", "T002"),
        _propose_case("a sentence that is not a rule", {}, f"always call {words.CACHE} first", "T001"),
        _propose_case("an invalid lesson", invalid, CACHE_HIT, "T009"),
    ]


def _vote_case(label: str, lesson: Lesson, up: bool) -> Case:
    mine, want = copy.deepcopy(lesson), copy.deepcopy(lesson)
    kit_vote(want, up)

    def judge(returned: Any) -> str | None:
        problem = _lesson_problem(mine, want, lesson.status)
        return f"after the vote {problem}" if problem else None

    shown = f"for {label} (votes {lesson.votes!r}, weight {lesson.weight:g}) and up={up}"
    return Case(shown, args=(mine, up), judge=judge)


def _vote_cases() -> list[Case]:
    def active(votes: str = "", weight: float = 1.0) -> Lesson:
        return Lesson(CACHE_HIT, "active", ["T001", "T002"], votes, weight)

    return [
        _vote_case("a new active lesson", active(), True),
        _vote_case("a new active lesson", active(), False),
        _vote_case("an active lesson", active("+-", 0.5), False),
        _vote_case("an active lesson", active("-++", 0.5), False),
        _vote_case("an active lesson", active("-", 0.5), True),
        _vote_case("an active lesson", active("-+", 0.5), False),
        _vote_case("an active lesson", active("++++"), True),
        _vote_case("a waiting lesson", Lesson(CACHE_HIT, tasks=["T001"]), True),
        _vote_case("a waiting lesson", Lesson(CACHE_HIT, tasks=["T001"]), False),
        _vote_case("an invalid lesson", Lesson(CACHE_HIT, "invalid", ["T1", "T2"], "+--", 0.25), True),
    ]


ex7a = Exercise(
    name="ex7a",
    function_name="propose",
    solution_file="ex07_memory_vote.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_propose_cases,
    hints=(
        "Guard first, then count. A rule naming an order, customer or transaction (INSTANCE_RE.search) "
        "or outside the grammar (parse_rule raises RuleSyntaxError) is refused: return 'rejected: ...' "
        "and leave memory alone. Otherwise find or make its one record, add the task, decide its status.",
        "The key is str(parse_rule(rule)), so two wordings of a rule are one lesson; "
        "memory.setdefault(key, Lesson(key)) finds or makes it. An invalid lesson is left as it is. A "
        "task already in lesson.tasks is not added again.",
        "lesson = memory.setdefault(key, Lesson(key)); if lesson.status == 'invalid': return 'kept "
        "invalid'; if task_id not in lesson.tasks: lesson.tasks.append(task_id); if lesson.status == "
        "'waiting' and len(lesson.tasks) >= CONFIRM_TASKS: lesson.status = 'active'; then return a "
        "decision such as f'{lesson.status}: {len(lesson.tasks)} tasks'.",
    ),
)

ex7b = Exercise(
    name="ex7b",
    function_name="vote",
    solution_file="ex07_memory_vote.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_vote_cases,
    hints=(
        "Only an active lesson is voted on: a waiting one was never injected, an invalid one is done. "
        "Record the vote, then decide what a down-vote does.",
        "lesson.votes is a string, oldest vote first: append '+' or '-'. A down-vote multiplies the "
        "weight by DOWN_DECAY; then look at the last RECENT_WINDOW votes only, not all of them.",
        "if lesson.status != 'active': return; lesson.votes += '+' if up else '-'; if not up: "
        "lesson.weight *= DOWN_DECAY, and if lesson.votes[-RECENT_WINDOW:].count('-') >= RECENT_DOWNS: "
        "lesson.status = 'invalid'.",
    ),
)
