"""Reference solution for exercises/build_your_own/ex09_assembly.ipynb (instructor only)."""

from ralph_mini.exercise.build_your_own import ANY_TASK, TOP_K, Lesson, Outcome, Pieces, review_run
from ralph_mini.model import ChatModel
from ralph_mini.tools import Tool
from ralph_mini.world import Task


def ralph_loop(
    tasks: list[Task], model: ChatModel, tools: list[Tool], pieces: Pieces
) -> tuple[list[Outcome], dict[str, Lesson]]:
    """The Ralph Loop over ``tasks`` in order, from an empty memory; returns the outcomes and the memory."""
    memory: dict[str, Lesson] = {}  # one memory for the whole run: what a task teaches, the next one uses
    outcomes = []
    for task in tasks:
        active = [(lesson.rule, lesson.weight) for lesson in memory.values() if lesson.status == "active"]
        always = [rule for rule, _ in active if rule.startswith(ANY_TASK)][:TOP_K]
        others = [(rule, weight) for rule, weight in active if rule not in always]
        lessons = always + pieces.retrieve(task.question, others, k=TOP_K - len(always))
        answer, steps = pieces.react(task, model, tools, lessons=lessons)
        review = review_run(task, answer, steps, tools)
        for rule in lessons:  # only the lessons this run carried, and only where it has a verdict
            up = review.vote_on(rule)
            if up is not None:
                pieces.vote(memory[rule], up)
        if review.worth_reflecting:  # a wrong answer, or calls wasted
            for rule in pieces.reflect(task, answer, steps, model, tools):
                pieces.propose(memory, rule, task.task_id)
        outcomes.append(Outcome(task, answer, steps, lessons))
    return outcomes, memory
