"""How lessons enter a prompt, and the one budget they share (notebooks 01 and 05).

A lesson reaches a model as a bulleted line after the world's prompt. The seed article caps them: at
most 3 lessons, at most 15% of the context. ``LessonBudget.fit`` is the only place that cap is applied,
so the planned lessons and the ones a run asks for mid-way (the second retrieval) share it, and a
guard built from a run's lessons (``guards.py``) enforces exactly the lessons the prompt could carry.

Left out on purpose: ranking (the caller passes lessons best first: ``retrieval.py``).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ralph_mini.rules import LESSONS_HEADER, bullets
from ralph_mini.tokens import count_tokens


@dataclass(frozen=True)
class LessonBudget:
    """The one budget for lessons in a prompt (seed: at most 3, at most 15% of the context). Every lesson
    a run carries, planned or added mid-run, passes ``fit`` here: no caller can go over it."""

    max_lessons: int = 3
    share: float = 0.15
    context_tokens: int = 8192

    @property
    def tokens(self) -> int:
        return int(self.share * self.context_tokens)

    def fit(self, lessons: Sequence[str], carried: Sequence[str] = ()) -> list[str]:
        """The first ``lessons`` (in order, no repeats) that fit next to the ``carried`` ones."""
        chosen: list[str] = []
        used = sum(lesson_tokens(lesson) for lesson in carried)
        for lesson in dict.fromkeys(lessons):
            if len(carried) + len(chosen) >= self.max_lessons:
                break
            if lesson in carried:
                continue
            if used + lesson_tokens(lesson) <= self.tokens:
                chosen.append(lesson)
                used += lesson_tokens(lesson)
        return chosen


def lesson_tokens(rule: str) -> int:
    """Tokens one lesson adds to a prompt: its bullet line."""
    return count_tokens(bullets([rule]) + "\n")


def build_system_prompt(base: str, lessons: Sequence[str] = ()) -> str:
    """The world's prompt, with lessons (micro-prompts) appended as a bulleted list if there are any."""
    return base + ("\n\n" + LESSONS_HEADER + "\n" + bullets(lessons) if lessons else "")
