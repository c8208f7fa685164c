"""Typical wrong answers to exercises 3 to 5, the lessons: validate a reflection, decay it, inject it.

Written as students would write them; tests/wrong_answers.py pairs each with the words the checker's
message must contain.
"""

import math
import re
from itertools import pairwise

from ralph_mini.model import count_tokens as kit_count_tokens
from ralph_mini.reflect import SECTIONS
from ralph_mini.rules import RuleSyntaxError, parse_rule

# --- exercise 3: the template validator -----------------------------------------------------------
# ``make_validator`` builds a validator with one mistake switched on, so each wrong answer differs
# from a correct one in exactly the place its name says.

TOOLS = "query_local_cache query_database query_payment_api get_shipping_status get_order_history search_docs"
FIELDS = ("status", "amount", "paid_at", "created_at", "txn_id", "payment_status", "order id", "order_id")
VOCAB = (*TOOLS.split(), *FIELDS)


def out_of_order(order: list[str], mistake: str) -> list[str]:
    """The right check reports once when the headings differ from SECTIONS order (a repeat included)."""
    if mistake == "ignores order":
        return []
    if mistake == "out of order per pair":  # one report per neighbour in the wrong order: 3 when reversed
        pairs = pairwise(order)
        return [f"out of order: {b} after {a}" for a, b in pairs if SECTIONS.index(b) <= SECTIONS.index(a)]
    if mistake == "sorts to compare":  # a heading written twice sorts into place: never reported
        return ["out of order: " + ", ".join(order)] if order != sorted(order, key=SECTIONS.index) else []
    return ["out of order: " + ", ".join(order)] if order != [n for n in SECTIONS if n in order] else []


def make_validator(mistake: str = ""):
    ids = re.compile(r"\b[A-Z]\d{3}\b" if mistake == "no customer ids" else r"\b[A-Z]\d{3}\b|CUST-\d+")

    def vague(item: str) -> bool:
        if mistake == "case-sensitive vocabulary":  # 'Status' at the start of a sentence is missed
            return not any(word in item for word in VOCAB)
        return not any(word in item.lower() for word in VOCAB)

    def validate(text: str, max_words: int = 30) -> list[str]:
        order, items, problems = [], {}, []
        for line in (raw.strip() for raw in text.splitlines()):
            name = line.rstrip(":") if mistake == "exact headings" else line.rstrip(":").upper()
            if line.endswith(":") and name in SECTIONS:
                order.append(name)
                items.setdefault(name, [])
            elif line.startswith("- ") and order:
                items[order[-1]].append(line[2:].strip())
        problems += [f"missing section: {name}" for name in SECTIONS if name not in order]
        problems += out_of_order(order, mistake)
        problems += [f"empty section: {n}" for n in SECTIONS if n in items and not items[n]]
        for name in SECTIONS:
            for item in items.get(name, []):
                if item.lower() == "none" and mistake != "none is an item":
                    continue
                words = len(item.split())
                if words >= max_words if mistake == "words off by one" else words > max_words:
                    problems.append(f"too long: {item!r}")
                if vague(item):
                    problems.append(f"vague: {item!r}")
                if ids.search(item):
                    problems.append(f"specific id: {item!r}")
                if name == "REUSABLE RULES" and mistake != "no rule parsing":
                    try:
                        parse_rule(item)
                    except RuleSyntaxError:
                        problems.append(f"not a rule: {item!r}")
        return problems

    validate.__qualname__ = validate.__name__ = "validate_" + re.sub(r"\W+", "_", mistake or "correct")
    return validate


validate_correct_copy = make_validator()
validate_ignores_order = make_validator("ignores order")
validate_none_is_an_item = make_validator("none is an item")
validate_words_off_by_one = make_validator("words off by one")
validate_case_sensitive_vocabulary = make_validator("case-sensitive vocabulary")
validate_no_rule_parsing = make_validator("no rule parsing")
validate_no_customer_ids = make_validator("no customer ids")
validate_exact_headings = make_validator("exact headings")
validate_out_of_order_per_pair = make_validator("out of order per pair")
validate_sorts_to_compare = make_validator("sorts to compare")


def validate_free_text(text, max_words=30):
    """Finds the right problems but words them freely: the checker needs 'kind: details'."""
    return [p.replace("missing section:", "section missing ->") for p in validate_correct_copy(text)]


# --- exercise 4: decay and expiry -----------------------------------------------------------------


def weight_natural_exp(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit > expire_after_days:
        return 0.0
    weight = confidence * math.exp(-days_since_hit / half_life_days)
    return weight * stale_factor if days_since_hit > stale_after_days else weight


def weight_forgets_stale(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit > expire_after_days:
        return 0.0
    return confidence * 0.5 ** (days_since_hit / half_life_days)


def weight_stale_at_boundary(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit > expire_after_days:
        return 0.0
    weight = confidence * 0.5 ** (days_since_hit / half_life_days)
    return weight * stale_factor if days_since_hit >= stale_after_days else weight


def weight_expires_at_boundary(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit >= expire_after_days:
        return 0.0
    weight = confidence * 0.5 ** (days_since_hit / half_life_days)
    return weight * stale_factor if days_since_hit > stale_after_days else weight


def weight_never_expires(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    weight = confidence * 0.5 ** (days_since_hit / half_life_days)
    return weight * stale_factor if days_since_hit > stale_after_days else weight


def weight_ignores_confidence(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit > expire_after_days:
        return 0.0
    weight = 0.5 ** (days_since_hit / half_life_days)
    return weight * stale_factor if days_since_hit > stale_after_days else weight


def weight_hardcoded_settings(
    confidence,
    days_since_hit,
    half_life_days=7.0,
    stale_after_days=14.0,
    stale_factor=0.5,
    expire_after_days=30.0,
):
    if days_since_hit > 30:
        return 0.0
    weight = confidence * 0.5 ** (days_since_hit / 7)
    return weight * 0.5 if days_since_hit > 14 else weight


# --- exercise 5: budgeted injection ---------------------------------------------------------------


def select_stops_at_first_misfit(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) == max_items or count_tokens(lesson) > left:
            break
        chosen.append(lesson)
        left -= count_tokens(lesson)
    return chosen


def select_ignores_max_items(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if count_tokens(lesson) <= left:
            chosen.append(lesson)
            left -= count_tokens(lesson)
    return chosen


def select_ignores_budget(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    ranked = sorted(candidates, key=lambda pair: -pair[1])
    return [lesson for lesson, _ in ranked[:max_items]]


def select_ascending(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: pair[1]):
        if len(chosen) < max_items and count_tokens(lesson) <= left:
            chosen.append(lesson)
            left -= count_tokens(lesson)
    return chosen


def select_ties_by_text(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: (pair[1], pair[0]), reverse=True):
        if len(chosen) < max_items and count_tokens(lesson) <= left:
            chosen.append(lesson)
            left -= count_tokens(lesson)
    return chosen


def select_global_counter(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) < max_items and kit_count_tokens(lesson) <= left:
            chosen.append(lesson)
            left -= kit_count_tokens(lesson)
    return chosen


def select_sorts_in_place(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    candidates.sort(key=lambda pair: -pair[1])
    chosen, left = [], budget_tokens
    for lesson, _ in candidates:
        if len(chosen) < max_items and count_tokens(lesson) <= left:
            chosen.append(lesson)
            left -= count_tokens(lesson)
    return chosen


def select_returns_pairs(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for pair in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) < max_items and count_tokens(pair[0]) <= left:
            chosen.append(pair)
            left -= count_tokens(pair[0])
    return chosen


def select_strictly_under_budget(candidates, budget_tokens, max_items=3, count_tokens=kit_count_tokens):
    chosen, left = [], budget_tokens
    for lesson, _ in sorted(candidates, key=lambda pair: -pair[1]):
        if len(chosen) < max_items and count_tokens(lesson) < left:
            chosen.append(lesson)
            left -= count_tokens(lesson)
    return chosen
