"""How the simulated model acts at the clinic's desk, as data: the naive assistant of the seed article
(docs/your_own_world.md).

Status: it double-checks the system after the board found the appointment, asks the insurer about every
appointment awaiting approval and about missing ones, and may first try a look-alike tool. Room: the
board first (it shows no rooms), then the system. Cancel: it cancels at once, without the policy.
"""

import re
from datetime import timedelta

from ralph_mini import offline_habits as oh
from ralph_mini.world import parse_time
from ralph_mini.worlds.clinic import words
from ralph_mini.worlds.clinic.world import Clinic

FOUND_FIELDS = oh.FieldAnswer("appointment_id", ("status",), ("status",), "not_found")


def status_answer(seen: oh.Seen) -> dict:
    """The records' status; for one awaiting approval, the insurer's word wins."""
    answer, insurer = FOUND_FIELDS(seen), oh.fields_of(seen, words.INSURER).get("approval")
    if answer["status"] == "awaiting_approval" and insurer in ("approved", "denied"):
        answer["status"] = "booked" if insurer == "approved" else "not_covered"
    return answer


def cancel_allowed(seen: oh.Seen) -> bool:
    """The policy, read from the prompt: not cancelled, and starting at least N hours from now."""
    notice, starts = re.search(words.NOTICE_RE, seen.system), seen.found_fields().get("starts_at")
    if not notice or not starts or seen.now is None or seen.status in (None, "cancelled"):
        return False
    return parse_time(starts) - seen.now >= timedelta(hours=int(notice[1]))


FIND = oh.LookUp(why="I'll find the appointment first.")
ASK_SYSTEM = oh.Move(words.SYSTEM, oh.FOUND, "The board shows no rooms; the scheduling system will.")
CANCEL_AT_ONCE = oh.Move(words.CANCEL_APPOINTMENT, oh.FIRST, "The patient wants it cancelled; cancelling.")
CANCEL_IF_ALLOWED = oh.Move(words.CANCEL_APPOINTMENT, oh.ALLOWED, "The policy allows it; cancelling.")
LOOK_UP_THOROUGHLY = oh.LookUp(thorough=True)  # double-check; ask the insurer about waiting and missing ones
LOOK_ALIKES = (words.CALENDAR, words.FAQ)  # they sound right for a status question
ROOM_ANSWER = oh.FieldAnswer("appointment_id", ("room",), ("room",), "not_found")
REQUESTS = {
    words.STATUS: oh.RequestHabit(
        (LOOK_UP_THOROUGHLY,), status_answer, tempted_by=(words.CALENDAR, words.FAQ)
    ),
    words.ROOM: oh.RequestHabit((FIND, ASK_SYSTEM), ROOM_ANSWER),
    words.CANCEL: oh.RequestHabit(
        (CANCEL_AT_ONCE, FIND, CANCEL_IF_ALLOWED),
        oh.WroteAnswer("appointment_id", words.CANCEL_APPOINTMENT, "cancel", words.DONE, words.REFUSED),
        allowed=cancel_allowed,
    ),
}
HABITS = oh.habits_for(words.WORDS, Clinic(appointments={}).tools(), REQUESTS, waiting=("awaiting_approval",))
