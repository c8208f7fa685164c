"""Untouched starters and typical wrong answers to the exercises: every checker must reject each one.

Each wrong answer is a mistake students really make (or a shortcut they try), written as they would
write it; ``WRONG`` pairs it with the words the checker's message must contain, so a test fails when
a message stops naming the problem. The answers to exercises 1 and 2 are here, those to exercises 3 to 5
(the lessons: validate, decay, inject) in tests/wrong_lessons.py.
"""

from wrong_lessons import (
    select_ascending,
    select_global_counter,
    select_ignores_budget,
    select_ignores_max_items,
    select_returns_pairs,
    select_sorts_in_place,
    select_stops_at_first_misfit,
    select_strictly_under_budget,
    select_ties_by_text,
    validate_case_sensitive_vocabulary,
    validate_exact_headings,
    validate_free_text,
    validate_ignores_order,
    validate_no_customer_ids,
    validate_no_rule_parsing,
    validate_none_is_an_item,
    validate_out_of_order_per_pair,
    validate_sorts_to_compare,
    validate_words_off_by_one,
    weight_expires_at_boundary,
    weight_forgets_stale,
    weight_hardcoded_settings,
    weight_ignores_confidence,
    weight_natural_exp,
    weight_never_expires,
    weight_stale_at_boundary,
)

from ralph_mini.exercise import LOYALTY_POINTS
from ralph_mini.model import count_tokens as kit_count_tokens
from ralph_mini.react import WRONG_STATUSES
from ralph_mini.tools import NotFound, tool

# --- untouched starters: every shape of "not written yet" -------------------------------------------


def starter_ellipsis(statuses, max_pitfall_depth):
    """Return a reason to stop, or None."""
    ...


def starter_pass(data, max_fields):
    pass


def starter_raise(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    # YOUR CODE HERE
    raise NotImplementedError()


def starter_raise_bare(text, max_words=30):
    """Docstring, a comment, then a bare raise."""
    # YOUR CODE HERE
    raise NotImplementedError


def half_written(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    weight = confidence * 0.5 ** (days_since_hit / half_life_days)
    raise NotImplementedError("stale and expiry: to do")
    return weight


def starter_tool(customer_id):
    # YOUR CODE HERE: decorate with @tool, add a type hint and a docstring with Args:
    raise NotImplementedError()


# --- exercise 1a: the tool (each factory returns the tool a student would write) ----------


def query_loyalty_points(customer_id: str) -> dict:
    """Loyalty points of a customer.

    Args:
        customer_id: The customer id, for example "CUST-0042".
    """
    return dict(LOYALTY_POINTS[customer_id])


def key_error_on_unknown():
    @tool
    def query_loyalty_points(customer_id: str) -> dict:
        """Loyalty points and tier of a customer.

        Args:
            customer_id: The customer id, for example "CUST-0042".
        """
        return dict(LOYALTY_POINTS[customer_id])  # KeyError for a customer we do not know

    return query_loyalty_points


def empty_dict_on_unknown():
    @tool
    def query_loyalty_points(customer_id: str) -> dict:
        """Loyalty points and tier of a customer.

        Args:
            customer_id: The customer id, for example "CUST-0042".
        """
        return dict(LOYALTY_POINTS.get(customer_id, {}))

    return query_loyalty_points


def zero_points_is_missing():
    @tool
    def query_loyalty_points(customer_id: str) -> dict:
        """Loyalty points and tier of a customer.

        Args:
            customer_id: The customer id, for example "CUST-0042".
        """
        record = LOYALTY_POINTS.get(customer_id)
        if not record or not record["points"]:  # a customer with 0 points is still a customer
            raise NotFound(f"no loyalty account for {customer_id}")
        return dict(record)

    return query_loyalty_points


def no_example_id():
    @tool
    def query_loyalty_points(customer_id: str) -> dict:
        """Loyalty points and tier of a customer.

        Args:
            customer_id: The customer.
        """
        if customer_id not in LOYALTY_POINTS:
            raise NotFound(customer_id)
        return dict(LOYALTY_POINTS[customer_id])

    return query_loyalty_points


# --- exercise 1b: the compressor -----------------------------------------------------------------


def compress_without_count(data, max_fields):
    shown = [f"{k}={v}" for k, v in list(data.items())[:max_fields]]
    more = f" (+{len(data) - len(shown)} more)" if len(data) > len(shown) else ""
    return ", ".join(shown) + more


def compress_counts_shown(data, max_fields):
    shown = [f"{k}={v}" for k, v in list(data.items())[:max_fields]]
    more = f" (+{len(data) - len(shown)} more)" if len(data) > len(shown) else ""
    return f"{len(shown)} fields: " + ", ".join(shown) + more


def compress_never_says_more(data, max_fields):
    shown = [f"{k}={v}" for k, v in list(data.items())[:max_fields]]
    return f"{len(data)} fields: " + ", ".join(shown)


def compress_always_says_more(data, max_fields):
    shown = [f"{k}={v}" for k, v in list(data.items())[:max_fields]]
    return f"{len(data)} fields: " + ", ".join(shown) + f" (+{len(data) - len(shown)} more)"


def compress_ignores_max_fields(data, max_fields):
    return f"{len(data)} fields: " + ", ".join(f"{k}={v}" for k, v in data.items())


def compress_as_json(data, max_fields):
    import json

    return f"{len(data)} fields: " + json.dumps(dict(list(data.items())[:max_fields]))


# --- exercise 2: max pitfall depth ----------------------------------------------------------------


def stop_at_the_limit(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in WRONG_STATUSES)
    return f"max_pitfall_depth: {wrong} wrong calls" if wrong >= max_pitfall_depth else None


def stop_off_by_one(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in WRONG_STATUSES)
    return f"max_pitfall_depth: {wrong} wrong calls" if wrong > max_pitfall_depth + 1 else None


def stop_counts_not_found(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s != "ok")
    return f"max_pitfall_depth: {wrong} wrong calls" if wrong > max_pitfall_depth else None


def stop_forgets_bad_reply(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in ("error", "bad_args", "wrong_tool"))
    return f"max_pitfall_depth: {wrong} wrong calls" if wrong > max_pitfall_depth else None


def stop_counts_only_a_streak(statuses, max_pitfall_depth):
    streak = 0
    for status in statuses:
        streak = streak + 1 if status in WRONG_STATUSES else 0
        if streak > max_pitfall_depth:
            return f"max_pitfall_depth: {streak} wrong calls"
    return None


def stop_counts_every_step(statuses, max_pitfall_depth):
    steps = len(statuses)
    return f"max_pitfall_depth: {steps} wrong calls" if steps > max_pitfall_depth else None


def stop_returns_true(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in WRONG_STATUSES)
    return True if wrong > max_pitfall_depth else None


def stop_silent_reason(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in WRONG_STATUSES)
    return "too many errors" if wrong > max_pitfall_depth else None


def stop_returns_empty_string(statuses, max_pitfall_depth):
    wrong = sum(1 for s in statuses if s in WRONG_STATUSES)
    return f"max_pitfall_depth: {wrong} wrong calls" if wrong > max_pitfall_depth else ""


# (exercise, wrong answer, words its message must contain)
WRONG = [
    ("ex1a", query_loyalty_points, ["plain function", "@tool"]),
    ("ex1a", key_error_on_unknown(), ["CUST-9999", "KeyError", "NotFound"]),
    ("ex1a", empty_dict_on_unknown(), ["CUST-9999", "returned", "NotFound"]),
    ("ex1a", zero_points_is_missing(), ["CUST-0007", "0 points", "NotFound", "exists"]),
    ("ex1a", no_example_id(), ["Args:", "example id"]),
    ("ex1b", compress_without_count, ["starting with '3 fields:'"]),
    ("ex1b", compress_counts_shown, ["starting with '5 fields:'", "shown or not"]),
    ("ex1b", compress_never_says_more, ["(+3 more)"]),
    ("ex1b", compress_always_says_more, ["nothing was left out"]),
    ("ex1b", compress_ignores_max_fields, ["(+3 more)", "only 2 of 5"]),
    ("ex1b", compress_as_json, ["key=value"]),
    ("ex2", stop_at_the_limit, ["expected None", "3 wrong call(s)", "not more than"]),
    ("ex2", stop_off_by_one, ["expected a reason", "more than max_pitfall_depth=3"]),
    ("ex2", stop_counts_not_found, ["expected None", "not more than max_pitfall_depth=1"]),
    ("ex2", stop_forgets_bad_reply, ["bad_reply", "expected a reason"]),
    ("ex2", stop_counts_only_a_streak, ["error, bad_reply", "expected a reason"]),
    ("ex2", stop_counts_every_step, ["expected None", "0 wrong call(s)"]),
    ("ex2", stop_returns_true, ["must be a str"]),
    ("ex2", stop_silent_reason, ["should name max_pitfall_depth", "number of wrong calls"]),
    ("ex2", stop_returns_empty_string, ["you returned str ''", "expected None"]),
    ("ex3", validate_ignores_order, ["did not report", "out of order"]),
    ("ex3", validate_none_is_an_item, ["'- none'", "reported a 'vague' problem", "has none"]),
    ("ex3", validate_words_off_by_one, ["exactly 30 words", "'too long'"]),
    ("ex3", validate_case_sensitive_vocabulary, ["fields but no tool", "'vague' problem, but"]),
    ("ex3", validate_no_rule_parsing, ["rule outside the grammar", "'not a rule'"]),
    ("ex3", validate_no_customer_ids, ["specific order id", "reported 1 'specific id'"]),
    ("ex3", validate_exact_headings, ["headings in title case", "'missing section' problem, but"]),
    ("ex3", validate_out_of_order_per_pair, ["reverse order", "reported 3 'out of order' problems", "once"]),
    ("ex3", validate_sorts_to_compare, ["a heading twice", "did not report a 'out of order' problem"]),
    ("ex3", validate_free_text, ["does not start with one of the kinds"]),
    ("ex4", weight_natural_exp, ["e ** (-days / half_life)", "0.5"]),
    ("ex4", weight_forgets_stale, ["days_since_hit=14.5", "stale_factor=0.5"]),
    ("ex4", weight_stale_at_boundary, ["days_since_hit=14.0", "not stale yet"]),
    ("ex4", weight_expires_at_boundary, ["days_since_hit=30.0", "not expired yet"]),
    ("ex4", weight_never_expires, ["days_since_hit=30.5", "expired", "0.0"]),
    ("ex4", weight_ignores_confidence, ["proportional to confidence"]),
    ("ex4", weight_hardcoded_settings, ["half_life_days=3.5", "default settings"]),
    ("ex5", select_stops_at_first_misfit, ["stopped", "keep looking"]),
    ("ex5", select_ignores_max_items, ["5 lessons", "max_items=3"]),
    ("ex5", select_ignores_budget, ["more than budget_tokens=15"]),
    ("ex5", select_ascending, ["wrong order", "highest score first"]),
    ("ex5", select_ties_by_text, ["equal scores", "keep their order"]),
    ("ex5", select_global_counter, ["count_tokens argument", "count_words"]),
    ("ex5", select_sorts_in_place, ["changed the candidates list", "sort a copy"]),
    ("ex5", select_returns_pairs, ["not (text, score) pairs"]),
    ("ex5", select_strictly_under_budget, ["exactly the size", "8 tokens left", "at most"]),
]

STARTERS = [
    ("ex1a", starter_tool),
    ("ex1b", starter_pass),
    ("ex2", starter_ellipsis),
    ("ex3", starter_raise_bare),
    ("ex4", half_written),
    ("ex5", starter_raise),
]


def assert_rejected(result, words) -> None:
    """A checker's verdict on a wrong answer: attempted, not passed, and its message names the problem
    (every one of ``words``). Both exercise tracks' tests judge their wrong answers by it."""
    assert not result.passed and result.attempted
    assert str(result).startswith("Incorrect: ")
    for word in words:
        assert word in result.message, f"{word!r} not in: {result.message}"
