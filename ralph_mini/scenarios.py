"""Scenarios: a world that changes, on one clock (notebook 09).

Notebook 06 measures the loop on one task type that never changes, asked in five English templates.
Decay, expiry, per-type lessons and retrieval by wording only show their worth (or their harm) when the
work varies and the world moves, so each scenario here is a seeded list of tasks, the world they run in,
and a schedule of changes:

- **static**: notebook 06's suite, unchanged (its prompt time stays fixed, as in ``bench``), so old
  numbers stay comparable;
- **drift**: the wider shop (``shop_world.py``), five task types, and four changes: the cache
  disappears, the refund window shrinks from 30 to 14 days, the settlement lag grows from 30 to 90
  minutes, the provider becomes slow and fails each order's first call;
- **seasons**: nine virtual weeks; order-status questions stop for five weeks (longer than memory's
  30-day expiry) and come back;
- **noisy**: the run starts with a memory in which about a fifth of the lessons are bad, some active;
- **rephrased**: the loop learns on the phrasings it may learn from, then is tested, with learning
  frozen, on held-out English and Chinese phrasings, and on trained phrasings as a control.

One clock for everything (all but static): task *i* is asked at ``start + (i - 1) x hours_between_tasks``;
the prompt's "Current time", the world's ``now`` and memory's clock are that same moment.

Left out on purpose: running the arms (``scenario_bench.py``).
"""

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralph_mini import order_words as ow
from ralph_mini import shop_words as sw
from ralph_mini.memory import Memory
from ralph_mini.shop_tasks import make_task
from ralph_mini.shop_world import ShopState, empty_shop
from ralph_mini.suite import Task, make_suite
from ralph_mini.world import NOW, OrderWorld

SCENARIOS = ("static", "drift", "seasons", "noisy", "rephrased")
MIX = {sw.STATUS: 0.4, sw.REFUND: 0.15, sw.CHARGES: 0.15, sw.DELIVERY: 0.15, sw.CANCEL: 0.15}
LEARNABLE = tuple(i for i in (*sw.ENGLISH, *sw.CHINESE) if i not in sw.HELD_OUT)
CACHE, DATABASE, PAYMENT = ow.CACHE, ow.DATABASE, ow.PAYMENT


@dataclass(frozen=True)
class Change:
    """A change of the world's state, taking effect just before task number ``at`` (1-based)."""

    at: int
    name: str
    fields: dict = field(default_factory=dict)


@dataclass
class Scenario:
    """Tasks, the world they run in, its changes, and how to read the results."""

    name: str
    world: OrderWorld
    tasks: list[Task]
    windows: list[tuple[str, int, int]]  # (label, first task, last task), 1-based, inclusive
    changes: list[Change] = field(default_factory=list)
    hours_between_tasks: float = 6.0
    start: datetime = NOW
    one_clock: bool = True
    frozen: set[str] = field(default_factory=set)  # task ids the loop must not learn from
    seed_lessons: list[tuple[str, int]] = field(default_factory=list)  # (rule, times proposed)

    def apply_changes(self, number: int) -> list[Change]:
        """Apply the changes due before task ``number`` to the world; return them."""
        due = [c for c in self.changes if c.at == number and c.fields]
        for change in due:
            self.world.state = self.world.state.changed(**change.fields)
        return due


def generate(n: int, seed: int, mix_at, phrasings_at, changes: list[Change], hours: float):
    """The wider shop and ``n`` tasks; ``mix_at(i)`` and ``phrasings_at(i)`` give task i's type mix and
    phrasings. Each task's truth is computed under the state the schedule gives it."""
    rng = random.Random(seed)
    world, state, tasks = empty_shop(), ShopState(), []
    for number in range(1, n + 1):
        for change in changes:
            if change.at == number and change.fields:
                state = state.changed(**change.fields)
        mix = mix_at(number)
        task_type = rng.choices(list(mix), weights=list(mix.values()))[0]
        now = NOW + timedelta(hours=hours * (number - 1))
        tasks.append(make_task(number, world, rng, task_type, now, state, phrasings_at(number)))
    return world, tasks


def static(seed: int = 7) -> Scenario:
    suite = make_suite(n=50, seed=seed)
    return Scenario("static", suite.world, suite.tasks, [("1-20", 1, 20), ("21-50", 21, 50)], one_clock=False)


DRIFT = [
    Change(21, "cache disappears", {"cache_online": False}),
    Change(36, "refund window 30 -> 14 days", {"refund_days": 14}),
    Change(51, "settlement lag 30 -> 90 min", {"settlement_lag_min": 90}),
    Change(66, "provider slow and failing", {"provider_failing": True}),
]


def drift(seed: int = 7) -> Scenario:
    world, tasks = generate(80, seed, lambda i: MIX, lambda i: LEARNABLE, DRIFT, 6.0)
    bounds = [1, *(c.at for c in DRIFT), 81]
    labels = ["before changes", *(c.name for c in DRIFT)]
    windows = [(label, a, b - 1) for label, a, b in zip(labels, bounds, bounds[1:], strict=False)]
    return Scenario("drift", world, tasks, windows, changes=list(DRIFT))


SEASON_MIXES = (  # (first task, last task, mix); 10 tasks a virtual week
    (1, 20, {sw.STATUS: 0.6, sw.DELIVERY: 0.2, sw.CHARGES: 0.2}),
    (21, 70, {sw.REFUND: 0.35, sw.CANCEL: 0.3, sw.CHARGES: 0.2, sw.DELIVERY: 0.15}),
    (71, 90, {sw.STATUS: 0.6, sw.REFUND: 0.1, sw.CANCEL: 0.1, sw.DELIVERY: 0.1, sw.CHARGES: 0.1}),
)


def seasons(seed: int = 7) -> Scenario:
    def mix_at(i: int) -> dict:
        return next(mix for first, last, mix in SEASON_MIXES if first <= i <= last)

    world, tasks = generate(90, seed, mix_at, lambda i: LEARNABLE, [], 16.8)
    windows = [("weeks 1-2", 1, 20), ("weeks 3-7, no status", 21, 70), ("weeks 8-9, status back", 71, 90)]
    marks = [Change(21, "status questions stop"), Change(71, "status questions return")]
    return Scenario("seasons", world, tasks, windows, changes=marks, hours_between_tasks=16.8)


GOOD_LESSONS = [
    f"when {CACHE} finds the order: answer; skip {DATABASE}",
    f"when status is pending and age under 30 min: skip {PAYMENT}",
    f"when status is pending and age over 30 min: call {PAYMENT}",
    f"when {DATABASE} finds nothing: skip {PAYMENT}",
    f"when any task: start with {CACHE}",
    f"when status is refunded: skip {PAYMENT}",
    f"when status is paid: skip {PAYMENT}",
    f"when {CACHE} finds nothing: call {DATABASE}",
    f"when status is payment_failed: answer; skip {PAYMENT}",
    f"when {CACHE} finds the order: skip {DATABASE}",
]
BAD_LESSONS = [  # over-general, a wrong action, a special case
    f"when any task: call {PAYMENT}",
    "when status is pending: answer",
    f"when status is pending and age over 400 min: skip {PAYMENT}",
]


def noisy(seed: int = 7) -> Scenario:
    """The drift scenario's mix, without changes, from a memory where 3 of 13 lessons are bad (2 active)."""
    world, tasks = generate(50, seed, lambda i: MIX, lambda i: LEARNABLE, [], 6.0)
    # The narrow bad lesson before the wide one: written the other way round, 'pending: answer' would be
    # a counterexample to 'any task: call T' and invalidate it before the run starts.
    lessons = [(rule, 2) for rule in GOOD_LESSONS] + [(BAD_LESSONS[1], 2), (BAD_LESSONS[0], 2)]
    lessons.append((BAD_LESSONS[2], 1))  # still a candidate
    return Scenario("noisy", world, tasks, [("1-20", 1, 20), ("21-50", 21, 50)], seed_lessons=lessons)


def rephrased(seed: int = 7) -> Scenario:
    """Learn on 30 tasks; then, learning frozen, 15 held-out English, 15 held-out Chinese, 15 trained."""
    held_en = tuple(i for i in sw.HELD_OUT if i in sw.ENGLISH)
    held_zh = tuple(i for i in sw.HELD_OUT if i in sw.CHINESE)

    def phrasings_at(i: int) -> tuple[int, ...]:
        return LEARNABLE if i <= 30 or i > 60 else held_en if i <= 45 else held_zh

    world, tasks = generate(75, seed, lambda i: MIX, phrasings_at, [], 6.0)
    windows = [("train", 1, 30), ("held-out English", 31, 45), ("held-out Chinese", 46, 60),
               ("trained phrasings", 61, 75)]  # fmt: skip
    frozen = {t.task_id for t in tasks[30:]}
    return Scenario("rephrased", world, tasks, windows, frozen=frozen)


BUILDERS = {"static": static, "drift": drift, "seasons": seasons, "noisy": noisy, "rephrased": rephrased}


def build(name: str, seed: int = 7) -> Scenario:
    """A fresh scenario (a new world: writes and changes of one run never leak into another)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown scenario {name!r}: use one of {', '.join(SCENARIOS)} or all")
    return BUILDERS[name](seed)


def seed_memory(memory: Memory, lessons: list[tuple[str, int]]) -> None:
    """Write the scenario's starting lessons, each proposed ``times`` times (twice makes it active)."""
    for rule, times in lessons:
        for n in range(times):
            memory.propose(rule, task_id=f"S{n + 1}", run_id="seed", failure_reason="an earlier deployment")


def task_type(task: Task) -> str:
    """The request type of a task (notebook 01's tasks are all order-status questions)."""
    return task.kind.split(":")[0] if ":" in task.kind else sw.STATUS
