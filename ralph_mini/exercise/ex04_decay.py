"""Exercise 4 (exercises/ex04_decay.ipynb): how much an experience still weighs after days without a hit.

``experience_weight`` is judged against ``weight_closed_form``, which is the kit's own
``memory.decay_factor`` times the confidence, so the exercise and the memory cannot disagree. A wrong
value is matched against the typical mistakes (base e, '>=' at a boundary, a forgotten factor) to say
which one it is.
"""

import math
from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.memory import MemoryConfig, decay_factor

DEFAULTS = {"half_life_days": 7.0, "stale_after_days": 14.0, "stale_factor": 0.5, "expire_after_days": 30.0}
CUSTOM = {"half_life_days": 3.5, "stale_after_days": 4.0, "stale_factor": 0.25, "expire_after_days": 10.0}


def weight_closed_form(
    confidence: float,
    days: float,
    half_life: float = 7.0,
    stale_after: float = 14.0,
    stale_factor: float = 0.5,
    expire_after: float = 30.0,
) -> float:
    """The rule exercise 4 teaches: the kit's own ``memory.decay_factor`` times the confidence, so the
    checker and the memory cannot disagree."""
    config = MemoryConfig(
        half_life_days=half_life,
        stale_after_days=stale_after,
        stale_factor=stale_factor,
        expire_after_days=expire_after,
    )
    return confidence * decay_factor(days, config)


def _weight_judge(c: float, d: float, params: dict) -> Judge:
    h, s, f, e = {**DEFAULTS, **params}.values()
    want = weight_closed_form(c, d, h, s, f, e)

    def judge(returned: Any) -> str | None:
        if isinstance(returned, bool) or not isinstance(returned, int | float):
            return say("ex4.not_a_float", returned=short_repr(returned))

        def near(x: float) -> bool:
            return math.isclose(returned, x, rel_tol=1e-9, abs_tol=1e-12)

        if near(want):
            return None
        values = {"returned": returned, "days": d, "expire": e, "stale": s, "factor": f}
        if d > e:
            return say("ex4.expired", **values)
        if d == e and near(0.0):
            return say("ex4.expired_at_boundary", **values)
        if d == s and near(want * f):
            return say("ex4.stale_at_boundary", **values)
        if d > s and near(want / f):
            return say("ex4.forgot_stale", **values)
        stale = f if d > s else 1.0
        if near(c * math.exp(-d / h) * stale) or near(c * math.exp(-d / h)):
            return say("ex4.base_e", **values)
        if c and near(want / c):
            return say("ex4.confidence", confidence=c, **values)
        if params and near(weight_closed_form(c, d)):
            return say("ex4.defaults", params=params, **values)
        return say("ex4.expected", want=want, **values)

    return judge


def _weight_cases() -> list[Case]:
    points = [  # (confidence, days_since_hit, settings other than the defaults)
        (1.0, 0.0, {}),
        (1.0, 7.0, {}),
        (0.8, 3.5, {}),
        (0.6, 14.0, {}),  # exactly stale_after_days: not stale yet
        (0.6, 14.5, {}),
        (0.9, 21.0, {}),
        (0.9, 30.0, {}),  # exactly expire_after_days: not expired yet
        (0.9, 30.5, {}),
        (0.9, 100.0, {}),
        (0.0, 3.0, {}),
        (0.7, 2.0, CUSTOM),
        (0.7, 5.0, CUSTOM),
        (0.7, 10.0, CUSTOM),
        (0.7, 10.01, CUSTOM),
    ]
    points += [(0.75, day / 2, {}) for day in range(0, 81)]  # every half day from 0 to 40
    return [
        Case(
            say(
                "ex4.case",
                settings=f"confidence={c}, days_since_hit={d}" + "".join(f", {k}={v}" for k, v in p.items()),
            ),
            args=(c, d),
            kwargs=p,
            judge=_weight_judge(c, d, p),
        )
        for c, d, p in points
    ]


ex4 = Exercise(
    name="ex4",
    function_name="experience_weight",
    solution_file="ex04_decay.py",
    cases=_weight_cases,
    hints=Hints("ex4"),
)
