"""The fast loop's quick review: is this run done, or should it be retried? (notebook 03)

The seed article's fast loop judges a run from what the agent itself can see, before any grader: wrong
calls, redundant calls (``waste.py``), whether the answer is complete for the task's type, whether the
run wrote to the world, whether it rested on any look-up. A run without a complete answer that wrote
nothing is retried with a reflection's rules (``learn.fast_loop``); everything else goes on to the
grader. ``planner.review`` calls it with the world's words and the roles its tools declare.

Left out on purpose: the grader's verdict (the fast loop runs before it) and any memory write.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ralph_mini.react import Trace
from ralph_mini.waste import redundant_steps


@dataclass(frozen=True)
class Review:
    """The fast loop's verdict on one run, from run-time signals only."""

    wrong_calls: int
    redundant_calls: int
    answered: bool
    complete: bool
    retry: bool
    reason: str
    wrote: bool = False  # a writing tool ran: the run is never retried (a retry would write again)
    blind: bool = False  # answered or wrote without any look-up: a finding even at no waste


def quick_review(
    trace: Trace,
    answer_fields: Sequence[str] = (),
    writing: Collection[str] = (),
    complete_tools: Collection[str] = (),
    missing: str | None = None,
) -> Review:
    """Score one run against what a good run looks like, from what the agent can see (no grader).

    Complete: the answer has the task's own ``answer_fields``, and an answer saying ``missing`` (the
    world's "no such record") rests on a tool that holds every record saying so (``complete_tools``;
    any look-up that answered when none is declared): in an outage of that tool, a partial source's
    "not found" is no evidence, and the run is retried. Retry only without a complete answer, never
    after a write (``writing``: the tools that change the world). An answer or write with no look-up
    at all is ``blind``.
    """
    answer = trace.answer or {}
    answered = trace.answer is not None
    answered_by = [s.tool for s in trace.steps if s.status in ("ok", "not_found") and s.tool not in writing]
    looked = bool(answered_by)
    wrote = any(s.status in ("ok", "wrong_tool") and s.tool in writing for s in trace.steps)  # it ran
    says_missing = missing is not None and any(str(v) == missing for v in answer.values())
    said_missing = [s.tool for s in trace.steps if s.status == "not_found" and s.tool not in writing]
    witness = any(t in complete_tools for t in said_missing) if complete_tools else looked
    complete = answered and all(k in answer for k in answer_fields) and (witness or not says_missing)
    blind = (answered or wrote) and not looked
    redundant = len(redundant_steps(trace, writing, complete_tools))
    if not answered:
        reason = f"no answer ({trace.stop_reason})"
    elif not complete:
        reason = f"answer lacks {', '.join(answer_fields)} or rests on no look-up"
    elif blind:
        reason = "answered without any look-up: reflect later"
    elif trace.wrong_calls or redundant:
        reason = f"answered, {trace.wrong_calls} wrong and {redundant} redundant calls: reflect later"
    else:
        reason = "clean run"
    retry = not complete and not wrote
    if not complete:
        reason += ": no retry, it wrote" if wrote else ": retry with a refined plan"
    return Review(
        wrong_calls=trace.wrong_calls,
        redundant_calls=redundant,
        answered=answered,
        complete=complete,
        retry=retry,
        reason=reason,
        wrote=wrote,
        blind=blind,
    )
