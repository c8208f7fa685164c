"""Scenarios: a world that changes, on one clock (notebook 09).

Notebook 06 measures the loop on one task type that never changes, asked in five English templates.
Decay, expiry, per-type lessons and retrieval by wording only show their worth (or their harm) when the
work varies and the world moves, so each scenario here is a seeded list of tasks, the world they run in,
and a schedule of changes:

- **static**: notebook 06's suite, unchanged (its prompt time stays fixed, as in ``bench``), so old
  numbers stay comparable;
- **drift**: the wider shop (``world.py``), five task types, and four changes: the cache
  disappears, the refund window shrinks from 30 to 14 days, the settlement lag grows from 30 to 90
  minutes, the provider becomes slow and fails each order's first call;
- **seasons**: nine virtual weeks; order-status questions stop for five weeks (longer than memory's
  30-day expiry) and come back;
- **noisy**: the run starts with a memory in which about a fifth of the lessons are bad, some active;
- **rephrased**: the loop learns on the phrasings it may learn from, then, with learning frozen, answers
  the same 15 requests three times: in held-out English, in held-out Chinese, and in trained phrasings
  (the reference), each copy about its own twin order, so the wordings compare task by task;
- **threshold**: a fact that moves a rule's number: the settlement lag grows from 30 to 120 minutes at
  task 21, so "age over 30 min: call the provider" starts sending the agent to a provider that knows
  nothing yet about orders 30 to 120 minutes old;
- **stale**: a source that goes stale rather than vanishing: from task 21 the cache still answers but
  shows orders refunded since as paid, so "when the cache finds the order: answer" starts giving wrong
  answers.

And six **held-out drifts** (``HELD_OUT_DRIFTS``, ``held_out``), written after the mechanisms were worked
on against the seven and never tuned on: other change times and sizes, a lag that shrinks, a cache that
comes back, a cache that goes stale and then vanishes (``benchmarks/held_out_drifts.py``, notebook 09).

One clock for everything (all but static): task *i* is asked at ``start + (i - 1) x hours_between_tasks``;
the prompt's "Current time", the world's ``now`` and memory's clock are that same moment.

Left out on purpose: running the arms (``ralph_mini/scenario_bench.py``).
"""

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralph_mini.memory import Memory
from ralph_mini.offline_habits import Habits
from ralph_mini.world import Task, World
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words as ow
from ralph_mini.worlds.orders.world import NOW
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.habits import HABITS
from ralph_mini.worlds.shop.tasks import ask_again, fresh_id, make_task
from ralph_mini.worlds.shop.world import ShopState, empty_shop

SCENARIOS = ("static", "drift", "seasons", "noisy", "rephrased", "threshold", "stale")
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
    world: World
    tasks: list[Task]
    windows: list[tuple[str, int, int]]  # (label, first task, last task), 1-based, inclusive
    changes: list[Change] = field(default_factory=list)
    hours_between_tasks: float = 6.0
    start: datetime = NOW
    one_clock: bool = True
    frozen: set[str] = field(default_factory=set)  # task ids the loop must not learn from
    seed_lessons: list[tuple[str, int]] = field(default_factory=list)  # (rule, times proposed)
    habits: Habits = HABITS  # how the simulated model acts in this world

    def apply_changes(self, number: int) -> list[Change]:
        """Apply the changes due before task ``number`` to the world; return them."""
        due = [c for c in self.changes if c.at == number and c.fields]
        for change in due:
            self.world.state = self.world.state.changed(**change.fields)
        return due


def generate(n: int, rng: random.Random, mix_at, phrasings_at, changes: list[Change], hours: float):
    """The wider shop and ``n`` tasks drawn with ``rng``; ``mix_at(i)`` and ``phrasings_at(i)`` give task
    i's type mix and phrasings. Each task's truth is computed under the state the schedule gives it."""
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
    suite = orders.make_suite(n=50, seed=seed)
    windows = [("1-20", 1, 20), ("21-50", 21, 50)]
    return Scenario("static", suite.world, suite.tasks, windows, one_clock=False, habits=orders.HABITS)


DRIFT = [
    Change(21, "cache disappears", {"cache_online": False}),
    Change(36, "refund window 30 -> 14 days", {"refund_days": 14}),
    Change(51, "settlement lag 30 -> 90 min", {"settlement_lag_min": 90}),
    Change(66, "provider slow and failing", {"provider_failing": True}),
]


def drift(seed: int = 7) -> Scenario:
    world, tasks = generate(80, random.Random(seed), lambda i: MIX, lambda i: LEARNABLE, DRIFT, 6.0)
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

    world, tasks = generate(90, random.Random(seed), mix_at, lambda i: LEARNABLE, [], 16.8)
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
    world, tasks = generate(50, random.Random(seed), lambda i: MIX, lambda i: LEARNABLE, [], 6.0)
    # The narrow bad lesson before the wide one: written the other way round, 'pending: answer' would be
    # a counterexample to 'any task: call T' and invalidate it before the run starts.
    lessons = [(rule, 2) for rule in GOOD_LESSONS] + [(BAD_LESSONS[1], 2), (BAD_LESSONS[0], 2)]
    lessons.append((BAD_LESSONS[2], 1))  # still a candidate
    return Scenario("noisy", world, tasks, [("1-20", 1, 20), ("21-50", 21, 50)], seed_lessons=lessons)


WORDINGS = (  # (window label, phrasings): the frozen part asks the same draws once in each
    ("held-out English", tuple(i for i in sw.HELD_OUT if i in sw.ENGLISH)),
    ("held-out Chinese", tuple(i for i in sw.HELD_OUT if i in sw.CHINESE)),
    ("trained phrasings", LEARNABLE),
)
TRAIN, PAIRED = 30, 15


def rephrased(seed: int = 7) -> Scenario:
    """Learn on 30 tasks; then, learning frozen, the same 15 draws asked three times, once in each wording
    of ``WORDINGS``: held-out English (tasks 31-45), held-out Chinese (46-60), trained phrasings (61-75).

    A paired design: copy j of every wording has the same type, order kind and state, ages, truth and
    oracle calls, so calls/task can be compared between wordings. Each copy asks about its own twin order
    (``shop_tasks.ask_again``), made relative to its own asking time, so a write in one window cannot
    change the next window's order, and the clock (task i at start + (i - 1) x 6 h) still holds."""
    rng = random.Random(seed)
    world, tasks = generate(TRAIN, rng, lambda i: MIX, lambda i: LEARNABLE, [], 6.0)
    state, copies = ShopState(), {label: [] for label, _ in WORDINGS}

    def asked_at(number: int) -> datetime:
        return NOW + timedelta(hours=6.0 * (number - 1))

    for j in range(PAIRED):
        kind = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        first = make_task(TRAIN + 1 + j, world, rng, kind, asked_at(TRAIN + 1 + j), state, WORDINGS[0][1])
        copies[WORDINGS[0][0]].append(first)
        for w, (label, phrasings) in enumerate(WORDINGS[1:], 1):
            number = TRAIN + w * PAIRED + 1 + j
            again = ask_again(
                first, world, number, fresh_id(rng, world), asked_at(number), state, rng.choice(phrasings)
            )
            copies[label].append(again)
    for label, _ in WORDINGS:
        tasks += copies[label]
    windows = [("train", 1, TRAIN)]
    windows += [
        (label, TRAIN + w * PAIRED + 1, TRAIN + (w + 1) * PAIRED) for w, (label, _) in enumerate(WORDINGS)
    ]
    frozen = {t.task_id for t in tasks[TRAIN:]}
    return Scenario("rephrased", world, tasks, windows, frozen=frozen)


STATUS_HEAVY = {sw.STATUS: 0.6, sw.REFUND: 0.1, sw.CHARGES: 0.1, sw.DELIVERY: 0.1, sw.CANCEL: 0.1}
THRESHOLD = [Change(21, "settlement lag 30 -> 120 min", {"settlement_lag_min": 120})]
STALE = [Change(21, "the cache goes stale", {"cache_stale": True})]


def one_change(name: str, changes: list[Change], seed: int) -> Scenario:
    """Fifty tasks, mostly status questions, with one change at task 21: learn first, then unlearn."""
    world, tasks = generate(
        50, random.Random(seed), lambda i: STATUS_HEAVY, lambda i: LEARNABLE, changes, 6.0
    )
    windows = [("before the change", 1, 20), (changes[0].name, 21, 35), ("later", 36, 50)]
    return Scenario(name, world, tasks, windows, changes=list(changes))


def threshold(seed: int = 7) -> Scenario:
    return one_change("threshold", THRESHOLD, seed)


def stale(seed: int = 7) -> Scenario:
    return one_change("stale", STALE, seed)


BUILDERS = {"static": static, "drift": drift, "seasons": seasons, "noisy": noisy, "rephrased": rephrased,
            "threshold": threshold, "stale": stale}  # fmt: skip


HELD_OUT_DRIFTS = {  # written on 2026-12-05, apart from the seven; nothing was changed to pass them
    "lag 60, cache off, refunds 7 days": [
        Change(15, "settlement lag 30 -> 60 min", {"settlement_lag_min": 60}),
        Change(30, "cache disappears", {"cache_online": False}),
        Change(45, "refund window 30 -> 7 days", {"refund_days": 7}),
    ],
    "cache stale, then gone": [
        Change(10, "the cache goes stale", {"cache_stale": True}),
        Change(35, "cache disappears", {"cache_online": False}),
    ],
    "lag 30 -> 200 min": [Change(25, "settlement lag 30 -> 200 min", {"settlement_lag_min": 200})],
    "lag 30 -> 10 min": [Change(20, "settlement lag 30 -> 10 min", {"settlement_lag_min": 10})],
    "provider failing early": [
        Change(8, "provider slow and failing", {"provider_failing": True}),
        Change(40, "settlement lag 30 -> 45 min", {"settlement_lag_min": 45}),
    ],
    "cache off, then back": [
        Change(12, "cache disappears", {"cache_online": False}),
        Change(40, "cache back", {"cache_online": True}),
    ],
}


def held_out(name: str, seed: int = 7, tasks: int = 60) -> Scenario:
    """A fresh scenario of ``tasks`` tasks of drift's mix under the held-out drift ``name``."""
    changes = HELD_OUT_DRIFTS[name]
    world, drawn = generate(tasks, random.Random(seed), lambda i: MIX, lambda i: LEARNABLE, changes, 6.0)
    return Scenario(name, world, drawn, [("all", 1, tasks)], changes=list(changes))


def build(name: str, seed: int = 7) -> Scenario:
    """A fresh scenario (a new world: writes and changes of one run never leak into another)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown scenario {name!r}: use one of {', '.join(SCENARIOS)} or all")
    return BUILDERS[name](seed)


def seed_memory(memory: Memory, lessons: list[tuple[str, int]]) -> None:
    """Write the scenario's starting lessons, learned on status questions by an earlier deployment, each
    proposed ``times`` times (twice makes it active)."""
    for rule, times in lessons:
        for n in range(times):
            memory.propose(rule, task_id=f"S{n + 1}", run_id="seed", task_type=sw.STATUS,
                           failure_reason="an earlier deployment")  # fmt: skip
