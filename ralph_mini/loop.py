"""The Ralph Loop: retrieve, plan, act, review; and learn in a fast and a slow loop (notebooks 04–06).

One task, top to bottom (``run_task``):

1. **retrieve** at most ``top_k`` experiences from memory and **plan** with them injected into the
   system prompt: only lessons of the task's own type, those that apply to every task first
   (``planner.plan``), within the one lesson budget (``react.LessonBudget``);
2. **act**: the bare ReAct executor from notebook 01, with its log; when an observation reveals a
   situation memory knows about (a cache hit, a pending order, a missing one), one *second retrieval*
   adds the matching lessons mid-run;
3. **fast loop**: ``quick_review`` the run; if it produced no complete answer (judged on the task's own
   answer fields) and wrote nothing, reflect on it and retry with the refined plan, at most
   ``max_reflection_rounds`` times, all runs sharing one pitfall budget. Nothing is written to memory;
4. **feedback**: the grader's verdict and the run's waste (``waste.py``) vote on the injected rules
   whose trigger held; rules sending the agent to a tool the world no longer offers turn invalid;
5. **slow loop**: when the grader rejected the answer, the answer rested on no look-up, or the run
   wasted calls and its task type recurs or the same error repeats, reflect on the log (with the
   grader's verdict line) and offer each rule to memory under the task's type. A rule naming a tool or
   status outside the world's vocabulary (``planner.rule_vocabulary``) is refused before that.

Data flows one way: the executor returns the lessons it asked for mid-run (``trace.added_lessons``);
each task is graded once, here, and the verdict is passed to the log and to memory. Expiry is swept
once at the start of each task, explicitly. Everything the loop knows between tasks lives in
``memory`` and in the ``history`` it is handed: no hidden state. So a ``Store`` that commits both after
each task lets a killed run resume exactly where it stopped (``run_loop(store=...)``, notebook 07).

Left out on purpose: parallel tasks, and a separate LLM planning call (the injected lessons *are* the
plan; a planner call would cost a model turn per task).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini import history_json, planner
from ralph_mini.lesson_guards import foreign_names
from ralph_mini.log import log_run, run_tags, step_tags
from ralph_mini.measure import RunRecord, record
from ralph_mini.memory import Experience, Memory
from ralph_mini.model import ChatModel
from ralph_mini.planner import applicable, estimate_calls_saved, task_type_of, writing_tools
from ralph_mini.react import LessonBudget, Step, Trace, run_react
from ralph_mini.reflect import Reflection, Review, reflect, reflection_text
from ralph_mini.rules import parse_rule
from ralph_mini.store import Store
from ralph_mini.suite import Grade, Task, grade
from ralph_mini.tools import Tool
from ralph_mini.waste import run_waste

RESERVE = 1  # lesson slots the plan leaves free for the second retrieval (its trigger fired)


@dataclass(frozen=True)
class LoopConfig:
    """Every parameter of the loop, with the seed article's defaults."""

    top_k: int = 3  # seed: at most three experiences in the first injection
    second_retrieval: bool = True  # one more retrieval mid-run, when an observation asks for it
    max_reflection_rounds: int = 2  # seed: 1-2; bounds both reflection re-asks and fast-loop retries
    max_pitfall_depth: int = 3  # wrong calls that abort a run into reflection
    max_steps: int = 8  # model turns per run
    max_words: int = 30  # per reflection item
    reflect: bool = True  # ablation switch: without the reflector nothing is ever learned
    injection_budget: float = 0.15  # seed: lessons take at most 15% of the context, in every prompt
    context_tokens: int = 8192  # the model's context window the budget is a share of
    per_task_type: bool = True  # carry only lessons of the task's own type (off: any type, as ranked)

    @property
    def budget(self) -> LessonBudget:
        return LessonBudget(self.top_k, self.injection_budget, self.context_tokens)


@dataclass
class TaskResult:
    """What one task cost and taught: the final trace, what was injected, reviews and memory notes."""

    task: Task
    trace: Trace
    injected: list[str]
    review: Review
    correct: bool = False  # the grader's verdict on the final trace, computed once in run_task
    retries: int = 0
    reflections: list[Reflection] = field(default_factory=list)
    memory_notes: list[str] = field(default_factory=list)
    extra_tokens: int = 0  # retries and reflections
    extra_latency_s: float = 0.0
    spent_wrong_calls: int = 0  # wrong calls of the discarded fast-loop runs (one pitfall budget)

    @property
    def record(self) -> RunRecord:
        return record(self.trace, self.correct, self.extra_tokens, self.extra_latency_s)

    def to_json(self) -> dict:
        """All of this result as JSON-ready data, for a store; ``from_json`` rebuilds it exactly."""
        return history_json.result_to_json(self)

    @classmethod
    def from_json(cls, data: dict) -> "TaskResult":
        return cls(**history_json.result_fields(data))


def run_task(
    task: Task,
    model: ChatModel,
    tools: Sequence[Tool],
    memory: Memory,
    history: Sequence[TaskResult],
    *,
    config: LoopConfig = LoopConfig(),
    run_id: str = "R000",
    retrieve_plan: Callable[[Task, Memory], list[Experience]] | None = None,
    reflector: ChatModel | None = None,
) -> TaskResult:
    """One task through the whole loop. ``retrieve_plan`` replaces the keyword retrieval (notebook 05);
    ``reflector`` reflects instead of ``model`` (a small model may act but not reflect, notebook 08)."""
    memory.sweep()  # flag what expired since the last task, once, before anything reads memory
    ranked = (
        retrieve_plan(task, memory) if retrieve_plan else memory.retrieve({"any"}, len(memory.experiences))
    )
    types = planner.history_types(history)
    reserve = RESERVE if config.second_retrieval else 0
    offered = [t.name for t in tools]
    planned = planner.fit(task, memory, ranked, types, config.budget, offered, reserve, config.per_task_type)
    trace = execute(task, model, tools, planned, memory, config, types)
    injected = planned + added_experiences(memory, trace)
    result = TaskResult(task, trace, [e.rule for e in injected], planner.review(task, trace, tools))
    fast_loop(result, model, reflector or model, tools, injected, config)
    memory.record_hits(injected)
    verdict = grade(task, result.trace.answer)
    result.correct = verdict.correct
    revealed = run_tags(result.trace.steps, task.now)
    waste = run_waste(result.trace, writing_tools(tools), planner.complete_tools(tools))
    wasted = [step.tool for step in result.trace.steps if step.index in waste]
    result.memory_notes += memory.record_outcome(injected, revealed, result.correct, wasted, offered)
    result.memory_notes += memory.invalidate_unoffered(offered, task_type_of(task))
    if config.reflect and wants_slow_loop(result, history):
        slow_loop(result, reflector or model, tools, memory, config, run_id, verdict, waste=waste)
    return result


def execute(task, model, tools, planned: list[Experience], memory: Memory, config: LoopConfig,
            types: dict[str, str] | None = None) -> Trace:  # fmt: skip
    """The ReAct executor with the planned lessons, plus at most one second retrieval mid-run: after a
    tool call, lessons whose trigger matches what it revealed (a cache hit, a pending order...)."""
    exclude, kind, offered = [e.id for e in planned], task_type_of(task), [t.name for t in tools]

    def more_lessons(step: Step) -> list[str]:
        tags = step_tags(step, task.now)
        found = planner.held_first(memory.retrieve(tags, len(memory.experiences), exclude=exclude), tags)
        mine = (
            [e for e in found if applicable(e, kind, types or {}, offered)] if config.per_task_type else found
        )
        return [e.rule for e in mine]

    return run_react(task, model, tools, lessons=[e.rule for e in planned], max_steps=config.max_steps,
                     max_pitfall_depth=config.max_pitfall_depth, budget=config.budget,
                     more_lessons=more_lessons if config.second_retrieval else None)  # fmt: skip


def added_experiences(memory: Memory, trace: Trace) -> list[Experience]:
    """The experiences behind the lessons a run asked for mid-way (rule text is unique in memory)."""
    by_rule = {e.rule: e for e in memory.experiences.values()}
    return [by_rule[rule] for rule in trace.added_lessons]


def fast_loop(result: TaskResult, model, reflector, tools, injected, config: LoopConfig) -> None:
    """Retry a run that gave no complete answer and wrote nothing, with the rules of a reflection on it.
    Every run of the task shares one pitfall budget, so an unsolvable task costs about one run's wrong
    calls, not three. No memory write."""
    while result.review.retry and result.retries < config.max_reflection_rounds:
        left = config.max_pitfall_depth - result.spent_wrong_calls - result.trace.wrong_calls
        if left < 0:
            break
        reflection = reflect(  # the fast loop runs before the grader: its log says "not graded"
            reflection_text(result.trace, "fast", None), reflector, tools, max_words=config.max_words,
            writing=writing_tools(tools),
        )  # fmt: skip
        result.reflections.append(reflection)
        add_cost(result, result.trace, reflection)
        result.spent_wrong_calls += result.trace.wrong_calls
        refined = [e.rule for e in injected] + list(reflection.rules)  # the budget cuts (react.LessonBudget)
        result.trace = run_react(result.task, model, tools, lessons=refined, max_steps=config.max_steps,
                                 max_pitfall_depth=left, budget=config.budget)  # fmt: skip
        result.retries += 1
        result.review = planner.review(result.task, result.trace, tools)


def wants_slow_loop(result: TaskResult, history: Sequence[TaskResult]) -> bool:
    """Reflect on every outside signal: the grader rejected the answer, or it rested on no look-up; and
    on waste (wrong or redundant calls) when the task type recurs or the same error repeats."""
    if not result.correct or result.review.blind:
        return True
    if not (result.review.wrong_calls or result.review.redundant_calls):
        return False
    recurring = any(past.task.relevant_tools == result.task.relevant_tools for past in history)
    errors = {s.status for s in result.trace.steps if s.wrong}
    repeated = any(errors & {s.status for s in past.trace.steps if s.wrong} for past in history)
    return recurring or repeated


def slow_loop(result: TaskResult, reflector, tools, memory: Memory, config: LoopConfig, run_id: str,
              verdict: Grade | None = None, *, waste: Sequence[int]) -> None:  # fmt: skip
    """Reflect on the final run and its verdict; offer each rule to memory under the task's type, after
    the vocabulary guard. ``waste``: the run's wasted calls (``waste.run_waste``), which the write
    threshold weighs."""
    log_text = reflection_text(result.trace, run_id, result.correct, verdict)
    reflection = reflect(log_text, reflector, tools, max_words=config.max_words, writing=writing_tools(tools),
                         max_reflection_rounds=config.max_reflection_rounds)  # fmt: skip
    result.reflections.append(reflection)
    add_cost(result, None, reflection)
    if not reflection.ok:
        result.memory_notes.append(f"no write: {reflection.reason}")
        return
    rule_tools, rule_statuses = planner.rule_vocabulary(tools)
    kind = task_type_of(result.task)
    for rule in reflection.rules:
        foreign = foreign_names(parse_rule(rule), rule_tools, rule_statuses)
        if foreign:
            result.memory_notes.append(f"rejected: names {', '.join(foreign)}; a learned rule may name only "
                                       f"the tools {', '.join(rule_tools)} and the statuses "
                                       f"{', '.join(rule_statuses)}: {rule}")  # fmt: skip
            continue
        decision, _ = memory.propose(rule, task_id=result.task.task_id, run_id=run_id,
                                     calls_saved=estimate_calls_saved(rule, result.trace, waste),
                                     failure_reason="; ".join(reflection.ineffective)[:200],
                                     task_type=kind, rejected=result.correct is False)  # fmt: skip
        result.memory_notes.append(f"{decision}: {rule}")


def add_cost(result: TaskResult, trace: Trace | None, reflection: Reflection) -> None:
    """Count a discarded run (fast loop) and a reflection against this task."""
    if trace is not None:
        result.extra_tokens += trace.tokens_in + trace.tokens_out
        result.extra_latency_s += trace.latency_s
    result.extra_tokens += reflection.tokens
    result.extra_latency_s += reflection.latency_s


def run_loop(
    tasks: Sequence[Task],
    model: ChatModel,
    tools: Sequence[Tool],
    memory: Memory,
    *,
    config: LoopConfig = LoopConfig(),
    between_tasks: Callable[[Memory], None] | None = None,
    retrieve_plan: Callable[[Task, Memory], list[Experience]] | None = None,
    reflector: ChatModel | None = None,
    progress: Callable | None = None,
    store: Store | None = None,
    history: Sequence[TaskResult] = (),
    first: int | None = None,
) -> list[TaskResult]:
    """The Ralph Loop over a suite, in order: each task can use what the earlier ones taught.

    With a ``store``, each finished task is committed after ``between_tasks`` (``commit``). To resume a
    run: load ``memory`` from the store, rebuild ``history`` with ``resume_point``, and pass the tasks
    not yet done; ``first``, the number of the first of them, defaults to ``len(history) + 1``. Returns
    ``history`` and the new results."""
    results = list(history)
    start = len(results) + 1 if first is None else first
    for number, task in enumerate(progress(tasks) if progress else tasks, start):
        run_id = f"R{number:03d}"
        result = run_task(task, model, tools, memory, results, config=config, run_id=run_id,
                          retrieve_plan=retrieve_plan, reflector=reflector)  # fmt: skip
        results.append(result)
        if between_tasks:
            between_tasks(memory)
        if store is not None:
            commit(store, memory, result, run_id)
    return results


def commit(store: Store, memory: Memory, result: TaskResult, run_id: str) -> None:
    """One transaction for one finished task: the lessons it changed, its final run's log with the
    grader's verdict, and the result and clock a resume rebuilds (``resume_point``)."""
    store.commit_task(
        memory.experiences.values(),
        task_id=result.task.task_id,
        runs=[log_run(result.trace, run_id, result.correct)],
        result={"result": result.to_json(), "clock": memory.clock().isoformat()},
    )


def resume_point(store: Store) -> tuple[list[TaskResult], datetime | None]:
    """The history of the tasks a store holds, and the clock's time after the last of them (None: no
    task committed yet). The memory is ``store.load_memory(clock)``."""
    done = store.completed_tasks()
    history = [TaskResult.from_json(task.result["result"]) for task in done]
    return history, datetime.fromisoformat(done[-1].result["clock"]) if done else None
