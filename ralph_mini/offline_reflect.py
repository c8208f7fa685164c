"""How the offline model writes a reflection (notebook 03).

When the offline model is sent no tools and a system prompt asking for the four-section template
(``reflect.py``), it analyses the compact log in the user message honestly: a step is *effective* when
it brought a field the final answer used, *ineffective* when it brought nothing new. Each ineffective
pattern it recognises becomes a rule in the micro-prompt grammar. It reads only the prompt: the log
lines, the current time in the run header, and the tool descriptions (that is where it learns that
the payment provider needs about 30 minutes).

Two habits, as the seed article saw in real models:

- asked for advice *without* the template, it answers vaguely ("improve performance");
- asked again after a rejection, it drops the items that were rejected for length.

Left out on purpose: learning from runs it has not been shown, and any pattern it cannot see in the log.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini import order_words as words
from ralph_mini.tools import read_fields

RUN_RE = re.compile(r"^run (\S+) at (\d{4}-\d\d-\d\d \d\d:\d\d): (.*)$")
STEP_RE = re.compile(r"^(\d+) (\S+)\((.*)\) (\w+) [\d.]+s: (.*)$")
RESULT_RE = re.compile(r"^result: (.*?), answer (.*); \d+ calls")
LAG_RE = re.compile(r"about (\d+) minutes after")
MAX_WORDS_RE = re.compile(r"at most (\d+) words")
CACHE, DATABASE, PAYMENT = words.CACHE, words.DATABASE, words.PAYMENT

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
    lag = LAG_RE.search(system)
    findings = Findings()
    for run in split_runs(log_text):
        analyse_run(run, int(lag[1]) if lag else None, findings)
    max_words = int(MAX_WORDS_RE.search(system)[1]) if MAX_WORDS_RE.search(system) else 30
    return render(findings, max_words if rejected else None)


def split_runs(log_text: str) -> list[dict]:
    """Parse the compact log into runs: header, steps (tool, status, fields), and the answer."""
    runs: list[dict] = []
    for line in log_text.splitlines():
        if header := RUN_RE.match(line):
            now = datetime.strptime(header[2], "%Y-%m-%d %H:%M")
            runs.append({"now": now, "steps": [], "answer": {}})
        elif (step := STEP_RE.match(line)) and runs:
            fields = read_fields(step[5]) if step[4] == "ok" else {}
            runs[-1]["steps"].append({"tool": step[2], "status": step[4], "fields": fields})
        elif (result := RESULT_RE.match(line)) and runs:
            try:
                runs[-1]["answer"] = json.loads(result[2]) or {}
            except json.JSONDecodeError:
                runs[-1]["answer"] = {}
    return runs


def analyse_run(run: dict, lag: int | None, out: Findings) -> None:
    """Label each step effective or ineffective, and turn each waste pattern into a rule."""
    seen: dict[str, str] = {}
    for step in run["steps"]:
        tool, status, fields = step["tool"], step["status"], step["fields"]
        if status in ("wrong_tool", "bad_args", "error"):
            out.add("ineffective", f"{tool} gave no status or amount for the order ({status})")
            out.add("rules", f"when any task: start with {CACHE}")
            out.add("avoid", f"calling {tool} to look up an order's payment status")
            continue
        if tool == CACHE:
            label = (
                "returned status and amount in 0.05 s" if status == "ok" else "missed cheaply, pointing to"
            )
            item = f"{CACHE} {label}" + ("" if status == "ok" else f" {DATABASE}")
            out.add("effective", item)
        elif tool == DATABASE:
            analyse_database(status, fields, seen, out)
        elif tool == PAYMENT:
            analyse_payment(status, seen, run, lag, out)
        seen.update(fields)
        if tool == DATABASE and status == "not_found":
            seen["__missing__"] = "yes"


def analyse_database(status: str, fields: dict, seen: dict, out: Findings) -> None:
    if status == "ok" and seen.get("status"):
        out.add(
            "ineffective", f"{DATABASE} after a {CACHE} hit repeated status and amount; it added no field"
        )
        out.add("rules", f"when {CACHE} finds the order: skip {DATABASE}")
        out.add("avoid", f"double-checking {DATABASE} after {CACHE} already returned the status")
    elif status == "ok":
        out.add("effective", f"{DATABASE} supplied status and amount after the cache miss")
    else:
        out.add("effective", f"{DATABASE} showed the order does not exist: status not_found")


def analyse_payment(status: str, seen: dict, run: dict, lag: int | None, out: Findings) -> None:
    if seen.get("__missing__"):
        out.add("ineffective", f"{PAYMENT} after {DATABASE} found nothing added no field")
        out.add("rules", f"when {DATABASE} finds nothing: skip {PAYMENT}")
        out.add("avoid", f"asking {PAYMENT} about orders that {DATABASE} does not have")
        return
    age = order_age(seen, run["now"])
    if status == "ok":
        out.add("effective", f"{PAYMENT} confirmed payment_status and txn_id for a pending order")
        if lag and age is not None and age > lag:
            out.add("rules", f"when status is pending and age over {lag} min: call {PAYMENT}")
        return
    if lag and age is not None and age < lag:
        out.add("ineffective", f"{PAYMENT} had no transaction for a pending order {age} min old; too new")
        out.add("rules", f"when status is pending and age under {lag} min: skip {PAYMENT}")
        out.add("avoid", f"waiting 6 s on {PAYMENT} for pending orders younger than {lag} min")
    else:
        out.add("ineffective", f"{PAYMENT} returned no transaction and added no field")


def order_age(seen: dict, now: datetime) -> int | None:
    created = seen.get("created_at")
    if not created:
        return None
    try:
        created_at = datetime.strptime(created.strip(), "%Y-%m-%d %H:%M")
    except ValueError:  # cut by the log's 120-character limit, or not a time at all
        return None
    return int((now - created_at).total_seconds() // 60)


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
