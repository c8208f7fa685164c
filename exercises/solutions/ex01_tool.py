"""Reference solutions for exercises/ex01_tool.ipynb (instructor only; ``ex1a.solution()`` shows them)."""

from ralph_mini.exercise import LOYALTY_POINTS
from ralph_mini.tools import NotFound, tool


@tool(latency_s=0.3, core=False)
def query_loyalty_points(customer_id: str) -> dict:
    """Loyalty points and tier of one customer (not the status of an order).

    Args:
        customer_id: The customer id, for example "CUST-0042".
    """
    record = LOYALTY_POINTS.get(customer_id)
    if record is None:  # a customer with 0 points exists: test for None, not for falsy
        raise NotFound(f"no loyalty account for customer {customer_id!r}")
    return dict(record)  # a copy: the agent must not be able to change our data


def compress(data: dict, max_fields: int) -> str:
    """'3 fields: status=paid, amount=99.5, paid_at=2025-03-10 09:13', plus ' (+N more)' if cut."""
    shown = [f"{key}={value}" for key, value in list(data.items())[:max_fields]]
    hidden = len(data) - len(shown)
    more = f" (+{hidden} more)" if hidden > 0 else ""
    return f"{len(data)} fields: " + ", ".join(shown) + more
