"""Seeded clinic tasks with their truth and the oracle's calls (``make_suite``;
docs/your_own_world.md).

The oracle knows the rules, not the data: for a status, the board, then the system on a miss, then the
insurer for an appointment awaiting approval booked longer ago than its lag; for a room, the system;
for a cancellation, the system, then the cancellation if the policy allows it.
"""

import random
from datetime import timedelta

from ralph_mini.world import TIME_FORMAT, Suite, Task, expected_writes, in_language
from ralph_mini.worlds.clinic import words
from ralph_mini.worlds.clinic.world import INSURER_LAG_MIN, NOW, Appointment, Clinic

NOTICE_HOURS = 24
KINDS = {"on_board": 0.3, "off_board": 0.15, "cancelled": 0.1, "waiting_fresh": 0.15, "waiting_stale": 0.15,
         "missing": 0.15}  # fmt: skip
MIX = {words.STATUS: 0.5, words.ROOM: 0.25, words.CANCEL: 0.25}
RELEVANT = {words.STATUS: (words.BOARD, words.SYSTEM, words.INSURER), words.ROOM: (words.BOARD, words.SYSTEM),
            words.CANCEL: (words.BOARD, words.SYSTEM, words.CANCEL_APPOINTMENT)}  # fmt: skip


def random_appointment(rng: random.Random, appointment_id: str, kind: str) -> Appointment:
    booked = NOW - timedelta(minutes=rng.randint(2, INSURER_LAG_MIN - 10) if kind == "waiting_fresh"
                             else rng.randint(INSURER_LAG_MIN + 15, 20 * 24 * 60))  # fmt: skip
    starts = NOW + timedelta(hours=rng.randint(1, 240))
    status = {"cancelled": "cancelled", "waiting_fresh": "awaiting_approval",
              "waiting_stale": "awaiting_approval"}.get(kind, "booked")  # fmt: skip
    approval = None if kind != "waiting_stale" else ("approved" if rng.random() < 0.6 else "denied")
    room = f"{rng.choice('ABC')}{rng.randint(1, 12)}"
    on_board = kind in ("on_board", "waiting_fresh", "waiting_stale")
    return Appointment(appointment_id, kind, status, booked, starts, room, on_board, approval)


def truth(task_type: str, found: Appointment) -> dict:
    if found.kind == "missing":
        return {task_type: words.REFUSED} if task_type == words.CANCEL else {task_type: "not_found"}
    if task_type == words.ROOM:
        return {"room": found.room}
    if task_type == words.CANCEL:
        return {"cancel": words.DONE if cancellable(found) else words.REFUSED}
    if found.kind == "waiting_stale":
        return {"status": "booked" if found.approval == "approved" else "not_covered"}
    return {"status": found.status}


def cancellable(found: Appointment) -> bool:
    return found.status != "cancelled" and found.starts_at - NOW >= timedelta(hours=NOTICE_HOURS)


def oracle_calls(task_type: str, found: Appointment) -> int:
    if task_type == words.ROOM:
        return 1
    if task_type == words.CANCEL:
        return 1 + (found.kind != "missing" and cancellable(found))
    return (1 if found.on_board else 2) + (found.kind == "waiting_stale")


def make_suite(n: int = 50, seed: int = 7, language: str | None = None) -> Suite:
    """A clinic and ``n`` seeded tasks: same ``seed``, same tasks on every machine, asked in ``language``."""
    rng, clinic, tasks = random.Random(seed), Clinic(appointments={}), []
    for number in range(1, n + 1):
        task_type = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        appointment_id = f"APT-{rng.randint(1000, 9999)}"
        while appointment_id in clinic.appointments:
            appointment_id = f"APT-{rng.randint(1000, 9999)}"
        found = clinic.appointments[appointment_id] = random_appointment(rng, appointment_id, kind)
        phrasing = rng.choice(in_language(words.PHRASINGS[task_type], language))  # None: either language
        expected = truth(task_type, found)
        writes = ((words.CANCEL_APPOINTMENT, appointment_id),) if expected.get("cancel") == words.DONE else ()
        tasks.append(Task(
            task_id=f"T{number:03d}", question=words.PHRASINGS[task_type][phrasing].format(id=appointment_id),
            task_type=task_type, expected=expected, oracle_calls=oracle_calls(task_type, found),
            prompt=words.PROMPT.format(now=NOW.strftime(TIME_FORMAT), notice_hours=NOTICE_HOURS),
            now=NOW.strftime(TIME_FORMAT),
            relevant_tools=RELEVANT[task_type], kind=f"{task_type}:{kind}", record_id=appointment_id,
            phrasing=phrasing, check=expected_writes(clinic.writes, appointment_id, writes),
        ))  # fmt: skip
    return Suite(world=clinic, tasks=tasks)
