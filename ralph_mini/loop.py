"""The Ralph Loop: retrieve, plan, act, review; and learn in a fast and a slow loop (notebooks 04–06).

One task, top to bottom (``run_task``):

1. **retrieve** at most ``top_k`` experiences from memory and **plan** with them injected into the
   system prompt: only lessons of the task's own type, those that apply to every task first
   (``planner.plan``), within the one lesson budget (``react.LessonBudget``);
2. **act**: the bare ReAct executor from notebook 01, with its log; when an observation reveals a
   situation memory knows about (a cache hit, a pending order, a missing one), one *second retrieval*
   adds the matching lessons mid-run;
3. **fast loop** (``learn.fast_loop``): ``quick_review`` the run; if it produced no complete answer
   (judged on the task type's own answer fields) and wrote nothing, reflect on it and retry with the
   refined plan, at most ``max_reflection_rounds`` times, all runs sharing one pitfall budget. Nothing
   is written to memory; every discarded run counts in the task's record and is logged;
4. **feedback**: the grader's verdict and the run's waste (``waste.py``) vote on the injected rules
   whose trigger held, but only from evidence: a task the grader cannot judge, or a run that looked
   nothing up, votes on nothing and teaches nothing; rules sending the agent to a tool the world no
   longer offers turn invalid;
5. **slow loop** (``learn.slow_loop``): when the grader rejected the answer, or the run wasted calls
   and its task type recurs or the same error repeats, reflect on the
   log (with the grader's verdict line) and offer each rule to memory under the task's type. A rule
   naming a tool or status outside the world's vocabulary (``planner.rule_vocabulary``) is refused.

The loop knows no world: everything it needs of one comes from the ``words`` it is given (the task
type's answer fields, the record's status and creation fields, the reflector's prompt) and from the
roles the tools declare (``writes``, ``holds_every``, ``statuses``).

Data flows one way: the executor returns the lessons it asked for mid-run;
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
from ralph_mini.guards import ENFORCE, binding
from ralph_mini.learn import fast_loop, slow_loop, wants_slow_loop
from ralph_mini.log import log_run, run_tags, step_tags
from ralph_mini.measure import RunRecord, record
from ralph_mini.memory import Experience, Memory
from ralph_mini.model import ChatModel
from ralph_mini.planner import PastTasks, applicable, writing_tools
from ralph_mini.react import LessonBudget, Step, Trace, run_react
from ralph_mini.reflect import Reflection
from ralph_mini.review import Review
from ralph_mini.store import Store
from ralph_mini.tools import Tool
from ralph_mini.waste import run_waste
from ralph_mini.world import Task, Words, grade

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
    enforce: str = "prompt"  # lessons as prompt text, as guards at the tool boundary, or both (guards.py)

    def __post_init__(self) -> None:
        if self.enforce not in ENFORCE:  # a typo fails here, not after an hour's run
            raise ValueError(f"LoopConfig(enforce={self.enforce!r}): use one of {', '.join(ENFORCE)}")

    @property
    def budget(self) -> LessonBudget:
        return LessonBudget(self.top_k, self.injection_budget, self.context_tokens)


@dataclass
class TaskResult:
    """What one task cost and taught: the final trace, what was injected, the runs the fast loop
    discarded, the reflections and memory's notes. Every run counts in ``record``."""

    task: Task
    trace: Trace
    injected: list[str]
    review: Review
    correct: bool = False  # the grader's verdict on the final trace, computed once in run_task
    discarded: list[Trace] = field(default_factory=list)  # the fast loop's retried runs, in order
    reflections: list[Reflection] = field(default_factory=list)
    memory_notes: list[str] = field(default_factory=list)

    @property
    def retries(self) -> int:
        return len(self.discarded)

    @property
    def extra_tokens(self) -> int:
        """Tokens spent besides the final run: the discarded runs and every reflection."""
        runs = sum(t.tokens_in + t.tokens_out for t in self.discarded)
        return runs + sum(r.tokens for r in self.reflections)

    @property
    def extra_latency_s(self) -> float:
        return sum(t.latency_s for t in self.discarded) + sum(r.latency_s for r in self.reflections)

    @property
    def spent_wrong_calls(self) -> int:
        """Wrong calls of the discarded runs (one pitfall budget for the whole task)."""
        return sum(t.wrong_calls for t in self.discarded)

    @property
    def record(self) -> RunRecord:
        return record(self.trace, self.correct, self.extra_tokens, self.extra_latency_s,
                      extra_calls=sum(t.tool_calls for t in self.discarded),
                      extra_wrong_calls=self.spent_wrong_calls)  # fmt: skip

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
    words: Words,
    config: LoopConfig = LoopConfig(),
    run_id: str = "R000",
    retrieve_plan: Callable[[Task, Memory], list[Experience]] | None = None,
    reflector: ChatModel | None = None,
    past: PastTasks | None = None,
) -> TaskResult:
    """One task through the whole loop, in the world whose ``words`` and ``tools`` it is given.
    ``retrieve_plan`` replaces the keyword retrieval (notebook 05); ``reflector`` reflects instead of
    ``model`` (a small model may act but not reflect, notebook 08). ``past``: ``history`` summed up
    (``past_tasks``), as ``run_loop`` keeps it task by task; None reads it from ``history`` (a scan)."""
    memory.sweep()  # flag what expired since the last task, once, before anything reads memory
    offered, lags = [t.name for t in tools], {t.name: t.lag_min for t in tools}
    outdated = memory.invalidate_unoffered(offered, task.task_type, lags)  # the tools as they are now
    kind = task.task_type if config.per_task_type else None  # the lessons of its type only, or all
    every = len(memory.experiences)
    ranked = retrieve_plan(task, memory) if retrieve_plan else memory.retrieve({"any"}, every, task_type=kind)
    reserve = RESERVE if config.second_retrieval else 0
    planned = planner.fit(task, memory, ranked, config.budget, offered, reserve, config.per_task_type)
    bound = binding(config.enforce, words, task.now, tools)  # how lessons reach every run of the task
    trace, added = execute(task, model, tools, planned, memory, config, words, bound)
    injected = planned + added
    review = planner.review(task, trace, tools, words)
    lessons = [e.rule for e in injected]
    retried = fast_loop(task, trace, review, model, reflector or model, tools, words, lessons,
                        rounds=config.max_reflection_rounds, pitfall_depth=config.max_pitfall_depth,
                        max_steps=config.max_steps, max_words=config.max_words, budget=config.budget,
                        binding=bound)  # fmt: skip
    result = TaskResult(task, retried.trace, lessons, retried.review, discarded=retried.discarded,
                        reflections=retried.reflections, memory_notes=outdated)  # fmt: skip
    memory.record_hits(injected)
    verdict = grade(task, result.trace.answer)
    result.correct = verdict.correct
    waste = run_waste(result.trace, writing_tools(tools), planner.complete_tools(tools))
    if verdict.judged and not result.review.blind:  # learn only from evidence: a judged run that looked
        wasted = [step.tool for step in result.trace.steps if step.index in waste]
        revealed = run_tags(result.trace.steps, words, task.now)
        latency = {t.name: t.latency_s for t in tools}  # a slow start that had nothing pays: votes.judge
        result.memory_notes += memory.record_outcome(
            injected, revealed, result.correct, wasted, offered, latency
        )
    result.memory_notes += memory.invalidate_unoffered(offered, task.task_type, lags)
    if config.reflect and verdict.judged and wants_slow_loop(result.correct, result.review, result.trace,
                                                             *recurrence(task, history, past)):  # fmt: skip
        reflection, notes = slow_loop(task, result.trace, result.correct, verdict, reflector or model, tools,
                                      words, memory, run_id=run_id, max_words=config.max_words,
                                      rounds=config.max_reflection_rounds, waste=waste)  # fmt: skip
        result.reflections.append(reflection)
        result.memory_notes += notes
    return result


def recurrence(task: Task, history: Sequence[TaskResult], past: PastTasks | None = None
               ) -> tuple[bool, set[str]]:  # fmt: skip
    """Does a task about the same tools recur in ``history``, and which error statuses did it have?
    Read from ``past``, the history summed up, when given; else from ``history`` itself."""
    return (past or past_tasks(history)).recurrence(task)


def past_tasks(history: Sequence[TaskResult]) -> PastTasks:
    """``history`` summed up for the slow loop (``planner.PastTasks``): a scan, so once per run."""
    past = PastTasks()
    for result in history:
        past = past.then(result.task, result.trace)
    return past


def execute(task: Task, model: ChatModel, tools: Sequence[Tool], planned: list[Experience], memory: Memory,
            config: LoopConfig, words: Words, bound: dict) -> tuple[Trace, list[Experience]]:  # fmt: skip
    """The ReAct executor with the planned lessons, plus at most one second retrieval mid-run: after a
    tool call, lessons whose trigger matches what it revealed (a cache hit, a pending record...).
    ``bound``: ``guards.binding``'s arguments. Returns the trace and the experiences behind the lessons
    added mid-run."""
    exclude, offered = [e.id for e in planned], [t.name for t in tools]
    kind = task.task_type if config.per_task_type else None  # the lessons of its type only, or all
    found_mid_run: dict[str, Experience] = {}

    def more_lessons(step: Step) -> list[str]:
        tags = step_tags(step, words, task.now)
        found = memory.retrieve(tags, len(memory.experiences), exclude=exclude, task_type=kind)
        found = planner.held_first(found, tags)
        if config.per_task_type:
            found = [e for e in found if applicable(e, task.task_type, offered)]
        found_mid_run.update({e.rule: e for e in reversed(found)})  # the best of one rule text wins
        return [e.rule for e in found]

    trace = run_react(task, model, tools, lessons=[e.rule for e in planned], max_steps=config.max_steps,
                      max_pitfall_depth=config.max_pitfall_depth, budget=config.budget,
                      more_lessons=more_lessons if config.second_retrieval else None,
                      **bound)  # fmt: skip
    return trace, [found_mid_run[rule] for rule in trace.added_lessons]


def run_loop(
    tasks: Sequence[Task],
    model: ChatModel,
    tools: Sequence[Tool],
    memory: Memory,
    *,
    words: Words,
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
    results, past = list(history), past_tasks(history)  # the history read once, then kept task by task
    start = len(results) + 1 if first is None else first
    for number, task in enumerate(progress(tasks) if progress else tasks, start):
        run_id = f"R{number:03d}"
        result = run_task(task, model, tools, memory, results, words=words, config=config, run_id=run_id,
                          retrieve_plan=retrieve_plan, reflector=reflector, past=past)  # fmt: skip
        results.append(result)
        past = past.then(result.task, result.trace)
        if between_tasks:
            between_tasks(memory)
        if store is not None:
            commit(store, memory, result, run_id)
    return results


def commit(store: Store, memory: Memory, result: TaskResult, run_id: str) -> None:
    """One transaction for one finished task: the lessons it changed, its runs' log (the discarded ones
    as R001.1, R001.2, not graded; the final one with the grader's verdict), and the result and clock a
    resume rebuilds (``resume_point``)."""
    discarded = [log_run(t, f"{run_id}.{n}", None) for n, t in enumerate(result.discarded, 1)]
    store.commit_task(
        memory.take_changed(),  # the lessons this task changed, found without reading every lesson
        task_id=result.task.task_id,
        runs=[*discarded, log_run(result.trace, run_id, result.correct)],
        result={"result": result.to_json(), "clock": memory.clock().isoformat()},
    )


def resume_point(store: Store) -> tuple[list[TaskResult], datetime | None]:
    """The history of the tasks a store holds, and the clock's time after the last of them (None: no
    task committed yet). The memory is ``store.load_memory(clock)``."""
    done = store.completed_tasks()
    history = [TaskResult.from_json(task.result["result"]) for task in done]
    return history, datetime.fromisoformat(done[-1].result["clock"]) if done else None
