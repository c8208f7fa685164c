"""The clinic's appointments and its tools: a fast board at the desk that shows only upcoming
appointments, the scheduling system that holds them all, and an insurer that decides on appointments
awaiting approval and learns of a booking ``INSURER_LAG_MIN`` minutes late. Cancellations go to ``writes``
(docs/your_own_world.md)."""

from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import TIME_FORMAT, Words
from ralph_mini.worlds.clinic import words

NOW = datetime(2025, 6, 2, 9, 0)
INSURER_LAG_MIN = 45


@dataclass(frozen=True)
class Appointment:
    appointment_id: str
    kind: str  # on_board, off_board, cancelled, waiting_fresh, waiting_stale, missing
    status: str  # what the scheduling system says
    booked_at: datetime
    starts_at: datetime
    room: str
    on_board: bool
    approval: str | None = None  # the insurer's decision, once it knows: approved | denied


@dataclass
class Clinic:
    """Appointments by id and the cancellations made; a ``world.World``."""

    appointments: dict[str, Appointment]
    now: datetime = NOW
    writes: list[tuple[str, str]] = field(default_factory=list)
    words: Words = words.WORDS
    _tools: list[Tool] = field(default_factory=list, init=False, repr=False, compare=False)

    def tools(self, core_only: bool = False) -> list[Tool]:
        self._tools = self._tools or make_tools(self)
        return [t for t in self._tools if t.core] if core_only else list(self._tools)

    def find(self, appointment_id: str) -> Appointment:
        found = self.appointments.get(appointment_id.upper())
        if found is None or found.kind == "missing":
            raise NotFound(f"no appointment {appointment_id}")
        return found

    def record(self, appointment_id: str) -> dict:
        found = self.find(appointment_id)
        return {"status": found.status, "booked_at": found.booked_at.strftime(TIME_FORMAT),
                "starts_at": found.starts_at.strftime(TIME_FORMAT)}  # fmt: skip


def make_tools(clinic: Clinic) -> list[Tool]:
    @tool(latency_s=0.05, statuses=words.STATUSES)
    def check_front_desk_board(appointment_id: str) -> dict:
        """The board at the front desk: fast, but shows only appointments on today's list.

        Args:
            appointment_id: The appointment id, for example "APT-1042".
        """
        if not clinic.find(appointment_id).on_board:
            raise NotFound(f"appointment {appointment_id} is not on the board")
        return clinic.record(appointment_id)

    @tool(latency_s=0.7, statuses=words.STATUSES, holds_every=True)
    def query_scheduling_system(appointment_id: str) -> dict:
        """The clinic's scheduling system: every appointment, with its room. Slower.

        Args:
            appointment_id: The appointment id, for example "APT-1042".
        """
        return clinic.record(appointment_id) | {"room": clinic.find(appointment_id).room}

    @tool(latency_s=6.0, lag_min=INSURER_LAG_MIN)
    def ask_insurer(appointment_id: str) -> dict:
        """The insurer's portal (slow): approves or denies a booking, about 45 minutes after it is made.

        Args:
            appointment_id: The appointment id, for example "APT-1042".
        """
        found = clinic.find(appointment_id)
        if found.approval is None or (clinic.now - found.booked_at).total_seconds() / 60 < INSURER_LAG_MIN:
            raise NotFound(f"the insurer has no claim for appointment {appointment_id}")
        return {"approval": found.approval, "claim_id": f"CL-{found.appointment_id[-4:]}"}

    @tool(latency_s=0.5, core=False)
    def get_doctor_calendar(doctor_id: str) -> dict:
        """A doctor's calendar for the week.

        Args:
            doctor_id: The doctor's id, for example "DR-17".
        """
        raise NotFound(f"no doctor {doctor_id}")

    @tool(latency_s=0.4, core=False)
    def search_clinic_faq(query: str) -> dict:
        """Search the clinic's answers to frequent questions (parking, opening hours, insurance).

        Args:
            query: Words to search for.
        """
        return {"best_match": "Opening hours: 8:00 to 18:00 on weekdays."}

    @tool(latency_s=0.9, core=False)
    def get_patient_history(patient_id: str) -> dict:
        """Every past visit of one patient.

        Args:
            patient_id: The patient's id, for example "P-20417".
        """
        raise NotFound(f"no patient {patient_id}")

    @tool(latency_s=0.6, writes=True)
    def cancel_appointment(appointment_id: str) -> dict:
        """Cancel an appointment. Check the cancellation policy first.

        Args:
            appointment_id: The appointment id to cancel.
        """
        clinic.writes.append((words.CANCEL_APPOINTMENT, appointment_id.upper()))
        return {"cancelled": True}

    lookups = [check_front_desk_board, query_scheduling_system, ask_insurer]
    return [
        *lookups,
        get_doctor_calendar,
        search_clinic_faq,
        get_patient_history,
        cancel_appointment,
    ]
