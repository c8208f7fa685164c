"""Exercise 3 (exercises/ex03_template_validator.ipynb): the reflector's template validator.

``validate_reflection(text, max_words=30)`` returns the problems of a reflection as 'kind: details'
strings (spec in the notebook and in exercises/solutions/ex03_template_validator.py). The checker
compares the *kinds* and how often each occurs, and wants the section's name where the spec says so;
the details are the student's to word. Each case below is a reflection and the problems it has.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.reflect import SECTIONS
from ralph_mini.worlds.orders import words

# The order desk's tools, as the case texts below spell them (worlds/orders/words.py is their home).
CACHE = words.CACHE
DATABASE = words.DATABASE
PAYMENT_API = words.PAYMENT
ORDER_HISTORY = words.HISTORY

PROBLEM_KINDS = (
    "missing section",
    "out of order",
    "empty section",
    "too long",
    "vague",
    "specific id",
    "not a rule",
)

GOOD_REFLECTION = f"""EFFECTIVE STEPS:
- {CACHE} answered with status and amount in one call
INEFFECTIVE STEPS:
- {DATABASE} repeated what the cache had already said
REUSABLE RULES:
- when {CACHE} finds the order: answer; skip {DATABASE}
AVOID:
- calling {PAYMENT_API} for a pending order younger than 30 min"""

RULE = f"- when {CACHE} finds the order: answer; skip {DATABASE}"
EFFECTIVE = f"- {CACHE} answered with status and amount"
NONE = "- none"


def _reflection(
    effective: str, ineffective: str, rules: str, avoid: str, order: Sequence[str] = SECTIONS
) -> str:
    """The four sections' items under their headings, the headings written in ``order``."""
    items = dict(zip(SECTIONS, (effective, ineffective, rules, avoid), strict=True))
    return "\n".join(f"{name}:\n{items[name]}" for name in order)


def _validate_judge(text: str, expected: list[tuple[str, str]]) -> Judge:
    """``expected``: (kind, word the problem must contain) pairs, in any order."""

    def judge(returned: Any) -> str | None:
        show = f"\n{text}\n"
        if not isinstance(returned, list) or not all(isinstance(p, str) for p in returned):
            return say("ex3.not_a_list", returned=short_repr(returned))
        kinds = [p.split(":", 1)[0].strip().lower() for p in returned]
        unknown = [p for p, k in zip(returned, kinds, strict=True) if k not in PROBLEM_KINDS]
        if unknown:
            return say("ex3.unknown_kind", problem=unknown[0], kinds=", ".join(PROBLEM_KINDS))
        have, need = Counter(kinds), Counter(kind for kind, _ in expected)
        for kind in PROBLEM_KINDS:
            if have[kind] != need[kind]:
                problem = _miscount(kind, have[kind], need[kind])
                return say("ex3.your_problems", problem=problem, text=show, returned=returned)
        for kind, word in expected:
            if word and not any(k == kind and word in p for k, p in zip(kinds, returned, strict=True)):
                problem = say("ex3.name_it", kind=kind, word=word)
                return say("ex3.your_problems", problem=problem, text=show, returned=returned)
        return None

    return judge


def _miscount(kind: str, have: int, need: int) -> str:
    if not have:
        return say("ex3.not_reported", kind=kind)
    if not need:
        return say("ex3.has_none", kind=kind)
    said = say("ex3.miscounted", have=have, kind=kind, need=need)
    if kind == "out of order" and have > need:
        said += say("ex3.report_once")
    return said


def _example(label: str, text: str, *expected: str, max_words: int | None = None) -> Case:
    """A case from a reflection and its problems, written 'kind' or 'kind: word it must name'; ``label``
    names the reflection (``ex3.<label>`` in the message tables)."""
    kwargs = {} if max_words is None else {"max_words": max_words}
    shown = say("ex3.case_words" if kwargs else "ex3.case", label=say(f"ex3.{label}"), max_words=max_words)
    pairs = [(kind, word) for kind, _, word in (problem.partition(": ") for problem in expected)]
    return Case(shown, args=(text,), kwargs=kwargs, judge=_validate_judge(text, pairs))


def _validate_cases() -> list[Case]:
    without_avoid = GOOD_REFLECTION.split("\nAVOID:")[0]
    long_item = "- " + " ".join([DATABASE] + ["word"] * 30)  # 31 words
    thirty = "- " + " ".join([DATABASE] + ["word"] * 29)  # exactly 30: fine
    fields_only = (
        "- compared the amount with paid_at",
        "- re-read the order id",
        RULE,
        "- trusting a Status that is old",
    )
    off_grammar = f"- {CACHE} first, then answer"
    with_ids = (f"- {CACHE} had A123 as paid", NONE, RULE, f"- asking {ORDER_HISTORY} about CUST-0042")
    only_two = _reflection(EFFECTIVE, NONE, NONE, NONE, order=("EFFECTIVE STEPS", "AVOID"))
    swapped = ("EFFECTIVE STEPS", "INEFFECTIVE STEPS", "AVOID", "REUSABLE RULES")
    backwards = _reflection(EFFECTIVE, NONE, RULE, NONE, order=SECTIONS[::-1])
    avoid_twice = GOOD_REFLECTION + f"\nAVOID:\n- calling {DATABASE} twice"
    title_case = GOOD_REFLECTION.replace("EFFECTIVE STEPS:", "Effective Steps:").replace(
        "REUSABLE RULES:", "Reusable rules:"
    )
    star_bullet = GOOD_REFLECTION.replace(f"- {DATABASE} repeated", f"* {DATABASE} repeated")
    return [
        _example("own_example", GOOD_REFLECTION),
        _example("says_none", _reflection(EFFECTIVE, NONE, NONE, "- None")),
        _example("no_avoid", without_avoid, "missing section: AVOID"),
        _example(
            "two_sections",
            only_two,
            "missing section: INEFFECTIVE STEPS",
            "missing section: REUSABLE RULES",
        ),
        _example("vague_item", _reflection("- be more careful next time", NONE, RULE, NONE), "vague"),
        _example("fields_no_tool", _reflection(*fields_only)),
        _example("item_31_words", _reflection(long_item, NONE, RULE, NONE), "too long"),
        _example("item_30_words", _reflection(thirty, NONE, RULE, NONE)),
        _example("smaller_max_words", GOOD_REFLECTION, "too long", "too long", max_words=8),
        _example("off_grammar", _reflection(EFFECTIVE, NONE, off_grammar, NONE), "not a rule"),
        _example("vague_rule", _reflection(EFFECTIVE, NONE, "- try harder", NONE), "vague", "not a rule"),
        _example("order_id", _reflection(*with_ids), "specific id", "specific id"),
        _example("out_of_order", _reflection(EFFECTIVE, NONE, RULE, NONE, order=swapped), "out of order"),
        _example("reversed", backwards, "out of order"),
        _example("heading_twice", avoid_twice, "out of order"),
        _example("empty_section", without_avoid + "\nAVOID:", "empty section: AVOID"),
        _example("line_before", "Here is my reflection.\n" + GOOD_REFLECTION),
        _example("title_case", title_case),
        _example("star_bullet", star_bullet, "empty section: INEFFECTIVE STEPS"),
    ]


ex3 = Exercise(
    name="ex3",
    function_name="validate_reflection",
    solution_file="ex03_template_validator.py",
    cases=_validate_cases,
    hints=Hints("ex3"),
)
