"""How the offline reflector reads its prompt and the compact log (notebooks 02 and 03).

Two inputs, both text a real reflector reads too: the prompt, with the world's record words (``Frame``:
what a record is called, which fields carry its status and creation time, what answer says "no such
record") and its tool list (``- name (roles): description``, ``reflect.reflection_messages``), where a
tool's roles say whether it writes, holds every record, or learns of a record some minutes late; and
the compact log (``log.format_for_reflection``) with the grader's verdict line the loop appends
(``reflect.reflection_text``): which answer fields were rejected, never their right values.

Also here, since they only read values off the log: whether the answer used a field, and whether a
later step brought news. Left out on purpose: any judgement; that is ``offline_reflect.py``.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime

from ralph_mini.tools import read_fields
from ralph_mini.world import parse_time, time_since

RUN_RE = re.compile(r"^run (\S+) at (\d{4}-\d\d-\d\d \d\d:\d\d): (.*)$")
STEP_RE = re.compile(r"^(\d+) (\S+)\((.*)\) (\w+) [\d.]+s: (.*)$")
RESULT_RE = re.compile(r"^result: (.*?), answer (.*); \d+ calls")
GRADER_RE = re.compile(r"^grader: (accepted|rejected|not graded)(?:; wrong or missing: (.*))?$")
TOOL_DOC_RE = re.compile(r"^- ([a-z_][a-z0-9_]*)(?: \(([^)]*)\))?: (.*)$")
LAG_RE = re.compile(r"(\d+) min")
FRAME_RE = re.compile(
    r'Records are "(?P<noun>\w+)": status field (?P<status>\w+), creation time field (?P<created>\w+), '
    r"answer for no such record (?P<missing>\S+?)\."
)


@dataclass(frozen=True)
class Frame:
    """The world's record words, as the prompt states them (``reflect.FRAME_LINE``). A prompt that does
    not state them gets no creation field and no "missing" answer: no age rule can then be read."""

    noun: str = "record"
    status_field: str = "status"
    created_field: str = ""
    missing: str = ""


@dataclass(frozen=True)
class ToolDoc:
    """One line of the prompt's tool list: name, the roles it declares, what it says of itself."""

    name: str
    writes: bool
    text: str
    roles: str = ""

    @property
    def minutes(self) -> int | None:
        """After how many minutes it knows of a record (a declared lag), else None."""
        found = LAG_RE.search(self.roles)
        return int(found[1]) if found else None

    @property
    def holds_every(self) -> bool:
        return "holds every" in self.roles


def read_frame(system: str) -> Frame:
    """The prompt's record words; a prompt without them gets generic ones (``Frame()``)."""
    match = FRAME_RE.search(system)
    return Frame(match["noun"], match["status"], match["created"], match["missing"]) if match else Frame()


def tool_docs(system: str) -> dict[str, ToolDoc]:
    """The prompt's tool list, '- name (roles): description' lines, a description running on until
    the next item or a blank line."""
    docs: dict[str, list] = {}
    current = None
    for line in system.splitlines():
        if match := TOOL_DOC_RE.match(line.strip()):
            current = match[1]
            docs[current] = [match[2] or "", match[3]]
        elif current and line.strip() and not line.lstrip().startswith("-"):
            docs[current][1] += " " + line.strip()
        else:
            current = None
    return {
        name: ToolDoc(name, "writes" in roles.split(", "), text, roles)
        for name, (roles, text) in docs.items()
    }


def split_runs(log_text: str) -> list[dict]:
    """Parse the compact log into runs: time, steps (tool, status, fields), answer and verdict."""
    runs: list[dict] = []
    for line in log_text.splitlines():
        if header := RUN_RE.match(line):
            now = parse_time(header[2])
            runs.append({"now": now, "steps": [], "answer": {}, "verdict": "not graded", "wrong": []})
        elif (step := STEP_RE.match(line)) and runs:
            fields = read_fields(step[5]) if step[4] == "ok" else {}
            runs[-1]["steps"].append({"tool": step[2], "status": step[4], "fields": fields})
        elif (result := RESULT_RE.match(line)) and runs:
            try:
                answer = json.loads(result[2])
            except json.JSONDecodeError:
                answer = {}
            runs[-1]["answer"] = answer if isinstance(answer, dict) else {}
        elif (verdict := GRADER_RE.match(line)) and runs:
            runs[-1]["verdict"] = verdict[1]
            runs[-1]["wrong"] = [w.strip() for w in (verdict[2] or "").split(",") if w.strip()]
    return runs


def record_age(seen: dict, now: datetime, created_field: str) -> int | None:
    """Whole minutes from the record's creation time (its field ``created_field``) to ``now``."""
    created = seen.get(created_field) if created_field else None
    elapsed = time_since(created, now) if created else None  # also None: cut at the log's 120 characters
    return None if elapsed is None else int(elapsed.total_seconds() // 60)


# --- what a step's fields did for the answer, read from the log -----------------------------------
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


def later_news(number: int, steps: list[dict], fields: dict) -> bool:
    """A later ok step brought a field this step did not already give: the answer may rest on it, and on
    this step's value as what it resolved ('status=awaiting_approval', then the insurer's approval)."""
    return any(
        s["status"] == "ok" and any(fields.get(k) != v for k, v in s["fields"].items())
        for s in steps[number + 1 :]
    )


def last_news(number: int, steps: list[dict], known: dict) -> bool:
    """No later ok step brought a field not yet known: this step is what the answer's change rests on."""
    seen = dict(known) | steps[number]["fields"]
    return not any(
        s["status"] == "ok" and any(seen.get(k) != v for k, v in s["fields"].items())
        for s in steps[number + 1 :]
    )


def is_miss(number: int, steps: list[dict]) -> bool:
    """A not_found followed by another tool finding the order: a cheap miss is how you learn."""
    step = steps[number]
    return step["status"] == "not_found" and any(
        s["status"] == "ok" and s["tool"] != step["tool"] for s in steps[number + 1 :]
    )
