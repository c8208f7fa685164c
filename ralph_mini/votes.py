"""Which runs vote on a rule, and how its votes fade (notebook 04).

Two questions decide whether a lesson keeps its place in memory, and both are answered here so they
can be read in one page:

- **Was the rule in play?** Only if its *whole* trigger held in the run (``trigger_held``): the tool
  found the order (or nothing), the status was observed, and for an age condition an observed order of
  that status was under (over) the limit, by its ``created_at`` at the task's current time. The run's
  tags come from ``log.run_tags``: {'any', 'query_local_cache:found', 'status:pending',
  'age:pending:12'}. A rule whose trigger did not hold neither earns nor loses anything.
- **What did it cost, and could the rule have caused it?** A wasted call (wrong or redundant,
  ``waste.wasted_calls``) counts against the rules that sent the agent to that tool (``sent_to``: 'call
  T', 'start with T'): a rule that only wastes calls is voted out too. So does a run in which such a rule
  was in play and the world did not offer its tool (the cache is gone): it cannot be followed and takes a
  lesson's place for nothing. And a 'call T' rule, when T had nothing on a record another tool found
  (``called_for_nothing``): for an agent exploring, a first miss is how it learns (no waste,
  ``waste.py``), but the rule claimed T had something (a world whose needed check answers with a miss,
  'no refund for this order', would see such a rule voted out although the check was needed). A 'start
  with T' rule pays for a miss only when a faster tool (by the latencies the tools declare) then found
  the record (``started_slow_for_nothing``): a good start misses too (the cache first: cheap, and it
  often has the record), and its misses are its price when what found the record was slower; starting
  with a slow source that had nothing, where a faster one had it, never paid. (A tool offered but not
  called is no vote either way: the model did not follow the rule, often on another task type.) A wrong
  answer counts against the rules that could have caused it by withholding something (``withheld``):
  'answer' (stop now), or 'skip T' when the run then made no call to T that answered. A rule that only
  adds a lookup cannot make an answer wrong, so a wrong answer is no vote on it (it would otherwise pay
  for every mistake of another task type, or of another lesson, made while it was in play). A correct run
  without waste on its tools is an up-vote.

Votes decay **by votes** (``decayed``): each new vote on a rule multiplies its earlier ones by
``0.5 ** (1 / half_life)``, so with a half-life of 5 a vote counts half after five more on that rule.
This is recency as in Generative Agents (Park et al. 2023: an exponential decay of a memory's score,
there per game hour, here per vote) applied to ExpeL's up- and down-votes of an insight (Zhao et al.
2024: an insight is dropped when its votes reach zero). We count votes rather than hours because a
rule is judged by the tasks it met: a rule met rarely keeps its record, a rule met often is judged on
its last few tasks. Steady state: n up-votes in a row weigh (1 - k ** n) / (1 - k), at most 7.7 with
k = 0.5 ** 0.2; 23 weigh 7.41, and five straight failures then outweigh them (3.86 down, 3.70 up).

What a vote does (``apply_vote``): a rule is judged by what it does *now*. Besides the decayed tally,
each rule keeps its last few votes (``Experience.recent``); when ``recent_failures`` of its last
``recent_window`` are down (2 of 3), it is *invalid* from now, whatever its past: a lag that grew, a
source that went stale, a planted lesson that was wrong from the start. A rule on *probation* (proposed
once, injected at once) is invalid at its first down-vote, and made active by its first up-vote. With
``max_failures`` failures and more recent down- than up-votes in the tally, an active rule is *removed*.

Left out on purpose: partial credit (a vote is 1), and decay by wall-clock time (weights already decay
by days since last hit, ``memory.decay_factor``).
"""

from collections.abc import Collection, Mapping

from ralph_mini.experience import Experience, MemoryConfig
from ralph_mini.rules import Rule, rule_in


def trigger_tag(rule: Rule) -> str:
    """The tag a trigger is indexed by (age conditions not included): 'status:pending', 'any', ..."""
    trigger = rule.trigger
    if trigger.kind == "any":
        return "any"
    if trigger.kind in ("finds", "nothing"):
        return f"{trigger.tool}:{'found' if trigger.kind == 'finds' else 'nothing'}"
    return f"status:{trigger.status}"


def trigger_held(rule: Rule, revealed: Collection[str]) -> bool:
    """Did the rule's whole trigger hold in a run that revealed these tags?

    'when status is pending and age under 30 min: ...' with {'status:pending', 'age:pending:12'} -> True;
    with {'status:pending', 'age:pending:95'} or {'status:pending'} (no age seen) -> False.
    """
    trigger, tag = rule.trigger, trigger_tag(rule)
    if trigger.age_op is None or trigger.minutes is None:
        return tag == "any" or tag in revealed
    prefix = f"age:{trigger.status}:"
    ages = [int(t[len(prefix) :]) for t in revealed if t.startswith(prefix)]
    if trigger.age_op == "under":
        return any(age < trigger.minutes for age in ages)
    return any(age > trigger.minutes for age in ages)


def sent_to(rule: Rule) -> set[str]:
    """The tools a rule makes the agent call ('call T', 'start with T'): it pays for their waste."""
    return {a.tool for a in rule.actions if a.verb in ("call", "start") and a.tool}


def called_for_nothing(rule: Rule, revealed: Collection[str]) -> set[str]:
    """The tools a 'call T' rule added that had nothing ('T:nothing', never 'T:found') in a run where
    another tool found the record: the rule claimed T had something, and here it had not."""
    added = {a.tool for a in rule.actions if a.verb == "call" and a.tool}
    empty = {t for t in added if f"{t}:nothing" in revealed and f"{t}:found" not in revealed}
    return empty if any(t.endswith(":found") for t in revealed) else set()


def started_slow_for_nothing(rule: Rule, revealed: Collection[str], latency: Mapping[str, float]) -> set[str]:
    """The tools a 'start with T' rule put first that had nothing in a run where a faster tool (by the
    latencies the tools declare) found the record: starting there would have found it sooner."""
    found = [t.split(":")[0] for t in revealed if t.endswith(":found")]
    first = {a.tool for a in rule.actions if a.verb == "start" and a.tool in latency}
    return {
        t for t in first
        if f"{t}:nothing" in revealed and f"{t}:found" not in revealed
        and any(f in latency and latency[f] < latency[t] for f in found)
    }  # fmt: skip


def withheld(rule: Rule, revealed: Collection[str]) -> bool:
    """Could the rule have made a wrong answer wrong? It said 'answer', or 'skip T' and no call to T
    answered in the run (T found nothing or the order: tags 'T:nothing' / 'T:found')."""
    called = {t.split(":")[0] for t in revealed if t.endswith((":found", ":nothing"))}
    return any(a.verb == "answer" or (a.verb == "skip" and a.tool not in called) for a in rule.actions)


def judge(
    rule_text: str,
    tag: str,
    revealed: Collection[str],
    wasted: Collection[str],
    correct: bool,
    offered: Collection[str] | None = None,
    latency: Mapping[str, float] | None = None,
):
    """The vote of one run on one rule: None (not in play, or wrong in a way it could not cause), else
    (up, why down: '' for a wrong answer, '2 wasted calls to T', 'called T, which had nothing another
    tool found', 'started with T, which had nothing a faster tool found', 'T not offered'); see the module
    docstring. ``offered``: the run's tool names (None: not known); ``latency``: tool -> declared seconds
    (None: not known, so no start is judged by speed). A rule that does not parse (a hand-edited file) is
    judged by its tag and the verdict."""
    rule = rule_in(rule_text)
    if rule is None:
        return (correct, "") if tag == "any" or tag in revealed else None
    if not trigger_held(rule, revealed):
        return None
    waste = [tool for tool in wasted if tool in sent_to(rule)]
    if waste:
        return False, f"{len(waste)} wasted calls to {', '.join(sorted(set(waste)))}"
    empty = called_for_nothing(rule, revealed)
    if empty:
        return False, f"called {', '.join(sorted(empty))}, which had nothing another tool found"
    slow = started_slow_for_nothing(rule, revealed, latency or {})
    if slow:
        return False, f"started with {', '.join(sorted(slow))}, which had nothing a faster tool found"
    missing = sent_to(rule) - set(offered) if offered is not None else set()
    if missing:
        return False, f"{', '.join(sorted(missing))} not offered"
    called = {t.split(":")[0] for t in revealed if t.endswith((":found", ":nothing"))} | set(wasted)
    if sent_to(rule) and not sent_to(rule) & called:
        return None  # not followed: the run says nothing about it
    if correct:
        return True, ""
    return (False, "") if withheld(rule, revealed) else None


def decayed(up: float, down: float, is_up: bool, half_life: float) -> tuple[float, float]:
    """(up, down) after one more vote: the old ones times 0.5 ** (1 / half_life), plus the new one.

    (0.0, 0.0, True, 5) -> (1.0, 0.0); (1.0, 0.0, False, 5) -> (0.870551, 1.0)
    """
    keep = 0.5 ** (1 / half_life)
    return round(up * keep + is_up, 6), round(down * keep + (not is_up), 6)


def apply_vote(e: Experience, up: bool, why: str, config: MemoryConfig, now: str) -> list[str]:
    """Count one vote on ``e`` and change its status if the vote says so; returns memory's notes. ``why``
    is '' for a wrong answer the rule could have caused, else the waste ('2 wasted calls to T')."""
    e.votes_up, e.votes_down = decayed(e.votes_up, e.votes_down, up, config.vote_half_life)
    e.recent = (e.recent + ("+" if up else "-" if why else "x"))[-config.recent_window :]
    if up:
        e.validations += 1
        if e.status != "probation":
            return []
        e.status, e.valid_from, e.status_reason, e.wrong_answers = "active", now, "validated on probation", 0
        return [f"active: {e.rule} (validated on probation)"]
    e.failures += 1
    e.wrong_answers += not why
    notes = [f"down-voted: {e.rule} ({e.failures} failures; {why or 'a wrong answer it could have caused'})"]
    if failing(e, config):
        was = failing(e, config)
        e.status, e.invalid_from, e.confirmations = "invalid", now, 0
        e.status_reason = f"{was}: what it says does not hold now"
        return [*notes, f"invalidated: {e.rule} ({e.status_reason})"]
    if e.status == "active" and e.failures >= config.max_failures and e.votes_down > e.votes_up:
        e.status, e.invalid_from = "removed", now
        down, up_votes = f"{e.votes_down:.1f}", f"{e.votes_up:.1f}"
        e.status_reason = (
            f"{e.failures} failures with it in play; recent votes {down} down against {up_votes} up"
        )
        notes.append(f"removed: {e.rule}")
    return notes


def failing(e: Experience, config: MemoryConfig) -> str:
    """Why a rule that was just down-voted loses its standing now ('' if it keeps it): on probation, at
    once; active, at 2 down of its last 3 votes, or at 2 wrong answers it could have caused since it
    became active (a wrong answer costs more than a wasted call, so ups between do not excuse it)."""
    downs = len(e.recent) - e.recent.count("+")
    if e.status == "probation":
        return "failed on probation"
    if e.status == "active" and downs >= config.recent_failures:
        return f"{downs} of its last {len(e.recent)} votes down"
    if e.status == "active" and e.wrong_answers >= config.max_wrong_answers:
        answers = "a wrong answer" if e.wrong_answers == 1 else f"{e.wrong_answers} wrong answers"
        return f"{answers} it could have caused since it became active"
    return ""
