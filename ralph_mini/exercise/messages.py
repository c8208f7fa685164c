"""The exercises' feedback in the student's language: ``check()``, the hints and every message, from tables.

The English exercises (``exercises/``) and the Chinese ones (``exercises/zh/``) run the same checkers;
what a student reads comes from one table per language, ``messages_en.json`` and ``messages_zh.json``
beside this module: a key such as ``"ex2.expected_reason"`` -> a text with ``str.format`` fields,

    say("check.passed", function="should_stop", count=10)
    -> 'should_stop passed all 10 cases, edge cases included.'   (RALPH_LANG=en)
    -> 'should_stop 通过了全部 10 个用例，边界情况也都对了。'           (RALPH_LANG=zh)

The language is read when a message is made (``lang.current()``: RALPH_LANG, else the nearest
``.ralph_lang``), never at import, so one kernel in ``exercises/zh/`` gets Chinese. Both tables have the
same keys and the same fields per key (tests/test_exercise_language.py); the values put into the fields
(the student's values, numbers, code) are the same in both languages, and so is ``solution()``'s code.

Left out on purpose: plural forms and a fallback to English for a missing key (a missing key is a bug
the tests catch, not something to hide).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ralph_mini import lang

TABLES = Path(__file__).resolve().parent  # messages_<language>.json


@cache
def table(language: str) -> dict[str, str]:
    """Key -> text with ``str.format`` fields, for one language."""
    path = TABLES / f"messages_{lang.checked(language)}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def say(key: str, /, **fields) -> str:
    """The message ``key`` in the student's language, its fields filled in."""
    return say_in(lang.current(), key, **fields)


def say_in(language: str, key: str, /, **fields) -> str:
    """The message ``key`` in ``language``: what a result made in one language shows later."""
    return table(language)[key].format(**fields)


@dataclass(frozen=True)
class Hints(Sequence):
    """An exercise's hints (``"<exercise>.hint1"``, ``...hint2``, ...), each read in the student's
    language when it is shown: ``Hints("ex4")[0]`` is exercise 4's first hint."""

    exercise: str

    def __len__(self) -> int:
        known, count = table("en"), 0
        while f"{self.exercise}.hint{count + 1}" in known:
            count += 1
        return count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        if not -len(self) <= index < len(self):
            raise IndexError(f"{self.exercise} has {len(self)} hints, not {index + 1}")
        return say(f"{self.exercise}.hint{index % len(self) + 1}")
