"""Exercise 1 (exercises/ex01_tool.ipynb): a tool, ``query_loyalty_points``, and an observation compressor.

ex1a judges the tool's schema first (what the model reads), then its lookups against ``LOYALTY_POINTS``;
ex1b judges ``compress`` against the kit's own ``compress_observation``, so the exercise and the agent
cannot disagree about what a model reads.
"""

from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.tools import NotFound, Tool, compress_observation

LOYALTY_POINTS = {
    "CUST-0042": {"points": 1280, "tier": "gold"},
    "CUST-0007": {"points": 0, "tier": "basic"},  # a real customer with no points yet
    "CUST-0815": {"points": 310, "tier": "silver"},
}

MUST_RAISE = (
    "a customer who is not in LOYALTY_POINTS must raise NotFound, so the agent sees a "
    "normal 'not_found' observation instead of a crash or an empty record"
)


def _tool_precheck(func: Any) -> str | None:
    """The schema is what the model reads: check it before calling anything."""
    if not isinstance(func, Tool):
        return (
            "query_loyalty_points is a plain function, not a Tool: put @tool on the line above "
            "def, so the agent gets a schema"
        )
    if func.name != "query_loyalty_points":
        return f"your tool is named {func.name!r}; models call tools by name: name it query_loyalty_points"
    properties = func.parameters["properties"]
    if list(properties) != ["customer_id"] or func.parameters["required"] != ["customer_id"]:
        return f"the tool's parameters are {list(properties)}; it takes one required parameter, customer_id"
    json_type, described = properties["customer_id"]["type"], properties["customer_id"]["description"]
    if json_type != "string":
        return (
            f"customer_id has JSON type {json_type!r}; ids like CUST-0042 are text: hint the parameter as str"
        )
    if "CUST-" not in described:
        return (
            f"the Args: line for customer_id says {described!r}: show the model an example id in the "
            "CUST-... format, so it copies the format"
        )
    if "points" not in func.description.lower():
        return (
            f"the description {func.description!r} does not say what the tool returns: mention "
            "loyalty points, so a model looking for points picks this tool"
        )
    return None


def _record_judge(record: dict) -> Judge:
    """The tool must return this customer's record, as a dict."""

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, dict):
            return f"you returned {short_repr(returned)}; a tool returns a dict (the agent compresses it)"
        wrong = [key for key in record if returned.get(key) != record[key]]
        if wrong:
            fields = " and ".join(wrong)
            return f"you returned {returned!r}; the customer's {fields} should come from LOYALTY_POINTS"
        return None

    return judge


def _loyalty_cases() -> list[Case]:
    found = [
        Case(
            f"for customer_id={cid!r} ({record['points']} points in LOYALTY_POINTS)",
            kwargs={"customer_id": cid},
            judge=_record_judge(record),
            why="this customer exists, so return their record",
        )
        for cid, record in LOYALTY_POINTS.items()
    ]
    missing = [
        ("CUST-9999", "for customer_id='CUST-9999' (no such customer)"),
        ("", "for customer_id='' (an empty id)"),
    ]
    raises = [
        Case(shown, kwargs={"customer_id": cid}, raises=NotFound, why=MUST_RAISE) for cid, shown in missing
    ]
    return found + raises


def _compress_judge(data: dict, max_fields: int) -> Judge:
    """Right when it equals ``compress_observation``; otherwise name the first part that differs."""

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, str):
            return f"you returned {short_repr(returned)}; expected a str"
        if returned.rstrip() == compress_observation(data, max_fields).rstrip():
            return None
        said = f"you returned {returned!r}"
        total, hidden = len(data), max(len(data) - max_fields, 0)
        prefix = f"{total} fields:"
        if not returned.startswith(prefix):
            return (
                f"{said}; expected a str starting with {prefix!r}: the number of fields in data, shown or not"
            )
        if hidden and not returned.endswith(f" (+{hidden} more)"):
            return (
                f"{said}; only {max_fields} of {total} fields fit, so the line must end with "
                f"' (+{hidden} more)' to say that some were left out"
            )
        if not hidden and "more)" in returned:
            return f"{said}; nothing was left out, so leave out the '(+N more)' part"
        shown = min(total, max_fields)
        return (
            f"{said}; after {prefix!r} list the first {shown} fields as key=value, joined by ', ', "
            "in the dict's order"
        )

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
        Case(
            f"for data={data!r} and max_fields={limit}",
            args=(data, limit),
            judge=_compress_judge(data, limit),
        )
        for data, limit in examples
    ]


ex1a = Exercise(
    name="ex1a",
    function_name="query_loyalty_points",
    solution_file="ex01_tool.py",
    cases=_loyalty_cases,
    precheck=_tool_precheck,
    hints=(
        "@tool reads three things: the type hint of each parameter, the first lines of the docstring "
        "(the description the model reads) and one line per parameter under Args:.",
        "Look the id up with LOYALTY_POINTS.get(customer_id); when that gives None, raise "
        "NotFound(...) with a message naming the id. A customer with 0 points still exists.",
        "Shape: @tool, then def query_loyalty_points(customer_id: str) -> dict:, a docstring "
        "'Loyalty points and tier of one customer.' with an Args: line 'customer_id: The customer "
        'id, for example "CUST-0042".\', then the lookup.',
    ),
)

ex1b = Exercise(
    name="ex1b",
    function_name="compress",
    solution_file="ex01_tool.py",
    cases=_compress_cases,
    hints=(
        "Three parts: '<N> fields: ', the shown key=value pairs joined by ', ', and ' (+M more)' only "
        "when some fields were left out. N counts every field in data.",
        "list(data.items())[:max_fields] keeps the first max_fields pairs in the dict's order; "
        "f'{key}={value}' formats one pair.",
        "M is len(data) minus the number shown; add the ' (+M more)' suffix only when M > 0.",
    ),
)
