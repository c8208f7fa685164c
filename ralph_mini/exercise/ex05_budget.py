"""Exercise 5 (exercises/ex05_budget.ipynb): inject the best lessons that fit a token budget.

``select_lessons(candidates, budget_tokens, max_items=3, count_tokens=...)`` is judged against
``budgeted_selection``, the rule written out once: highest score first (ties keep their order), skip a
lesson that does not fit and keep looking, stop at ``max_items``. Most cases count one token per word
(``count_words``) so a student can check them in their head; one uses the kit's ``count_tokens``.
"""

from collections.abc import Callable
from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.tokens import count_tokens
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
            return say("ex5.changed_candidates", candidates=candidates)
        if not isinstance(returned, list):
            return say("ex5.not_a_list", returned=short_repr(returned))
        if returned == want:
            return None
        odd = next((x for x in returned if not isinstance(x, str) or x not in score), None)
        if isinstance(odd, tuple):
            return say("ex5.pairs", returned=returned)
        if odd is not None:
            return say("ex5.unknown_lesson", returned=returned, odd=odd)
        if len(set(returned)) < len(returned):
            return say("ex5.twice", returned=returned)
        used = sum(counter(x) for x in returned)
        if used > budget:
            return say("ex5.over_budget", used=used, budget=budget)
        if len(returned) > max_items:
            return say("ex5.too_many", count=len(returned), max_items=max_items)
        if sorted(returned) == sorted(want):
            return say("ex5.wrong_order", returned=returned)
        if (
            returned
            and counter is not count_tokens
            and returned == budgeted_selection(original, budget, max_items, count_tokens)
        ):
            return say("ex5.global_counter", returned=returned, counter=counter.__name__)
        if returned == want[: len(returned)]:
            later = want[len(returned)]
            ranked = [lesson for lesson, _ in sorted(original, key=lambda pair: -pair[1])]
            skipped = [x for x in ranked[: ranked.index(later)] if x not in returned]
            advice = say("ex5.skip_misfit" if skipped else "ex5.fits_when")
            return say(
                "ex5.stopped",
                returned=returned,
                later=later,
                score=score[later],
                tokens=counter(later),
                left=budget - used,
                advice=advice,
            )
        return say("ex5.walk", returned=returned)

    return judge


def _select_cases() -> list[Case]:
    examples = [  # (label key, candidates, budget_tokens, other arguments); count_tokens=count_words
        ("all_fit", [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.5), (START_CACHE, 0.7)], 40, {}),
        (
            "misfit_then_fit",
            [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (DB_MISS, 0.7)],
            15,
            {},
        ),
        (
            "five_small",
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
        ("max_items_1", [(START_CACHE, 0.4), (CACHE_HIT, 0.6)], 100, {"max_items": 1}),
        ("equal_scores", [(START_CACHE, 0.5), (CACHE_HIT, 0.5), (DB_MISS, 0.5)], 100, {}),
        ("exact_budget", [(CACHE_HIT, 0.9)], 8, {}),
        ("budget_0", [(CACHE_HIT, 0.9), (DB_MISS, 0.8)], 0, {}),
        ("no_candidates", [], 50, {}),
        ("max_items_0", [(CACHE_HIT, 0.9)], 50, {"max_items": 0}),
    ]
    cases = []
    for label, candidates, budget, extra in examples:
        kwargs = {"count_tokens": count_words, **extra}
        shown = "".join(f", {k}={v}" for k, v in extra.items())
        judge = _select_judge(candidates, budget, kwargs.get("max_items", 3), count_words)
        cases.append(
            Case(
                say("ex5.case", label=say(f"ex5.{label}"), budget=budget, settings=shown),
                args=(candidates, budget),
                kwargs=kwargs,
                judge=judge,
            )
        )
    default = [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (START_CACHE, 0.7)]
    budget = count_tokens(CACHE_HIT) + count_tokens(START_CACHE)
    judge = _select_judge(default, budget, 3, count_tokens)
    shown = say("ex5.case_default", budget=budget)
    return cases + [Case(shown, args=(default, budget), judge=judge)]


ex5 = Exercise(
    name="ex5",
    function_name="select_lessons",
    solution_file="ex05_budget.py",
    cases=_select_cases,
    hints=Hints("ex5"),
)
