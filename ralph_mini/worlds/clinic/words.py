"""The clinic front desk's words: tools, statuses, how patients ask, the prompt
(docs/your_own_world.md)."""

from ralph_mini.world import RequestType, Words

BOARD = "check_front_desk_board"  # today's board at the desk: fast, shows only upcoming appointments
SYSTEM = "query_scheduling_system"  # every appointment ever booked, with its room
INSURER = "ask_insurer"  # the insurer's portal: slow, learns of a booking 45 minutes late
CANCEL_APPOINTMENT = "cancel_appointment"  # it writes
CALENDAR, FAQ = "get_doctor_calendar", "search_clinic_faq"  # look-alikes: they sound right

STATUSES = ("booked", "awaiting_approval", "not_covered", "cancelled", "not_found")
STATUS, ROOM, CANCEL = "status", "room", "cancel"
DONE, REFUSED = "done", "refused"

PHRASINGS = {
    STATUS: ("Is appointment {id} confirmed?", "What is the status of appointment {id}?",
             "Can you check whether {id} is booked for sure?", "预约{id}确认了吗？"),
    ROOM: ("Which room is appointment {id} in?", "Where do I go for appointment {id}?",
           "What room was {id} given?", "预约{id}在哪个房间？"),
    CANCEL: ("Please cancel appointment {id}.", "I can't make it to {id}, cancel it please.",
             "Cancel my appointment {id}.", "请取消预约{id}"),
}  # fmt: skip

PROMPT = """You are the front-desk assistant of a medical clinic.
Current time: {now}.

Handle the patient's request about one appointment. Use the tools, one call at a time, and read each result.
Appointment statuses are: booked, awaiting_approval, not_covered, cancelled, not_found. If the insurer
reports approval=approved, the appointment is booked; denied means not_covered.
Cancellation policy: cancel only an appointment not cancelled yet that starts at least {notice_hours}
hours from now.
When you are done, reply without a tool call and end with one line, with the fields of the request:
- status: Final answer: {{"appointment_id": "...", "status": "..."}}
- room: Final answer: {{"appointment_id": "...", "room": "..."}}
- cancellation: Final answer: {{"appointment_id": "...", "cancel": "done" or "refused"}}
Leave out the fields you do not know."""
NOTICE_RE = r"starts at least (\d+)\s+hours from now"  # how a reader finds the notice in the prompt

WORDS = Words(
    job="a clinic's front-desk agent: appointment status, rooms and cancellations",
    noun="appointment",
    id_argument="appointment_id",
    id_pattern=r"(?<![A-Za-z0-9])((?i:apt)-\d{4})(?![0-9])",
    statuses=STATUSES,
    missing="not_found",
    requests=(
        RequestType(STATUS, ("status",), PHRASINGS[STATUS]),
        RequestType(ROOM, ("room",), PHRASINGS[ROOM], cues=("room", "where do i go", "房间")),
        RequestType(CANCEL, ("cancel",), PHRASINGS[CANCEL], ("cancel", "can't make it", "取消"), writes=True),
    ),
    fields=("status", "booked_at", "starts_at", "room", "approval", "claim_id"),
    created_field="booked_at",
    id_formats={"appointment id": r"\b(?i:apt)-\d{4}\b"},
)
