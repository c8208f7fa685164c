"""Exercise 5 (exercises/ex05_budget.ipynb): inject the best lessons that fit a token budget.

``select_lessons(candidates, budget_tokens, max_items=3, count_tokens=...)`` is judged against
``budgeted_selection``, the rule written out once: highest score first (ties keep their order), skip a
lesson that does not fit and keep looking, stop at ``max_items``. Most cases count one token per word
(``count_words``) so a student can check them in their head; one uses the kit's ``count_tokens``.
"""

from collections.abc import Callable
from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.model import count_tokens
from ralph_mini.worlds.orders import words


def count_words(text: str) -> int:
    """A token counter a student can do in their head: one token per word."""
    return len(text.split())


CACHE_HIT = f"when {words.CACHE} finds the order: answer; skip {words.DATABASE}"  # 8 words
FRESH_PENDING = f"when status is pending and age under 30 min: skip {words.PAYMENT}"  # 12 words
START_CACHE = f"when any task: start with {words.CACHE}"  # 6 words
DB_MISS = f"when {words.DATABASE} finds nothing: answer"  # 5 words
STALE_PENDING = f"when status is pending and age over 30 min: call {words.PAYMENT}"  # 12 words


def budgeted_selection(
    candidates: list[tuple[str, float]], budget: int, max_items: int, counter: Callable[[str], int]
) -> list[str]:
    """The rule exercise 5 teaches, written out once so the checker can compare against it."""
    chosen, left = [], budget
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) == max_items:
            break
        if counter(lesson) <= left:
            chosen.append(lesson)
            left -= counter(lesson)
    return chosen


def _select_judge(candidates: list, budget: int, max_items: int, counter: Callable[[str], int]) -> Judge:
    original = list(candidates)
    want = budgeted_selection(original, budget, max_items, counter)
    score = dict(original)

    def judge(returned: Any) -> str | None:
        if candidates != original:
            return f"you changed the candidates list you were given (now {candidates}): sort a copy"
        if not isinstance(returned, list):
            return f"you returned {short_repr(returned)}; expected a list of lesson texts"
        if returned == want:
            return None
        odd = next((x for x in returned if not isinstance(x, str) or x not in score), None)
        if isinstance(odd, tuple):
            return f"you returned {returned}; return the lesson texts, not (text, score) pairs"
        if odd is not None:
            return f"you returned {returned}; {odd!r} is not one of the lesson texts given"
        if len(set(returned)) < len(returned):
            return f"you returned {returned}; a lesson appears twice"
        used = sum(counter(x) for x in returned)
        if used > budget:
            return f"your lessons use {used} tokens, more than budget_tokens={budget}: never exceed it"
        if len(returned) > max_items:
            return f"you returned {len(returned)} lessons; take at most max_items={max_items}"
        if sorted(returned) == sorted(want):
            return (
                f"you returned the right lessons in the wrong order {returned}: highest score "
                "first; equal scores keep their order in candidates"
            )
        if (
            returned
            and counter is not count_tokens
            and returned == budgeted_selection(original, budget, max_items, count_tokens)
        ):
            return (
                f"you returned {returned}, what the kit's count_tokens gives; measure lessons with "
                f"the count_tokens argument you were given (here {counter.__name__})"
            )
        if returned == want[: len(returned)]:
            later = want[len(returned)]
            ranked = [lesson for lesson, _ in sorted(original, key=lambda pair: -pair[1])]
            skipped = [x for x in ranked[: ranked.index(later)] if x not in returned]
            if skipped:
                advice = "skip a lesson that does not fit and keep looking"
            else:
                advice = "a lesson fits when its tokens are at most the budget left"
            return (
                f"you returned {returned} and stopped; but {later!r} (score {score[later]}, "
                f"{counter(later)} tokens) still fits in the {budget - used} tokens left: {advice}"
            )
        return (
            f"you returned {returned}; go through candidates by descending score, take each "
            "lesson that fits in the budget left, stop at max_items"
        )

    return judge


def _select_cases() -> list[Case]:
    examples = [  # (label, candidates, budget_tokens, other arguments); count_tokens=count_words
        ("three lessons that all fit", [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.5), (START_CACHE, 0.7)], 40, {}),
        (
            "a lesson that does not fit, then one that does",
            [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (DB_MISS, 0.7)],
            15,
            {},
        ),
        (
            "five small lessons",
            [
                (DB_MISS, 0.2),
                (START_CACHE, 0.3),
                (CACHE_HIT, 0.9),
                (FRESH_PENDING, 0.8),
                (STALE_PENDING, 0.6),
            ],
            100,
            {},
        ),
        ("max_items=1", [(START_CACHE, 0.4), (CACHE_HIT, 0.6)], 100, {"max_items": 1}),
        ("equal scores", [(START_CACHE, 0.5), (CACHE_HIT, 0.5), (DB_MISS, 0.5)], 100, {}),
        ("a budget exactly the size of the lesson", [(CACHE_HIT, 0.9)], 8, {}),
        ("a budget of 0", [(CACHE_HIT, 0.9), (DB_MISS, 0.8)], 0, {}),
        ("no candidates", [], 50, {}),
        ("max_items=0", [(CACHE_HIT, 0.9)], 50, {"max_items": 0}),
    ]
    cases = []
    for label, candidates, budget, extra in examples:
        kwargs = {"count_tokens": count_words, **extra}
        shown = "".join(f", {k}={v}" for k, v in extra.items())
        judge = _select_judge(candidates, budget, kwargs.get("max_items", 3), count_words)
        cases.append(
            Case(
                f"for {label} (budget_tokens={budget}, count_tokens=count_words{shown})",
                args=(candidates, budget),
                kwargs=kwargs,
                judge=judge,
            )
        )
    default = [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (START_CACHE, 0.7)]
    budget = count_tokens(CACHE_HIT) + count_tokens(START_CACHE)
    judge = _select_judge(default, budget, 3, count_tokens)
    shown = f"for the kit's default count_tokens (budget_tokens={budget})"
    return cases + [Case(shown, args=(default, budget), judge=judge)]


ex5 = Exercise(
    name="ex5",
    function_name="select_lessons",
    solution_file="ex05_budget.py",
    cases=_select_cases,
    hints=(
        "Sort a copy of candidates by score, highest first; Python's sort is stable, so equal scores "
        "keep their input order. Use the count_tokens you were given, not a global one.",
        "Keep the budget left over. A lesson that does not fit is skipped, not the end: a shorter one "
        "further down may still fit. Stop as soon as you hold max_items lessons.",
        "for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]): stop when len(chosen) == "
        "max_items; if count_tokens(lesson) <= left: take it and subtract its tokens.",
    ),
)
