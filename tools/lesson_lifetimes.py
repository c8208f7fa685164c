"""How long each lesson held, by task number, in the full Ralph Loop on a scenario (issue 16).

    python tools/lesson_lifetimes.py drift noisy [--arm "no budget"]

For every lesson that was ever active: the task at which it became active (``valid_from``), the task at
which it went out (``invalid_from``: removed by its votes or invalidated by a contradiction), its votes,
and why. Task numbers come from the scenario's one clock: task i runs at start + (i - 1) x hours. For
the noisy scenario, the bad seeded lessons are marked; for drift, the changes are listed, so "inactive
within N tasks of the change" can be read off.
"""

import argparse
import sys
from datetime import datetime

from ralph_mini.scenario_bench import ARMS, FULL, Arm, run_arm
from ralph_mini.worlds.shop.scenarios import BAD_LESSONS, SCENARIOS


def task_number(stamp: str | None, start: datetime, hours: float) -> str:
    if stamp is None:
        return "-"
    return str(round((datetime.fromisoformat(stamp) - start).total_seconds() / 3600 / hours) + 1)


def report(name: str, arm: Arm = FULL) -> None:
    run = run_arm(name, arm)
    scenario, memory = run.scenario, run.memory
    start, hours = scenario.start, scenario.hours_between_tasks
    print(f"== {name}, {arm.name}: " + "; ".join(f"task {c.at}: {c.name}" for c in scenario.changes))
    bad = set(BAD_LESSONS) if name == "noisy" else set()
    rows = [e for e in memory.experiences.values() if e.valid_from or e.status != "candidate"]
    for e in sorted(rows, key=lambda e: (e.valid_from or "", e.rule)):
        first, last = task_number(e.valid_from, start, hours), task_number(e.invalid_from, start, hours)
        mark = " [bad seed]" if e.rule in bad else ""
        print(
            f"  {e.status:8} from task {first:>3} to {last:>3}  {e.validations:>3} ok / {e.failures:>2} bad"
            f"  votes {e.votes_up:.1f} up {e.votes_down:.1f} down  {e.rule}{mark}"
            + (f"\n{'':12}{e.status_reason}" if e.status in ("removed", "invalid") else "")
        )
    for rule in sorted(bad):
        if not any(e.rule == rule for e in memory.experiences.values()):
            print(f"  (merged or never stored) {rule}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "scenarios",
        nargs="*",
        default=["drift", "noisy"],
        metavar="SCENARIO",
        help=f"one or more of {', '.join(SCENARIOS)} (default: drift noisy)",
    )
    parser.add_argument(
        "--arm",
        default=FULL.name,
        choices=[arm.name for arm in ARMS],
        help=f"the arm whose lessons to follow (default {FULL.name!r})",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)}: use {', '.join(SCENARIOS)}")
    chosen = next(arm for arm in ARMS if arm.name == args.arm)
    for scenario_name in args.scenarios:
        report(scenario_name, chosen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
