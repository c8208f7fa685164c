"""How the offline reflector reads its prompt and the compact log (notebooks 02 and 03).

Two inputs, both text a real reflector reads too: the prompt's tool list (``- name[ (writes)]:
description``, ``reflect.reflection_messages``), where a tool says what it holds and after how many
minutes it knows something; and the compact log (``log.format_for_reflection``) with the grader's
verdict line the loop appends (``reflect.reflection_text``): which answer fields were rejected, never
their right values.

Left out on purpose: any judgement; that is ``offline_reflect.py``.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime

from ralph_mini.tools import read_fields

RUN_RE = re.compile(r"^run (\S+) at (\d{4}-\d\d-\d\d \d\d:\d\d): (.*)$")
STEP_RE = re.compile(r"^(\d+) (\S+)\((.*)\) (\w+) [\d.]+s: (.*)$")
RESULT_RE = re.compile(r"^result: (.*?), answer (.*); \d+ calls")
GRADER_RE = re.compile(r"^grader: (accepted|rejected|not graded)(?:; wrong or missing: (.*))?$")
TOOL_DOC_RE = re.compile(r"^- ([a-z_][a-z0-9_]*)( \(writes\))?: (.*)$")
MINUTES_RE = re.compile(r"(\d+) minutes")
EVERY_RE = re.compile(r"\bevery\b|\bsource of truth\b", re.I)


@dataclass(frozen=True)
class ToolDoc:
    """One line of the prompt's tool list: name, whether it writes, what it says of itself."""

    name: str
    writes: bool
    text: str

    @property
    def minutes(self) -> int | None:
        found = MINUTES_RE.search(self.text)
        return int(found[1]) if found else None

    @property
    def holds_every(self) -> bool:
        return bool(EVERY_RE.search(self.text))


def tool_docs(system: str) -> dict[str, ToolDoc]:
    """The prompt's tool list, '- name[ (writes)]: description' lines, a description running on until
    the next item or a blank line."""
    docs: dict[str, list] = {}
    current = None
    for line in system.splitlines():
        if match := TOOL_DOC_RE.match(line.strip()):
            current = match[1]
            docs[current] = [bool(match[2]), match[3]]
        elif current and line.strip() and not line.lstrip().startswith("-"):
            docs[current][1] += " " + line.strip()
        else:
            current = None
    return {name: ToolDoc(name, writes, text) for name, (writes, text) in docs.items()}


def split_runs(log_text: str) -> list[dict]:
    """Parse the compact log into runs: time, steps (tool, status, fields), answer and verdict."""
    runs: list[dict] = []
    for line in log_text.splitlines():
        if header := RUN_RE.match(line):
            now = datetime.strptime(header[2], "%Y-%m-%d %H:%M")
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


def order_age(seen: dict, now: datetime) -> int | None:
    created = seen.get("created_at")
    if not created:
        return None
    try:
        created_at = datetime.strptime(created.strip(), "%Y-%m-%d %H:%M")
    except ValueError:  # cut by the log's 120-character limit, or not a time at all
        return None
    return int((now - created_at).total_seconds() // 60)
