"""The build-your-own track's shared records and given pieces (exercises/build_your_own/, ex06-ex10).

In the track a student writes the Ralph Loop's parts themselves: the ReAct loop (ex06), the memory's
write-and-vote step (ex07), hybrid retrieval (ex08) and the loop's assembly (ex09), then runs their own
pieces on the 50-task benchmark (ex10); after notebook 12, ex11 has them write a lesson's guard
(``ex11_guard.py``, on the kit's own records). What those parts pass to each other is defined here, once:

- ``Lesson``: the teaching memory's record, ``memory.py``'s ``Experience`` cut to five fields; a memory
  is a plain ``dict[str, Lesson]`` keyed by the rule as ``parse_rule`` prints it;
- ``Outcome``: what the assembly keeps of one task (its answer, steps and injected lessons);
- ``Pieces``: the parts an assembly composes, so the capstone can swap the student's own in;
- given to the assembly, as the kit does them: ``review_run`` (the grader's verdict, the wasted calls
  and the vote each injected lesson earned, ``votes.judge``) and ``reflect_on`` (the reflector of
  notebook 03 on the run's compact log);
- stand-ins for the parts of the kit that have the exercises' shape: ``kit_react`` (``run_react``) and
  ``by_weight`` (retrieval without relevance);
- ``outcome_records``: the assembly's outcomes as the benchmark's ``RunRecord`` rows, with what the model
  spent (``Metered``); like every ruler here it counts a call to a tool the task is not about as wrong,
  as ``run_react`` does (``kit_status``), which exercise 6 leaves out.

Left out on purpose, here and in the track (the capstone measures what it costs): probation, decay by
days and expiry, decayed vote tallies, contradiction, quarantine, one row per task type, the second
retrieval, the fast loop's retries, the kit's wider instance filter (amounts, times, names) and its
vocabulary guard.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ralph_mini.exercise.checker import SOLUTIONS_DIR
from ralph_mini.log import run_tags
from ralph_mini.measure import RunRecord
from ralph_mini.model import ChatModel, ModelReply
from ralph_mini.planner import complete_tools, writing_tools
from ralph_mini.react import WRONG_STATUSES, LessonBudget, Step, Trace, run_react
from ralph_mini.reflect import reflect, reflection_text
from ralph_mini.rules import parse_rule, rule_in
from ralph_mini.tools import Tool
from ralph_mini.votes import judge, trigger_tag
from ralph_mini.waste import run_waste
from ralph_mini.world import Task, grade
from ralph_mini.worlds.orders import words

# The track's reference notebooks and modules (an installed wheel has none).
BUILD_SOLUTIONS = SOLUTIONS_DIR.parent / "build_your_own" / "solutions"

# The teaching memory's settings (memory.py's MemoryConfig has these and more).
CONFIRM_TASKS = 2  # a rule waits until this many different tasks proposed it, then it is active
RECENT_WINDOW = 3  # a lesson is judged by its last 3 votes ...
RECENT_DOWNS = 2  # ... 2 of them down make it invalid
DOWN_DECAY = 0.5  # each down-vote multiplies its weight by this
# An order desk instance: an order, a customer or a transaction id (worlds/orders/words.py).
INSTANCE_RE = re.compile("|".join(words.INSTANCE_PATTERNS.values()))

ANY_TASK = "when any task:"  # how a lesson that holds for every task starts (as parse_rule prints it)
# Retrieval's settings, as the kit's loop has them: top 3, within 15% of an 8,192-token context.
TOP_K = 3
BUDGET_TOKENS = LessonBudget().tokens  # 1228
ALPHA = 0.5  # relevance = ALPHA x keyword + (1 - ALPHA) x cosine


@dataclass
class Lesson:
    """One rule in the teaching memory: waiting -> active (confirmed in CONFIRM_TASKS tasks) -> invalid."""

    rule: str  # the rule as parse_rule prints it: one record per rule, however it was worded
    status: str = "waiting"  # waiting | active | invalid
    tasks: list[str] = field(default_factory=list)  # the different tasks that proposed it, in order
    votes: str = ""  # its votes, oldest first: '+' up, '-' down
    weight: float = 1.0  # what retrieval multiplies relevance by: x DOWN_DECAY at each down-vote


@dataclass(frozen=True)
class Outcome:
    """One task as the assembly ran it: the answer, the steps (one per tool call), the lessons injected."""

    task: Task
    answer: dict | None
    steps: list[Step]
    lessons: list[str]

    @property
    def calls(self) -> int:
        return len(self.steps)


def canonical_or_none(text: str) -> str | None:
    """'When query_local_cache finds the order: answer.' -> 'when query_local_cache finds the order:
    answer'; None for a text that is not a rule."""
    rule = rule_in(text)
    return None if rule is None else str(rule)


@dataclass(frozen=True)
class RunReview:
    """What the loop learns from one run after it: the grader's verdict, the wasted calls, and what the
    run showed (tags such as 'query_local_cache:found', 'status:pending', 'age:pending:12')."""

    correct: bool
    wasted: tuple[str, ...]  # the tool of each wasted call (waste.py)
    revealed: frozenset[str]
    offered: tuple[str, ...]  # the tools the run had

    @property
    def worth_reflecting(self) -> bool:
        """The slow loop's signal: a wrong answer, or calls wasted."""
        return not self.correct or bool(self.wasted)

    def vote_on(self, rule: str) -> bool | None:
        """The vote this run gives an injected lesson (``votes.judge``): True up, False down, None when
        its trigger did not hold or the run says nothing about it."""
        parsed = parse_rule(rule)
        verdict = judge(rule, trigger_tag(parsed), self.revealed, self.wasted, self.correct, self.offered)
        return None if verdict is None else verdict[0]


def kit_status(task: Task, step: Step) -> str:
    """A step's status as ``run_react`` gives it: a call to a tool the task is not about
    (``task.relevant_tools``) is a ``wrong_tool`` even when it answered. Exercise 6 leaves that out; the
    ruler puts it back, so every agent's wrong calls and waste are counted alike."""
    off_topic = task.relevant_tools and step.tool not in task.relevant_tools
    return "wrong_tool" if off_topic and step.status in ("ok", "not_found", "error") else step.status


def as_trace(task: Task, answer: dict | None, steps: Sequence[Step]) -> Trace:
    """A student's (answer, steps) as the kit's ``Trace``, statuses as ``kit_status`` says, so the kit's
    log, waste and reflector read it."""
    stop = "answered" if answer is not None else "max_steps: no final answer"
    seen = [replace(step, status=kit_status(task, step)) for step in steps]
    return Trace(task=task, messages=[], steps=seen, answer=answer, stop_reason=stop)


def review_run(task: Task, answer: dict | None, steps: Sequence[Step], tools: Sequence[Tool]) -> RunReview:
    """Grade the run once and find its waste: what every vote and the decision to reflect are made from."""
    trace = as_trace(task, answer, steps)
    waste = set(run_waste(trace, writing_tools(tools), complete_tools(tools)))
    return RunReview(
        correct=grade(task, answer).correct,
        wasted=tuple(s.tool for s in trace.steps if s.index in waste),
        revealed=frozenset(run_tags(trace.steps, words.WORDS, task.now)),
        offered=tuple(t.name for t in tools),
    )


def reflect_on(
    task: Task, answer: dict | None, steps: Sequence[Step], model: ChatModel, tools: Sequence[Tool]
) -> list[str]:
    """The rules of a templated reflection on the run's compact log and verdict (notebook 03), [] when
    the reflector gives none that pass the template."""
    verdict = grade(task, answer)
    text = reflection_text(as_trace(task, answer, steps), task.task_id, verdict.correct, verdict)
    reflection = reflect(text, model, tools, words.WORDS)
    return list(reflection.rules) if reflection.ok else []


@dataclass(frozen=True)
class Pieces:
    """The parts an assembly composes (ex09), each in its exercise's shape:

    react(task, model, tools, lessons=()) -> (answer, steps)                 ex06
    propose(memory, rule, task_id) -> str; vote(lesson, up) -> None          ex07
    retrieve(query, lessons) -> list[str], lessons as (rule, weight) pairs   ex08
    reflect(task, answer, steps, model, tools) -> list[str]                  given: the kit's reflector
    """

    react: Callable
    propose: Callable
    vote: Callable
    retrieve: Callable
    reflect: Callable = reflect_on


def kit_react(
    task: Task, model: ChatModel, tools: Sequence[Tool], lessons: Sequence[str] = (), max_steps: int = 8
) -> tuple[dict | None, list[Step]]:
    """The kit's ``run_react`` in exercise 6's shape."""
    trace = run_react(task, model, tools, lessons=lessons, max_steps=max_steps)
    return trace.answer, trace.steps


def by_weight(query: str, lessons: Sequence[tuple[str, float]], k: int = TOP_K) -> list[str]:
    """Retrieval without relevance: the k heaviest lessons (ties keep their order), whatever the query.
    A stand-in for exercise 8's hybrid retrieval."""
    ranked = sorted((pair for pair in lessons if pair[1] > 0), key=lambda pair: -pair[1])
    return [rule for rule, _ in ranked[:k]]


class Metered:
    """A model that adds up what every call of ``model`` cost: tokens and virtual seconds."""

    def __init__(self, model: ChatModel):
        self.model, self.tokens, self.latency_s = model, 0, 0.0

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        reply = self.model.complete(messages, tools)
        self.tokens += reply.usage.prompt_tokens + reply.usage.completion_tokens
        self.latency_s += reply.latency_s
        return reply


def metered_pieces(pieces: Pieces, meter: Metered, spent: list[tuple[int, float]]) -> Pieces:
    """``pieces`` whose react notes the meter's totals as each task starts, into ``spent``: what a task
    cost is then what the meter counted until the next one started (its reflection included)."""

    def react(task, model, tools, lessons=()):
        spent.append((meter.tokens, meter.latency_s))
        return pieces.react(task, model, tools, lessons=lessons)

    return Pieces(react, pieces.propose, pieces.vote, pieces.retrieve, pieces.reflect)


def outcome_records(
    outcomes: Sequence[Outcome], tools: Sequence[Tool], spent: Sequence[tuple[int, float]], meter: Metered
) -> list[RunRecord]:
    """One ``RunRecord`` per outcome, as ``measure.record`` makes them for the kit's agents: calls,
    wrong calls, the grader's verdict, virtual seconds (the model's and each tool's declared latency)
    and tokens, reflections included."""
    latency = {t.name: t.latency_s for t in tools}
    ends = [*spent[1:], (meter.tokens, meter.latency_s)]
    rows = []
    for outcome, (tokens, model_s), (tokens_end, model_end) in zip(outcomes, spent, ends, strict=True):
        tool_s = sum(latency.get(step.tool, 0.0) for step in outcome.steps)
        rows.append(
            RunRecord(
                task_id=outcome.task.task_id,
                kind=outcome.task.kind,
                calls=outcome.calls,
                wrong_calls=sum(1 for s in outcome.steps if kit_status(outcome.task, s) in WRONG_STATUSES),
                correct=grade(outcome.task, outcome.answer).correct,
                latency_s=round(model_end - model_s + tool_s, 3),
                tokens=tokens_end - tokens,
                oracle_calls=outcome.task.oracle_calls,
            )
        )
    return rows
