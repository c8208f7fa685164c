"""One lesson budget, everywhere (issue 16): every model call of a whole scenario run, planned lessons,
the second retrieval and fast-loop retries alike, carries at most 3 lessons and at most 15% of the
context in lesson bullets. And lessons stay with the task type that taught them."""

from ralph_mini import scenario_bench
from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, run_task
from ralph_mini.memory import Memory
from ralph_mini.model import ModelReply, count_tokens
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import plan
from ralph_mini.rules import LESSONS_HEADER, MORE_LESSONS_HEADER
from ralph_mini.worlds import orders
from ralph_mini.worlds.shop.scenarios import build

SEEN: list[list[str]] = []


class Recording(OfflineModel):
    """The offline model, keeping every lesson line of every prompt it is sent with tools."""

    def complete(self, messages, tools):
        if tools:
            system = "\n".join(m["content"] for m in messages if m["role"] == "system")
            SEEN.append(lesson_lines(system))
        return super().complete(messages, tools)


def lesson_lines(system: str) -> list[str]:
    lines, inside = [], False
    for line in system.splitlines():
        if line in (LESSONS_HEADER, MORE_LESSONS_HEADER):
            inside = True
        elif inside and line.startswith("- "):
            lines.append(line)
        else:
            inside = inside and line.startswith("- ")
    return lines


def test_every_prompt_of_a_scenario_run_holds_the_budget(monkeypatch):
    monkeypatch.setattr(scenario_bench, "OfflineModel", Recording)
    SEEN.clear()
    run = scenario_bench.run_arm("drift", scenario_bench.FULL)
    config = scenario_bench.FULL.loop
    turns = sum(r.trace.model_calls + sum(d.model_calls for d in r.discarded) for r in run.results)
    assert len(SEEN) == turns > 150 and any(SEEN)  # every call was seen (197), and lessons were carried
    for lines in SEEN:
        assert len(lines) <= config.top_k
        assert (
            count_tokens("".join(line + "\n" for line in lines))
            <= config.injection_budget * config.context_tokens
        )


def test_lessons_stay_with_the_task_type_that_taught_them():
    memory = Memory(FakeClock())
    shipping, cache = (
        "when any task: start with get_shipping_status",
        "when any task: start with query_local_cache",
    )
    for n in (1, 2):
        memory.propose(shipping, task_id=f"D{n}", run_id="R", task_type="delivery")
        memory.propose(cache, task_id=f"S{n}", run_id="R", task_type="status")
    scenario = build("drift")
    OFFERED = [t.name for t in scenario.world.tools()]  # noqa: N806
    delivery = next(t for t in scenario.tasks if t.task_type == "delivery")
    status = next(t for t in scenario.tasks if t.task_type == "status")
    every = list(memory.experiences.values())
    assert plan(status, memory, every, offered=["query_database"]) == []  # the cache is gone
    assert [e.rule for e in plan(delivery, memory, every, OFFERED)] == [shipping]
    assert [e.rule for e in plan(status, memory, every, OFFERED)] == [cache]
    # memory keeps one row per task type and rule: a delivery task proposing the cache rule starts a row
    # of its own, on probation and judged on delivery tasks alone; the status row is untouched
    memory.propose(cache, task_id="D3", run_id="R", task_type="delivery")
    rows = sorted(
        (e.task_type, e.status, e.source_tasks) for e in memory.experiences.values() if e.rule == cache
    )
    assert rows == [("delivery", "probation", ["D3"]), ("status", "active", ["S1", "S2"])]
    # on probation it is injected for delivery tasks, after the proven rule (weight 0.5 against 0.67)
    assert [e.rule for e in plan(delivery, memory, memory.live(), OFFERED)] == [shipping, cache]
    assert [e.rule for e in plan(status, memory, memory.live(), OFFERED)] == [cache]


FIVE_RULES = (
    """EFFECTIVE STEPS:
- query_local_cache gave status
INEFFECTIVE STEPS:
- none
REUSABLE RULES:
"""
    + "\n".join(
        f"- when status is {w}: skip query_payment_api"
        for w in ("paid", "pending", "refunded", "payment_failed", "not_found")
    )
    + """
AVOID:
- none"""
)


class Forgetful:
    """Answers without a status on its first run, then properly; reflects with five rules at once."""

    def __init__(self):
        self.lessons: list[list[str]] = []

    def complete(self, messages, tools):
        if not tools:
            return ModelReply(FIVE_RULES)
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        self.lessons.append(lesson_lines(system))
        if len(self.lessons) == 1:
            return ModelReply('Final answer: {"order_id": "A123"}')
        return ModelReply('Final answer: {"order_id": "A123", "status": "paid", "amount": 99.5}')


def test_a_fast_loop_retry_holds_the_same_budget():
    suite = orders.make_suite(n=2, seed=7)
    memory = Memory(FakeClock())
    model = Forgetful()
    result = run_task(
        suite.tasks[0], model, suite.world.tools(), memory, [], words=orders.WORDS, config=LoopConfig()
    )
    assert result.retries == 1 and len(model.lessons) == 2
    assert model.lessons[0] == [] and len(model.lessons[1]) == 3  # five reflection rules, cut to three
