"""Memory's dict of lessons, which counts what a hand rewrites in it (notebook 04).

Memory's readers keep what they built from its lessons in step by what changed, so that a task costs
what changed, not what memory holds (issue 27): a lesson whose field is set reports to memory's ledger
(``experience.LessonChanges``), and a lesson appended to the dict shows in its length. What neither
shows is a lesson *swapped*: ``memory.experiences[key] = other`` under a key memory has, or one lesson
taken out and another put in, as many as before. Missed, the swapped-in lesson was never filed, found
by retrieval or written to the store. So memory keeps its lessons in this dict, which counts every
write that is not an append (``rewrites``): a reader that kept the count it last read sees a rewrite by
comparing two numbers, and then reads every lesson again, as for a dict replaced. Memory's own writes
are appends, so they never make a reader start over.

Left out on purpose: a write through ``dict``'s own methods (``dict.__setitem__(memory.experiences, ...)``),
which goes around this one as it would around any Python class.
"""

from typing import Any


class LessonDict(dict):
    """A dict that counts its rewrites: a value set under a key it has, a key taken out, all emptied.
    An append (a value under a new key) is not a rewrite. Reads are ``dict``'s own, as fast."""

    rewrites = 0  # each dict counts its own from its first rewrite

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self:
            self.rewrites += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self.rewrites += 1

    def pop(self, key: Any, *default: Any) -> Any:
        self.rewrites += key in self
        return super().pop(key, *default)

    def popitem(self) -> tuple:
        item = super().popitem()
        self.rewrites += 1
        return item

    def clear(self) -> None:
        self.rewrites += bool(self)
        super().clear()

    def update(self, *others: Any, **more: Any) -> None:
        for key, value in dict(*others, **more).items():
            self[key] = value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def __ior__(self, other: Any) -> "LessonDict":
        self.update(other)
        return self
