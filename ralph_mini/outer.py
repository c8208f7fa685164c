"""The outer Ralph loop: the same task file, a fresh context every pass, notes kept in a file (notebook 10).

Where the name comes from: Geoffrey Huntley, "Ralph Wiggum as a software engineer" (2025,
ghuntley.com/ralph), runs a coding agent in a shell loop, ``while :; do cat PROMPT.md | agent; done``:
a fresh context every pass, the same prompt file; what was learned survives only in the files it writes.
The source article builds the reflect-and-remember version *inside* one process (``loop.py``); here the
kit's agent runs the outer way, on the order desk. A pass:

1. reads the task file (``T001 | question`` lines) and the notes file (lessons, then a log of passes);
2. loads the lessons into a *fresh* memory (nothing else carries over: no candidates, no counts, no
   clock) and runs the Ralph Loop over the tasks (``loop.run_loop``, configured by a ``bench.Agent``);
3. writes the lessons its memory now holds back to the notes file, and yields one ``PassRecord``.

A shell loop never stops by itself (users report loops far past their cap, a missed or premature
completion phrase, runaway cost), so each stop is a small function, checked after every pass:

- ``work_is_done``: every answer correct (the grader) with no wrong or redundant call (the review).
  Never a phrase: nothing the model types can end the loop;
- ``over_budget``: tokens and virtual seconds spent, or about to be spent by one more such pass;
- ``made_no_progress``: same answers, same notes, no new lesson as the pass before;
- the cap: ``OuterConfig.max_passes``, the ``range`` the loop runs over, so it cannot be skipped.

Left out on purpose: a shell and a process per pass (a pass is a stateless call; the two files are its
only channel), an agent editing its own task file, git commits, parallel passes.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ralph_mini.bench import RALPH, Agent, arm_planner
from ralph_mini.clock import FakeClock
from ralph_mini.loop import TaskResult, run_loop
from ralph_mini.measure import at_least_one
from ralph_mini.memory import Memory
from ralph_mini.model import ChatModel
from ralph_mini.outer_files import read_notes, read_task_file, write_notes, write_task_file
from ralph_mini.tools import Tool
from ralph_mini.world import Task, Words


@dataclass(frozen=True)
class OuterConfig:
    """Every stop of the outer loop. A budget of 0 would stop after the first pass; none is unbounded."""

    max_passes: int = 5  # the hard cap: a small number, because each pass re-runs every task
    stop_on_no_progress: bool = True  # stop when a pass changed nothing (a deterministic model repeats)
    max_tokens: int = 200_000  # budget over all passes: prompts, replies and reflections
    max_virtual_s: float = 900.0  # budget over all passes: model and tool time, virtual
    hours_between_tasks: float = 6.0  # the memory's clock inside a pass, as ``bench.run_agent``

    def __post_init__(self):
        if not isinstance(self.max_passes, int) or self.max_passes < 1:
            raise ValueError(f"max_passes={self.max_passes!r}: the cap must be a whole number >= 1, e.g. 5")
        for name, value in (("max_tokens", self.max_tokens), ("max_virtual_s", self.max_virtual_s)):
            if not 0 <= value < float("inf"):
                raise ValueError(f"{name}={value!r}: a budget must be a finite number >= 0")


@dataclass(frozen=True)
class PassRecord:
    """One pass: what it cost, how the answers were judged, what it taught, and what happens next."""

    number: int
    tasks: int
    calls: int  # tool calls in the final runs of all tasks
    correct: int  # answers the grader accepted
    clean: int  # runs with a correct answer and no wrong or redundant call
    lessons_added: tuple[str, ...]  # rules in the notes now that were not there before the pass
    lessons: tuple[str, ...]  # every rule in the notes after the pass
    tokens: int  # this pass, reflections included
    virtual_s: float  # this pass
    answers: tuple[str, ...]  # each task's final answer, as text, to compare passes
    stop: str | None = None  # which stop fired: "done", "budget", "no progress", "cap"; None: go on
    why: str = ""  # why the loop stops or goes on

    def line(self) -> str:
        """'pass 1: 14 calls, 6/6 correct, 3/6 clean, +2 lessons (2 in notes), 25380 tokens, ... -> ...'."""
        return (
            f"pass {self.number}: {self.calls} calls, {self.correct}/{self.tasks} correct, "
            f"{self.clean}/{self.tasks} clean, +{len(self.lessons_added)} lessons ({len(self.lessons)} in "
            f"notes), {self.tokens} tokens, {self.virtual_s:.1f} virtual s -> {self.decision()}"
        )

    def decision(self) -> str:
        return f"stop: {self.stop} ({self.why})" if self.stop else f"continue: {self.why}"


def memory_from_notes(
    lessons: Sequence[str], agent: Agent, clock: FakeClock, task_types: Sequence[str]
) -> Memory:
    """A fresh memory holding the notes' lessons, active, for each of ``task_types`` (the notes are one
    text every task reads). The notes keep no track record, so each is proposed once as proven
    (``calls_saved`` at the threshold); the grammar and instance filter still run."""
    memory = Memory(clock, agent.memory)
    for rule in lessons:
        for task_type in task_types:
            memory.propose(rule, task_id="notes", run_id="notes", task_type=task_type,
                           calls_saved=agent.memory.calls_saved_threshold)  # fmt: skip
    return memory


def run_pass(
    tasks: Sequence[Task], lessons: Sequence[str], model: ChatModel, tools: Sequence[Tool], agent: Agent,
    hours_between_tasks: float, words: Words,
) -> tuple[list[TaskResult], list[str]]:  # fmt: skip
    """One pass from a fresh context: the Ralph Loop over the tasks, starting from the notes alone.
    Returns the results and the lessons the memory holds at the end, notes first, in order, each once."""
    clock = FakeClock()
    memory = memory_from_notes(lessons, agent, clock, list(dict.fromkeys(t.task_type for t in tasks)))
    plan, advance = arm_planner(agent, memory), (lambda _: clock.advance(hours=hours_between_tasks))
    results = run_loop(tasks, model, tools, memory, words=words, config=agent.loop, retrieve_plan=plan,
                       between_tasks=advance)  # fmt: skip
    return results, list(dict.fromkeys(e.rule for e in memory.active()))


def is_clean(result: TaskResult) -> bool:
    """The validator: a correct answer (the grader's verdict) and no wrong or redundant call (its
    ``quick_review``, with the world's answer fields and tool roles)."""
    return result.correct and result.review.wrong_calls + result.review.redundant_calls == 0


def work_is_done(record: PassRecord) -> bool:
    """The structured completion check: every task clean. What the model *wrote* is never read here."""
    return record.clean == record.tasks


def over_budget(spent_tokens: int, spent_s: float, last: PassRecord, config: OuterConfig) -> str | None:
    """Why one more pass would break the budget (spent so far plus one pass like the last), or None."""
    if spent_tokens + last.tokens > config.max_tokens:
        return f"{spent_tokens} tokens spent, one more pass would pass {config.max_tokens}"
    if spent_s + last.virtual_s > config.max_virtual_s:
        return f"{spent_s:.1f} virtual s spent, one more pass would pass {config.max_virtual_s:g}"
    return None


def made_no_progress(previous: PassRecord | None, current: PassRecord) -> bool:
    """Same answers, same notes, no new lesson as the pass before: the next pass would only repeat it."""
    same = previous is not None and (current.answers, current.lessons) == (previous.answers, previous.lessons)
    return same and not current.lessons_added


def decide(previous: PassRecord | None, current: PassRecord, spent: tuple[int, float],
           config: OuterConfig) -> tuple[str | None, str]:  # fmt: skip
    """(which stop fired or None, why): the checks in order, first match wins."""
    if work_is_done(current):
        return "done", "grader and validator: every answer correct, no wasted call"
    budget = over_budget(*spent, current, config)
    if budget:
        return "budget", budget
    if config.stop_on_no_progress and made_no_progress(previous, current):
        return "no progress", "same answers, same notes, no new lesson"
    if current.number >= config.max_passes:
        return "cap", f"{config.max_passes} passes"
    return None, f"{current.tasks - current.clean} of {current.tasks} tasks not clean"


def run_outer(task_file: Path, notes_file: Path, known_tasks: Sequence[Task], model: ChatModel,
              tools: Sequence[Tool], *, words: Words, config: OuterConfig = OuterConfig(),
              agent: Agent = RALPH) -> Iterator[PassRecord]:  # fmt: skip
    """``while :; do cat PROMPT.md | agent; done``, with stops: yields one record per pass."""
    previous, spent_tokens, spent_s = None, 0, 0.0
    for number in range(1, config.max_passes + 1):  # the cap: no pass beyond it, whatever happens below
        tasks = read_task_file(task_file, known_tasks)  # the same file, re-read: a fresh context
        before = read_notes(notes_file, tools)
        results, after = run_pass(tasks, before, model, tools, agent, config.hours_between_tasks, words)
        runs = [r.record for r in results]
        record = PassRecord(
            number=number, tasks=len(results), calls=sum(r.calls for r in runs),
            correct=sum(r.correct for r in runs), clean=sum(is_clean(r) for r in results),
            lessons_added=tuple(rule for rule in after if rule not in before), lessons=tuple(after),
            tokens=sum(r.tokens for r in runs), virtual_s=round(sum(r.latency_s for r in runs), 3),
            answers=tuple(repr(r.trace.answer) for r in results),
        )  # fmt: skip
        spent_tokens, spent_s = spent_tokens + record.tokens, spent_s + record.virtual_s
        stop, why = decide(previous, record, (spent_tokens, spent_s), config)
        record = replace(record, stop=stop, why=why)
        write_notes(notes_file, after, record.line(), words.job)
        yield record
        if record.stop:
            return
        previous = record


def side_by_side(passes: Sequence[PassRecord], in_process: Sequence[TaskResult]) -> list[dict]:
    """Two rows, same tasks: the outer loop (totals of all passes) and the in-process loop (one run each)."""
    runs, last = [r.record for r in in_process], passes[-1]
    return [
        {"agent": "outer loop", "passes": len(passes), "stopped by": last.stop,
         "calls": sum(p.calls for p in passes), "tokens": sum(p.tokens for p in passes),
         "virtual s": round(sum(p.virtual_s for p in passes), 1),
         "correct": f"{last.correct}/{last.tasks}", "clean": f"{last.clean}/{last.tasks}"},
        {"agent": "in-process Ralph Loop", "passes": 1, "stopped by": "end of the task list",
         "calls": sum(r.calls for r in runs), "tokens": sum(r.tokens for r in runs),
         "virtual s": round(sum(r.latency_s for r in runs), 1),
         "correct": f"{sum(r.correct for r in runs)}/{len(runs)}",
         "clean": f"{sum(is_clean(r) for r in in_process)}/{len(runs)}"},
    ]  # fmt: skip


def pick_tasks(tasks: Sequence[Task], first: int, per_kind: int, kind: str = "") -> list[Task]:
    """The first ``per_kind`` of each kind (when > 0), else the first ``first``; of ``kind`` alone if set."""
    tasks = [t for t in tasks if t.kind == kind] if kind else tasks
    kinds = [t.kind for t in tasks]
    return (
        [t for i, t in enumerate(tasks) if kinds[:i].count(t.kind) < per_kind]
        if per_kind > 0
        else tasks[:first]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ralph_mini outer [--tasks 12 | --per-kind 2] [--withhold TOOL] [--max-passes 5] ...``."""
    import argparse

    from ralph_mini.bench import run_agent
    from ralph_mini.measure import format_table
    from ralph_mini.offline import OfflineModel
    from ralph_mini.worlds import orders

    parser = argparse.ArgumentParser(prog="python -m ralph_mini outer", description=main.__doc__)
    parser.add_argument("--tasks", type=at_least_one, default=12, help="the first N tasks (default 12)")
    parser.add_argument("--per-kind", type=at_least_one, default=0,  # 0 (the default): --tasks decides
                        help="instead, the first K tasks of each kind")  # fmt: skip
    parser.add_argument("--kind", default="", help="only tasks of this kind, e.g. pending_stale")
    parser.add_argument("--seed", type=int, default=7, help="suite seed (default 7)")
    parser.add_argument("--model-seed", type=int, default=0, help="offline model seed (default 0)")
    parser.add_argument("--withhold", action="append", default=[], help="a tool the agent does not get")
    passes = OuterConfig.max_passes
    parser.add_argument("--max-passes", type=at_least_one, default=passes, help="the cap (default 5)")
    parser.add_argument("--max-tokens", type=int, default=OuterConfig.max_tokens, help="token budget")
    parser.add_argument("--max-virtual-s", type=float, default=OuterConfig.max_virtual_s, help="time budget")
    parser.add_argument("--keep-going", action="store_true", help="switch the no-progress stop off")
    parser.add_argument("--dir", default="runs/outer", help="where TASKS.md and NOTES.md go")
    parser.add_argument("--keep-notes", action="store_true", help="start from the NOTES.md already there")
    args = parser.parse_args(argv)

    try:
        config = OuterConfig(max_passes=args.max_passes, stop_on_no_progress=not args.keep_going,
                             max_tokens=args.max_tokens, max_virtual_s=args.max_virtual_s)  # fmt: skip
    except ValueError as err:  # a budget below 0, or not a number
        parser.error(str(err))
    suite = orders.make_suite(n=50, seed=args.seed)
    tasks = pick_tasks(suite.tasks, args.tasks, args.per_kind, args.kind)
    if not tasks:
        kinds = ", ".join(sorted({t.kind for t in suite.tasks}))
        parser.error(f"--kind {args.kind!r} picks no task: kinds are {kinds}")
    unknown = set(args.withhold) - {t.name for t in suite.world.tools()}
    if unknown:
        parser.error(f"--withhold {', '.join(sorted(unknown))}: not a tool of the order world")
    tools = [t for t in suite.world.tools() if t.name not in args.withhold]
    model = OfflineModel(seed=args.model_seed, habits=orders.HABITS)
    task_file, notes_file = Path(args.dir) / "TASKS.md", Path(args.dir) / "NOTES.md"
    try:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
        write_task_file(task_file, tasks)
        if not args.keep_notes:
            notes_file.unlink(missing_ok=True)
    except OSError as err:
        parser.error(f"--dir {args.dir}: cannot write the task file there ({err.strerror}); choose a folder")
    print(f"outer loop: {len(tasks)} tasks ({tasks[0].task_id}..{tasks[-1].task_id}), {model!r}, "
          f"{len(tools)} tools; task file {task_file}, notes {notes_file}")  # fmt: skip
    passes, words = [], orders.WORDS
    for record in run_outer(task_file, notes_file, suite.tasks, model, tools, words=words, config=config):
        print(record.line(), flush=True)  # as each pass ends: a long loop shows where it is
        passes.append(record)
    _, _, in_process = run_agent(RALPH, tasks, model, tools, words=words)
    print("\nthe same tasks, outer loop against the in-process Ralph Loop (totals over all passes):")
    print(format_table(side_by_side(passes, in_process)))
    return 0
