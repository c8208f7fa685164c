"""How the offline model writes a reflection, knowing no tool, status or answer (notebooks 03 and 09).

When the offline model is sent no tools and a system prompt asking for the four-section template
(``reflect.py``), it analyses the compact log in the user message, and nothing else: the step lines,
the answer, the grader's verdict line (which answer fields it rejected, never the right values), the
current time in the run header, the record words and the tools' roles in the prompt. No tool name,
status, field or world fact is written in this module, so it reflects the same way on a renamed tool
set, a new task type or another world.

How it judges each step, from the log alone:

- *effective*: an ``ok`` step that brought a new field whose value the final answer used, or a field
  of the answer that a later call resolved (a status the slow source then settled); a ``not_found``
  that another tool confirmed or that told the answer there is no such record;
- *ineffective*: an ``ok`` step that only repeated known fields, or added nothing the answer used; a
  failed call; a ``not_found`` after a tool whose description says it holds *every* record said so;
  a write the grader rejected.

Each ineffective pattern becomes a rule in the micro-prompt grammar (``rules.py``):

- a repeat of what tool P already gave -> ``when P finds the NOUN: skip T``;
- useless or failed calls before the first effective tool E -> ``when any task: start with E`` (and,
  when the useless ones found the record, ``when E finds the NOUN: answer; skip T``);
- useless calls *after* the last effective one (the answer was complete) -> ``when status is W: skip T``
  for the status W then known (else ``when E finds the NOUN: answer``); not for a tool that declares a
  lag: asked after its lag, it checks whether the record changed, and "nothing changed" is an answer;
- nothing after a tool that holds every record -> ``when P finds nothing: skip T``;
- nothing from T for a record of status W, younger than the lag T declares (N minutes) ->
  ``when status is W and age under N min: skip T``; T helped an older one -> ``... over N min: call T``;
- a rejected answer, or a write, made without any look-up -> ``when any task: start with L`` (the
  read-only tool that holds every record, else the first listed); a rejected answer after seeing status
  W, with a read-only tool whose description speaks of W never called -> ``when status is W ...: call T``;
  else, when the tool that holds every record was never asked -> ``when any task: start with F`` (a
  partial source said something wrong: it went stale).

Reading the prompt and the log is ``offline_log.py``: the record words (``Frame``: NOUN, the status and
creation fields, the missing-record answer) and the tools' roles (writes, holds every, a lag).

Two habits the seed article saw: without the template it answers vaguely; re-asked, it drops long items.

Left out on purpose: learning from runs it has not been shown, from a step a lesson's guard refused (it
never ran; the votes judge the lesson), and any pattern it cannot see in the log.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini.offline_log import (
    Frame,
    ToolDoc,
    is_miss,
    last_news,
    later_news,
    read_frame,
    record_age,
    same,
    split_runs,
    tool_docs,
    used_by_answer,
)

MAX_WORDS_RE = re.compile(r"at most (\d+) words")
FOUND, REFUSED = ("ok", "not_found"), "refused"  # any other status: a failed call; refused: never ran

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
    docs, frame = tool_docs(system), read_frame(system)
    findings = Findings()
    for run in split_runs(log_text):
        analyse_run(run, docs, frame, findings)
    max_words = int(MAX_WORDS_RE.search(system)[1]) if MAX_WORDS_RE.search(system) else 30
    return render(findings, max_words if rejected else None)


def analyse_run(run: dict, docs: dict[str, ToolDoc], frame: Frame, out: Findings) -> None:
    """Label each step effective or ineffective, and turn each waste pattern into a rule."""
    steps, answer = run["steps"], run["answer"]
    known: dict[str, str] = {}
    first_source: dict[str, str] = {}  # field -> the tool that first gave it
    every_missing = None  # a tool that holds every record and found nothing
    wasted_before: list[dict] = []  # useless calls before the first effective one
    idle: list[tuple[int, str, str | None]] = []  # useless calls no rule explains: (number, tool, status)
    effective_tool, last_effective = None, -1
    for number, step in enumerate(steps):
        tool, status, fields = step["tool"], step["status"], step["fields"]
        useful, explained = False, True
        if tool in docs and docs[tool].writes:
            continue  # a write is judged by the grader's verdict (verdict_findings)
        if status == REFUSED:
            continue  # a lesson's guard turned it back: no call, nothing came of it (votes judge it)
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
            resolved = sorted(
                k for k in new if k in answer and k not in used and later_news(number, steps, fields)
            )
            useful = bool(used) or bool(new and changed and last_news(number, steps, known)) or bool(resolved)
            if useful:
                what = ", ".join((used or changed or resolved)[:4])
                out.add("effective", f"{tool} supplied {what}, used in the answer" if used or changed
                        else f"{tool} supplied {what}, which a later call resolved")  # fmt: skip
                call_rule(tool, docs, frame, known, run["now"], out)
            elif repeated:
                source = first_source[repeated[0]]
                out.add(
                    "ineffective", f"{tool} repeated {', '.join(repeated[:3])} from {source}; no new field"
                )
                out.add("rules", f"when {source} finds the {frame.noun}: skip {tool}")
                out.add("avoid", f"calling {tool} after {source} already gave {repeated[0]}")
            else:
                out.add("ineffective", f"{tool} added no field the answer used")
                explained = False
            for key, value in fields.items():
                first_source.setdefault(key, tool)
                known[key] = value
        else:
            useful, explained = not_found_step(number, step, run, docs, frame, known, every_missing, out)
            if every_missing is None and tool in docs and docs[tool].holds_every:
                every_missing = tool
        if useful:
            effective_tool, last_effective = effective_tool or tool, number
        elif effective_tool is None and not is_miss(number, steps):
            wasted_before.append(step)
        elif not explained and docs.get(tool, ToolDoc(tool, False, "")).minutes is None:
            idle.append((number, tool, known.get(frame.status_field)))  # a lagging source is a check
    reorder_rules(wasted_before, effective_tool, answer, steps, frame, out)
    if run["verdict"] != "rejected" and last_effective >= 0:
        after_answer_rules(idle, last_effective, steps[last_effective]["tool"], frame, out)
    verdict_findings(run, docs, frame, known, out)


def after_answer_rules(idle: list, last_effective: int, answering: str, frame: Frame, out: Findings) -> None:
    """Useless look-ups after the last effective call, which no other rule explains: the answer was
    complete before them. Skip each for the status then known; with no status, answer once the
    answering call has found the record."""
    for number, tool, status in idle:
        if number < last_effective:
            continue
        if status:
            out.add("rules", f"when status is {status}: skip {tool}")
        else:
            out.add("rules", f"when {answering} finds the {frame.noun}: answer")
        out.add("avoid", f"calling {tool} after the answer is complete")


def call_rule(
    tool: str, docs: dict[str, ToolDoc], frame: Frame, known: dict, now: datetime, out: Findings
) -> None:
    """T helped a record of status W older than the lag T declares: call it then."""
    status, age = known.get(frame.status_field), record_age(known, now, frame.created_field)
    minutes = docs[tool].minutes if tool in docs else None
    if status and minutes and age is not None and age > minutes:
        out.add("rules", f"when status is {status} and age over {minutes} min: call {tool}")


def not_found_step(
    number, step, run, docs, frame: Frame, known, every_missing, out: Findings
) -> tuple[bool, bool]:
    """Judge a not_found: (effective, explained by a rule or a finding)."""
    tool, steps = step["tool"], run["steps"]
    if every_missing:
        out.add("ineffective", f"{tool} after {every_missing} found nothing added no field")
        out.add("rules", f"when {every_missing} finds nothing: skip {tool}")
        out.add("avoid", f"asking {tool} about a {frame.noun} that {every_missing} does not have")
        return False, True
    if is_miss(number, steps):
        out.add("effective", f"{tool} missed cheaply and pointed to the next lookup")
        return True, True
    status, age, minutes = (
        known.get(frame.status_field),
        record_age(known, run["now"], frame.created_field),
        docs.get(tool, ToolDoc(tool, False, "")).minutes,
    )
    if status and minutes and age is not None and age < minutes:
        out.add("ineffective", f"{tool} had nothing for a {status} {frame.noun} {age} min old; too new")
        out.add("rules", f"when status is {status} and age under {minutes} min: skip {tool}")
        out.add("avoid", f"calling {tool} for a {status} {frame.noun} younger than {minutes} min")
        return False, True
    if frame.missing and frame.missing in {str(v) for v in run["answer"].values()}:
        out.add("effective", f"{tool} showed there is no such record: status {frame.missing}")
        return True, True
    out.add("ineffective", f"{tool} found nothing and added no field")
    return False, False


def reorder_rules(wasted: list[dict], effective: str | None, answer: dict, steps: list[dict], frame: Frame,
                  out: Findings) -> None:  # fmt: skip
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
        out.add("rules", f"when {effective} finds the {frame.noun}: answer{skips}")


def verdict_findings(run: dict, docs: dict[str, ToolDoc], frame: Frame, known: dict, out: Findings) -> None:
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
    status = known.get(frame.status_field)
    if not (rejected and status):
        return
    called = {s["tool"] for s in steps}
    age = record_age(known, run["now"], frame.created_field)
    meant = [
        d
        for d in docs.values()
        if not d.writes and d.name not in called and re.search(rf"\b{re.escape(status)}\b", d.text)
    ]
    for doc in meant:
        out.add(
            "ineffective",
            f"the grader rejected {wrong}; {doc.name}, meant for a {status} {frame.noun}, was never called",
        )
        if doc.minutes is None:
            out.add("rules", f"when status is {status}: call {doc.name}")
        elif age is not None and age > doc.minutes:
            out.add("rules", f"when status is {status} and age over {doc.minutes} min: call {doc.name}")
    fuller = [d.name for d in docs.values() if d.holds_every and not d.writes and d.name not in called]
    if not meant and fuller:  # what a partial source said was wrong, and the one that holds all was not asked
        out.add(
            "ineffective",
            f"the grader rejected {wrong}; {fuller[0]}, which holds every {frame.noun}, was never called",
        )
        out.add("rules", f"when any task: start with {fuller[0]}")


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
