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
from ralph_mini.exercise.messages import Hints, say
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
        return say("ex7.not_a_lesson", record=short_repr(got))
    if got.rule != want.rule:
        return say("ex7.wrong_rule", rule=got.rule)
    if was == "invalid" and got != want:
        return say("ex7.changed_invalid")
    if got.tasks != want.tasks:
        if len(set(got.tasks)) < len(got.tasks):
            return say("ex7.task_twice", tasks=got.tasks)
        return say("ex7.wrong_tasks", tasks=got.tasks, want=want.tasks)
    if was == "waiting" and want.votes == "" and got.votes:
        return say("ex7.voted_waiting")
    if got.status != want.status:
        return _status_problem(got, want)
    if got.votes != want.votes:
        return say("ex7.wrong_votes", votes=got.votes, want=want.votes)
    if abs(got.weight - want.weight) > 1e-9:
        return _weight_problem(got, want)
    return None


def _status_problem(got: Lesson, want: Lesson) -> str:
    said = say("ex7.status", got=got.status, want=want.status)
    recent = want.votes[-RECENT_WINDOW:]
    counts = {"said": said, "window": RECENT_WINDOW, "recent": recent, "downs": recent.count("-")}
    if want.status == "waiting" and got.status == "active":
        return say("ex7.waits", said=said, count=len(want.tasks), confirm=CONFIRM_TASKS)
    if want.status == "active" and got.status == "waiting":
        return say("ex7.confirmed", said=said, count=len(want.tasks))
    if want.status == "invalid":
        return say("ex7.enough_downs", **counts)
    if got.status == "invalid" and want.votes.count("-") >= RECENT_DOWNS:
        return say("ex7.only_recent", votes=want.votes, needed=RECENT_DOWNS, **counts)
    if got.status == "invalid":
        return say("ex7.too_few_downs", needed=RECENT_DOWNS, **counts)
    return said


def _weight_problem(got: Lesson, want: Lesson) -> str:
    said = say("ex7.weight", got=got.weight, want=want.weight)
    if want.votes.endswith("-"):
        return say("ex7.down_decays", said=said, decay=DOWN_DECAY)
    return say("ex7.up_keeps", said=said)


def _propose_judge(memory: dict, before: dict, rule: str, task_id: str) -> Judge:
    want = copy.deepcopy(before)
    decision = kit_propose(want, rule, task_id)

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, str):
            return say("ex7a.not_a_str", returned=short_repr(returned))
        if decision.startswith("rejected"):
            why = say("ex7a.why_instance" if INSTANCE_RE.search(rule) else "ex7a.why_not_a_rule")
            if memory != before or not returned.startswith("rejected"):
                return say("ex7a.accepted", rule=rule, why=why)
            return None
        if returned.startswith("rejected"):
            return say("ex7a.rejected_good", returned=returned)
        extra = sorted(set(memory) - set(want))
        if extra:
            return say("ex7a.extra_key", key=extra[0], keys=sorted(want), rule=rule)
        missing = sorted(set(want) - set(memory))
        if missing:
            return say("ex7a.missing_key", key=missing[0])
        for key in want:
            problem = _lesson_problem(memory[key], want[key], before[key].status if key in before else "new")
            if problem:
                return say("ex7a.for_lesson", key=key, problem=problem)
        return None

    return judge


def _memory(*lessons: Lesson) -> dict[str, Lesson]:
    return {lesson.rule: lesson for lesson in lessons}


def _propose_case(label: str, before: dict, rule: str, task_id: str) -> Case:
    """``label`` names the memory: ``ex7a.<label>`` in the message tables."""
    memory = copy.deepcopy(before)
    shown = say("ex7a.case", label=say(f"ex7a.{label}"), rule=rule, task_id=task_id)
    return Case(shown, args=(memory, rule, task_id), judge=_propose_judge(memory, before, rule, task_id))


def _propose_cases() -> list[Case]:
    waiting = _memory(Lesson(CACHE_HIT, tasks=["T001"]))
    active = _memory(Lesson(CACHE_HIT, "active", ["T001", "T002"], "++"))
    invalid = _memory(Lesson(CACHE_HIT, "invalid", ["T001", "T002"], "+--", 0.25))
    reworded = f"When {words.CACHE} finds the order: skip {words.DATABASE}."
    return [
        _propose_case("empty", {}, CACHE_HIT, "T001"),
        _propose_case("proposed", waiting, CACHE_HIT, "T002"),
        _propose_case("proposed", waiting, CACHE_HIT, "T001"),
        _propose_case("reworded", waiting, reworded, "T002"),
        _propose_case("second_rule", waiting, FRESH_PENDING, "T002"),
        _propose_case("active_rule", active, CACHE_HIT, "T003"),
        _propose_case("names_order", {}, f"when {words.CACHE} finds the B456: answer", "T001"),
        _propose_case("names_order", waiting, f"{CACHE_HIT} for order A123", "T002"),
        _propose_case("not_a_rule", {}, f"always call {words.CACHE} first", "T001"),
        _propose_case("invalid", invalid, CACHE_HIT, "T009"),
    ]


def _vote_case(label: str, lesson: Lesson, up: bool) -> Case:
    mine, want = copy.deepcopy(lesson), copy.deepcopy(lesson)
    kit_vote(want, up)

    def judge(returned: Any) -> str | None:
        problem = _lesson_problem(mine, want, lesson.status)
        return say("ex7b.after_vote", problem=problem) if problem else None

    shown = say("ex7b.case", label=say(f"ex7b.{label}"), votes=lesson.votes, weight=lesson.weight, up=up)
    return Case(shown, args=(mine, up), judge=judge)


def _vote_cases() -> list[Case]:
    def active(votes: str = "", weight: float = 1.0) -> Lesson:
        return Lesson(CACHE_HIT, "active", ["T001", "T002"], votes, weight)

    return [
        _vote_case("new_active", active(), True),
        _vote_case("new_active", active(), False),
        _vote_case("active", active("+-", 0.5), False),
        _vote_case("active", active("-++", 0.5), False),
        _vote_case("active", active("-", 0.5), True),
        _vote_case("active", active("-+", 0.5), False),
        _vote_case("active", active("++++"), True),
        _vote_case("waiting", Lesson(CACHE_HIT, tasks=["T001"]), True),
        _vote_case("waiting", Lesson(CACHE_HIT, tasks=["T001"]), False),
        _vote_case("invalid", Lesson(CACHE_HIT, "invalid", ["T1", "T2"], "+--", 0.25), True),
    ]


ex7a = Exercise(
    name="ex7a",
    function_name="propose",
    solution_file="ex07_memory_vote.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_propose_cases,
    hints=Hints("ex7a"),
)

ex7b = Exercise(
    name="ex7b",
    function_name="vote",
    solution_file="ex07_memory_vote.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_vote_cases,
    hints=Hints("ex7b"),
)
