"""Bounded harm from bad lessons: plant each in memory, forced past the write threshold, and measure.

    python benchmarks/bad_lessons.py                  # suite seeds 7-10 x model seeds 0-1, the order desk
    python benchmarks/bad_lessons.py --seeds 2x1      # fewer seed pairs
    python benchmarks/bad_lessons.py --unguarded      # also with the guards off (no votes, no invalidation)
    python benchmarks/bad_lessons.py --world clinic   # the same six kinds in the clinic's words

A bad lesson is written from the world's roles, not its names, so the same six kinds exist in any world:
an over-general call (send every task to the slow lagging source), a start with that slow source, a
special case (skip the lagging source for very old waiting records), a wrong answer (answer as soon as
a record is waiting), a special-case answer (a miss in the fast source means no such record), and an
over-general skip (never ask the source that holds every record). Each is planted *active* in an empty
memory (``calls_saved`` at the threshold: the write threshold does not stand in the way), filed under
the world's status requests, then the loop runs the 50-task suite; the same run without it is the clean
reference. ``--world`` picks another world of ``bench.WORLDS``: the lessons come from its habits' roles,
so a world the mechanisms were not tuned on is a held-out case.

Per lesson it prints, summed over the seed pairs: the harm (points of correctness and % calls against
the clean run) and how many times its trigger held while it was live before it went (its *firings*;
"never" if it is still live at the end). The targets (issue 24): at most 2 points and 5% calls, and
every bad lesson inactive within 3 firings.
"""

import argparse
import sys
from importlib import import_module

from ralph_mini.bench import WORLDS
from ralph_mini.clock import FakeClock
from ralph_mini.experience import LIVE
from ralph_mini.log import run_tags
from ralph_mini.loop import run_loop
from ralph_mini.measure import format_table, seed_ranges
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.offline import OfflineModel
from ralph_mini.rules import parse_rule
from ralph_mini.votes import trigger_held

UNGUARDED = MemoryConfig(max_failures=10**9, recent_failures=10**9, max_wrong_answers=10**9, probation=False)


def bad_lessons(habits) -> dict[str, str]:
    """The six kinds of bad lesson, in the world's words (its roles: ``offline_habits.roles``)."""
    fast, full, lagging, waiting = habits.fast, habits.full, habits.lagging, habits.waiting[0]
    return {
        "over-general call": f"when any task: call {lagging}",
        "start with the slow source": f"when any task: start with {lagging}",
        "special case (skip)": f"when status is {waiting} and age over 400 min: skip {lagging}",
        "wrong answer": f"when status is {waiting}: answer",
        "special case (answer)": f"when {fast} finds nothing: answer",
        "over-general skip": f"when any task: skip {full}",
    }


def run(world, suite_seed: int, model_seed: int, planted: list[str], config: MemoryConfig):
    """The loop on one suite of ``world`` with ``planted`` lessons active from the start: records,
    results, memory."""
    suite = world.make_suite(n=50, seed=suite_seed)
    clock = FakeClock()
    memory = Memory(clock, config)
    for rule in planted:
        memory.propose(rule, task_id="planted", run_id="planted", task_type=world.words.STATUS,
                       calls_saved=config.calls_saved_threshold)  # fmt: skip
    model = OfflineModel(seed=model_seed, habits=world.HABITS)
    results = run_loop(suite.tasks, model, suite.world.tools(), memory, words=world.WORDS,
                       between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    return [r.record for r in results], results, memory


def firings(rule: str, results, memory: Memory, words) -> str:
    """How many runs its trigger held in while it was live, until it went ('never': still live)."""
    parsed, lesson = (
        parse_rule(rule),
        next(e for e in memory.experiences.values() if e.rule == str(parse_rule(rule))),
    )
    count = 0
    for result in results:
        if rule in result.injected or lesson.rule in result.injected:
            count += trigger_held(parsed, run_tags(result.trace.steps, words, result.task.now))
        if any(
            note.startswith(("invalidated: " + lesson.rule, "removed: " + lesson.rule))
            for note in result.memory_notes
        ):
            return str(count)
    return "never" if lesson.status in LIVE else str(count)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=seed_ranges, default="4x2", help="suite seeds x model seeds (default 4x2)"
    )
    parser.add_argument("--unguarded", action="store_true", help="also run with the guards off")
    parser.add_argument(
        "--world", choices=sorted(WORLDS), default="orders", help="the world (default orders)"
    )
    args = parser.parse_args(argv)
    world = import_module(WORLDS[args.world])
    suites, models = args.seeds
    pairs = [(s, m) for s in suites for m in models]
    configs = {"guarded": MemoryConfig()} | ({"unguarded": UNGUARDED} if args.unguarded else {})
    lessons = bad_lessons(world.HABITS)
    rows = []
    for label, config in configs.items():
        clean = {p: run(world, *p, [], config)[0] for p in pairs}
        n = sum(len(r) for r in clean.values())
        clean_correct = sum(r.correct for recs in clean.values() for r in recs)
        clean_calls = sum(r.calls for recs in clean.values() for r in recs)
        for name, rule in [*lessons.items(), ("all six at once", None)]:
            planted = list(lessons.values()) if rule is None else [rule]
            runs = {p: run(world, *p, planted, config) for p in pairs}
            correct = sum(r.correct for recs, _, _ in runs.values() for r in recs)
            calls = sum(r.calls for recs, _, _ in runs.values() for r in recs)
            fired = [firings(rule, res, mem, world.WORDS) for _, res, mem in runs.values()] if rule else []
            worst = "never" if "never" in fired else max(map(int, fired)) if fired else "-"
            rows.append({"guards": label, "bad lesson": name,
                         "correct (points)": f"{100 * (correct - clean_correct) / n:+.1f}",
                         "calls": f"{100 * (calls / clean_calls - 1):+.1f}%",
                         "firings before it went (worst pair)": worst})  # fmt: skip
    print(f"{len(pairs)} seed pairs (suite x model), {args.world}: 50 tasks, against a clean memory")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
