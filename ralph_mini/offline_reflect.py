"""How the offline model writes a reflection, knowing no tool, status or answer (notebooks 03 and 09).

When the offline model is sent no tools and a system prompt asking for the four-section template
(``reflect.py``), it analyses the compact log in the user message, and nothing else: the step lines,
the answer, the grader's verdict line (which answer fields it rejected, never the right values), the
current time in the run header, and the tool descriptions in the prompt. No tool name, status or world
fact is written in this module, so it reflects the same way on a renamed tool set or a new task type.

How it judges each step, from the log alone:

- *effective*: an ``ok`` step that brought a new field whose value the final answer used; a
  ``not_found`` that another tool confirmed or that told the answer "not_found";
- *ineffective*: an ``ok`` step that only repeated known fields, or added nothing the answer used; a
  failed call; a ``not_found`` after a tool whose description says it holds *every* record said so;
  a write the grader rejected.

Each ineffective pattern becomes a rule in the micro-prompt grammar (``rules.py``):

- a repeat of what tool P already gave -> ``when P finds the order: skip T``;
- useless or failed calls before the first effective tool E -> ``when any task: start with E`` (and,
  when the useless ones found the order, ``when E finds the order: answer; skip T``);
- nothing after a tool that holds every record -> ``when P finds nothing: skip T``;
- nothing from T for an order of status W, younger than the minutes T's description names ->
  ``when status is W and age under N min: skip T``; T helped an older one -> ``... over N min: call T``;
- a rejected answer, or a write, made without any look-up -> ``when any task: start with L`` (the
  read-only tool that holds every record, else the first listed); a rejected answer after seeing status
  W, with a read-only tool whose description speaks of W never called -> ``when status is W ...: call T``.

Reading the prompt and the log is ``offline_log.py``; a tool that writes is marked "(writes)" there.

Two habits, as the seed article saw in real models: asked for advice *without* the template, it answers
vaguely; asked again after a rejection, it drops the items that were rejected for length.

Left out on purpose: learning from runs it has not been shown, and any pattern it cannot see in the log.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini.offline_log import ToolDoc, order_age, split_runs, tool_docs

MAX_WORDS_RE = re.compile(r"at most (\d+) words")
FOUND = ("ok", "not_found")  # every other status is a failed call

VAGUE_ADVICE = (
    "The agent could improve performance by being more efficient, avoiding unnecessary steps and "
    "double-checking important information. It should plan better and use the right tools."
)


@dataclass
class Findings:
    """What the analysis found, as ordered, de-duplicated lists of items."""

    effective: list[str] = field(default_factory=list)
    ineffective: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)

    def add(self, section: str, item: str) -> None:
        items = getattr(self, section)
        if item not in items:
            items.append(item)


def write_reflection(system: str, log_text: str, rejected: bool) -> str:
    """The reply to a reflection request: the filled template (or vague advice without one)."""
    if "REUSABLE RULES:" not in system:
        return VAGUE_ADVICE
    docs = tool_docs(system)
    findings = Findings()
    for run in split_runs(log_text):
        analyse_run(run, docs, findings)
    max_words = int(MAX_WORDS_RE.search(system)[1]) if MAX_WORDS_RE.search(system) else 30
    return render(findings, max_words if rejected else None)


def used_by_answer(key: str, value: str, answer: dict) -> bool:
    """Did the answer use this field: same key and value, or (for long values) the value elsewhere."""
    values = {k: str(v).strip().lower() for k, v in answer.items()}
    value = value.strip().lower()
    if key in values and same(values[key], value):
        return True
    return len(value) >= 6 and value in values.values()


def same(a: str, b: str) -> bool:
    try:
        return abs(float(a) - float(b)) < 0.01
    except ValueError:
        return a == b


def analyse_run(run: dict, docs: dict[str, ToolDoc], out: Findings) -> None:
    """Label each step effective or ineffective, and turn each waste pattern into a rule."""
    steps, answer = run["steps"], run["answer"]
    known: dict[str, str] = {}
    first_source: dict[str, str] = {}  # field -> the tool that first gave it
    every_missing = None  # a tool that holds every record and found nothing
    wasted_before: list[dict] = []  # useless calls before the first effective one
    effective_tool = None
    for number, step in enumerate(steps):
        tool, status, fields = step["tool"], step["status"], step["fields"]
        useful = False
        if tool in docs and docs[tool].writes:
            continue  # a write is judged by the grader's verdict (verdict_findings)
        if status not in FOUND:
            out.add("ineffective", f"{tool} failed ({status}) and gave no field")
            out.add("avoid", f"calling {tool} for this kind of request")
        elif status == "ok":
            new = {k: v for k, v in fields.items() if known.get(k) != v}
            used = sorted(k for k, v in new.items() if used_by_answer(k, v, answer))
            repeated = sorted(
                k for k, v in fields.items() if known.get(k) == v and used_by_answer(k, v, answer)
            )
            changed = sorted(k for k, v in answer.items() if k in known and not same(known[k], str(v)))
            useful = bool(used) or bool(new and changed and last_news(number, steps, known))
            if useful:
                out.add(
                    "effective", f"{tool} supplied {', '.join((used or changed)[:4])}, used in the answer"
                )
                call_rule(tool, docs, known, run["now"], out)
            elif repeated:
                source = first_source[repeated[0]]
                out.add(
                    "ineffective", f"{tool} repeated {', '.join(repeated[:3])} from {source}; no new field"
                )
                out.add("rules", f"when {source} finds the order: skip {tool}")
                out.add("avoid", f"calling {tool} after {source} already gave {repeated[0]}")
            else:
                out.add("ineffective", f"{tool} added no field the answer used")
            for key, value in fields.items():
                first_source.setdefault(key, tool)
                known[key] = value
        else:
            useful = not_found_step(number, step, run, docs, known, every_missing, out)
            if every_missing is None and tool in docs and docs[tool].holds_every:
                every_missing = tool
        if useful and effective_tool is None:
            effective_tool = tool
        elif effective_tool is None and not useful and not is_miss(number, steps):
            wasted_before.append(step)
    reorder_rules(wasted_before, effective_tool, answer, steps, out)
    verdict_findings(run, docs, known, out)


def last_news(number: int, steps: list[dict], known: dict) -> bool:
    """No later ok step brought a field not yet known: this step is what the answer's change rests on."""
    seen = dict(known) | steps[number]["fields"]
    return not any(
        s["status"] == "ok" and any(seen.get(k) != v for k, v in s["fields"].items())
        for s in steps[number + 1 :]
    )


def call_rule(tool: str, docs: dict[str, ToolDoc], known: dict, now: datetime, out: Findings) -> None:
    """T helped an order of status W older than the minutes T's description names: call it then."""
    status, age = known.get("status"), order_age(known, now)
    minutes = docs[tool].minutes if tool in docs else None
    if status and minutes and age is not None and age > minutes:
        out.add("rules", f"when status is {status} and age over {minutes} min: call {tool}")


def is_miss(number: int, steps: list[dict]) -> bool:
    """A not_found followed by another tool finding the order: a cheap miss is how you learn."""
    step = steps[number]
    return step["status"] == "not_found" and any(
        s["status"] == "ok" and s["tool"] != step["tool"] for s in steps[number + 1 :]
    )


def not_found_step(number, step, run, docs, known, every_missing, out: Findings) -> bool:
    """Judge a not_found; True when it was effective."""
    tool, steps = step["tool"], run["steps"]
    if every_missing:
        out.add("ineffective", f"{tool} after {every_missing} found nothing added no field")
        out.add("rules", f"when {every_missing} finds nothing: skip {tool}")
        out.add("avoid", f"asking {tool} about orders that {every_missing} does not have")
        return False
    if is_miss(number, steps):
        out.add("effective", f"{tool} missed cheaply and pointed to the next lookup")
        return True
    status, age, minutes = (
        known.get("status"),
        order_age(known, run["now"]),
        docs.get(tool, ToolDoc(tool, False, "")).minutes,
    )
    if status and minutes and age is not None and age < minutes:
        out.add("ineffective", f"{tool} had nothing for a {status} order {age} min old; too new")
        out.add("rules", f"when status is {status} and age under {minutes} min: skip {tool}")
        out.add("avoid", f"calling {tool} for {status} orders younger than {minutes} min")
        return False
    if "not_found" in {str(v) for v in run["answer"].values()}:
        out.add("effective", f"{tool} showed there is no such record: status not_found")
        return True
    out.add("ineffective", f"{tool} found nothing and added no field")
    return False


def reorder_rules(wasted: list[dict], effective: str | None, answer: dict, steps: list[dict], out) -> None:
    """Useless calls before the first effective tool E: start with E; if they found the order and E
    alone gave what the answer used, answer once E has it."""
    if not wasted or effective is None:
        return
    out.add("rules", f"when any task: start with {effective}")
    found_before = [s["tool"] for s in wasted if s["status"] == "ok"]
    gave = [s for s in steps if s["tool"] == effective and s["status"] == "ok"]
    needed = {
        k
        for s in steps
        if s["status"] == "ok"
        for k, v in s["fields"].items()
        if used_by_answer(k, v, answer)
    }
    if found_before and gave and needed <= set(gave[0]["fields"]):
        skips = "".join(f"; skip {t}" for t in dict.fromkeys(found_before))
        out.add("rules", f"when {effective} finds the order: answer{skips}")


def verdict_findings(run: dict, docs: dict[str, ToolDoc], known: dict, out: Findings) -> None:
    """What the grader's rejection, or an answer given blind, teaches."""
    steps, rejected = run["steps"], run["verdict"] == "rejected"
    lookups = sorted((d.name for d in docs.values() if not d.writes), key=lambda n: not docs[n].holds_every)
    looked = [
        s for s in steps if s["status"] in FOUND and not docs.get(s["tool"], ToolDoc("", False, "")).writes
    ]
    wrote = [
        s["tool"] for s in steps if s["status"] == "ok" and docs.get(s["tool"], ToolDoc("", False, "")).writes
    ]
    wrong = ", ".join(run["wrong"][:3]) or "the answer"
    for tool in dict.fromkeys(wrote):
        if rejected:
            out.add("ineffective", f"{tool} wrote and the grader rejected {wrong}")
            out.add("avoid", f"calling {tool} before the lookups show the policy allows it")
        elif looked and run["verdict"] == "accepted":
            out.add("effective", f"{tool} wrote after the lookups, and the grader accepted it")
    if not looked and lookups and (rejected or wrote or not steps):
        out.add("ineffective", f"answered without any lookup; {lookups[0]} was never called")
        out.add("rules", f"when any task: start with {lookups[0]}")
        return
    status = known.get("status")
    if not (rejected and status):
        return
    called = {s["tool"] for s in steps}
    age = order_age(known, run["now"])
    for doc in docs.values():
        if doc.writes or doc.name in called or not re.search(rf"\b{re.escape(status)}\b", doc.text):
            continue
        out.add(
            "ineffective",
            f"the grader rejected {wrong}; {doc.name}, meant for {status} orders, was never called",
        )
        if doc.minutes is None:
            out.add("rules", f"when status is {status}: call {doc.name}")
        elif age is not None and age > doc.minutes:
            out.add("rules", f"when status is {status} and age over {doc.minutes} min: call {doc.name}")


def render(findings: Findings, max_words: int | None) -> str:
    """The template text. With ``max_words`` (a re-ask), items over the limit are dropped."""
    sections = [
        ("EFFECTIVE STEPS", findings.effective),
        ("INEFFECTIVE STEPS", findings.ineffective),
        ("REUSABLE RULES", findings.rules),
        ("AVOID", findings.avoid),
    ]
    lines = []
    for title, items in sections:
        kept = [i for i in items if max_words is None or len(i.split()) <= max_words]
        lines.append(f"{title}:")
        lines.extend(f"- {item}" for item in kept or ["none"])
    return "\n".join(lines)
