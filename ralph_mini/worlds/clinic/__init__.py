"""A clinic's front desk: the kit's third world, built only on the contract of ``ralph_mini/world.py``.

Appointments, a fast board at the desk that shows only upcoming ones, the scheduling system that holds
them all, and an insurer that approves appointments awaiting approval and learns of a booking 45
minutes late; three request types (status, room, cancel; cancel writes, under a written policy) and
look-alike tools. ``docs/your_own_world.md`` walks through it.
"""

from ralph_mini.worlds.clinic.habits import HABITS
from ralph_mini.worlds.clinic.tasks import make_suite
from ralph_mini.worlds.clinic.words import WORDS
from ralph_mini.worlds.clinic.world import Appointment, Clinic

__all__ = ["HABITS", "WORDS", "Appointment", "Clinic", "make_suite"]
