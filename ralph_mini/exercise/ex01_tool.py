"""Exercise 1 (exercises/ex01_tool.ipynb): a tool, ``query_loyalty_points``, and an observation compressor.

ex1a judges the tool's schema first (what the model reads), then its lookups against ``LOYALTY_POINTS``;
ex1b judges ``compress`` against the kit's own ``compress_observation``, so the exercise and the agent
cannot disagree about what a model reads.
"""

from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.tools import NotFound, Tool, compress_observation

LOYALTY_POINTS = {
    "CUST-0042": {"points": 1280, "tier": "gold"},
    "CUST-0007": {"points": 0, "tier": "basic"},  # a real customer with no points yet
    "CUST-0815": {"points": 310, "tier": "silver"},
}


def _tool_precheck(func: Any) -> str | None:
    """The schema is what the model reads: check it before calling anything."""
    if not isinstance(func, Tool):
        return say("ex1a.not_a_tool")
    if func.name != "query_loyalty_points":
        return say("ex1a.wrong_name", name=func.name)
    properties = func.parameters["properties"]
    if list(properties) != ["customer_id"] or func.parameters["required"] != ["customer_id"]:
        return say("ex1a.wrong_parameters", parameters=list(properties))
    json_type, described = properties["customer_id"]["type"], properties["customer_id"]["description"]
    if json_type != "string":
        return say("ex1a.wrong_type", json_type=json_type)
    if "CUST-" not in described:
        return say("ex1a.no_example_id", described=described)
    if "points" not in func.description.lower():
        return say("ex1a.no_points", description=func.description)
    return None


def _record_judge(record: dict) -> Judge:
    """The tool must return this customer's record, as a dict."""

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, dict):
            return say("ex1a.not_a_dict", returned=short_repr(returned))
        wrong = [key for key in record if returned.get(key) != record[key]]
        if wrong:
            return say("ex1a.wrong_fields", returned=returned, fields=say("ex1a.and").join(wrong))
        return None

    return judge


def _loyalty_cases() -> list[Case]:
    found = [
        Case(
            say("ex1a.case_found", cid=cid, points=record["points"]),
            kwargs={"customer_id": cid},
            judge=_record_judge(record),
            why=say("ex1a.exists"),
        )
        for cid, record in LOYALTY_POINTS.items()
    ]
    missing = [("CUST-9999", "ex1a.case_missing"), ("", "ex1a.case_empty")]
    raises = [
        Case(say(key, cid=cid), kwargs={"customer_id": cid}, raises=NotFound, why=say("ex1a.must_raise"))
        for cid, key in missing
    ]
    return found + raises


def _compress_judge(data: dict, max_fields: int) -> Judge:
    """Right when it equals ``compress_observation``; otherwise name the first part that differs."""

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, str):
            return say("ex1b.not_a_str", returned=short_repr(returned))
        if returned.rstrip() == compress_observation(data, max_fields).rstrip():
            return None
        total, hidden = len(data), max(len(data) - max_fields, 0)
        prefix = f"{total} fields:"  # the format the model reads, in every language
        if not returned.startswith(prefix):
            return say("ex1b.wrong_prefix", returned=returned, prefix=prefix)
        if hidden and not returned.endswith(f" (+{hidden} more)"):
            return say("ex1b.no_more", returned=returned, max_fields=max_fields, total=total, hidden=hidden)
        if not hidden and "more)" in returned:
            return say("ex1b.extra_more", returned=returned)
        shown = min(total, max_fields)
        return say("ex1b.wrong_pairs", returned=returned, prefix=prefix, shown=shown)

    return judge


REFUNDED = {
    "status": "refunded",
    "amount": 66.0,
    "created_at": "2025-03-08 15:00",
    "payment_method": "paypal",
    "paid_at": "2025-03-08 16:00",
}
CAPTURED = {"payment_status": "captured", "txn_id": "TXN-90417", "settled_at": "2025-03-10 08:32"}


def _compress_cases() -> list[Case]:
    examples = [  # (data, max_fields)
        ({"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}, 8),
        (REFUNDED, 2),
        (CAPTURED, 3),
        ({"order_id": "B456", "status": "pending", "amount": 215.0, "paid_at": None}, 3),
        ({"status": "pending"}, 1),
        ({}, 8),
    ]
    return [
        Case(say("ex1b.case", data=data, limit=limit), args=(data, limit), judge=_compress_judge(data, limit))
        for data, limit in examples
    ]


ex1a = Exercise(
    name="ex1a",
    function_name="query_loyalty_points",
    solution_file="ex01_tool.py",
    cases=_loyalty_cases,
    precheck=_tool_precheck,
    hints=Hints("ex1a"),
)

ex1b = Exercise(
    name="ex1b",
    function_name="compress",
    solution_file="ex01_tool.py",
    cases=_compress_cases,
    hints=Hints("ex1b"),
)
