"""What the Ralph Loop learns from one run: the fast loop and the slow loop (notebooks 03, 04 and 06).

The seed article's two loops, each a function that returns what it found:

- **fast loop** (``fast_loop``): the run gave no complete answer (judged on the task type's own answer
  fields, ``planner.review``) and wrote nothing: reflect on it and run again with the reflection's rules
  in the prompt, at most ``rounds`` times, every run sharing one pitfall budget. Nothing is written to
  memory. Every discarded run is kept (``Retried.discarded``): its calls, wrong calls, tokens and
  seconds are the task's cost too, and the store logs it;
- **slow loop** (``slow_loop``): after the grader's verdict, reflect on the final run with the verdict
  line, and offer each rule to memory under the task's type, after the vocabulary guard (a rule may
  name only the tools the agent has now and the statuses they declare); ``wants_slow_loop`` says when.

Left out on purpose: retrieval and voting (``loop.py`` composes them with these two).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from ralph_mini import planner
from ralph_mini.lesson_guards import Vocabulary, foreign_names
from ralph_mini.memory import Memory
from ralph_mini.model import ChatModel
from ralph_mini.react import LessonBudget, Trace, run_react
from ralph_mini.reflect import Reflection, reflect, reflection_text
from ralph_mini.review import Review
from ralph_mini.rules import parse_rule
from ralph_mini.tools import Tool
from ralph_mini.world import Grade, Task, Words


@dataclass
class Retried:
    """The fast loop's outcome: the run kept, its review, and what the retries cost."""

    trace: Trace
    review: Review
    reflections: list[Reflection] = field(default_factory=list)
    discarded: list[Trace] = field(default_factory=list)  # the runs retried, in order


def fast_loop(task: Task, trace: Trace, review: Review, model: ChatModel, reflector: ChatModel,
              tools: Sequence[Tool], words: Words, lessons: Sequence[str], *, rounds: int, pitfall_depth: int,
              max_steps: int, max_words: int, budget: LessonBudget,
              binding: dict | None = None) -> Retried:  # fmt: skip
    """Retry a run that gave no complete answer and wrote nothing, with the rules of a reflection on it.
    Every run of the task shares one pitfall budget (``pitfall_depth`` wrong calls in all), so an
    unsolvable task costs about one run's wrong calls, not three. No memory write. ``binding``: how the
    lessons bind (``guards.binding``), as in the first run."""
    outcome = Retried(trace, review)
    while outcome.review.retry and len(outcome.discarded) < rounds:
        spent = sum(t.wrong_calls for t in outcome.discarded) + outcome.trace.wrong_calls
        if pitfall_depth - spent < 0:
            break
        reflection = reflect(  # the fast loop runs before the grader: its log says "not graded"
            reflection_text(outcome.trace, "fast", None), reflector, tools, words, max_words=max_words
        )
        outcome.reflections.append(reflection)
        outcome.discarded.append(outcome.trace)
        refined = [*lessons, *reflection.rules]  # the budget cuts (react.LessonBudget)
        outcome.trace = run_react(task, model, tools, lessons=refined, max_steps=max_steps,
                                  max_pitfall_depth=pitfall_depth - spent, budget=budget,
                                  **(binding or {}))  # fmt: skip
        outcome.review = planner.review(task, outcome.trace, tools, words)
    return outcome


def wants_slow_loop(
    correct: bool, review: Review, trace: Trace, recurring: bool, repeated_errors: set[str]
) -> bool:
    """Reflect on every outside signal: the grader rejected the answer (even one given without a look-up:
    the verdict is the evidence that looking first was needed); and on waste (wrong or redundant calls)
    when the task type recurs or an error of this run happened before (``repeated_errors``: the error
    statuses earlier runs had). A blind run the grader accepted teaches nothing: it showed nothing."""
    if not correct:
        return True
    if review.blind or not (review.wrong_calls or review.redundant_calls):
        return False
    errors = {s.status for s in trace.steps if s.wrong}
    return recurring or bool(errors & repeated_errors)


def slow_loop(
    task: Task,
    trace: Trace,
    correct: bool,
    verdict: Grade | None,
    reflector: ChatModel,
    tools: Sequence[Tool],
    words: Words,
    memory: Memory,
    *,
    run_id: str,
    max_words: int,
    rounds: int,
    waste: Sequence[int],
) -> tuple[Reflection, list[str]]:
    """Reflect on the final run and its verdict; offer each rule to memory under the task's type, after
    the vocabulary guard. Returns the reflection and memory's notes. ``waste``: the run's wasted calls
    (``waste.run_waste``), which the write threshold weighs."""
    log_text = reflection_text(trace, run_id, correct, verdict)
    reflection = reflect(log_text, reflector, tools, words, max_words=max_words, max_reflection_rounds=rounds)
    if not reflection.ok:
        return reflection, [f"no write: {reflection.reason}"]
    rule_tools, rule_statuses = planner.rule_vocabulary(tools)
    vocabulary, notes = Vocabulary.of(words, [t.name for t in tools]), []
    for rule in reflection.rules:
        foreign = foreign_names(parse_rule(rule), rule_tools, rule_statuses)
        if foreign:
            notes.append(
                f"rejected: names {', '.join(foreign)}; a learned rule may name only the tools "
                f"{', '.join(rule_tools)} and the statuses {', '.join(rule_statuses)}: {rule}"
            )
            continue
        decision, _ = memory.propose(rule, task_id=task.task_id, run_id=run_id, task_type=task.task_type,
                                     calls_saved=planner.estimate_calls_saved(rule, trace, waste),
                                     failure_reason="; ".join(reflection.ineffective)[:200],
                                     rejected=correct is False, vocabulary=vocabulary)  # fmt: skip
        notes.append(f"{decision}: {rule}")
    return reflection, notes
