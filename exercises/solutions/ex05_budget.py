"""Reference solution for exercises/ex05_budget.ipynb (instructor only)."""

import ralph_mini.model


def select_lessons(
    candidates: list[tuple[str, float]],
    budget_tokens: int,
    max_items: int = 3,
    count_tokens=ralph_mini.model.count_tokens,
) -> list[str]:
    """The lessons to inject: best score first, each only if it fits in the budget left.

    [('a b c', 0.9), ('d e f g', 0.8), ('h', 0.1)], budget 4, one token a word -> ['a b c', 'h']
    """
    chosen: list[str] = []
    left = budget_tokens
    for lesson, _score in sorted(candidates, key=lambda pair: -pair[1]):  # stable: ties keep order
        if len(chosen) == max_items:
            break
        cost = count_tokens(lesson)
        if cost <= left:  # a lesson that does not fit is skipped; a shorter one may still fit
            chosen.append(lesson)
            left -= cost
    return chosen
