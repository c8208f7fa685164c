"""Which calls of a run were wasted (notebooks 02 and 04): one definition, for the fast loop, the votes
and the threshold.

Three places ask "was this call wasted?": the fast loop's review (should it reflect?), memory's votes
(does a rule that sent the agent to a tool pay for it?) and the write threshold (how many calls would a
new rule have saved?). They all use this module, so they never disagree. It judges from the run alone
(the steps and the final answer), never from the world: no tool name or status is spelled here.

A look-up is **redundant** (``redundant_steps``) when:

- it brought no new field the answer used (an 'ok' whose fields are all known, or none in the answer);
  except the last step with news when the answer changed a field known before it (a provider's
  'declined' turning 'pending' into 'payment_failed'), and a step that first gave a field of the
  answer which a later call then resolved (the 'pending' that sent the agent to the provider);
- it is **covered**: every answer value it supplied was supplied by one other look-up that supplied
  more of them, or the same ones earlier. Asking the slow provider first and then the database, which
  gives status, amount *and* the payment time, makes the provider call the redundant one, although it
  came first. Which tool came first is the agent's choice; which one the answer could do without is not;
- a 'not_found' after another tool found the order, or after a ``complete`` tool (one whose description
  says it holds every record) found nothing. A first miss is not: it is how you learn.

A call is **wasted** (``wasted_steps``) when it was wrong (unless the same tool answered later in the
run: it was right and merely flaky), or covered, or redundant and also no news at all (a 'not_found' as
above, or an 'ok' repeating known fields). Why not every redundant 'ok': only order-status answers share
field names with the look-ups; a refund or delivery answer shares none, so every look-up would count as
waste there. Writes are judged by the grader, not here.

Left out on purpose: the cost of a call (a wasted 6 s provider call and a wasted 0.05 s cache call
count the same: one call).
"""

from collections.abc import Collection

from ralph_mini.react import Step, Trace
from ralph_mini.tools import read_fields


def redundant_steps(
    trace: Trace,
    writing: Collection[str] = (),
    complete: Collection[str] = (),
    covered: Collection[int] | None = None,
) -> list[int]:
    """Indexes of look-ups that brought nothing the answer needed, judged from the run alone.
    ``covered``: the run's ``covered_steps``, if the caller has them already."""
    answer = {k: str(v).strip().lower() for k, v in (trace.answer or {}).items()}
    known: dict[str, str] = {}
    found_before = missing_before = False
    redundant = set(covered_steps(trace, writing) if covered is None else covered)
    lookups = [s for s in trace.steps if not s.wrong and s.tool not in writing]
    read = [_fields(s) for s in lookups]
    for number, (step, fields) in enumerate(zip(lookups, read, strict=True)):
        new = {k: v for k, v in fields.items() if known.get(k) != v}
        useful = [k for k, v in new.items() if not answer or _same(answer.get(k), v) or _elsewhere(v, answer)]
        changed = any(k in known and not _same(v, known[k]) for k, v in answer.items())
        seen = known | fields
        later_news = any(seen.get(k) != v for later in read[number + 1 :] for k, v in later.items())
        useful += [
            k for k in new if k in answer and later_news
        ]  # a field of the answer a later call resolved
        if step.status == "ok" and not useful and not (new and changed and not later_news):
            redundant.add(step.index)
        elif step.status == "not_found" and (found_before or missing_before):
            redundant.add(step.index)
        known.update(fields)
        found_before = found_before or step.status == "ok"
        missing_before = missing_before or (step.status == "not_found" and step.tool in complete)
    return sorted(redundant)


def covered_steps(trace: Trace, writing: Collection[str] = ()) -> list[int]:
    """Indexes of 'ok' look-ups whose answer values another look-up supplied too, with more (or the
    same, earlier). A look-up that supplied no answer value is not judged here."""
    answer = {k: str(v).strip().lower() for k, v in (trace.answer or {}).items()}
    lookups = [s for s in trace.steps if s.status == "ok" and not s.wrong and s.tool not in writing]
    supplied = {s.index: _answer_keys(_fields(s), answer) for s in lookups}
    covered = []
    for step in lookups:
        mine = supplied[step.index]
        others = [(keys, s.index) for s in lookups if s is not step for keys in [supplied[s.index]]]
        if mine and any(mine < keys or (mine == keys and index < step.index) for keys, index in others):
            covered.append(step.index)
    return covered


def wasted_steps(steps: list[Step], redundant: Collection[int], covered: Collection[int] = ()) -> list[int]:
    """Indexes of the wasted calls (see the module docstring): ``redundant`` and ``covered`` come from
    ``redundant_steps`` and ``covered_steps`` of the same run."""
    answered = {step.tool: step.index for step in steps if step.status == "ok"}
    known: dict[str, str] = {}
    wasted = []
    for step in steps:
        fields = read_fields(step.observation) if step.status == "ok" else {}
        repeat = all(known.get(k) == v for k, v in fields.items())
        known.update(fields)
        if step.wrong and answered.get(step.tool, -1) < step.index:
            wasted.append(step.index)
        elif step.index in covered:
            wasted.append(step.index)
        elif step.index in redundant and (step.status != "ok" or repeat):
            wasted.append(step.index)
    return wasted


def wasted_calls(steps: list[Step], redundant: Collection[int], covered: Collection[int] = ()) -> list[str]:
    """The tool of each wasted call: what memory's votes charge to the rules that sent the agent there."""
    by_index = {step.index: step.tool for step in steps}
    return [by_index[i] for i in wasted_steps(steps, redundant, covered)]


def run_waste(trace: Trace, writing: Collection[str] = (), complete: Collection[str] = ()) -> list[int]:
    """The wasted calls of a finished run, by index: the one answer the loop, votes and threshold use."""
    covered = covered_steps(trace, writing)
    return wasted_steps(trace.steps, redundant_steps(trace, writing, complete, covered), covered)


def _fields(step: Step) -> dict[str, str]:
    if step.status != "ok":
        return {}
    return {k: v.strip().lower() for k, v in read_fields(step.observation).items()}


def _answer_keys(fields: dict[str, str], answer: dict[str, str]) -> frozenset[str]:
    """The answer's keys this look-up supplied a value for: the same key and value, or a long value
    under another key (a provider's settled_at as the answer's paid_at)."""
    keys = {k for k, v in fields.items() if _same(answer.get(k), v)}
    keys |= {k for k, v in answer.items() if len(v) >= 6 and v in fields.values()}
    return frozenset(keys)


def _elsewhere(value: str, answer: dict) -> bool:
    """A long value under another key: a provider's settled_at as the answer's paid_at."""
    return len(value) >= 6 and value in answer.values()


def _same(a: str | None, b: str) -> bool:
    try:
        return a is not None and abs(float(a) - float(b)) < 0.01
    except ValueError:
        return a == b
